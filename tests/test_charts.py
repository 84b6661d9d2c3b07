"""The figures' specs: compiled Vega without data (the page feeds the shown selection's rows); static SVGs."""
import json
import re

import pytest

from generator import charts, content, facts
from generator.content import Selection

from conftest import CONTENT


@pytest.fixture(scope="module")
def made():
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return atlas, charts.figures(atlas, c.plate.default)


def test_figures_compiled_to_vega(made):
    _, figures = made
    assert [f.id for f in figures][:2] == ["fig-time", "fig-efficiency"] and "fig-memory" in [f.id for f in figures]
    for f in figures:
        assert f.vega["$schema"] if "$schema" in f.vega else True
        assert "marks" in f.vega and "data" in f.vega


def test_specs_carry_no_data_values(made):
    """The grid is embedded once in the page, not in each spec."""
    _, figures = made
    for f in figures:
        named = {d["name"]: d for d in f.vega["data"]}
        fed = [n for n in (charts.GRID_DATA, charts.FACTS_DATA, charts.MEMORY_DATA) if n in named]
        assert fed == ([charts.MEMORY_DATA] if f.id == "fig-memory" else [charts.GRID_DATA, charts.FACTS_DATA])
        assert all("values" not in named[n] for n in fed)
        assert "llama3-70b" not in json.dumps(f.vega)


def test_time_figure_is_log_log_with_both_series(made):
    _, figures = made
    scales = {s["name"]: s for s in figures[0].vega["scales"]}
    assert scales["x"]["type"] == "log" and scales["y"]["type"] == "log"
    text = json.dumps(figures[0].vega)
    assert "compute_s" in text and "comm_s" in text and "window_s" in text


def test_static_svg_shows_the_default_selection(made):
    _, figures = made
    time_svg, efficiency_svg = figures[0].svg, figures[1].svg
    for svg in (time_svg, efficiency_svg):
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        assert "first crossed: 1,024" in svg and "n* ≈ 708" in svg
        assert "<?xml" not in svg
    assert ">compute<" in time_svg and ">all-reduce<" in time_svg
    assert "&lt; 1 sequence per replica" in time_svg


def test_static_svg_ids_are_unique_per_figure(made):
    _, figures = made
    ids = [i for f in figures for i in re.findall(r'\bid="([^"]+)"', f.svg)]
    assert len(ids) == len(set(ids))


def test_facts_rows_mark_crossing_and_one_sequence(made):
    atlas, _ = made
    row = lambda *sel, **o: charts.facts_rows(f := atlas.facts(Selection(*sel, **o)), f.caption)[0]  # noqa: E731
    default = row("llama3-8b", "4M", "ib-400")
    assert default["crossing"] == 1024 and default["one_sequence"] == 512 and default["hypothetical_from"] is None
    assert default["n_star_text"] == "n* ≈ 708"
    assert row("llama3-8b", "16M", "nvlink")["crossing"] is None
    assert row("llama3-8b", "4M", "nvlink")["hypothetical_from"] == atlas.presets.gpu.nvlink_domain


def test_static_svg_url_references_all_resolve(made):
    """Every url(#id) in a static SVG names an id the SVG holds: renaming ids must rename their uses."""
    _, figures = made
    for f in figures:
        ids = set(re.findall(r'\bid="([^"]+)"', f.svg))
        used = set(re.findall(r"url\(#([^)]+)\)", f.svg))
        assert used <= ids, used - ids


def test_unique_ids_renames_every_reference_with_its_id():
    svg = ('<svg><defs><clipPath id="clip1"><rect/></clipPath><clipPath id="clip10"><rect/></clipPath></defs>'
           '<g clip-path="url(#clip1)"></g><g clip-path="url(#clip10)"></g><use href="#clip1"/></svg>')
    out = charts.unique_ids(svg, "fig-a")
    ids = set(re.findall(r'\bid="([^"]+)"', out))
    used = set(re.findall(r"url\(#([^)]+)\)", out)) | set(re.findall(r'href="#([^"]+)"', out))
    assert ids == {"fig-a-clip1", "fig-a-clip10"} and used == ids
    assert charts.unique_ids("<svg><g/></svg>", "x") == "<svg><g/></svg>"


def test_nvlink_past_its_domain_is_shaded_and_labelled(made):
    atlas, _ = made
    shaded = charts.figures(atlas, Selection("llama3-8b", "4M", "nvlink"))
    plain = charts.figures(atlas, Selection("llama3-8b", "4M", "ib-400"))
    for a, b in ((a, b) for a, b in zip(shaded, plain) if charts.FACTS_DATA in {d["name"] for d in a.vega["data"]}):
        label = ">NVLink beyond a real domain: hypothetical<"
        assert label in a.svg and label not in b.svg
