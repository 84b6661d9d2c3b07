"""Plate XIV.5's model: the facts file's claims for the spec's own presets, the formulas piece by piece, and
properties over any model size and replica count."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from generator.page.notation import num
from xiv5_support import K, SPEC_GPU, SPEC_MODEL, fits_from, has_spec, kept, pairs, presets  # noqa: F401
from xiv5_support import plate_facts
from xiv5_support import model

N = np.array([1, 2, 3, 4, 8, 64, 1024, 16384], dtype=np.float64)


def test_fits_as_the_formulas_say_and_as_the_facts_file_says_for_its_presets(presets):
    """Every model on every GPU of the content: the smallest fitting count is the formulas' (by bisection in the
    test), in 10⁹ B and in GiB; the facts file's numbers for Llama 3 8B on the H100 SXM when the content holds
    them."""
    gpus = plate_facts.gpus_of(presets)
    for m, g in pairs(presets):
        params, memory_gb = presets.models[m].params, gpus[g].memory_gb
        for unit in (model.GB, model.GIB):
            for b in (2, 4):
                got = [float(model.smallest_replicas(params, k, memory_gb * unit, b)) for k in (0, 1, 2, 3)]
                expected = [fits_from(params, k, memory_gb * unit, b) for k in (0, 1, 2, 3)]
                np.testing.assert_array_equal(got, expected, err_msg=f"{m} on {g}, unit {unit:g}, {b}-byte gradients")
    if has_spec(presets):
        params, gpu = presets.models[SPEC_MODEL].params, gpus[SPEC_GPU]
        in_gb = [model.smallest_replicas(params, k, gpu.memory_gb * model.GB, 2) for k in (0, 1, 2, 3)]
        assert np.isnan(in_gb[0])  # 128.5 GB never fits in 80 unsharded
        assert [float(x) for x in in_gb[1:]] == [3, 2, 2]
        assert float(model.smallest_replicas(params, 1, gpu.memory_gb * model.GIB, 2)) == 2
        assert num(model.state_bytes(params, 0, 1, 2) / 1e9, 1) == "128.5"
        # FP32 gradients kept in FP32 (issue 42): 18 bytes per parameter, 144.5 GB, stage 1 from 4 replicas
        fp32 = [model.smallest_replicas(params, k, gpu.memory_gb * model.GB, 4) for k in (0, 1, 2, 3)]
        assert np.isnan(fp32[0]) and [float(x) for x in fp32[1:]] == [4, 3, 2]
        assert num(model.state_bytes(params, 0, 1, 4) / 1e9, 1) == "144.5"


def test_bf16_stages_1_and_2_move_the_allreduce_and_stage_3_half_as_much_again(presets):
    for m in presets.models.values():
        allreduce = model.allreduce_bytes(m.params, 2, N)
        for k in (1, 2):
            np.testing.assert_allclose(model.traffic_bytes(m.params, k, 2, N), allreduce, rtol=1e-12)
        np.testing.assert_allclose(model.traffic_bytes(m.params, 3, 2, N), 1.5 * allreduce, rtol=1e-12)


def test_fp32_stage_3_moves_8_psi_r_the_fp32_allreduce(presets):
    r = (N - 1) / N
    for m in presets.models.values():
        np.testing.assert_allclose(model.traffic_bytes(m.params, 3, 4, N), 8 * m.params * r, rtol=1e-12)
        np.testing.assert_allclose(model.traffic_bytes(m.params, 3, 4, N), model.allreduce_bytes(m.params, 4, N),
                                   rtol=1e-12)


@pytest.mark.parametrize("b", [2, 4])
@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_traffic_is_the_sum_of_its_pieces(stage, b):
    """MODEL.md's Corrections: reduce-scatter b·Ψ·r plus 2·Ψ·r per gather (1 for stages 1–2, 2 for stage 3);
    plain data parallelism's all-reduce 2·b·Ψ·r."""
    params = 7e9
    r = (N - 1) / N
    expected = 2 * b * params * r if stage == 0 else b * params * r + (2 if stage == 3 else 1) * 2 * params * r
    np.testing.assert_allclose(model.traffic_bytes(params, stage, b, N), expected, rtol=1e-12)
    pieces = model.reduce_scatter_bytes(params, b, N) + model.weight_gathers(stage) * model.all_gather_bytes(params, N)
    if stage:
        np.testing.assert_allclose(model.traffic_bytes(params, stage, b, N), pieces, rtol=1e-12)


