"""The benchmark's fairness, cheaply: its walk changes one control per step on both pages, and its Altair anchor's
figures filter on the controls bound to them (a change redraws them), as tests/benchmark.py builds them."""
import json
import re

import vl_convert as vlc

import benchmark
from conftest import SERIES
from generator.source import volume


def page_controls(html: str) -> tuple[list, tuple]:
    """A built page's controls as the benchmark reads them (its presets, "Custom…" left out), and its default."""
    parser = benchmark.Selects()
    parser.feed(html)
    controls = [(i, n, [(v, lab) for v, lab in options if v != "custom"]) for i, n, options in parser.found
                if i and options]
    return controls, tuple(parser.chosen.get(i, options[0][0]) for i, _, options in controls)


def test_each_step_of_the_walk_changes_one_control_on_both_pages(series_site):
    shelf = volume.load_series(SERIES)
    for vol, entry in shelf.written():
        html = (series_site / vol.page_of(entry)).read_text(encoding="utf-8")
        controls, start = page_controls(html)
        signals = benchmark.page_signals(html, controls)
        steps = benchmark.walk(controls, start, 3 * len(controls))
        before = start
        for i, value, selection in steps:
            moved = [k for k in range(len(controls)) if selection[k] != before[k]]
            assert moved == [i] and selection[i] == value, (entry.folder, before, selection)
            before = selection
        movable = {k for k, (_, _, options) in enumerate(controls) if len(options) > 1}
        assert {i for i, _, _ in steps} == movable, entry.folder  # every control takes its turn
        plate, altair = benchmark.step_values(controls, signals, steps)
        assert [len(v) for v in plate] == [len(v) for v in altair] == [1] * len(steps)  # one change event each
        for (i, value, _), [[control, v]], [[signal, w]] in zip(steps, plate, altair):
            assert (control, v, signal, w) == (controls[i][0], value, signals[controls[i][1]], value)


def labels(svg: str) -> set[str]:
    """The row labels a drawn figure shows."""
    return set(re.findall(r">(row [a-z]+ \d)<", svg))


def test_the_altair_anchors_figures_filter_on_their_bound_controls(tmp_path):
    controls = [("choose-model", "model", [("a", "A"), ("b", "B")]), ("choose-net", "net", [("x", "X"), ("y", "Y")])]
    signals = {"model": "sel_model", "net": "sel_net"}
    rows = {"points": [{"n": k, "label": f"row {m}{n} {k}", benchmark.SELECTION: f"{m}|{n}"}
                       for m in "ab" for n in "xy" for k in range(2)]}
    text = {"mark": "text", "encoding": {"x": {"field": "n", "type": "quantitative"},
                                          "text": {"field": "label", "type": "nominal"}}}
    rule = {"mark": "rule", "encoding": {"x": {"field": "n", "type": "quantitative"}}}
    specs = [{"data": {"name": "points"}, "width": 200, **text},  # a plain figure, and a layered one as the plate's
             {"data": {"name": "points"}, "width": 200, "layer": [text, rule]}]
    benchmark.altair_page(specs, rows, controls, signals, ("a", "x"), tmp_path)
    top = json.loads((tmp_path / "altair" / "spec.json").read_text(encoding="utf-8"))
    bound = {p["name"]: p["bind"]["input"] for p in top["params"] if "bind" in p}
    assert bound == {"sel_model": "select", "sel_net": "select"}
    for chosen in [("a", "x"), ("b", "x"), ("b", "y")]:  # one control changed at a time
        spec = {**top, "params": [{**p, "value": chosen[list(signals.values()).index(p["name"])]}
                                  if p["name"] in bound else p for p in top["params"]]}
        svg = vlc.vegalite_to_svg(spec)
        key = "|".join(chosen)
        assert labels(svg) == {r["label"] for r in rows["points"] if r[benchmark.SELECTION] == key}
        assert svg.count(f"row {''.join(chosen)} 0<") == 2  # in each figure


def test_the_change_trace_splits_main_thread_time_into_self_time_by_kind():
    """tests/change_trace.py: a nested event's time is its own kind's, its parent keeps only the rest; an event with
    no kind of its own takes its parent's; another thread and a background renderer thread count nothing."""
    import change_trace
    main = {"pid": 1, "tid": 7}
    events = [{"ph": "M", "name": "thread_name", "args": {"name": "CrRendererMain"}, **main},
              {"ph": "M", "name": "thread_name", "args": {"name": "Compositor"}, "pid": 1, "tid": 8},
              {"ph": "X", "name": "RunTask", "ts": 0, "dur": 10_000, **main},
              {"ph": "X", "name": "FunctionCall", "ts": 1_000, "dur": 6_000, **main},
              {"ph": "X", "name": "Layout", "ts": 2_000, "dur": 2_000, **main},  # a forced layout inside the script
              {"ph": "X", "name": "SomethingUnnamed", "ts": 5_000, "dur": 1_000, **main},
              {"ph": "X", "name": "Paint", "ts": 8_000, "dur": 1_500, **main},
              {"ph": "X", "name": "Paint", "ts": 0, "dur": 9_000, "pid": 1, "tid": 8}]
    assert change_trace.self_times(events) == {"other": 2.5, "script": 4.0, "layout": 2.0, "paint": 1.5}
