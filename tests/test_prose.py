"""Prose: number formats, sandboxed slots, sanitising, checked links, term links that respect entities, unique ids."""
from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from generator.source import content, prose
from generator.source.content import Prose, Term
from xiv4 import facts
Atlas = facts.Atlas
from generator.source.schema import ContentError

from conftest import CONTENT, TOY, XIV4_MINI


@pytest.fixture(scope="module")
def mini():
    """XIV.4 on small content, and its model: for the slots that reach the model's numpy arrays."""
    c = content.load(XIV4_MINI)
    return c, Atlas(c.presets)


@pytest.fixture(scope="module")
def toy():
    """The engine's own plate, and its model."""
    c = content.load(TOY)
    return c, c.module.model_of(c)


def with_prose(c, before: str, after: str = ""):
    plate = replace(c.plate, before_figures=Prose(before, c.plate.before_figures.path, 20),
                    after_figures=Prose(after, c.plate.after_figures.path, 40))
    return replace(c, plate=plate)


def test_links_to_terms_and_sources_that_exist_are_kept(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(c, "See [the term](#term-worker) and [the paper](#source-only)."), model)
    assert 'href="#term-worker"' in parts[0] and 'href="#source-only"' in parts[0]


def test_every_broken_link_and_slot_is_reported_with_its_line(toy):
    c, model = toy
    with pytest.raises(ContentError) as caught:
        prose.prose_html(with_prose(c, "ok\n[a](#term-nope)", "x\n\n{{ cite('nope') }}"), model)
    assert [p.split(":")[0] for p in caught.value.problems] == ["toy/plate.md, line 21",
                                                                "toy/plate.md, line 42"]


def test_a_forged_citation_token_is_left_as_text(toy):
    c, _ = toy
    assert prose.link_citations("<p>\u27e6cite:&lt;b&gt;\u27e7</p>", c) == "<p>\u27e6cite:&lt;b&gt;\u27e7</p>"


def test_headings_get_unique_ids_across_both_parts(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(c, "## Notes\n\n## Notes", "## Notes"), model)
    assert '<h2 id="notes">' in parts[0] and '<h2 id="notes-2">' in parts[0] and '<h2 id="notes-3">' in parts[1]


def test_terms_are_never_linked_inside_entities(toy):
    c, _ = toy
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
    prose.fill_slots(Prose(f"x\n{slot}", XIV4_MINI / "plate.md", 10), prose.ProseContext(c, atlas), problems, XIV4_MINI)
    assert len(problems) == 1 and problems[0].startswith("mini/plate.md, line 11: ")
    assert atlas.facts(c.plate.default).grid.compute_s.min() > 0 and set(c.presets.models) == {"tiny", "huge"}


def test_an_unclosed_block_is_reported_where_it_opens(toy):
    c, model = toy
    problems: list[str] = []
    text = "a\n{% for m in links %}{{ m }}{% endfor %}\n{% if true %}\nb\n\nc"
    prose.fill_slots(Prose(text, TOY / "plate.md", 10), prose.ProseContext(c, model), problems, TOY)
    assert problems == ["toy/plate.md, line 12: template syntax error in prose: "
                        "{% if %} is never closed by {% endif %}"]


def test_number_formats():
    assert prose.FILTERS["num"](1024) == "1,024"
    # Calls written before the one rule (num(1), seconds(2)) keep working and follow it: three figures.
    assert prose.FILTERS["num"](128.484, 1) == "128" and prose.FILTERS["num"](85.899, 1) == "85.9"
    assert prose.FILTERS["seconds"](0.64242, 2) == "0.642 s" and prose.FILTERS["seconds"](0.39) == "0.390 s"
    assert prose.FILTERS["percent"](1.0) == "100%" and prose.FILTERS["percent"](0.0047) == "0.470%"
    assert prose.FILTERS["fraction"](0.5) == "0.500"
    assert prose.FILTERS["fraction"](0.0625) == "0.0625"
    assert prose.FILTERS["billions"](6_979_588_096) == "6.98"
    assert prose.FILTERS["gigabytes"](0.0078) == "7.80 MB"


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
    c = content.load(TOY)  # its term "worker" matches "workers" too
    parts = prose.link_terms(["<p>Each worker and more workers.</p>", "<p>A worker again.</p>"], c)
    assert parts[0].count('href="#term-worker"') == 1
    assert 'aria-describedby="def-worker"' in parts[0]
    assert "term-worker" not in parts[1]