@pytest.mark.parametrize("b", [2, 4])
@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_states_are_the_zero_formulas(stage, b):
    """The facts file's formulas: (2+b+K)Ψ, (2+b+K/n)Ψ, (2+(b+K)/n)Ψ, (2+b+K)Ψ/n, with K = 12 and b-byte gradients
    (2 BF16, 4 FP32: kept in the precision they are reduced in)."""
    params = 8e9
    expected = {0: (2 + b + K) * params + 0 * N, 1: (2 + b + K / N) * params, 2: (2 + (b + K) / N) * params,
                3: (2 + b + K) * params / N}[stage]
    np.testing.assert_allclose(model.state_bytes(params, stage, N, b), expected, rtol=1e-12)
    # the level a line falls towards: the formula with every /n term gone
    assert model.kept_bytes(params, stage, b) == {0: (2 + b + K) * params, 1: (2 + b) * params, 2: 2 * params,
                                                  3: 0}[stage]


def test_time_is_bytes_over_the_link():
    params, link = 8e9, 50e9
    for k in (0, 1, 2, 3):
        for b in (2, 4):
            np.testing.assert_allclose(model.traffic_seconds(params, k, b, link, N),
                                       model.traffic_bytes(params, k, b, N) / link, rtol=1e-12)


def test_the_limit_is_where_traffic_tends():
    for k in (0, 1, 2, 3):
        for b in (2, 4):
            np.testing.assert_allclose(model.traffic_bytes(1e9, k, b, 2.0**40), model.traffic_limit_bytes(1e9, k, b),
                                       rtol=1e-9)


params_st = st.floats(1e6, 1e13)
replicas_st = st.integers(1, 2**20)


@settings(max_examples=200, deadline=None)
@given(params=params_st, n=replicas_st, more=st.integers(1, 2**10), stage=st.integers(0, 3))
def test_states_never_grow_with_replicas(params, n, more, stage):
    assert model.state_bytes(params, stage, n + more, 2) <= model.state_bytes(params, stage, n, 2)


@settings(max_examples=200, deadline=None)
@given(params=params_st, n=replicas_st, stage=st.integers(0, 2))
def test_each_stage_keeps_no_more_than_the_one_before(params, n, stage):
    assert model.state_bytes(params, stage + 1, n, 2) <= model.state_bytes(params, stage, n, 2)
    assert model.traffic_bytes(params, stage, 2, n) <= model.traffic_bytes(params, 3, 2, n)


@settings(max_examples=100, deadline=None)
@given(params=params_st)
def test_one_replica_all_stages_keep_everything(params):
    whole = model.state_bytes(params, 0, 1, 2)
    assert whole == pytest.approx(model.STATE_BYTES * params, rel=1e-12)
    for k in (1, 2, 3):
        assert model.state_bytes(params, k, 1, 2) == pytest.approx(whole, rel=1e-12)
        assert model.traffic_bytes(params, k, 2, 1) == 0


@settings(max_examples=200, deadline=None)
@given(params=params_st, memory_gb=st.floats(1, 2000), stage=st.integers(0, 3))
def test_smallest_fitting_count_is_the_smallest(params, memory_gb, stage):
    memory = memory_gb * model.GB
    n = float(model.smallest_replicas(params, stage, memory, 2))
    if np.isnan(n):  # none fits: even a huge count leaves more than the memory
        assert model.state_bytes(params, stage, 2.0**40, 2) > memory
        return
    assert model.state_bytes(params, stage, n, 2) <= memory * (1 + 1e-12)
    if n > 1:
        assert model.state_bytes(params, stage, n - 1, 2) > memory


