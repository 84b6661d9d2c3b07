"""The figures' specs: compiled Vega without data, driven by selection signals; static SVGs."""
import json
import re

import pytest

from generator import charts, content, facts

from conftest import CONTENT


@pytest.fixture(scope="module")
def made():
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return atlas, charts.figures(atlas, c.plate.default)


def test_two_figures_compiled_to_vega(made):
    _, figures = made
    assert [f.id for f in figures] == ["fig-time", "fig-efficiency"]
    for f in figures:
        assert f.vega["$schema"] if "$schema" in f.vega else True
        assert "marks" in f.vega and "data" in f.vega
        signals = {s["name"]: s.get("value") for s in f.vega["signals"]}
        assert signals["sel_model"] == "llama3-8b" and signals["sel_batch"] == "4M"
        assert signals["sel_network"] == "ib-400"


def test_specs_carry_no_data_values(made):
    """The grid is embedded once in the page, not in each spec."""
    _, figures = made
    for f in figures:
        named = {d["name"]: d for d in f.vega["data"]}
        assert charts.GRID_DATA in named and charts.FACTS_DATA in named
        assert "values" not in named[charts.GRID_DATA] and "values" not in named[charts.FACTS_DATA]
        assert "llama3-70b" not in json.dumps(f.vega)


def test_time_figure_is_log_log_with_both_series(made):
    _, figures = made
    scales = {s["name"]: s for s in figures[0].vega["scales"]}
    assert scales["x"]["type"] == "log" and scales["y"]["type"] == "log"
    text = json.dumps(figures[0].vega)
    assert "compute_s" in text and "allreduce_s" in text


def test_static_svg_shows_the_default_selection(made):
    _, figures = made
    time_svg, efficiency_svg = figures[0].svg, figures[1].svg
    for svg in (time_svg, efficiency_svg):
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        assert "cross: 1,024" in svg
        assert "<?xml" not in svg
    assert ">compute<" in time_svg and ">all-reduce<" in time_svg
    assert "&lt; 1 sequence per replica" in time_svg


def test_static_svg_ids_are_unique_per_figure(made):
    _, figures = made
    ids = [i for f in figures for i in re.findall(r'\bid="([^"]+)"', f.svg)]
    assert len(ids) == len(set(ids))


def test_facts_rows_mark_crossing_and_one_sequence(made):
    atlas, _ = made
    rows = {(r["model"], r["batch"], r["network"]): r for r in charts.facts_rows(atlas)}
    assert rows[("llama3-8b", "4M", "ib-400")]["crossing"] == 1024
    assert rows[("llama3-8b", "4M", "ib-400")]["one_sequence"] == 512
    assert rows[("llama3-8b", "16M", "nvlink")]["crossing"] is None
