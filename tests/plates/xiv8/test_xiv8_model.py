"""Plate XIV.8's facts against formulas written here: each GPU's parameters are the series' N/(t·p) (Llama 3.1 405B
on TP 8 × PP 16: 3.171·10⁹, spec/plate-xiv-8-facts.md), a micro-batch's forward and backward are 6·N·T/(P·u) split
1:2, the step is the simulation's, the traffic between stages 2·b·s·h/t bytes; and the layout formula in platelib
moves XIV.4's and XIV.8's numbers together."""
from __future__ import annotations

import itertools

import pytest

from conftest import SERIES
from generator.source import content
from generator.plate import texts
from xiv8_support import default_ids, facts, presets, submodule

REL = 1e-12


def test_llama_3_1_405b_holds_3_171_billion_parameters_per_gpu_on_tp8_pp16():
    f = facts(model="llama3-405b", layout="tp8-pp16")
    assert f["p"] == 16 and f["t"] == 8
    assert f["per_gpu_params"] == pytest.approx(3.171e9, rel=5e-4)
    assert f["per_gpu_params"] == pytest.approx(presets()["models"]["llama3-405b"]["params"] / 128, rel=REL)


@pytest.mark.parametrize("layout", list(presets()["pipelines"]))
@pytest.mark.parametrize("model", list(presets()["models"]))
def test_a_micro_batchs_passes_and_the_traffic_between_stages_follow_the_model(layout, model):
    p_ = presets()
    f = facts(model=model, layout=layout)
    lay = p_["pipelines"][layout]
    m = p_["models"][model]
    gpu = p_["gpus"][default_ids()["gpu"]]
    w = p_["workshop"]
    tokens = p_["settings"]["micro_sequences"] * w["seq_len"]
    work = 6 * m["params"] / (lay["tensor"] * lay["pipeline"]) * tokens / (gpu["peak_tflops"] * 1e12 * w["mfu"])
    assert f["forward_s"] + f["backward_s"] == pytest.approx(work, rel=REL)
    assert f["backward_s"] == pytest.approx(p_["settings"]["backward_ratio"] * f["forward_s"], rel=REL)
    assert f["p2p_bytes"] == pytest.approx(2 * tokens * m["d_model"] / lay["tensor"], rel=REL)
    assert f["busy_s"] == pytest.approx(f["m"] * work, rel=REL)
    # the step is the drawn schedule's last pass, and its idle share what the step leaves beside the work
    assert f["step_s"] == pytest.approx(max(op["end"] for op in f["ops"]), rel=REL)
    assert f["share"] == pytest.approx(1 - f["busy_s"] / f["step_s"], rel=REL)


def test_the_llama_3_405b_sequence_crosses_a_boundary_in_268_million_bytes():
    """One 8,192-token BF16 sequence at h = 16,384: 268,435,456 B, 5.37 ms at 50 GB/s (spec's claim at t = 1)."""
    f = facts(model="llama3-405b", layout="tp8-pp16", network="ib-400")
    assert f["p2p_bytes"] * f["t"] == 268_435_456
    assert f["p2p_s"] * f["t"] == pytest.approx(268_435_456 / 50e9, rel=REL)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "interleaved", "zb-h1"])
def test_the_readouts_fewest_micro_batches_is_the_first_count_at_or_under_the_target(schedule):
    sched = submodule("schedule")
    chunks_ = list(presets()["chunks"])[-2:] if schedule == "interleaved" else [default_ids()["chunks"]]
    for layout, chunks in itertools.product(presets()["pipelines"], chunks_):
        f = facts(schedule=schedule, layout=layout, chunks=chunks, micro="m16")
        if not f["runs"]:
            continue
        times = (f["forward_s"], f["backward_s"], f["weight_s"])
        unit = f["p"] if schedule == "interleaved" else 1
        v = f["chunks_drawn"]

        def share(m):
            r = sched.simulate(schedule, f["p"], m, v, *times, False)
            return (r["end"] - r["busy"]) / r["end"]
        assert share(f["fewest"]) <= f["target"] * (1 + 1e-9)
        if f["fewest"] > unit:
            assert share(f["fewest"] - unit) > f["target"] * (1 + 1e-9)


def test_interleaving_with_m_not_a_multiple_of_p_is_drawn_as_1f1b_and_says_so():
    f = facts(schedule="interleaved", layout="tp8-pp16", micro="m8")
    assert not f["runs"] and f["drawn"] == "1f1b"
    W = submodule("__init__").words_context(None, {})
    assert "multiple of the 16 stages" in submodule("page_words").readout(f, W)[0]


# --- one layout, one formula: platelib.layout and platelib.compute, shared with XIV.4 -----------------------------

def xiv4_and_xiv8():
    """Each GPU's parameters for Llama 3.1 405B on TP 8 × PP 16, as XIV.4's and XIV.8's pages compute them."""
    four = content.load(SERIES / "xiv-4-data-parallelism")
    presets4 = texts.plain(four.module.facts.presets_data(four.presets))
    d = four.plate.default
    sel4 = {"model": "llama3-405b", "batch": d.batch, "network": d.network, "gpu": four.presets.workshop.gpu,
            "overlap": "step", "precision": "bf16", "topology": "flat", "sharding": "none", "bucket": "default",
            "micro": "1", "layout": "tp8-pp16"}
    f4 = four.module.PAGE["facts"](sel4, presets4)
    f8 = facts(model="llama3-405b", layout="tp8-pp16")
    return f4, f8


def uneven(params, gpus_per_replica):
    """A planted change of the shared formula: each GPU holds a quarter more than N/g."""
    return params / gpus_per_replica * 1.25


def test_xiv4_and_xiv8_state_the_same_parameters_per_gpu_and_move_together_with_platelib(monkeypatch):
    """XIV.4's model states per GPU and XIV.8's follow platelib.compute.gpu_params: changed there (its code replaced,
    wherever a plate bound the name), both pages' numbers change, by the same factor."""
    import platelib.compute as compute
    f4, f8 = xiv4_and_xiv8()
    states4 = f4["points"][0]["states_bytes"]
    assert states4 == pytest.approx(f8["states_bytes"], rel=REL)
    monkeypatch.setattr(compute.gpu_params, "__code__", uneven.__code__)
    g4, g8 = xiv4_and_xiv8()
    assert g4["points"][0]["states_bytes"] == pytest.approx(1.25 * states4, rel=REL)
    assert g8["states_bytes"] == pytest.approx(1.25 * f8["states_bytes"], rel=REL)
    assert g8["per_gpu_params"] == pytest.approx(1.25 * f8["per_gpu_params"], rel=REL)


@pytest.mark.parametrize("chunks", list(presets()["chunks"]))
def test_figure_3_counts_m_sends_a_boundary_per_step_and_v_times_as_many_under_interleaving(chunks):
    f = facts(layout="tp8-pp16", micro="m32", chunks=chunks)
    v = presets()["chunks"][chunks]["count"]
    assert {one["schedule"]: one["sends"] for one in f["each"]} == {"gpipe": 32, "1f1b": 32, "zb-h1": 32,
                                                                    "interleaved": 32 * v}
