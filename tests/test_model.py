"""The model against every claim of spec/MODEL.md, and its basic shape."""
import numpy as np
from numpy.testing import assert_allclose

from generator import model

N_8B, N_70B, N_405B = 8_030_261_248, 70_553_706_496, 405_853_388_800
T_1M, T_4M = 2**20, 2**22
IB, NVLINK = 50e9, 450e9
H100 = model.Workshop(gpu_peak_flops=989e12, gpu_memory_bytes=80e9, mfu=0.45, bytes_per_grad=2,
                      bytes_per_param_states=16, seq_len=8192)
REPLICAS = model.replica_counts(16384)


def g(params=(N_8B,), batches=(T_4M,), links=(IB,)):
    return model.grid(list(params), list(batches), list(links), REPLICAS, H100)


def at(grid, field, n, idx=(0, 0, 0)):
    return getattr(grid, field)[idx + (int(np.flatnonzero(grid.replicas == n)[0]),)]


def test_replica_axis_is_powers_of_two_to_16384():
    assert REPLICAS.tolist() == [2**k for k in range(15)]


def test_compute_per_step_falls_with_replicas():
    grid = g()
    assert_allclose(at(grid, "compute_s", 1), 454.0, rtol=1e-3)
    assert_allclose(at(grid, "compute_s", 1024), 0.443, rtol=1e-3)
    assert_allclose(grid.compute_s[0, 0, 0] * REPLICAS, grid.compute_s[0, 0, 0, 0])


def test_allreduce_stays_near_constant():
    grid = g()
    assert at(grid, "allreduce_s", 1) == 0
    assert_allclose(at(grid, "allreduce_s", 64), 0.632, rtol=1e-3)
    assert_allclose(at(grid, "allreduce_s", 1024), 0.642, rtol=1e-3)
    # The limit the model's ring approaches with ever more replicas: 2·(n−1)/n · 2N/B → 2 · 2N/B.
    limit = float(model.allreduce_seconds(N_8B, 2, IB, IB, 2.0**60, False))
    assert_allclose(limit, 0.642, rtol=1e-3)
    assert np.all(grid.allreduce_s < limit) and np.all(np.diff(grid.allreduce_s) > 0)


def test_seed_rounding_matches_non_embedding_parameters():
    """MODEL.md: the seed's 0.56 s is the all-reduce limit of Llama 3 8B's ≈ 7.0B non-embedding parameters."""
    from generator import content, facts
    from conftest import CONTENT
    c = content.load(CONTENT)
    f = facts.Atlas(c.presets).facts(content.Selection("llama3-8b", "4M", "ib-400"))
    assert f.model.non_embedding_params == N_8B - 2 * 128256 * 4096
    assert_allclose(f.model.non_embedding_params / 1e9, 7.0, atol=0.05)
    assert_allclose(f.allreduce_limit_s, 2 * 2 * N_8B / IB, rtol=1e-12)
    assert_allclose(f.non_embedding_allreduce_s, 0.56, atol=0.005)


def test_crossing_at_1024_replicas_for_8b_4m_400g():
    grid = g()
    assert grid.replicas[grid.crossing_index[0, 0, 0]] == 1024
    assert at(grid, "allreduce_s", 1024) > at(grid, "compute_s", 1024)
    assert at(grid, "allreduce_s", 512) < at(grid, "compute_s", 512)
    # n* solved exactly with the ring's (n−1)/n: 1 + 1.5·T·B/(P·u) ≈ 708 (MODEL.md's ≈ 707 drops the 1)
    assert_allclose(grid.continuous_crossing[0, 0, 0], 1 + 1.5 * T_4M * IB / (989e12 * 0.45), rtol=1e-12)
    assert_allclose(grid.continuous_crossing[0, 0, 0], 708, atol=0.5)


def test_tokens_and_sequences_per_replica_at_the_crossing():
    grid = g()
    assert at(grid, "tokens_per_replica", 1024) == 4096
    assert at(grid, "sequences_per_replica", 1024) == 0.5


def test_nvlink_keeps_full_efficiency_at_1024():
    grid = g(links=(NVLINK,))
    assert_allclose(at(grid, "allreduce_s", 1024), 0.071, rtol=1e-2)
    assert at(grid, "efficiency", 1024) == 1.0


def test_1m_batch_crosses_at_256():
    grid = g(batches=(T_1M,))
    assert grid.replicas[grid.crossing_index[0, 0, 0]] == 256


def test_model_states_of_8b_exceed_one_h100():
    grid = g(params=(N_8B, N_70B, N_405B))
    assert_allclose(grid.model_states_bytes[0] / 1e9, 128.5, atol=0.05)
    assert grid.fits_in_memory.tolist() == [False, False, False]
    tiny = model.grid([1e9], [T_4M], [IB], REPLICAS, H100)
    assert tiny.fits_in_memory.tolist() == [True]


def test_crossing_does_not_depend_on_model_size():
    grid = g(params=(N_8B, N_70B, N_405B), batches=(T_1M, T_4M), links=(IB, NVLINK))
    for b in range(2):
        for link in range(2):
            assert len(set(grid.crossing_index[:, b, link].tolist())) == 1
            assert len(set(grid.continuous_crossing[:, b, link].round(9).tolist())) == 1


