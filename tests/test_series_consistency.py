"""One quantity, one value on every page that states it (issue 42): for selections two plates can both show, what
each plate's page computes and writes (its PAGE facts, its CSV rows and its words, as the page runs them) agrees.

XIV.4 and XIV.5 both state a model's states per GPU under each ZeRO stage and gradient precision, from how many
replicas they fit, and what a step's traffic takes over a flat ring; XIV.4 and XI.2 both state the step time of a
model, GPU, network, global batch and layout on n replicas, the workshop's and the real cluster's, and where the
replica axis stops. A plate that computed one of them its own way would fail here: the last tests plant such a copy
and see it caught."""
from __future__ import annotations

import itertools
import math
import re
from functools import cache

import pytest

from conftest import SERIES
from generator.source import content
from generator.plate import texts
from generator.page.notation import data_size

XIV4, XIV5, XI2 = "xiv-4-data-parallelism", "xiv-5-sharded-data-parallelism", "xi-2-critical-batch-size"
STAGES = ("none", "zero1", "zero2", "zero3")  # XIV.4's sharding ids are XIV.5's stage ids
REL = 1e-12


@cache
def plate(folder: str):
    """A shipped plate's checked content (its module's PAGE and presets)."""
    return content.load(SERIES / folder)


@cache
def page_presets(folder: str) -> dict:
    """The presets as the plate's page data carries them (what its compiled PAGE functions read)."""
    c = plate(folder)
    if folder == XIV4:
        return texts.plain(c.module.facts.presets_data(c.presets))
    if folder == XIV5:
        return texts.plain(c.module.facts.presets_data(c.presets))
    return texts.plain(c.presets)


def page_facts(folder: str, selection: dict) -> dict:
    """One selection's facts as the plate's page computes them."""
    return texts.plain(plate(folder).module.PAGE["facts"](selection, page_presets(folder)))


def xiv4_selection(**choice) -> dict:
    c = plate(XIV4)
    d = c.plate.default
    base = {"model": d.model, "batch": d.batch, "network": d.network, "gpu": c.presets.workshop.gpu,
            "overlap": "step", "precision": "bf16", "topology": "flat", "sharding": "none", "bucket": "default",
            "micro": "1", "layout": "published"}
    return {**base, **choice}


def close(a, b) -> bool:
    return a == b if a is None or b is None else a == pytest.approx(b, rel=REL)


def column(rows: list[list], columns: list[str], name: str) -> list:
    at = columns.index(name)
    return [row[at] for row in rows]


# --- XIV.4 and XIV.5: model states, fits-from counts, a step's traffic ----------------------------------------------

def memory_selections() -> list[tuple[str, str, str, str, str]]:
    """(model, GPU, stage, precision, network): every model and stage, both precisions, two GPUs, both networks."""
    p = plate(XIV5).presets
    gpus = [p.workshop.gpu, *[g for g in p.gpus if g != p.workshop.gpu][-1:]]
    return list(itertools.product(p.models, gpus, STAGES, ("bf16", "fp32"), list(p.networks)[:1])) + \
        [(m, p.workshop.gpu, s, "bf16", n) for m in list(p.models)[:1] for s in STAGES for n in list(p.networks)[1:]]


