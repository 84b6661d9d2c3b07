"""The model against every claim of spec/MODEL.md, and its basic shape."""
import pytest
import numpy as np
from numpy.testing import assert_allclose
from xiv4 import model



N_8B, N_70B, N_405B = 8_030_261_248, 70_553_706_496, 405_853_388_800
T_1M, T_4M = 2**20, 2**22
IB, NVLINK = 50e9, 450e9
H100 = model.Workshop(gpu_peak_flops=989e12, gpu_memory_bytes=80e9, mfu=0.45, bytes_per_grad=2, seq_len=8192)
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
    from generator.source import content
    from xiv4 import facts
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
        assert_allclose(model.state_bytes_per_param(stage, n, 2), per_param, rtol=1e-15)
    # FP32 gradients are kept in FP32 too (MODEL.md's 16 B/param is BF16's): 18 B/param whole
    for stage, per_param in ((0, 18 + 0 * n), (1, 6 + 12 / n), (2, 2 + 16 / n), (3, 18 / n)):
        assert_allclose(model.state_bytes_per_param(stage, n, 4), per_param, rtol=1e-15)
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


# --- the real cluster (issue 22): NCCL 2.30's ring and tree on 8-GPU nodes, DDP's buckets ------------------------
# Hand computations from NVIDIA/nccl src/graph/tuning.cc v2.30.7-1 (docs/model-v2-sources.md §2): Simple protocol,
# base 8.4 µs; per step inside a node 3.4 µs (ring) or 4.0 µs (tree); across nodes 14 µs.

def test_ring_latency_per_call_is_nccls_hand_computation():
    # 1,024 GPUs on 128 nodes: 2·1023 = 2,046 steps, 2·127 = 254 of them across nodes
    assert_allclose(model.ring_latency_us(1024), 8.4 + (2046 - 254) * 3.4 + 254 * 14.0, rtol=1e-12)
    assert_allclose(model.ring_latency_us(1024), 9657.2, rtol=1e-12)
    # one node: every step on NVLink, and no plateau factor
    assert_allclose(model.ring_latency_us(8), 8.4 + 14 * 3.4, rtol=1e-12)
    assert model.ring_plateau(25 * 2**20, 8) == 1.0
    # many nodes: ×1.4 once bytes / (channels · n) ≥ 64
    assert_allclose(model.ring_latency_us(1024) * model.ring_plateau(25 * 2**20, 1024), 13520.08, rtol=1e-12)
    threshold = 64 * model.NCCL_CHANNELS * 1024
    assert model.ring_plateau(threshold, 1024) == 1.4 and model.ring_plateau(threshold - 1, 1024) == 1.0