def test_step_and_efficiency_follow_the_max_rule():
    grid = g(params=(N_8B, N_405B), batches=(T_1M, T_4M), links=(IB, NVLINK))
    assert_allclose(grid.step_s, np.maximum(grid.compute_s, grid.allreduce_s))
    assert_allclose(grid.efficiency, grid.compute_s / grid.step_s)
    assert np.all((grid.efficiency > 0) & (grid.efficiency <= 1))


def test_no_crossing_is_reported_as_minus_one():
    grid = g(batches=(2**24,), links=(NVLINK,))
    assert grid.crossing_index[0, 0, 0] == -1


# --- options beyond the workshop (MODEL.md, "Options beyond the workshop") -------------------------

def run(**options):
    inputs = dict(params=N_8B, batch_tokens=T_4M, link_bytes_per_s=IB, nvlink_bytes_per_s=NVLINK,
                  peak_flops=989e12, memory_bytes=80e9, mfu=0.45)
    inputs.update(options)
    return model.evaluate(model.Inputs(**inputs), REPLICAS)


def crossing(r):
    return int(REPLICAS[r.crossing_index])


def test_workshop_options_leave_every_claim_alone():
    r, g0 = run(), g()
    assert_allclose(r.step_s, g0.step_s[0, 0, 0], rtol=0)
    assert crossing(r) == 1024 and r.comm_s.tolist() == r.allreduce_s.tolist()


def test_backward_only_overlap_crosses_at_472_so_512():
    r = run(backward_only=True)
    assert_allclose(r.continuous_crossing, 1 + T_4M * IB / (989e12 * 0.45), rtol=1e-12)
    assert_allclose(r.continuous_crossing, 472, atol=0.5)
    assert crossing(r) == 512
    C, A = r.compute_s, r.comm_s
    assert_allclose(r.step_s, C / 3 + np.maximum(2 * C / 3, A), rtol=1e-12)


def test_hierarchical_reduction_crosses_at_4096():
    r = run(hierarchical=True)
    i = int(np.flatnonzero(REPLICAS == 1024)[0])
    # The model's two phases at 1,024 replicas: a ring of 8 over NVLink, then a ring of 128 nodes of 1/8 the buffer.
    inside = float(model.allreduce_seconds(N_8B, 2, IB, NVLINK, 8, True))  # one node: the NVLink ring alone
    across = float(r.allreduce_s[i]) - inside
    assert_allclose([inside, across], [0.0625, 0.0797], atol=5e-5)
    assert_allclose(r.allreduce_s[i], 0.142, atol=5e-4)
    assert crossing(r) == 4096
    assert_allclose(r.allreduce_s[:4], 2 * (REPLICAS[:4] - 1) / REPLICAS[:4] * 2 * N_8B / NVLINK, rtol=1e-12)
    # n* is where the curves meet: the all-reduce there equals compute
    n_star = float(r.continuous_crossing)
    m = n_star / 8
    at_star = 2 * 7 / 8 * 2 * N_8B / NVLINK + 2 * (m - 1) / m * (2 * N_8B / 8) / IB
    assert_allclose(at_star, 6 * N_8B * T_4M / (n_star * 989e12 * 0.45), rtol=1e-9)


def test_fp32_gradients_double_the_allreduce_and_cross_at_512():
    r, r0 = run(bytes_per_grad=4), run()
    assert_allclose(r.allreduce_s, 2 * r0.allreduce_s, rtol=1e-12)
    assert crossing(r) == 512
    assert_allclose(r.continuous_crossing - 1, (r0.continuous_crossing - 1) / 2, rtol=1e-12)


def test_a_faster_gpu_moves_the_crossing_with_its_peak():
    b200 = run(peak_flops=2250e12, nvlink_bytes_per_s=900e9, memory_bytes=180e9)
    assert_allclose(b200.continuous_crossing - 1, (run().continuous_crossing - 1) * 989 / 2250, rtol=1e-12)
    assert crossing(b200) == 512


def test_zero_state_bytes_and_smallest_fitting_replicas():
    n = REPLICAS.astype(float)
    for stage, per_param in ((0, 16 + 0 * n), (1, 4 + 12 / n), (2, 2 + 14 / n), (3, 16 / n)):
        assert_allclose(model.state_bytes_per_param(stage, n), per_param, rtol=1e-15)
    got = {k: run(sharding=k) for k in range(4)}
    assert np.isnan(got[0].smallest_fitting) and got[0].smallest_fitting_index == -1
    assert [float(got[k].smallest_fitting) for k in (1, 2, 3)] == [3, 2, 2]
    assert int(REPLICAS[got[1].smallest_fitting_index]) == 4
    gib = run(sharding=1, memory_bytes=80 * 2**30)
    assert float(gib.smallest_fitting) == 2
    assert_allclose(got[1].states_bytes[1] / 1e9, (4 + 12 / 2) * N_8B / 1e9)


def test_zero3_moves_one_and_a_half_times_the_traffic():
    r, r0 = run(sharding=3), run()
    assert_allclose(r.comm_s, 1.5 * r0.allreduce_s, rtol=1e-15)
    assert [run(sharding=k).comm_s.tolist() == r0.allreduce_s.tolist() for k in (1, 2)] == [True, True]
    assert crossing(r) == 512