def memory_differences(model: str, gpu: str, stage: str, precision: str, network: str) -> list[str]:
    """Where XIV.4 and XIV.5 disagree for one selection, as lines naming the quantity (none when they agree)."""
    four = page_facts(XIV4, xiv4_selection(model=model, gpu=gpu, sharding=stage, precision=precision,
                                           network=network, layout="one-gpu"))
    five = page_facts(XIV5, {"model": model, "gpu": gpu, "stage": stage, "precision": precision,
                             "network": network})
    k = five["stage"]
    s = five["stages"][k]
    out = []
    replicas = [p["replicas"] for p in four["points"]]
    if replicas != five["replicas"]:
        out.append(f"replica axes: {replicas} against {five['replicas']}")
        return out
    for i, p in enumerate(four["points"]):
        if not close(p["states_bytes"], s["states_bytes"][i]):
            out.append(f"states per GPU on {p['replicas']}: {p['states_bytes']} against {s['states_bytes'][i]}")
        if not close(p["comm_s"], s["traffic_s"][i]):
            out.append(f"a step's traffic on {p['replicas']}: {p['comm_s']} against {s['traffic_s'][i]}")
    if not close(four["smallest_fitting_replicas"], s["smallest_fitting"]):
        out.append(f"fits from {four['smallest_fitting_replicas']} against {s['smallest_fitting']}")
    # the pages' CSVs: XIV.4's states per GPU and XIV.5's for the same stage, row by row
    c4 = plate(XIV4).module.page_rows.SELECTION_COLUMNS
    rows4 = plate(XIV4).module.PAGE["csv_rows"](four)
    rows5 = [r for r in plate(XIV5).module.PAGE["csv_rows"](five) if r[4] == k]
    states4 = column(rows4, [c[0] for c in c4], "model_states_gb")
    states5 = column(rows5, list(plate(XIV5).module.hooks.CSV_COLUMNS), "states_gb")
    if not all(close(a, b) for a, b in zip(states4, states5, strict=True)):
        out.append(f"the CSVs' states per GPU: {states4} against {states5}")
    # the pages' words: the model states each page writes for the whole state (stage 0 on one GPU), and the count
    # from which the selected stage fits
    W4 = texts.plain(plate(XIV4).module.context(plate(XIV4).presets.workshop.seq_len, {}))
    if k == 0:
        said4 = re.search(r"Model states: (.+?) per GPU", " ".join(plate(XIV4).module.PAGE["readout"](four, W4)))
        said5 = re.search(r"stage 0 stays at (.+?),", plate(XIV5).module.PAGE["describe"](five, "fig-states",
                                                                                         {"plates": {}}))
        if said4 is None or said5 is None or said4.group(1) != said5.group(1):
            out.append(f"the words' model states: {said4 and said4.group(1)} against {said5 and said5.group(1)}")
    elif s["smallest_fitting"] is not None and four["smallest_fitting_on_grid"] is not None:
        said4 = re.search(r"they fit on .+? from ([\d,]+) replicas", " ".join(plate(XIV4).module.PAGE["readout"](four, W4)))
        said5 = re.search(r"once ([\d,]+) or more GPUs share them|(without) being shared",
                          " ".join(plate(XIV5).module.PAGE["readout"](five, {"plates": {}})))
        n5 = None if said5 is None else ("1" if said5.group(2) else said5.group(1))
        if said4 is None or n5 is None or said4.group(1) != n5:
            out.append(f"the words' fits-from count: {said4 and said4.group(1)} against {n5}")
    return out


@pytest.mark.parametrize("choice", memory_selections(), ids="-".join)
def test_xiv4_and_xiv5_state_the_same_memory_and_traffic(choice):
    assert memory_differences(*choice) == []


# --- XIV.4 and XI.2: the workshop's and the real cluster's step time, the replica axis ----------------------------

def step_selections() -> list[tuple[str, str, str, str, str]]:
    """(model, network, batch, layout, step) XI.2 offers, XIV.4 too, on the workshop's GPU."""
    c = plate(XI2)
    layouts = ["published", "tp8"]
    return list(itertools.product(c.presets["models"], c.presets["networks"], list(c.presets["batches"])[:2],
                                  layouts, ("workshop", "cluster")))


