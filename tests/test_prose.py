"""The prose path in detail: sandboxed slots, checked links, term links that respect entities, unique ids."""
from __future__ import annotations

from dataclasses import replace

import pytest

from generator import content, render
from generator.content import ContentError, Prose, Term
from generator.facts import Atlas

from conftest import FIXTURE


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
    parts = render.prose_html(with_prose(c, "See [the term](#term-replica) and [the paper](#source-only)."), atlas)
    assert 'href="#term-replica"' in parts[0] and 'href="#source-only"' in parts[0]


def test_every_broken_link_and_slot_is_reported_with_its_line(mini):
    c, atlas = mini
    with pytest.raises(ContentError) as caught:
        render.prose_html(with_prose(c, "ok\n[a](#term-nope)", "x\n\n{{ cite('nope') }}"), atlas)
    assert [p.split(":")[0] for p in caught.value.problems] == ["mini/plate.md, line 21",
                                                                "mini/plate.md, line 42"]


def test_a_forged_citation_token_is_left_as_text(mini):
    c, _ = mini
    assert render.link_citations("<p>\u27e6cite:&lt;b&gt;\u27e7</p>", c) == "<p>\u27e6cite:&lt;b&gt;\u27e7</p>"


def test_headings_get_unique_ids_across_both_parts(mini):
    c, atlas = mini
    parts = render.prose_html(with_prose(c, "## Notes\n\n## Notes", "## Notes"), atlas)
    assert '<h2 id="notes">' in parts[0] and '<h2 id="notes-2">' in parts[0] and '<h2 id="notes-3">' in parts[1]


def test_terms_are_never_linked_inside_entities(mini):
    c, _ = mini
    terms = {"lt": Term("lt", "lt", "less than"), "qa": Term("qa", "Q&A", "questions")}
    out = render.link_terms(["<p>a &lt; b, Q&amp;A, then lt.</p>"], replace(c, terms=terms))[0]
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
    render.fill_slots(Prose(f"x\n{slot}", FIXTURE / "plate.md", 10), render.ProseContext(c, atlas), problems, FIXTURE)
    assert len(problems) == 1 and problems[0].startswith("mini/plate.md, line 11: ")
    assert atlas.grid.compute_s.min() > 0 and set(c.presets.models) == {"tiny", "huge"}


def test_an_unclosed_block_is_reported_where_it_opens(mini):
    c, atlas = mini
    problems: list[str] = []
    text = "a\n{% for m in models %}{{ m }}{% endfor %}\n{% if true %}\nb\n\nc"
    render.fill_slots(Prose(text, FIXTURE / "plate.md", 10), render.ProseContext(c, atlas), problems, FIXTURE)
    assert problems == ["mini/plate.md, line 12: template syntax error in prose: "
                        "{% if %} is never closed by {% endif %}"]
