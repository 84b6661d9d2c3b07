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
    default = content.load(CONTENT).plate.default
    assert [f.id for f in figures] == ["fig-time", "fig-efficiency"]
    for f in figures:
        assert "$schema" not in f.vega  # dropped: the page never fetches it, and it is 50 bytes per figure
        assert "marks" in f.vega and "data" in f.vega
        signals = {s["name"]: s.get("value") for s in f.vega["signals"]}
        assert signals["sel_model"] == default.model and signals["sel_batch"] == default.batch
        assert signals["sel_network"] == default.network


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


def test_static_svg_ids_are_made_unique_per_figure(monkeypatch):
    # vl-convert's SVGs of these figures carry no ids today; a clipped mark would bring clipPath ids like these.
    drawn = ('<?xml version="1.0" encoding="utf-8"?>\n<svg><defs><clipPath id="clip1"><rect/></clipPath>'
             '<clipPath id="clip10"><rect/></clipPath></defs><g clip-path="url(#clip1)"/>'
             '<g clip-path="url(#clip10)"/></svg>')
    monkeypatch.setattr(charts.vlc, "vega_to_svg", lambda spec: drawn)
    a, b = (charts.static_svg({"data": []}, {}, fid) for fid in ("fig-a", "fig-b"))
    assert re.findall(r'\bid="([^"]+)"', a + b) == ["fig-a-clip1", "fig-a-clip10", "fig-b-clip1", "fig-b-clip10"]
    assert re.findall(r"url\(#([^)]+)\)", a) == ["fig-a-clip1", "fig-a-clip10"]
    assert "<?xml" not in a


def test_every_id_in_the_built_page_is_unique(site):
    ids = re.findall(r'\bid="([^"]+)"', (site / "index.html").read_text())
    assert len(ids) > 20 and len(ids) == len(set(ids))


def test_facts_rows_mark_crossing_and_one_sequence(made):
    atlas, _ = made
    rows = {(r["model"], r["batch"], r["network"]): r for r in charts.facts_rows(atlas)}
    assert rows[("llama3-8b", "4M", "ib-400")]["crossing"] == 1024
    assert rows[("llama3-8b", "4M", "ib-400")]["one_sequence"] == 512
    assert rows[("llama3-8b", "16M", "nvlink")]["crossing"] is None
