"""Rendering: number formats, prose slots, sanitising, term links, JSON safety and the CSP."""
import json
import re

import pytest
from markupsafe import Markup

from generator import content, render
from generator.content import ContentError, Prose

from conftest import CONTENT


def test_number_formats():
    assert render.FILTERS["num"](1024) == "1,024"
    assert render.FILTERS["num"](128.484, 1) == "128.5"
    assert render.FILTERS["seconds"](0.64242, 2) == "0.64 s"
    assert render.FILTERS["percent"](1.0) == "100%"
    assert render.FILTERS["fraction"](0.5) == "half"
    assert render.FILTERS["fraction"](0.0625) == "1/16"
    assert render.FILTERS["billions"](6_979_588_096) == "7.0"


def test_filters_explain_missing_values():
    with pytest.raises(ValueError, match="got no value"):
        render.FILTERS["num"](None)


def test_script_json_cannot_close_its_element():
    text = str(render.script_json({"a": "</script><!-- \u2028\u2029 &"}))
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028\u2029 &"}


def test_raw_html_in_prose_is_sanitised():
    out = render.markdown_to_html('Hi <script>alert(1)</script><img src=x onerror="alert(2)"> '
                                  '<a href="javascript:alert(3)">x</a> *ok*')
    assert "<script" not in out and "onerror" not in out and "javascript:" not in out and "<img" not in out
    assert "<em>ok</em>" in out


def test_headings_get_ids():
    assert '<h2 id="linear-until-it-is-not">' in render.markdown_to_html("## Linear until it is not")


def test_terms_are_linked_once_at_first_use():
    c = content.load(CONTENT)
    parts = render.link_terms(["<p>Each replica and more replicas.</p>", "<p>A replica again.</p>"], c)
    assert parts[0].count('href="#term-replica"') == 1
    assert 'aria-describedby="def-replica"' in parts[0]
    assert "term-replica" not in parts[1]


def test_terms_are_not_linked_inside_headings_or_links():
    c = content.load(CONTENT)
    parts = render.link_terms(['<h2 id="x">Overlap</h2><p><a href="#y">overlap</a> then overlap.</p>'], c)
    assert parts[0].count("term-overlap") == 1
    assert parts[0].endswith('then <a class="term" href="#term-overlap" aria-describedby="def-overlap">'
                             'overlap</a>.</p>')


def test_undefined_fact_names_its_line(tmp_path):
    c = content.load(CONTENT)
    from generator.facts import Atlas
    ctx = render.ProseContext(c, Atlas(c.presets))
    problems = []
    prose = Prose("line one\n\n{{ default.no_such_fact }}", CONTENT / "plate.md", 40)
    render.fill_slots(prose, ctx, problems, CONTENT)
    assert len(problems) == 1 and problems[0].startswith("content/plate.md, line 42: undefined fact")


def test_unknown_citation_names_its_line():
    c = content.load(CONTENT)
    from generator.facts import Atlas
    ctx = render.ProseContext(c, Atlas(c.presets))
    problems = []
    render.fill_slots(Prose('x\n{{ cite("nobody") }}', CONTENT / "plate.md", 10), ctx, problems, CONTENT)
    assert problems == ["content/plate.md, line 11: cite(): no source \"nobody\" in sources.toml "
                        "(known: li2020, mccandlish2018)"]


def test_csp_hashes_match_the_inline_scripts_and_style(site):
    import base64
    import hashlib
    page = (site / "index.html").read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "unsafe-eval" not in csp and "unsafe-inline" not in csp
    def digest(code):
        return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
    for code in re.findall(r'<script type="module">(.*?)</script>', page, re.S):
        assert digest(code) in csp
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert digest(style) in csp
