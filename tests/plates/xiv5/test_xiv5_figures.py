"""Plate XIV.5's figures: their rows are the model's, their descriptions the facts', and both compile to Vega and
a static SVG (no font or browser involved in what is checked)."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from generator.plate import charts
from generator.page.notation import num
from xiv5_support import SPEC_GPU, SPEC_MODEL, default, fits_from, has_spec, pairs, presets  # noqa: F401
from xiv5_support import plate_facts
from xiv5_support import plate_figures
from xiv5_support import model
from xiv5_support import preview
from xiv5_support import plate_words
from xiv5_support import braid_problems, data, hidden, page_rows, page_words, shown_runs


@pytest.fixture(scope="module")
def made(presets, default):
    return plate_figures.figures(plate_facts.facts(presets, default))


def test_both_figures_compile(made, presets, default):
    f = plate_facts.facts(presets, default)
    described = plate_words.of(f)["describe"]
    assert [fig.id for fig in made] == ["fig-states", "fig-traffic"]
    datasets = [{d["name"] for d in fig.vega["data"]} for fig in made]
    assert {plate_figures.STATES_DATA, plate_figures.MEMORY_DATA} <= datasets[0]
    assert {plate_figures.TRAFFIC_DATA, plate_figures.TRAFFIC_LABELS} <= datasets[1]
    for fig in made:
        assert all("values" not in d for d in fig.vega["data"])  # the page inserts the data
        assert fig.svg.startswith("<svg") and fig.svg.rstrip().endswith("</svg>")
        assert fig.vega["description"] == described[fig.id] != ""  # page_words's words
    states_svg, traffic_svg = made[0].svg, made[1].svg
    assert f"{f.gpu.name} memory" not in states_svg  # the title says the GPU's memory, the key its rule
    for k in range(4):
        assert f">stage {k}<" in states_svg
    for row in plate_figures.rows(f)[plate_figures.TRAFFIC_LABELS]:
        assert f">{row['text']}<" in traffic_svg
    # a line per stage in each figure, the selected stage's alone the heavier
    for fig in made:
        lines = re.findall(r'<g class="mark-line role-mark stages_marks"[^>]*><path [^>]*>', fig.svg)
        assert len(lines) == 4
        heavy = [i for i, line in enumerate(lines) if f'stroke-width="{plate_figures.SELECTED_WIDTH:g}"' in line]
        assert heavy == [f.stage_index]


def test_rows_are_the_model_s(presets, default):
    f = plate_facts.facts(presets, replace(default, stage="zero2", precision="fp32"))
    made = plate_figures.rows(f)
    rows = made[plate_figures.STATES_DATA]
    assert len(rows) == 4 * len(f.replicas)
    for k in range(4):
        got = [r["states_gb"] for r in rows if r["stage"] == f"stage {k}"]
        np.testing.assert_allclose(got, model.state_bytes(f.params, k, f.replicas, f.grad_bytes) / 1e9, rtol=1e-12)
        traffic = [r["traffic_gb"] for r in made[plate_figures.TRAFFIC_DATA] if r["stage"] == f"stage {k}"]
        np.testing.assert_allclose(traffic, model.traffic_bytes(f.params, k, 4, f.replicas) / 1e9, rtol=1e-12)
    assert {r["stage"] for r in rows if r["selected"]} == {"stage 2"}
    assert made[plate_figures.MEMORY_DATA][0]["memory_gb"] == f.gpu.memory_gb


def test_traffic_labels_group_the_stages_that_coincide(presets, default):
    """BF16: stages 0–2 on one line, stage 3 above; FP32: stages 0 and 3 together, 1 and 2 below (MODEL.md)."""
    bf16 = plate_facts.facts(presets, replace(default, precision="bf16"))
    fp32 = plate_facts.facts(presets, replace(default, precision="fp32"))
    assert [g for g, _ in page_words.same_traffic(data(bf16))] == [[0, 1, 2], [3]]
    assert [g for g, _ in page_words.same_traffic(data(fp32))] == [[1, 2], [0, 3]]
    assert [r["text"] for r in plate_figures.rows(fp32)[plate_figures.TRAFFIC_LABELS]] == ["stages 1 and 2",
                                                                                         "stages 0 and 3"]


def svg_stage_paths(svg: str) -> list[dict]:
    """The stages' lines of a static SVG, in drawing order: each path's stroke, stroke-dasharray and -dashoffset."""
    paths = re.findall(r'<g class="mark-line role-mark stages_marks"[^>]*>(<path [^>]*>)', svg)
    attribute = lambda path, name: (re.search(rf'\b{name}="([^"]*)"', path) or [None, None])[1]  # noqa: E731
    return [{"stroke": attribute(p, "stroke"), "dash": attribute(p, "stroke-dasharray"),
             "offset": attribute(p, "stroke-dashoffset")} for p in paths]


def stage_inks() -> dict[str, int]:
    """{stroke colour as drawn: stage}."""
    return {charts.ink(name): k for k, name in enumerate(plate_figures.STAGE_INK)}


def test_stages_that_send_the_same_bytes_each_show_along_their_shared_line(presets, default):
    """Figure 2 as drawn (its static SVG) for every grouping of the stages the precisions give: where stages send the
    same bytes, and so share a path, each stage's colour shows along it in runs, not specks (no line hides another),
    and the drawn key gives each stage the mark it has in the figure."""
    groupings = set()
    for precision in plate_facts.PRECISIONS:
        f = plate_facts.facts(presets, replace(default, precision=precision))
        groups = [g for g, _ in page_words.same_traffic(data(f))]
        groupings.add(str(groups))
        traffic = plate_figures.figures(f)[1]
        paths = svg_stage_paths(traffic.svg)
        assert len(paths) == 4 and set(stage_inks()) == {p["stroke"] for p in paths}
        assert any(len(g) > 1 for g in groups)  # what the figure braids: stages drawn on one path
        # a run of colour shorter than twice the heavier line's width reads as a speck of it, not as its stage
        shortest = 2 * plate_figures.SELECTED_WIDTH
        assert braid_problems(paths, stage_inks(), groups, shortest) == [[] for _ in groups], (precision, paths)
        key = plate_figures.key_lines("fig-traffic")
        for p in paths:
            k = stage_inks()[p["stroke"]]
            assert (charts.ink(key[k]["colour"]), key[k]["dash"].split()) == (p["stroke"], p["dash"].split(",")), k
    assert len(groupings) == len(plate_facts.PRECISIONS)  # each precision groups the stages its own way
    # the check sees a hidden line: the same dash on one path hides the line drawn first, a solid line all below it;
    # and specks: dashes of different lengths drawn over a solid line leave it runs of 3 px at most
    assert hidden([("a", [6.0, 3.0], 0.0), ("b", [6.0, 3.0], 0.0)]) == ["a"]
    assert hidden([("a", [6.0, 3.0], 0.0), ("b", [2.0, 3.0], 0.0), ("c", [], 0.0)]) == ["a", "b"]
    assert shown_runs([("a", [6.0, 6.0], 0.0), ("b", [6.0, 6.0], 6.0)]) == {"a": 6.0, "b": 6.0}
    assert shown_runs([("a", [], 0.0), ("b", [6.0, 3.0], 0.0), ("c", [2.0, 3.0], 0.0)]) == {"a": 3.0, "b": 3.0,
                                                                                             "c": 2.0}


def test_the_fits_described_are_the_formulas_and_the_facts_file_s_for_its_presets(presets, default):
    """Figure (a)'s description for each model and GPU of the content names the fits the formulas give (bisection in
    the test); for Llama 3 8B on an H100 SXM in BF16, when the content holds them, the facts file's numbers."""
    gpus = plate_facts.gpus_of(presets)
    made = [plate_facts.facts(presets, replace(default, model=m, gpu=g, precision="bf16")) for m, g in pairs(presets)]
    for (m, g), described in zip(pairs(presets), plate_words.words(made)):
        text = described["describe"]["fig-states"]
        for k in (1, 2, 3):
            n = fits_from(presets.models[m].params, k, gpus[g].memory_gb * 1e9)
            said = f"stage {k} never fits" if np.isnan(n) else \
                f"stage {k} fits from {num(n)} {'replica' if n == 1 else 'replicas'}"
            assert said in text, (m, g, text)
        assert f"sends {(2 * 2 + 2) / (2 * 2):.2f} times that" in described["describe"]["fig-traffic"]
    if has_spec(presets):
        f = plate_facts.facts(presets, replace(default, model=SPEC_MODEL, gpu=SPEC_GPU, precision="bf16"))
        described = plate_words.of(f)["describe"]
        assert "stage 1 fits from 3 replicas, stage 2 fits from 2 replicas, stage 3 fits from 2 replicas" in \
            described["fig-states"]
        assert "stage 3 sends 1.50 times that" in described["fig-traffic"]


