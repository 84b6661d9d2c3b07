"""The model against every claim of spec/MODEL.md, and its basic shape."""
import pytest
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
    from conftest import CONTENT, spec_selection
    c = content.load(CONTENT)
    f = facts.Atlas(c.presets).facts(spec_selection(c.presets))
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


def test_zero_traffic_is_counted_per_piece_in_mixed_precision():
    """MODEL.md's corrections: with FP32 gradients ZeRO-3 moves 2·2N + 4N = 8N·r, the FP32 all-reduce's volume (not
    1.5× it), and ZeRO-1/2 move 4N + 2N = 6N·r; 8B under whole-step overlap then meets at n* ≈ 354, 100% at 256."""
    fp32, z3, z1 = run(bytes_per_grad=4), run(bytes_per_grad=4, sharding=3), run(bytes_per_grad=4, sharding=1)
    assert_allclose(z3.comm_s, fp32.allreduce_s, rtol=1e-15)
    assert_allclose(z1.comm_s, 0.75 * fp32.allreduce_s, rtol=1e-15)
    assert round(float(z3.continuous_crossing)) == 354 == round(float(fp32.continuous_crossing))
    assert z3.efficiency[REPLICAS.tolist().index(256)] == 1.0 and crossing(z3) == 512


def test_zero3_backward_only_hides_each_phase_behind_its_own_pass():
    """Backward only, ZeRO-3's forward all-gather hides behind the forward third and the rest behind the backward
    two thirds: with BF16 gradients that is plain data parallelism's backward-only bound, n* ≈ 472."""
    plain, z3 = run(backward_only=True), run(backward_only=True, sharding=3)
    assert_allclose(z3.continuous_crossing, plain.continuous_crossing, rtol=1e-12)
    assert round(float(z3.continuous_crossing)) == 472 and crossing(z3) == crossing(plain) == 512
    hidden = z3.replicas < 472
    assert (z3.step_s[hidden] == z3.compute_s[hidden]).all()
    # past it, both phases spill: C + (A/2 − C/3) + (A − 2C/3), A the BF16 all-reduce
    C, A = z3.compute_s[-1], plain.allreduce_s[-1]
    assert_allclose(z3.step_s[-1], C + (A / 2 - C / 3) + (A - 2 * C / 3), rtol=1e-12)


def test_llama3_8b_buckets_are_whole_tensors_as_ddp_makes_them():
    """MODEL.md's corrections (PyTorch's reducer: a bucket closes once it holds its limit, 1 MiB for the first and
    25 MiB after, and never splits a tensor): Llama 3 8B in BF16 goes in 162 buckets, the output head alone first,
    the last layer's input norm with the input embedding last; at 512 replicas, backward-only, the tail ≈ 0.089 s."""
    tensors = model.tensor_params(N_8B, 32, 4096, 14336, 128256)
    assert sum(tensors) == N_8B
    sizes, ready = model.buckets(tensors, 2)
    head = 128256 * 4096 * 2
    assert len(sizes) == 162 and sizes[0] == head and sizes[-1] == head + 4096 * 2
    assert sizes[1] == (4096 + 4096 * 14336) * 2  # the final norm with the last layer's down projection
    assert min(sizes) >= 25 * 2**20 and ready[-1] == 1.0 and ready == sorted(ready)
    n = 512
    C = 6 * N_8B * T_4M / (n * 989e12 * 0.45)
    A = 2 * (n - 1) / n * 2 * N_8B / IB
    tail = model.bucketed_tail_seconds(C, A, sizes, ready)
    assert round(tail, 3) == 0.089 and tail > max(0.0, A - 2 * C / 3)
    # the link waits for the head's bucket, then never idles: the tail is the bound plus the head's fill time
    assert_allclose(tail, A - 2 * C / 3 + 2 * C / 3 * head / (2 * N_8B), rtol=1e-12)


def test_the_first_bucket_closes_at_its_own_limit():
    sizes, _ = model.buckets([2**18] * 6 + [2**22], 2, cap_bytes=2**21, first_bytes=2**20)
    assert sizes == [2**20, 2**21, 2**23]  # two tensors, then four, then the large one alone


def test_a_model_without_a_shape_is_cut_in_pieces():
    pieces = model.tensor_params(10**9, 0, 0, 0, 0)
    assert len(pieces) == -(-10**9 // model.PIECE) and sum(pieces) == pytest.approx(10**9, rel=1e-12)
    assert len(model.tensor_params(10**15, 0, 0, 0, 0)) == model.PIECES
