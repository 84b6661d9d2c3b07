"""Plate XIV.5's page modules under node against their Python twins: page/model.js against plate/model.py (and the
formulas it takes from the shared platelib), selection.js's factsOf against facts_data and its datasets against
plate/figures.py's rows, and every number page/words.js writes against generator/notation.py's formatting of the
Python facts."""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from platelib import collectives, zero

from generator.notation import data_size, num, seconds, sig
from xiv5_support import presets  # noqa: F401 (fixtures)
from xiv5_support import plate_facts
from xiv5_support import plate_figures
from xiv5_support import model
from xiv5_support import plate_words

RTOL = 1e-12
CALLS = """
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
const table = { %s };
process.stdout.write(JSON.stringify(job.map(([name, args]) => table[name](...args))));
"""
PLATE_FUNCTIONS = ("ring_share", "state_bytes", "kept_bytes", "smallest_replicas", "reduce_scatter_bytes",
                   "all_gather_bytes", "weight_gathers", "allreduce_bytes", "traffic_ratio", "traffic_bytes",
                   "traffic_limit_bytes", "traffic_seconds", "replica_counts")
# platelib's formulas that plate/model.py reuses, which model.js writes again
ENGINE_FUNCTIONS = ("kept_bytes_per_param", "state_bytes_per_param", "smallest_fitting_replicas", "traffic_factor",
                    "ring_seconds", "comm_seconds")


def in_node(calls: list[tuple[str, list]], entry: str = "model.js") -> list:
    """Each (function name, arguments) called in node on the plate's modules joined from entry."""
    names = ", ".join(dict.fromkeys(name for name, _ in calls))
    return plate_words.run(plate_words.script(entry) + CALLS % names, calls)


def python_call(name: str, args: list):
    """The Python twin of a model.js function: plate/model.py's, else platelib's."""
    function = getattr(model, name) if name in PLATE_FUNCTIONS else getattr(
        collectives if name == "ring_seconds" else zero, name)
    value = function(*args)
    return [int(n) for n in value] if name == "replica_counts" else float(value)


def same(js, py, where="") -> None:
    """JSON from node equals Python's: floats to RTOL, NaN as null, everything else exactly."""
    if isinstance(py, float) and math.isnan(py):
        assert js is None, where
    elif isinstance(py, float) and isinstance(js, (int, float)) and not isinstance(js, bool):
        assert js == pytest.approx(py, rel=RTOL, abs=0), where
    elif isinstance(py, dict):
        assert isinstance(js, dict) and set(js) == set(py), (where, sorted(js), sorted(py))
        for key in py:
            same(js[key], py[key], f"{where}.{key}")
    elif isinstance(py, (list, tuple)):
        assert isinstance(js, list) and len(js) == len(py), where
        for i, (a, b) in enumerate(zip(js, py)):
            same(a, b, f"{where}[{i}]")
    else:
        assert js == py and type(js) is type(py) or (isinstance(py, int) and js == py and not isinstance(js, bool)), \
            (where, js, py)


def model_calls(params, stage, b, n, memory, link, per_param=16) -> list[tuple[str, list]]:
    """Every function of model.js on one set of inputs."""
    return [("ring_share", [n]), ("state_bytes", [params, stage, n, per_param]), ("kept_bytes", [params, stage]),
            ("smallest_replicas", [params, stage, memory, per_param]), ("reduce_scatter_bytes", [params, b, n]),
            ("all_gather_bytes", [params, n]), ("weight_gathers", [stage]), ("allreduce_bytes", [params, b, n]),
            ("traffic_ratio", [stage, b]), ("traffic_bytes", [params, stage, b, n]),
            ("traffic_limit_bytes", [params, stage, b]), ("traffic_seconds", [params, stage, b, link, n]),
            ("replica_counts", [n]), ("kept_bytes_per_param", [stage, per_param]),
            ("state_bytes_per_param", [stage, n, per_param]), ("smallest_fitting_replicas", [params, stage, memory]),
            ("traffic_factor", [stage, b]), ("ring_seconds", [b * params, link, n]),
            ("comm_seconds", [link / 3, stage, b])]


def check_model(calls) -> None:
    got = in_node(calls)
    for (name, args), js in zip(calls, got):
        same(js, python_call(name, args), f"{name}{tuple(args)}")


def test_model_js_is_model_py_on_every_preset(presets):
    calls = []
    gpus = plate_facts.gpus_of(presets)
    for m, g, stage, b, network in itertools.product(presets.models.values(), gpus.values(), model.STAGES, (2, 4),
                                                     presets.networks.values()):
        for n in (1, 2, 3, 8, 1000, presets.workshop.max_replicas):
            for memory in (g.memory_gb * model.GB, g.memory_gb * model.GIB):
                calls += model_calls(float(m.params), stage, b, n, memory, network.link_bytes_per_s(g))
    assert {name for name, _ in calls} == set(PLATE_FUNCTIONS + ENGINE_FUNCTIONS)
    check_model(calls)