def test_a_terms_plural_follows_the_documented_rule():
    words = {"Bucket": "Buckets", "bus": "buses", "box": "boxes", "fizz": "fizzes", "batch": "batches",
             "mesh": "meshes", "Policy": "Policies", "day": "days", "GPU": "GPUs", "all-reduce": "all-reduces",
             "data parallelism": "data parallelisms", "C++": None, "x86-64": None}
    assert {word: prose.plural_of(word) for word in words} == words


def test_a_plural_another_term_spells_is_that_terms():
    """"Rings" written by a term of its own links there, not to "Ring" whose plural it also is."""
    c = content.load(TOY)
    terms = {"ring": Term("ring", "Ring", "r"), "rings": Term("rings", "Rings", "many"), **c.terms}
    out = prose.link_terms(["<p>Rings first, then a ring.</p>"], replace(c, terms=terms))[0]
    assert out == ('<p><a class="term" href="#term-rings" aria-describedby="def-rings">Rings</a> first, then a '
                   '<a class="term" href="#term-ring" aria-describedby="def-ring">ring</a>.</p>')


def test_terms_are_not_linked_inside_headings_or_links():
    c = content.load(CONTENT)
    term = next(iter(c.terms.values()))
    word = term.name.lower()
    parts = prose.link_terms([f'<h2 id="x">{term.name}</h2><p><a href="#y">{word}</a> then {word}.</p>'], c)
    assert parts[0].count(f"term-{term.id}") == 1
    assert parts[0].endswith(f'then <a class="term" href="#term-{term.id}" aria-describedby="def-{term.id}">'
                             f'{word}</a>.</p>')


def test_undefined_fact_names_its_line(tmp_path):
    c = content.load(CONTENT)
    ctx = prose.ProseContext(c, Atlas(c.presets))
    problems = []
    part = Prose("line one\n\n{{ default.no_such_fact }}", CONTENT / "plate.md", 40)
    prose.fill_slots(part, ctx, problems, CONTENT)
    assert len(problems) == 1 and problems[0].startswith(f"{CONTENT.name}/plate.md, line 42: undefined fact")


def test_unknown_citation_names_its_line():
    c = content.load(CONTENT)
    ctx = prose.ProseContext(c, Atlas(c.presets))
    problems = []
    prose.fill_slots(Prose('x\n{{ cite("nobody") }}', CONTENT / "plate.md", 10), ctx, problems, CONTENT)
    assert problems == [f"{CONTENT.name}/plate.md, line 11: cite(): no source \"nobody\" in sources.toml "
                        f"(known: {', '.join(c.sources)})"]


# --- citations in reading order, hand-written term links, computed words (issue 8) -------------

def two_sources(c):
    """The fixture with a second source, listed after the first in the file."""
    first = c.sources["only"]
    return replace(c, sources={"only": first, "later": replace(first, id="later", title="Another Paper")})


def test_citations_are_numbered_and_listed_in_reading_order(toy):
    c, model = toy
    c = two_sources(c)
    parts = prose.prose_html(with_prose(c, "First {{ cite('later') }}, then {{ cite('only') }}.",
                                        "Again {{ cite('later') }}."), model)
    marks = re.findall(r'href="#source-(\w+)" aria-label="source (\d)">\[(\d)\]', "".join(parts))
    assert marks == [("later", "1", "1"), ("only", "2", "2"), ("later", "1", "1")]
    assert list(parts.sources) == ["later", "only"]


def test_sources_never_cited_are_listed_after_the_cited_ones(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(two_sources(c), "Only {{ cite('later') }}."), model)
    assert list(parts.sources) == ["later", "only"]


def test_the_page_lists_sources_in_the_order_the_prose_cites_them(site):
    page = (site / "index.html").read_text()
    cited = []
    for sid, number in re.findall(r'<sup class="cite"><a href="#source-([^"]+)" aria-label="source (\d+)">', page):
        if sid not in cited:
            cited.append(sid)
        assert int(number) == cited.index(sid) + 1
    listed = re.findall(r'<li id="source-([^"]+)">', page)
    assert cited and listed[:len(cited)] == cited


def test_a_term_linked_by_hand_is_linked_like_an_automatic_one_and_not_again(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(c, "Some [machines](#term-worker) here.", "Later workers."), model)
    assert '<a class="term" href="#term-worker" aria-describedby="def-worker">machines</a>' in parts[0]
    assert "term-worker" not in parts[1] and parts[0].count("term-worker") == 1


def test_a_hand_link_after_an_automatic_one_gets_the_same_attributes(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(c, "Two workers, and [a machine](#term-worker)."), model)
    links = re.findall(r"<a [^>]*>", parts[0])
    assert links == ['<a class="term" href="#term-worker" aria-describedby="def-worker">'] * 2


