"""Plate XIV.5's page functions, the Python the page runs compiled (tests/test_compiler.py holds the compiled code
equal to it): page_facts.facts against the build's vectorised facts, page_rows's datasets and CSV rows against the
model's arrays, and every number page_words writes against generator/page/notation.py's formatting of the facts."""
from __future__ import annotations

import itertools
import math
import re
from types import SimpleNamespace

import numpy as np
import pytest

from generator.plate import texts
from generator.page.notation import data_size, num, seconds, sig
from xiv5_support import presets  # noqa: F401 (fixtures)
from xiv5_support import data, page_facts, page_rows, page_words, plate_facts, plate_figures, plate_words
from xiv5_support import submodule

RTOL = 1e-12
PLATES = {"activations": "XIV.3"}  # a plate cross-reference, as plate.md's [plates] gives them


def same(got, expected, where="") -> None:
    """got (plain data) equals expected: floats to RTOL, NaN as None, everything else exactly."""
    if isinstance(expected, float) and math.isnan(expected):
        assert got is None, where
    elif isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        # pytest.approx(expected, rel=RTOL, abs=0), written out: building an approx for each of some 100,000 floats
        # cost seconds (an infinity equals only itself)
        assert got == expected or (not math.isinf(expected) and abs(got - expected) <= RTOL * abs(expected)), \
            (where, got, expected)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), (where, sorted(got), sorted(expected))
        for key in expected:
            same(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (a, b) in enumerate(zip(got, expected)):
            same(a, b, f"{where}[{i}]")
    else:
        assert got == expected and (type(got) is type(expected) or (
            isinstance(expected, int) and not isinstance(got, bool))), (where, got, expected)


def every_selection(presets):
    gpus = plate_facts.gpus_of(presets)
    return [plate_facts.Selection(*ids) for ids in itertools.product(
        presets.models, gpus, plate_facts.STAGES, plate_facts.PRECISIONS, presets.networks)]


def vectorised(f) -> dict:
    """The build's facts of a selection (plate_facts.Facts, numpy over the replica grid), field by field as
    page_facts.facts names them."""
    return {
        "selection": {key: getattr(f.selection, key) for key in plate_facts.CONTROLS},
        "model": {"name": f.model.name, "params": float(f.params)},
        "gpu": {"name": f.gpu.name, "memory_gb": float(f.gpu.memory_gb), "nvlink_domain": f.gpu.nvlink_domain,
                "interconnect": f.gpu.interconnect},
        "network": {"name": f.network.name, "short": f.network.short, "nvlink": f.network.nvlink},
        "caption": " · ".join((f.model.name, f.gpu.name, f"stage {f.stage_index}", f"{f.precision_name} gradients",
                               f.network.short)),
        "precision_name": f.precision_name, "stage": f.stage_index, "grad_bytes": f.grad_bytes,
        "max_replicas": f.max_replicas, "replicas": [int(n) for n in f.replicas], "memory_bytes": f.memory_bytes,
        "memory_gib_bytes": float(f.memory_gib_bytes), "link_bytes_per_s": f.link_bytes_per_s,
        "link_gbytes_per_s": f.link_bytes_per_s / 1e9, "unsharded_bytes": f.unsharded_bytes,
        "fsdp_units": f.fsdp_units, "latency_at": f.latency_at, "hypothetical": [bool(h) for h in f.hypothetical],
        "stages": [{"stage": s.stage, "states_bytes": [float(b) for b in s.states_bytes],
                    "floor_bytes": s.floor_bytes, "smallest_fitting": float(s.smallest_fitting),
                    "smallest_fitting_gib": float(s.smallest_fitting_gib),
                    "smallest_fitting_on_grid": s.smallest_fitting_on_grid,
                    "traffic_bytes": [float(b) for b in s.traffic_bytes], "traffic_s": [float(t) for t in s.traffic_s],
                    "traffic_ratio": s.traffic_ratio, "traffic_limit_bytes": s.traffic_limit_bytes,
                    "traffic_limit_s": s.traffic_limit_s, "domain_traffic_s": s.domain_traffic_s,
                    "latency_s": [float(t) for t in s.latency_s], "latency_at_s": s.latency_at_s}
                   for s in f.stages],
    }


@pytest.fixture(scope="module")
def made(presets):
    """For every selection: its Facts, page_facts.facts of its ids under the page's presets, and the rows and words
    of those facts."""
    page_presets = texts.plain(plate_facts.presets_data(presets))
    out = []
    facts = [plate_facts.facts(presets, s) for s in every_selection(presets)]
    words = plate_words.words(facts, PLATES)
    for f, w in zip(facts, words):
        got = texts.plain(page_facts.facts({k: getattr(f.selection, k) for k in plate_facts.CONTROLS}, page_presets))
        out.append((f, got, page_rows.datasets(got), w))
    return out


def test_facts_are_the_vectorised_facts_for_every_selection(presets, made):
    assert len(made) == len(every_selection(presets)) > 0
    for f, got, _, _ in made:
        same(got, vectorised(f), str(f.selection))
        assert got == data(f)  # what the build's words, rows and CSV are made from


def test_an_id_the_controls_do_not_have_fails(presets):
    page_presets = texts.plain(plate_facts.presets_data(presets))
    good = {k: getattr(next(iter(every_selection(presets))), k) for k in plate_facts.CONTROLS}
    for key in plate_facts.CONTROLS:
        with pytest.raises((KeyError, ValueError)):
            page_facts.facts({**good, key: "no-such-id"}, page_presets)


def expected_rows(f) -> dict:
    """The figures' rows written out from the vectorised facts."""
    page = data(f)  # the facts as the page has them, made once for both
    above = page_rows.label_above(page)
    groups = {}
    for s in f.stages:
        groups.setdefault(s.traffic_ratio, []).append(s.stage)
    ordered = sorted(groups.items())
    # Figure 1's span: a third of the least of stage 3 where its name sits, stage 2's floor and the GPU's memory, up
    # to twice the unsharded states (the name's place is the rows' own: label_index)
    at = min(page_rows.label_index(page), len(f.replicas) - 1)
    low = min(float(f.stages[3].states_bytes[at]), float(f.stages[2].states_bytes[-1]), f.memory_bytes) / 3
    return {
        page_rows.STATES_DATA: [{"replicas": int(n), "stage": f"stage {s.stage}", "states_gb": float(b) / 1e9,
                                 "selected": s.stage == f.stage_index, "label_above": above[s.stage]}
                                for s in f.stages for n, b in zip(f.replicas, s.states_bytes)],
        page_rows.MEMORY_DATA: [{"memory_gb": f.memory_bytes / 1e9, "replicas": f.max_replicas,
                                 "label_above": f.unsharded_bytes <= f.memory_bytes,
                                 "gpu_label": f"{f.gpu.name} memory: {num(f.gpu.memory_gb)} GB",
                                 "low_gb": low / 1e9, "high_gb": f.unsharded_bytes * 2 / 1e9}],
        page_rows.TRAFFIC_DATA: [{"replicas": int(n), "stage": f"stage {s.stage}", "traffic_gb": float(b) / 1e9,
                                  "selected": s.stage == f.stage_index}
                                 for s in f.stages for n, b in zip(f.replicas, s.traffic_bytes)],
        page_rows.TRAFFIC_LABELS: [{"replicas": f.max_replicas,
                                    "traffic_gb": float(f.stage(stages[0]).traffic_bytes[-1]) / 1e9,
                                    "text": page_words.stages_text(stages), "stage": f"stage {stages[0]}"}
                                   for _, stages in ordered],
    }


def test_datasets_are_the_figures_rows_for_every_selection(presets, made):
    assert len(made) == len(every_selection(presets)) > 0  # every selection was compared, not none
    rows: dict[str, int] = {}
    for f, _, got, _ in made:
        expected = expected_rows(f)
        same(got, expected, str(f.selection))
        assert plate_figures.rows(f) == got  # the build draws the figures from the same rows
        for name, listed in expected.items():
            rows[name] = rows.get(name, 0) + len(listed)
    assert len(rows) == 4 and all(rows.values()), rows  # each dataset's rows were compared, not only empty lists


def test_the_figures_read_every_dataset_datasets_makes(presets, made):
    """The Vega specs' named datasets are exactly those datasets(f) gives (no figure left without its rows)."""
    f = made[0][0]
    named = {d["name"] for fig in plate_figures.figures(f) for d in fig.vega["data"] if "source" not in d
             and "values" not in d and "transform" not in d}
    assert named == set(made[0][2])


def test_the_site_csv_is_each_selection_s_csv_rows(presets, made):
    """hooks.csv_text: every model, GPU, precision and network, a row per stage and replica count, each row the
    vectorised facts' numbers, and each selection's block the csv_rows the page downloads."""
    hooks = submodule("hooks")
    lines = hooks.csv_text(SimpleNamespace(presets=presets)).splitlines()
    assert lines[0] == ",".join(hooks.CSV_COLUMNS)
    expected = []
    for f, got, _, _ in made:
        if f.selection.stage != "none":
            continue
        block = []
        for s in f.stages:
            for i, r in enumerate(f.replicas):
                block.append(",".join([f.selection.model, f.selection.gpu, f.selection.precision,
                                       f.selection.network, str(s.stage), str(int(r)),
                                       repr(float(s.states_bytes[i]) / 1e9), repr(float(s.traffic_bytes[i]) / 1e9),
                                       repr(float(s.traffic_s[i])), repr(float(s.latency_s[i])),
                                       "yes" if f.hypothetical[i] else "no"]))
        assert [",".join(map(hooks.csv_cell, row)) for row in page_rows.csv_rows(got)] == block, f.selection
        expected += block
    assert len(expected) > 0 and lines[1:] == expected


NUM = r"(\d[\d,]*(?:\.\d+)?)"
SIZE = rf"({NUM[1:-1]} (?:TB|GB|MB|kB|B))"
TIME = rf"({NUM[1:-1]} (?:s|ms|µs|ns))"


def check_readout(readout: list[str], f) -> None:
    """The readout's numbers, each generator/page/notation.py's formatting of a Python fact at its place."""
    fit, traffic = readout
    s = f.selected
    memory = rf"one {re.escape(f.gpu.name)} GPU's {NUM} GB \(10⁹ B\)"
    if np.isnan(s.smallest_fitting):
        found = re.fullmatch(rf"Under stage (\d), {re.escape(f.model.name)}'s model states never fit in {memory}: "
                             rf"every GPU keeps (?:all )?{SIZE} of them.*\.", fit)
        kept = data_size(s.floor_bytes, 4)  # model states to four figures, as every plate writes them
        assert found and found[3] == kept, fit
    else:
        found = re.fullmatch(rf"Under stage (\d), {re.escape(f.model.name)}'s model states fit in {memory} "
                             rf"(?:without being shared at all|once {NUM} or more GPUs share them)"
                             rf"(?: \({NUM} if the memory is read as {NUM} GiB, 2³⁰ B each\))?\.", fit)
        assert found, fit
        n, gib = s.smallest_fitting, s.smallest_fitting_gib
        assert found[3] == (None if n == 1 else num(n)), fit
        assert (found[4], found[5]) == ((None, None) if gib == n else (num(gib), num(f.gpu.memory_gb))), fit
    assert found[1] == str(f.stage_index) and found[2] == num(f.gpu.memory_gb), fit
    found = re.match(rf"As replicas grow, each GPU's traffic per step, sent and received alike, approaches {SIZE}(?:: the ring all-reduce of "
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
    rest = after[timed.end():]
    if f.stage_index > 0 and not f.network.nvlink:
        # FSDP has no stage 1: its latency is priced as stage 2's, and the words say so
        why = (r"stage 1 is priced as FSDP's stage 2, a gather and a reduce-scatter per layer \(DeepSpeed's buckets "
               r"set its real count\)" if f.stage_index == 1 else "FSDP makes them per layer")
        priced = re.match(rf"At {NUM} GPUs NCCL's cost model adds {TIME} of latency per step: it has no tree for "
                          rf"these calls, and {why}\. ", rest)
        assert priced and priced[1] == num(f.latency_at) and priced[2] == seconds(s.latency_at_s), rest
        rest = rest[priced.end():]
    assert "activations (plate XIV.3)" in rest and not re.search(r"\d", rest.replace("XIV.3", "")), rest


def check_describe(describe: dict, f) -> None:
    """The descriptions' numbers, each a Python fact through generator/page/notation.py."""
    states = describe["fig-states"]
    head = (rf"Model states per GPU against data-parallel replicas for ZeRO stages 0 to 3, log–log, "
            rf"{re.escape(f.model.name)} on the {re.escape(f.gpu.name)}: stage 0 stays at {SIZE}, (under|above) the "
            rf"GPU's {NUM} GB \(10⁹ B\); ")
    found = re.match(head, states)
    assert found and found[1] == data_size(f.unsharded_bytes, 4) and found[3] == num(f.gpu.memory_gb), states
    assert found[2] == ("under" if f.unsharded_bytes <= f.memory_bytes else "above"), states
    fits = [re.fullmatch(rf"stage (\d) (?:never fits|fits from {NUM} (?:replica|replicas))", part)
            for part in states[found.end():].removesuffix(".").split(", ")]
    assert [m and m[1] for m in fits] == ["1", "2", "3"], states
    for k, m in zip((1, 2, 3), fits):
        n = f.stage(k).smallest_fitting
        assert m[2] == (None if np.isnan(n) else num(n)), states
    traffic = describe["fig-traffic"]
    groups = page_words.same_traffic(data(f))
    base = next(r for g, r in groups if 0 in g)
    sizes = re.findall(rf"approaching {SIZE}", traffic)
    assert sizes == [data_size(f.stage(0).traffic_limit_bytes)] + [
        data_size(f.stage(g[0]).traffic_limit_bytes) for g, _ in groups if 0 not in g], traffic
    assert re.findall(rf"{NUM} times that", traffic) == [sig(r / base) for g, r in groups if 0 not in g], traffic
    assert f"{f.precision_name} gradients" in traffic
    assert ("in each stage's colour in turn" in traffic) == any(len(g) > 1 for g, _ in groups), traffic


def check_titles(title: dict, f) -> None:
    """Each figure's point for the selected stage, its numbers Python facts through generator/page/notation.py."""
    s, k = f.selected, f.stage_index
    memory = rf"one {re.escape(f.gpu.name)}'s {NUM} GB"
    found = re.fullmatch(rf"Under stage (\d), {re.escape(f.model.name)}'s states "
                         rf"(?:never fit in {memory}|fit in {memory} from {NUM} (?:replica|replicas))",
                         title["fig-states"])
    assert found and found[1] == str(k), title
    assert (found[2] or found[3]) == num(f.gpu.memory_gb), title
    assert found[4] == (None if np.isnan(s.smallest_fitting) else num(s.smallest_fitting)), title
    sent = f"{data_size(s.traffic_limit_bytes)} per GPU and step"
    ratio = s.traffic_ratio / f.stage(0).traffic_ratio
    # the stages that send what the selected one sends are named with it: they share its line in the figure
    alike = [j for j in range(4) if f.stage(j).traffic_ratio == s.traffic_ratio]
    named = [j for j in alike if j != 0 or k == 0]
    subject = f"Stage {named[0]} sends" if len(named) == 1 else \
        f"Stages {', '.join(map(str, named[:-1]))} and {named[-1]} send"
    assert title["fig-traffic"] == (f"Stage 0 sends {sent}: the ring all-reduce" if alike == [0] else
                                    f"{subject} {sent}, the ring all-reduce's bytes" if k == 0 else
                                    f"{subject} as much as plain data parallelism, {sent}" if ratio == 1 else
                                    f"{subject} {sig(ratio)} times plain data parallelism's bytes, {sent}"), title
    assert str(k) in subject


def test_every_number_in_the_words_is_a_python_fact_formatted(presets, made):
    assert len(made) == len(every_selection(presets)) > 0
    for f, _, _, w in made:
        check_titles(w["title"], f)
        check_readout(w["readout"], f)
        check_describe(w["describe"], f)
        for figure, field in (("fig-states", "states_bytes"), ("fig-traffic", "traffic_bytes")):
            expected = [[num(n)] + [data_size(getattr(s, field)[i]) for s in f.stages]
                        for i, n in enumerate(f.replicas)]
            assert w["tables"][figure] == expected, (f.selection, figure)