inputs = st.tuples(st.floats(1e3, 1e14), st.integers(0, 3), st.sampled_from([2, 4]), st.integers(1, 2**24),
                   st.floats(1e6, 1e13), st.floats(1e6, 1e13), st.sampled_from([16, 12, 20]))


@settings(max_examples=4, deadline=None)
@given(st.lists(inputs, min_size=40, max_size=40))
def test_model_js_is_model_py_on_random_inputs(cases):
    check_model([call for case in cases for call in model_calls(*case)])


def every_selection(presets):
    gpus = plate_facts.gpus_of(presets)
    return [plate_facts.Selection(*ids) for ids in itertools.product(
        presets.models, gpus, plate_facts.STAGES, plate_facts.PRECISIONS, presets.networks)]


@pytest.fixture(scope="module")
def from_node(presets):
    """For every selection: factsOf's facts, datasets of those facts, and words of facts_data's, from one node run."""
    selections = every_selection(presets)
    program = plate_words.script("selection.js") + """
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(job.selections.map((sel, i) => {
  const f = factsOf(sel, job.presets);
  return { facts: f, datasets: datasets(f), words: plate.words(job.facts[i], job.context, job.figures) };
})));
"""
    job = {"selections": [{k: getattr(s, k) for k in plate_facts.CONTROLS} for s in selections],
           "presets": plate_facts.presets_data(presets),
           "facts": [plate_facts.facts_data(plate_facts.facts(presets, s)) for s in selections],
           "context": plate_facts.words_context(None, PLATES), "figures": list(plate_words.FIGURES)}
    return list(zip(selections, plate_words.run(program, job)))


PLATES = {"activations": "XIV.6"}  # a plate cross-reference, as plate.md's [plates] gives them


def test_facts_of_is_facts_data_for_every_selection(presets, from_node):
    assert len(from_node) == len(every_selection(presets)) > 0
    for sel, got in from_node:
        same(got["facts"], plate_facts.facts_data(plate_facts.facts(presets, sel)), str(sel))


def test_datasets_are_the_figures_rows_for_every_selection(presets, from_node):
    assert len(from_node) == len(every_selection(presets)) > 0  # every selection was compared, not none
    rows: dict[str, int] = {}
    for sel, got in from_node:
        f = plate_facts.facts(presets, sel)
        python = {plate_figures.STATES_DATA: plate_figures.states_rows(f),
                  plate_figures.MEMORY_DATA: plate_figures.memory_rows(f),
                  plate_figures.TRAFFIC_DATA: plate_figures.traffic_rows(f),
                  plate_figures.TRAFFIC_LABELS: plate_figures.traffic_label_rows(f)}
        same(got["datasets"], python, str(sel))
        for name, made in python.items():
            rows[name] = rows.get(name, 0) + len(made)
    assert len(rows) == 4 and all(rows.values()), rows  # each dataset's rows were compared, not only empty lists


def test_the_figures_read_every_dataset_plate_js_makes(presets, from_node):
    """The Vega specs' named datasets are exactly those datasets(f) gives (no figure left without its rows)."""
    f = plate_facts.facts(presets, from_node[0][0])
    named = {d["name"] for fig in plate_figures.figures(f) for d in fig.vega["data"] if "source" not in d
             and "values" not in d and "transform" not in d}
    assert named == set(from_node[0][1]["datasets"])


NUM = r"(\d[\d,]*(?:\.\d+)?)"
SIZE = rf"({NUM[1:-1]} (?:TB|GB|MB|kB|B))"
TIME = rf"({NUM[1:-1]} (?:s|ms|µs|ns))"