def step_differences(model: str, network: str, batch: str, layout: str, step: str) -> list[str]:
    """Where XIV.4 and XI.2 disagree on a fixed global batch's step on n replicas (none when they agree)."""
    c = plate(XI2)
    d = c.plate.default
    sel = {**{k: getattr(d, k) for k in c.module.page_facts.CONTROLS}, "model": model, "network": network,
           "batch": batch, "layout": layout, "step": step, "gpu": c.presets["workshop"]["gpu"]}
    two = page_facts(XI2, sel)
    four = page_facts(XIV4, xiv4_selection(model=model, network=network, batch=batch, layout=layout))
    (fixed,) = [w for w in two["ways"] if w["way"] == "global"]
    shown = {p["replicas"]: i for i, p in enumerate(four["points"])}
    # the real cluster is priced within one NVLink domain only, over the GPU's own link; one replica reduces nothing
    priced = [n for i, n in enumerate(shown) if step == "workshop" or four["cluster"]["step_s"][i] is not None
              or n == 1]
    out = []
    if fixed["replicas"] != priced:
        out.append(f"replica axes: {fixed['replicas']} against {priced}")
        return out
    for n, seconds in zip(fixed["replicas"], fixed["step_s"]):
        theirs = four["points"][shown[n]]["step_s"] if step == "workshop" else four["cluster"]["step_s"][shown[n]]
        theirs = four["points"][shown[n]]["compute_s"] if theirs is None else theirs  # one replica, outside a domain
        if not close(seconds, theirs):
            out.append(f"the {step}'s step on {n}: {seconds} against {theirs}")
    # the CSVs: XI.2's step_s column for the fixed batch, XIV.4's step_s or cluster_step_s
    rows2 = [r for r in c.module.PAGE["csv_rows"](two) if r[c.module.CSV_COLUMNS.index("way")] == "global"]
    c4 = [x[0] for x in plate(XIV4).module.page_rows.SELECTION_COLUMNS]
    rows4 = plate(XIV4).module.PAGE["csv_rows"](four)
    steps4 = dict(zip(column(rows4, c4, "replicas"), column(rows4, c4, "step_s" if step == "workshop"
                                                                  else "cluster_step_s")))
    for row in rows2:
        n = row[c.module.CSV_COLUMNS.index("replicas")]
        if steps4[n] == "":  # one replica outside an NVLink domain: XIV.4 prices no real cluster there
            continue
        if not close(row[c.module.CSV_COLUMNS.index("step_s")], steps4[n]):
            out.append(f"the CSVs' {step} step on {n}: {row[c.module.CSV_COLUMNS.index('step_s')]} against {steps4[n]}")
    return out


@pytest.mark.parametrize("choice", step_selections(), ids="-".join)
def test_xiv4_and_xi2_state_the_same_step_time(choice):
    assert step_differences(*choice) == []


def test_the_shared_selections_are_many():
    assert len(memory_selections()) >= 20 and len(step_selections()) >= 20


# --- the check can fail: a plate's own copy of a shared quantity is caught ----------------------------------------

def test_a_plate_stating_its_own_model_states_is_caught(monkeypatch):
    """XIV.5 with its own state formula (16 B/param whatever the gradients), as it had before the series shared one."""
    own = plate(XIV5).module.page_facts
    shared = own.state_bytes
    monkeypatch.setattr(own, "state_bytes", lambda params, stage, n, b: shared(params, stage, n, 2))
    assert memory_differences("llama3-8b", plate(XIV5).presets.workshop.gpu, "zero1", "fp32",
                              next(iter(plate(XIV5).presets.networks)))


def test_a_plate_stating_its_own_step_is_caught(monkeypatch):
    """XI.2 with a step of its own (its compute as XIV.4's, its all-reduce 1% slower)."""
    own = plate(XI2).module.page_facts
    shared = own.step_time
    monkeypatch.setattr(own, "step_time", lambda *a: shared(*a) * 1.01)
    assert step_differences("llama3-8b", "ib-400", "4M", "published", "workshop")


def test_a_plate_pricing_its_own_real_cluster_is_caught(monkeypatch):
    """XI.2's real cluster with gradients bucketed as one GPU's whole model whatever the layout."""
    own = plate(XI2).module.page_facts
    shared = own.gradient_buckets
    monkeypatch.setattr(own, "gradient_buckets",
                        lambda m, lay, b, cap: shared(m, {"tensor": 1, "pipeline": 1}, b, cap))
    assert step_differences("llama3-405b", "ib-400", "4M", "published", "cluster")


# --- FP32 gradients on both pages (issue 42, error 2), derived from the bytes per parameter --------------------------

# Adam in mixed precision, per parameter: BF16 weights, the gradients in the precision they are reduced (and kept)
# in, FP32 master weights and Adam's two FP32 moments (Rajbhandari et al. 2020)
WEIGHTS, FP32_GRADIENTS, MASTER, MOMENTS = 2, 4, 4, 4 + 4