def test_preview_writes_both_and_keeps_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "preview"
    assert preview.main([str(out), "--stage", "zero3"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["descriptions.txt", "fig-states.svg", "fig-traffic.svg"]
    assert (out / "fig-states.svg").read_text(encoding="utf-8").startswith("<svg")
    assert preview.main([str(out)]) == 0  # its own files it may write again
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "fig-traffic.svg").write_text("someone's drawing", encoding="utf-8")
    with pytest.raises(SystemExit, match="not written by preview.py"):
        preview.main([str(foreign)])
    assert (foreign / "fig-traffic.svg").read_text(encoding="utf-8") == "someone's drawing"


def test_stage_names_keep_out_of_each_other_s_way(presets):
    """Over every selection: no name below a line that falls steeply where it is set, and no gap between two lines
    narrower than two names holding both (one set below the upper line, one above the lower)."""
    for sel in (plate_facts.Selection(m, g, "zero1", "bf16", next(iter(presets.networks)))
                for m in presets.models for g in plate_facts.gpus_of(presets)):
        f = plate_facts.facts(presets, sel)
        above = page_rows.label_above(data(f))
        at = int(np.searchsorted(f.replicas, page_rows.LABEL_AT))
        level = [np.log10(s.states_bytes[at]) for s in f.stages]
        for k, s in enumerate(f.stages):
            steep = np.log10(s.states_bytes[at]) - np.log10(s.states_bytes[at + 1]) > page_rows.STEEP_DECADES
            if steep:
                assert above[k], (sel, k)
            if k and level[k - 1] - level[k] < 2 * plate_figures.LABEL_DECADES:
                assert above[k - 1] or not above[k], (sel, k)
            # the name goes to the wider of its gaps (to the line above, to the line below; below a steep line, none)
            up = level[k - 1] - level[k] if k else np.inf
            down = 0.0 if steep else (level[k] - level[k + 1] if k + 1 < len(level) else np.inf)
            assert above[k] == (up >= down), (sel, k)
        rows = plate_figures.rows(f)[plate_figures.STATES_DATA]
        assert [next(r["label_above"] for r in rows if r["stage"] == f"stage {k}") for k in range(4)] == above


def test_every_stage_colour_is_a_theme_variable_with_its_rule_and_dark_value(made):
    """The stages' colours are named by variable (charts.ink), each set in the theme block, re-inked by a figure rule
    and given a value of its own in dark mode; the compiled figures carry the theme block's light values."""
    from generator.page import theme
    t = theme.current()
    dark = re.search(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{(.*?)\}", t.css, re.S)[1]
    inked = [(name, "stroke") for name in plate_figures.STAGE_INK] + [(n, "fill") for n in plate_figures.LABEL_INK]
    for name, attribute in inked:  # lines are stroked, labels filled
        assert name.startswith("--") and name in t.values, name
        # a rule keyed by the attribute alone re-inks figures, keys and the volumes' pictures (templates/plate.css)
        assert re.search(rf'(^|\n)\[{attribute}="{name}"\] \{{ {attribute}: var\({name}\); \}}', t.css), name
        assert re.search(rf"{name}\s*:", dark), name
    colours = json.dumps([fig.vega for fig in made])
    for name in plate_figures.STAGE_INK:
        assert t[name] in colours