@pytest.mark.parametrize("a, b, word", [(1, 2, "less"), (2, 2, "same"), (3, 2, "more"), (707.8257499157398,
                                                                                       707.8257499157397, "same")])
def test_compare_picks_the_word_the_numbers_give(a, b, word):
    assert prose.compare(a, b, "less", "same", "more") == word


def test_compare_refuses_a_missing_value():
    with pytest.raises(ValueError, match="got no value"):
        prose.compare(None, 2, "a", "b", "c")


def test_scales_names_the_change():
    assert [prose.scales(r) for r in (2, 0.5, 1, 4)] == ["doubles", "halves", "leaves unchanged", "quadruples"]
    assert prose.scales(1.5) == "multiplies by 1.50"


def test_a_false_check_stops_the_build_at_its_line(toy):
    c, model = toy
    problems: list[str] = []
    text = "x\n{{ check(default.best_workers > 10**9, 'needs more workers') }}"
    prose.fill_slots(Prose(text, TOY / "plate.md", 10), prose.ProseContext(c, model), problems, TOY)
    assert problems == ["toy/plate.md, line 11: the prose claims something its facts contradict: needs more workers"]
    assert prose.check(True, "fine") == ""


def test_about_rounds_to_significant_figures_half_up():
    assert prose.about(5934) == "5,900" and prose.about(659.33) == "660"
    assert prose.about(0.125) == "0.13" and prose.about(2.5, 1) == "3" and prose.about(0.0069349, 3) == "0.00693"
    assert prose.about(25.0, 3) == "25" and prose.about(0) == "0"


def test_a_batch_name_reads_as_a_compound_modifier():
    assert prose.modifier("1M tokens") == "1M-token" and prose.modifier("16M tokens") == "16M-token"
    assert prose.modifier("tiny") == "tiny"


def test_typography_of_the_shipped_plate(site):
    from test_build import text_of
    words = text_of((site / "index.html").read_text())
    assert not re.search(r"\d %", words), re.findall(r".{30}\d %.{10}", words)
    assert not re.search(r"\d\S* tokens batch", words)
    c = content.load(CONTENT)
    assert f"{prose.modifier(c.presets.batches[c.plate.default.batch].name)} batch" in words


@pytest.mark.parametrize("name", ["<turbo>", "*3*", "a_b_c", "[x](https://example.com)", "Q&A", "# one",
                                  '"quoted" -- it\'s', "`code`", "back\\slash"])
def test_names_in_slots_come_out_as_written(name, toy):
    c, _ = toy
    links = {**c.presets["links"], "slow": {**c.presets["links"]["slow"], "name": name}}
    c = replace(c, presets={**c.presets, "links": links})
    parts = prose.prose_html(with_prose(c, "Model: {{ default.link.name }}; also {{ links.slow.name }}."),
                             c.module.model_of(c))
    shown = html.escape(name, quote=False)
    assert f"<p>Model: {shown}; also {shown}.</p>" == parts[0].replace("&quot;", '"').replace("&#x27;", "'")


def test_prose_markup_around_slots_still_works(toy):
    c, model = toy
    parts = prose.prose_html(with_prose(c, "**{{ default.link.name }}** at {{ default.best_workers | num }}"), model)
    best = prose.num(model.facts(c.plate.default.link)["best_workers"])
    assert parts[0] == f"<p><strong>{c.presets['links'][c.plate.default.link]['name']}</strong> at {best}</p>"


def test_raw_html_that_sanitising_removes_is_a_warning_at_its_line(tmp_path):
    """A tag prose may not hold, or an attribute it may not, is removed from the page: plate check says so at its
    line (a warning: the page is still safe); HTML written as code is shown, not removed, and is not warned about."""
    import shutil
    from generator.source import checks
    from conftest import TOY
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    plate_md = root / "plate.md"
    plate_md.write_text(plate_md.read_text(encoding="utf-8") + '\n<script>alert(1)</script>\n\nA <span style="color: '
                        'red">red</span> word and `<div>` as code and <em>emphasis</em>.\n', encoding="utf-8")
    lines = plate_md.read_text(encoding="utf-8").splitlines()
    script = next(i for i, l in enumerate(lines, 1) if "<script>" in l)
    span = next(i for i, l in enumerate(lines, 1) if "<span" in l)
    warnings = [w for w in checks.checked(root).warnings if "raw HTML" in w]
    assert warnings == [
        f"toy/plate.md, line {script}: raw HTML <script> in the prose is removed from the page (prose is Markdown; the "
        f"tags it may hold: {', '.join(sorted(prose.PROSE_TAGS))})",
        f"toy/plate.md, line {span}: raw HTML <span>: its style is removed from the page (prose's <span> may hold no "
        f"attribute)"]