# NCCL 2.30's cost model for the Simple protocol (src/graph/tuning.cc), written out here apart from platelib: a
# reduce-scatter or all-gather has only the ring, n − 1 steps, each step across a node boundary priced as the network.
NCCL_BASE_S, NVLINK_STEP_S, NET_STEP_S = 8.4e-6, 3.4e-6, 14e-6


def ring_call_s(n: int, node: int) -> float:
    """One reduce-scatter or all-gather over n GPUs, node GPUs to a node: base, then n/node − 1 network steps and
    the other n − n/node NVLink steps."""
    if n == 1:
        return 0.0
    hops = max(n // node, 1) - 1
    return NCCL_BASE_S + hops * NET_STEP_S + (n - 1 - hops) * NVLINK_STEP_S


def test_fsdp_calls_pay_nccl_s_ring_latency_per_layer(presets):
    """Each stage's latency per step is its calls per FSDP unit (0; a gather and a reduce-scatter; two gathers and a
    reduce-scatter) × the model's layers × one ring call; at 1,024 GPUs on 8-GPU nodes a call is about 4.8 ms and
    stage 3 of Llama 3 8B pays 96 of them."""
    gpus = plate_facts.gpus_of(presets)
    network = next(i for i, n in presets.networks.items() if not n.nvlink)
    for m, g in pairs(presets):
        f = plate_facts.facts(presets, plate_facts.Selection(m, g, "none", "bf16", network))
        node = gpus[g].nvlink_domain or 8
        layers = presets.models[m].layers
        for n in (1, 2, 8, 16, 1024, 16384):
            assert f.call_latency_s(n) == pytest.approx(ring_call_s(n, node), rel=1e-12), (m, g, n)
            for k, calls in zip((0, 1, 2, 3), (0, 2, 2, 3)):
                assert f.latency_s(k, n) == pytest.approx(calls * layers * ring_call_s(n, node), rel=1e-12)
        for s in f.stages:
            assert s.latency_at_s == f.latency_s(s.stage, f.latency_at)
            assert [float(x) for x in s.latency_s] == [f.latency_s(s.stage, n) for n in f.replicas]
    if has_spec(presets):
        f = plate_facts.facts(presets, plate_facts.Selection(SPEC_MODEL, SPEC_GPU, "zero3", "bf16", network))
        assert f.latency_at == 1024
        # 1,023 steps, 127 of them between the 128 nodes: the per-call figure the review quotes, about 4.8 ms
        assert f.call_latency_s(1024) == pytest.approx(8.4e-6 + 896 * 3.4e-6 + 127 * 14e-6, rel=1e-12)
        assert f.call_latency_s(1024) == pytest.approx(4.8e-3, rel=0.01)
        # 32 layers × 3 calls: nearly half a second a step, as much as half the bytes' own time at the link speed
        assert f.latency_s(3, 1024) == pytest.approx(96 * f.call_latency_s(1024), rel=1e-12)
        assert f.latency_s(3, 1024) > 0.45 and f.latency_s(3, 1024) > f.traffic_s(3, 1024) / 2.1


def test_nvlink_times_past_the_domain_are_flagged_hypothetical(presets):
    """Over the NVLink network, the replica counts past the GPU's NVLink domain are flagged; a network's never."""
    gpus = plate_facts.gpus_of(presets)
    flagged = 0
    for m, g in pairs(presets):
        for net in presets.networks:
            f = plate_facts.facts(presets, plate_facts.Selection(m, g, "none", "bf16", net))
            domain = gpus[g].nvlink_domain or 8
            expected = [presets.networks[net].nvlink and int(n) > domain for n in f.replicas]
            assert [bool(h) for h in f.hypothetical] == expected, (m, g, net)
            flagged += sum(expected)
    assert flagged > 0