def check_readout(readout: list[str], f) -> None:
    """The readout's numbers, each generator/notation.py's formatting of a Python fact at its place."""
    fit, traffic = readout
    s = f.selected
    memory = rf"one {re.escape(f.gpu.name)} GPU's {NUM} GB \(10⁹ B\)"
    if np.isnan(s.smallest_fitting):
        found = re.fullmatch(rf"Under stage (\d), {re.escape(f.model.name)}'s model states never fit in {memory}: "
                             rf"every GPU keeps (?:all )?{SIZE} of them.*\.", fit)
        assert found and found[3] == data_size(s.floor_bytes), fit
    else:
        found = re.fullmatch(rf"Under stage (\d), {re.escape(f.model.name)}'s model states fit in {memory} "
                             rf"(?:on a single GPU|once {NUM} or more GPUs share them)"
                             rf"(?: \({NUM} if the memory is read as {NUM} GiB, 2³⁰ B each\))?\.", fit)
        assert found, fit
        n, gib = s.smallest_fitting, s.smallest_fitting_gib
        assert found[3] == (None if n == 1 else num(n)), fit
        assert (found[4], found[5]) == ((None, None) if gib == n else (num(gib), num(f.gpu.memory_gb))), fit
    assert found[1] == str(f.stage_index) and found[2] == num(f.gpu.memory_gb), fit
    found = re.match(rf"Each GPU sends, and receives, {SIZE} per step as replicas grow(?:: the ring all-reduce of "
                     rf"its (\w+) gradients|, {NUM} times the ring all-reduce of (\w+) gradients)\. ", traffic)
    assert found, traffic
    assert found[1] == data_size(s.traffic_limit_bytes), traffic
    assert found[2] == (f.precision_name if f.stage_index == 0 else None), traffic
    assert (found[3], found[4]) == ((None, None) if f.stage_index == 0 else (sig(s.traffic_ratio), f.precision_name))
    after = traffic[found.end():]
    speed = rf"{re.escape(num(f.link_bytes_per_s / 1e9))} GB/s per direction"
    link = re.escape(f.gpu.interconnect)
    if not f.network.nvlink:
        timed = re.match(rf"At {speed} on the {re.escape(f.network.short)} network that takes {TIME}\. ", after)
        assert timed and timed[1] == seconds(s.traffic_limit_s), after
    elif f.gpu.nvlink_domain:
        d = re.escape(num(f.gpu.nvlink_domain))
        timed = re.match(rf"Over {link} \({speed}\) one domain of {d} GPUs takes {TIME}; {link} joins no more than "
                         rf"{d} of them\. ", after)
        assert timed and timed[1] == seconds(float(s.domain_traffic_s)), after
        # the ring of one domain, at the GPU's NVLink speed: (stage's limit) × (d − 1)/d
        assert s.domain_traffic_s == pytest.approx(s.traffic_limit_bytes * (f.gpu.nvlink_domain - 1)
                                                   / f.gpu.nvlink_domain / f.link_bytes_per_s, rel=1e-12)
    else:
        timed = re.match(rf"Over {link} \({speed}\) that would take {TIME}, were every GPU joined by it\. ", after)
        assert timed and timed[1] == seconds(s.traffic_limit_s), after
    assert s.traffic_limit_s == pytest.approx(s.traffic_limit_bytes / f.link_bytes_per_s, rel=1e-12)
    found = timed
    traffic = after
    rest = traffic[found.end():]
    assert "activations (plate XIV.6)" in rest and not re.search(r"\d", rest.replace("XIV.6", "")), rest


def check_describe(describe: dict, f) -> None:
    """The descriptions' numbers, each a Python fact through generator/notation.py."""
    states = describe["fig-states"]
    head = (rf"Model states per GPU against data-parallel replicas for ZeRO stages 0 to 3, log–log, "
            rf"{re.escape(f.model.name)} on the {re.escape(f.gpu.name)}: stage 0 stays at {SIZE}, (under|above) the "
            rf"GPU's {NUM} GB \(10⁹ B\); ")
    found = re.match(head, states)
    assert found and found[1] == data_size(f.unsharded_bytes) and found[3] == num(f.gpu.memory_gb), states
    assert found[2] == ("under" if f.unsharded_bytes <= f.memory_bytes else "above"), states
    fits = [re.fullmatch(rf"stage (\d) (?:never fits|fits from {NUM} (?:replica|replicas))", part)
            for part in states[found.end():].removesuffix(".").split(", ")]
    assert [m and m[1] for m in fits] == ["1", "2", "3"], states
    for k, m in zip((1, 2, 3), fits):
        n = f.stage(k).smallest_fitting
        assert m[2] == (None if np.isnan(n) else num(n)), states
    traffic = describe["fig-traffic"]
    groups = plate_figures.traffic_groups(f)
    base = next(r for g, r in groups if 0 in g)
    sizes = re.findall(rf"approaching {SIZE}", traffic)
    assert sizes == [data_size(f.stage(0).traffic_limit_bytes)] + [
        data_size(f.stage(g[0]).traffic_limit_bytes) for g, _ in groups if 0 not in g], traffic
    assert re.findall(rf"{NUM} times that", traffic) == [sig(r / base) for g, r in groups if 0 not in g], traffic
    assert f"{f.precision_name} gradients" in traffic


def test_every_number_in_the_words_is_a_python_fact_formatted(presets, from_node):
    for sel, got in from_node:
        f = plate_facts.facts(presets, sel)
        w = got["words"]
        check_readout(w["readout"], f)
        check_describe(w["describe"], f)
        for figure, field in (("fig-states", "states_bytes"), ("fig-traffic", "traffic_bytes")):
            expected = [[num(n)] + [data_size(getattr(s, field)[i]) for s in f.stages]
                        for i, n in enumerate(f.replicas)]
            assert w["tables"][figure] == expected, (sel, figure)