def fp32_models() -> list[str]:
    """The catalogue's models whose weights and FP32 gradients leave room on the workshop's GPU (stage 1 can fit)."""
    p = plate(XIV5).presets
    memory = p.gpus[p.workshop.gpu].memory_gb * 1e9
    return [i for i, m in p.models.items() if (WEIGHTS + FP32_GRADIENTS) * m.params < memory]


@pytest.mark.parametrize("model", fp32_models())
def test_fp32_gradients_make_the_states_18_bytes_a_parameter_on_both_pages_and_both_csvs(model):
    c = plate(XIV5)
    per_param = WEIGHTS + FP32_GRADIENTS + MASTER + MOMENTS
    gpu = c.presets.gpus[c.presets.workshop.gpu]
    N, memory = c.presets.models[model].params, gpu.memory_gb * 1e9
    whole = per_param * N
    kept = WEIGHTS + FP32_GRADIENTS  # stage 1 keeps weights and gradients whole, shards the optimiser's 12 bytes
    n = 1
    while (kept + (per_param - kept) / n) * N > memory:
        n += 1
    size = data_size(whole, 4)
    network = next(iter(c.presets.networks))
    # XIV.4: the readout's memory paragraph and its page CSV, FP32 gradients, no sharding and ZeRO-1
    four = page_facts(XIV4, xiv4_selection(model=model, precision="fp32", network=network, layout="one-gpu"))
    W4 = texts.plain(plate(XIV4).module.context(plate(XIV4).presets.workshop.seq_len, {}))
    said = " ".join(plate(XIV4).module.PAGE["readout"](four, W4))
    assert f"Model states: {size} per GPU" in said and f"Sharded with ZeRO-1 they would fit from {n} replicas" in said
    c4 = [x[0] for x in plate(XIV4).module.page_rows.SELECTION_COLUMNS]
    rows4 = plate(XIV4).module.PAGE["csv_rows"](four)
    assert all(x == pytest.approx(whole / 1e9, rel=REL) for x in column(rows4, c4, "model_states_gb"))
    zero1 = page_facts(XIV4, xiv4_selection(model=model, precision="fp32", network=network, layout="one-gpu",
                                            sharding="zero1"))
    assert zero1["smallest_fitting_replicas"] == n
    fits = dict(zip(column(plate(XIV4).module.PAGE["csv_rows"](zero1), c4, "replicas"),
                    column(plate(XIV4).module.PAGE["csv_rows"](zero1), c4, "fits_in_memory")))
    assert min(r for r, ok in fits.items() if ok) == 2 ** math.ceil(math.log2(n))  # the grid's first power of two
    # XIV.5: the readout, Figure 1's words and the page CSV, stage 1 with FP32 gradients
    five = page_facts(XIV5, {"model": model, "gpu": gpu.id, "stage": "zero1", "precision": "fp32",
                             "network": network})
    readout = " ".join(plate(XIV5).module.PAGE["readout"](five, {"plates": {}}))
    assert f"once {n} or more GPUs share them" in readout, readout
    assert f"stage 0 stays at {size}" in plate(XIV5).module.PAGE["describe"](five, "fig-states", {"plates": {}})
    columns5 = list(plate(XIV5).module.hooks.CSV_COLUMNS)
    rows5 = plate(XIV5).module.PAGE["csv_rows"](five)
    stage = columns5.index("stage")
    assert all(x == pytest.approx(whole / 1e9, rel=REL)
               for x in column([r for r in rows5 if r[stage] == 0], columns5, "states_gb"))
    first = [r for r in rows5 if r[stage] == 1 and r[columns5.index("states_gb")] * 1e9 <= memory]
    assert first[0][columns5.index("replicas")] == 2 ** math.ceil(math.log2(n))
    if model == "llama3-8b" and gpu.id == "h100-sxm" and gpu.memory_gb == 80:  # the issue's own figures
        assert (size, n) == ("144.5 GB", 4)
