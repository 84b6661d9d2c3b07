"""Prose: number formats, sandboxed slots, sanitising, checked links, term links that respect entities, unique ids."""
from __future__ import annotations

from dataclasses import replace

import pytest

from generator import content, prose
from generator.content import Prose, Term
from generator.facts import Atlas
from generator.schema import ContentError

from conftest import CONTENT, FIXTURE


@pytest.fixture(scope="module")
def mini():
    c = content.load(FIXTURE)
    return c, Atlas(c.presets)


def with_prose(c, before: str, after: str = ""):
    plate = replace(c.plate, before_figures=Prose(before, c.plate.before_figures.path, 20),
                    after_figures=Prose(after, c.plate.after_figures.path, 40))
    return replace(c, plate=plate)


def test_links_to_terms_and_sources_that_exist_are_kept(mini):
    c, atlas = mini
    parts = prose.prose_html(with_prose(c, "See [the term](#term-replica) and [the paper](#source-only)."), atlas)
    assert 'href="#term-replica"' in parts[0] and 'href="#source-only"' in parts[0]


def test_every_broken_link_and_slot_is_reported_with_its_line(mini):
    c, atlas = mini
    with pytest.raises(ContentError) as caught:
        prose.prose_html(with_prose(c, "ok\n[a](#term-nope)", "x\n\n{{ cite('nope') }}"), atlas)
    assert [p.split(":")[0] for p in caught.value.problems] == ["mini/plate.md, line 21",
                                                                "mini/plate.md, line 42"]


def test_a_forged_citation_token_is_left_as_text(mini):
    c, _ = mini
    assert prose.link_citations("<p>\u27e6cite:&lt;b&gt;\u27e7</p>", c) == "<p>\u27e6cite:&lt;b&gt;\u27e7</p>"


def test_headings_get_unique_ids_across_both_parts(mini):
    c, atlas = mini
    parts = prose.prose_html(with_prose(c, "## Notes\n\n## Notes", "## Notes"), atlas)
    assert '<h2 id="notes">' in parts[0] and '<h2 id="notes-2">' in parts[0] and '<h2 id="notes-3">' in parts[1]


def test_terms_are_never_linked_inside_entities(mini):
    c, _ = mini
    terms = {"lt": Term("lt", "lt", "less than"), "qa": Term("qa", "Q&A", "questions")}
    out = prose.link_terms(["<p>a &lt; b, Q&amp;A, then lt.</p>"], replace(c, terms=terms))[0]
    assert out.startswith("<p>a &lt; b, <a class=\"term\" href=\"#term-qa\"")
    assert out.endswith('then <a class="term" href="#term-lt" aria-describedby="def-lt">lt</a>.</p>')


@pytest.mark.parametrize("slot", [
    "{{ default.__class__.__mro__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ models.clear() }}",
    "{{ networks.update({}) }}",
    "{{ default.grid.compute_s.fill(0) }}",
    "{{ default.grid.replicas.tofile('/tmp/x') }}",
    "{% for i in range(10**9) %}{% endfor %}",
])
def test_prose_cannot_reach_python_change_presets_or_write_files(mini, slot):
    c, atlas = mini
    problems: list[str] = []
    prose.fill_slots(Prose(f"x\n{slot}", FIXTURE / "plate.md", 10), prose.ProseContext(c, atlas), problems, FIXTURE)
    assert len(problems) == 1 and problems[0].startswith("mini/plate.md, line 11: ")
    assert atlas.grid.compute_s.min() > 0 and set(c.presets.models) == {"tiny", "huge"}


def test_an_unclosed_block_is_reported_where_it_opens(mini):
    c, atlas = mini
    problems: list[str] = []
    text = "a\n{% for m in models %}{{ m }}{% endfor %}\n{% if true %}\nb\n\nc"
    prose.fill_slots(Prose(text, FIXTURE / "plate.md", 10), prose.ProseContext(c, atlas), problems, FIXTURE)
    assert problems == ["mini/plate.md, line 12: template syntax error in prose: "
                        "{% if %} is never closed by {% endif %}"]


def test_number_formats():
    assert prose.FILTERS["num"](1024) == "1,024"
    assert prose.FILTERS["num"](128.484, 1) == "128.5"
    assert prose.FILTERS["seconds"](0.64242, 2) == "0.64 s"
    assert prose.FILTERS["percent"](1.0) == "100%"
    assert prose.FILTERS["fraction"](0.5) == "half"
    assert prose.FILTERS["fraction"](0.0625) == "1/16"
    assert prose.FILTERS["billions"](6_979_588_096) == "7.0"


def test_filters_explain_missing_values():
    with pytest.raises(ValueError, match="got no value"):
        prose.FILTERS["num"](None)


def test_raw_html_in_prose_is_sanitised():
    out = prose.markdown_to_html('Hi <script>alert(1)</script><img src=x onerror="alert(2)"> '
                                 '<a href="javascript:alert(3)">x</a> *ok*')
    assert "<script" not in out and "onerror" not in out and "javascript:" not in out and "<img" not in out
    assert "<em>ok</em>" in out


def test_headings_get_ids():
    assert '<h2 id="linear-until-it-is-not">' in prose.markdown_to_html("## Linear until it is not")


def test_terms_are_linked_once_at_first_use():
    c = content.load(CONTENT)
    parts = prose.link_terms(["<p>Each replica and more replicas.</p>", "<p>A replica again.</p>"], c)
    assert parts[0].count('href="#term-replica"') == 1
    assert 'aria-describedby="def-replica"' in parts[0]
    assert "term-replica" not in parts[1]


def test_terms_are_not_linked_inside_headings_or_links():
    c = content.load(CONTENT)
    parts = prose.link_terms(['<h2 id="x">Overlap</h2><p><a href="#y">overlap</a> then overlap.</p>'], c)
    assert parts[0].count("term-overlap") == 1
    assert parts[0].endswith('then <a class="term" href="#term-overlap" aria-describedby="def-overlap">'
                             'overlap</a>.</p>')


def test_undefined_fact_names_its_line(tmp_path):
    c = content.load(CONTENT)
    ctx = prose.ProseContext(c, Atlas(c.presets))
    problems = []
    part = Prose("line one\n\n{{ default.no_such_fact }}", CONTENT / "plate.md", 40)
    prose.fill_slots(part, ctx, problems, CONTENT)
    assert len(problems) == 1 and problems[0].startswith("content/plate.md, line 42: undefined fact")


def test_unknown_citation_names_its_line():
    c = content.load(CONTENT)
    ctx = prose.ProseContext(c, Atlas(c.presets))
    problems = []
    prose.fill_slots(Prose('x\n{{ cite("nobody") }}', CONTENT / "plate.md", 10), ctx, problems, CONTENT)
    assert problems == ["content/plate.md, line 11: cite(): no source \"nobody\" in sources.toml "
                        f"(known: {', '.join(c.sources)})"]