def test_tree_latency_per_call_is_nccls_hand_computation():
    assert_allclose(model.tree_latency_us(1024), 8.4 + 2 * ((1024 // 128 - 1) * 4.0 + 7 * 14.0), rtol=1e-12)
    assert_allclose(model.tree_latency_us(1024), 260.4, rtol=1e-12)
    assert_allclose(model.tree_latency_us(16384), 8.4 + 2 * (7 * 4.0 + 11 * 14.0), rtol=1e-12)  # log2(2,048) = 11
    assert_allclose(model.tree_latency_us(4), 8.4 + 2 * 3 * 4.0, rtol=1e-12)  # half a node: no network step


def test_tree_correction_follows_the_size_of_the_call():
    """treeCorrectionFactor's Simple row by floor(log2(bytes / 64)): 0.9 from 64 B, 0.7 at 25 MiB (2^18 · 64 B), 1
    below 64 B and from 2^23 · 64 B = 512 MiB on."""
    assert model.tree_correction(63) == 1.0
    assert model.tree_correction(64) == 0.9 and model.tree_correction(127) == 0.9
    assert model.tree_correction(25 * 2**20) == 0.7
    assert model.tree_correction(2**23 * 64 - 1) == 0.9 and model.tree_correction(2**23 * 64) == 1.0


def test_nccl_prices_ring_and_tree_and_takes_the_cheaper():
    mib25, gib = 25 * 2**20, 2**30
    ring_lat, ring_bw, tree_lat, tree_bw = model.nccl_allreduce(mib25, IB, NVLINK, 1024)
    bus = 8 * IB  # a NIC per GPU: 400 GB/s per node, under H100's 450 GB/s of NVLink
    assert_allclose(ring_lat, 13520.08e-6, rtol=1e-12)
    assert_allclose(ring_bw, mib25 / (bus * 1024 / (2 * 1023)), rtol=1e-12)
    assert_allclose(tree_lat, 260.4e-6, rtol=1e-12)
    assert_allclose(tree_bw, mib25 / (bus * 0.92 * 0.5 * 0.7), rtol=1e-12)
    assert model.nccl_choice([ring_lat, ring_bw, tree_lat, tree_bw]) == 1  # 1,024 GPUs: the tree's latency wins
    # 16 GPUs on two nodes, 1 GiB: ring 184.24 µs + 4.70 ms against tree 92.4 µs + 5.84 ms: the ring
    costs = model.nccl_allreduce(gib, IB, NVLINK, 16)
    assert_allclose(costs, [(8.4 + 28 * 3.4 + 2 * 14.0) * 1.4e-6, gib / (bus * 16 / 30), 92.4e-6, gib / (bus * 0.46)],
                    rtol=1e-12)
    assert model.nccl_choice(costs) == 0
    # NVLink caps the bus: 8 NICs of 100 GB/s would be 800 GB/s
    assert model.bus_bytes_per_s(100e9, NVLINK, 1024) == NVLINK and model.bus_bytes_per_s(IB, NVLINK, 8) == NVLINK
    assert model.nccl_allreduce(gib, IB, NVLINK, 1) == [0.0, 0.0, 0.0, 0.0]


def test_real_cluster_bandwidth_term_for_the_default_at_1024():
    """MODEL.md: Llama 3 8B's BF16 gradients in DDP's buckets on 8-GPU nodes with a 400 Gb/s NIC per GPU: the ring's
    bandwidth term ≈ 0.080 s at 1,024 GPUs, against the workshop's flat ring, 0.642 s."""
    sizes, ready = model.buckets(model.tensor_params(N_8B, 32, 4096, 14336, 128256), 2)
    compute = model.compute_seconds(N_8B, T_4M, 1024, 989e12, 0.45)
    c = model.cluster([compute], sizes, ready, IB, NVLINK, [1024], 1)
    assert_allclose(c["ring_bandwidth_s"][0], 2 * 1023 / 1024 * 2 * N_8B / (8 * IB), rtol=1e-9)
    assert_allclose(c["ring_bandwidth_s"][0], 0.080, atol=5e-4)
    assert_allclose(model.allreduce_seconds(N_8B, 2, IB, IB, 1024, False), 0.642, rtol=1e-3)
    assert_allclose(c["ring_latency_s"][0], len(sizes) * 13520.08e-6, rtol=1e-9)  # every bucket pays it
    assert c["tree_calls"][0] == len(sizes) == 162  # so NCCL takes the tree for every one of them
    assert_allclose(c["latency_s"][0], 162 * 260.4e-6, rtol=1e-9)
    assert_allclose(c["comm_s"][0], c["latency_s"][0] + c["bandwidth_s"][0], rtol=1e-12)


def test_real_cluster_step_hides_the_buckets_behind_the_last_micro_batch_only():
    """K equal buckets the link sends more slowly than the backward pass fills them: the last micro-batch's backward
    (2C/(3m), from C − 2C/(3m)) starts the first at C − C/m + C/(3m) + (2C/(3m))/K, and the link runs on from there."""
    compute, k, size = 0.05, 10, 2**30
    sizes, ready = [float(size)] * k, [(i + 1) / k for i in range(k)]
    call = model.nccl_allreduce(size, IB, NVLINK, 1024)
    each = min(call[0] + call[1], call[2] + call[3])
    for m in (1, 2, 4, 8, 16):
        first_ready = compute - compute / m + compute / (3 * m) + compute * 2 / (3 * m) / k
        expected = max(compute, first_ready + k * each)
        assert each > compute * 2 / (3 * m) / k  # link-bound, so the hand formula holds
        step = model.cluster_point(compute, sizes, ready, IB, NVLINK, 1024, m)[0]
        assert_allclose(step, expected, rtol=1e-12, err_msg=str(m))
    steps = [model.cluster_point(compute, sizes, ready, IB, NVLINK, 1024, m)[0] for m in (1, 2, 4, 8, 16)]
    assert steps == sorted(steps) and steps[-1] > steps[0]  # more micro-batches, less to hide behind


def test_bucket_cap_mb_sets_every_limit_and_unset_keeps_the_1_mib_first():
    assert model.bucket_caps(None) == [25 * 2**20, 2**20]
    assert model.bucket_caps(25) == [25 * 2**20, 25 * 2**20] and model.bucket_caps(5) == [5 * 2**20, 5 * 2**20]
    tensors = [2**19] * 8  # 1 MiB each in BF16: unset, the first bucket closes after one tensor
    assert model.buckets(tensors, 2, *model.bucket_caps(None))[0] == [2**20, 7 * 2**20]
    assert model.buckets(tensors, 2, *model.bucket_caps(25))[0] == [8 * 2**20]
    assert model.buckets(tensors, 2, *model.bucket_caps(2))[0] == [2 * 2**20] * 4


def test_larger_buckets_make_fewer_calls_and_less_latency():
    shape = (N_8B, 32, 4096, 14336, 128256)
    compute = model.compute_seconds(N_8B, T_4M, 16384, 989e12, 0.45)
    out = []
    for cap in (1, 25, 100, 500):
        sizes, ready = model.buckets(model.tensor_params(*shape), 2, *model.bucket_caps(cap))
        c = model.cluster([compute], sizes, ready, IB, NVLINK, [16384], 1)
        out.append((len(sizes), c["latency_s"][0], c["step_s"][0]))
    assert [o[0] for o in out] == sorted((o[0] for o in out), reverse=True) and out[0][0] > out[-1][0]
    assert [o[1] for o in out] == sorted((o[1] for o in out), reverse=True)
    assert out[-1][2] < out[0][2]  # the step follows


def test_a_nan_from_a_formula_is_blamed_on_the_formula_not_on_presets_toml(tmp_path):
    """Presets each within bounds, and a formula that makes NaN of finite values (0/0 here, as a shared formula's
    mistake would): plate check names the formula's file and line, not presets.toml."""
    import shutil
    import subprocess
    import sys
    from conftest import ROOT, XIV4_MINI
    root = tmp_path / "mini"
    shutil.copytree(XIV4_MINI, root, symlinks=False, ignore=shutil.ignore_patterns("__pycache__"))
    model = root / "plate" / "model.py"
    text = model.read_text(encoding="utf-8")
    old = "    tokens = x[\"batch_tokens\"] / n\n"
    assert text.count(old) == 1
    model.write_text(text.replace(old, old + "    tokens = tokens * (n - n) / (n - n)\n"), encoding="utf-8")
    line = next(i for i, l in enumerate(model.read_text().splitlines(), 1) if "(n - n) / (n - n)" in l)
    result = subprocess.run([sys.executable, "-m", "generator", "check", "--content", "mini"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env={**__import__("os").environ,
                                                                              "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    assert f"mini/plate/model.py, line {line}: a formula of the model gives an undefined number (NaN)" in \
        result.stderr, result.stderr
    assert "presets.toml" not in result.stderr.split("a mistake in the formula")[0]
