"""Facts read off the grid for the real presets: what the prose and the readout state."""
import csv
from dataclasses import replace
import io

import pytest
from numpy.testing import assert_allclose

from generator import content, render
from xiv4 import Selection

from conftest import CONTENT, covered, spec_selection
from xiv4 import facts, xfigures, xpage


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


def test_the_spec_selection_claims(atlas):
    f = atlas.facts(spec_selection(atlas.presets))
    assert f.crossing_replicas == 1024
    assert_allclose(f.allreduce_limit_s, 0.642, rtol=1e-3)
    assert f.at_crossing.tokens_per_replica == 4096
    assert f.at_crossing.sequences_per_replica == 0.5
    assert_allclose(f.model_states_gb, 128.5, atol=0.05)
    assert f.gpu_memory_gb == 80 and not f.fits_in_memory
    assert_allclose(f.non_embedding_allreduce_s, 0.56, atol=0.005)


def test_scenarios(atlas):
    assert atlas.facts(spec_selection(atlas.presets, network="nvlink")).at(1024).efficiency == 1.0
    assert atlas.facts(spec_selection(atlas.presets, batch="1M")).crossing_replicas == 256
    assert atlas.facts(spec_selection(atlas.presets, model="llama3-70b")).crossing_replicas == 1024


def test_at_rejects_a_count_off_the_grid(atlas):
    f = atlas.facts(content.load(CONTENT).plate.default)
    assert f.at(2).replicas == 2  # a count on the grid is read
    with pytest.raises(ValueError, match="not a replica count"):
        f.at(1000)


def test_rows_cover_every_preset_and_replica_count(atlas):
    """The site's CSV: every model, batch and network under the workshop, one row per replica count, nothing else."""
    rows = atlas.rows()
    p = atlas.presets
    assert len(rows) == len(p.models) * len(p.batches) * len(p.networks) * len(atlas.replicas)
    assert tuple(rows[0]) == facts.CSV_COLUMNS
    assert len({tuple(r[k] for k in ("model", "batch", "network", "replicas")) for r in rows}) == len(rows)
    assert {r["model"] for r in rows} == set(p.models) and {r["network"] for r in rows} == set(p.networks)


def test_options_move_the_crossing_as_model_md_says(atlas):
    base = spec_selection(atlas.presets)
    with_ = lambda **o: atlas.facts(spec_selection(atlas.presets, **o))  # noqa: E731
    assert with_(overlap="backward").crossing_replicas == 512
    assert_allclose(with_(overlap="backward").continuous_crossing, 472, atol=0.5)
    assert with_(topology="nodes").crossing_replicas == 4096
    assert with_(precision="fp32").crossing_replicas == 512
    assert with_(gpu="h200-sxm").gpu_memory_gb == 141
    assert atlas.facts(base).continuous_crossing > with_(gpu="b200").continuous_crossing
    z1 = with_(sharding="zero1")
    assert (z1.smallest_fitting_replicas, z1.smallest_fitting_on_grid) == (3, 4)
    assert [with_(sharding=s).smallest_fitting_replicas for s in ("zero2", "zero3")] == [2, 2]
    assert_allclose(with_(sharding="zero3").at(1024).comm_s, 1.5 * atlas.facts(base).at(1024).allreduce_s)


def test_nvlink_follows_the_gpu_and_is_hypothetical_past_its_domain(atlas):
    d = content.load(CONTENT).plate.default
    for network in atlas.presets.networks.values():
        for gpu in atlas.presets.gpus.values():
            f = atlas.facts(Selection(d.model, d.batch, network.id, gpu=gpu.id))
            if network.nvlink:
                assert f.link_gbytes_per_s == gpu.nvlink_gbytes_per_s
                # shaded from the GPU's domain on, when it names one that ends within the grid
                reach = gpu.nvlink_domain if gpu.nvlink_domain and gpu.nvlink_domain < f.max_replicas else None
                assert f.hypothetical_from == reach
            else:  # a network of its own speed is never shaded
                assert f.link_gbytes_per_s == network.link_gbytes_per_s and f.hypothetical_from is None


def test_csv_rows_agree_with_model_md_formulas(atlas):
    """Every row of the site's CSV, and of a covering set of selections' CSVs (which the page writes), recomputed
    from MODEL.md's formulas, independently of model.py."""
    rows = list(csv.DictReader(io.StringIO(xpage.csv_text(atlas))))
    assert len(rows) == len(atlas.rows())
    assert list(rows[0]) == list(facts.CSV_COLUMNS)
    w = atlas.presets.workshop
    for r in rows:  # under the workshop: its GPU and options
        _agrees_with_model_md(atlas, {**r, "gpu": w.gpu, "overlap": "step", "gradient_precision": "bf16",
                                      "topology": "flat", "sharding": "none", "mfu": w.mfu,
                                      "gpu_peak_tflops": atlas.presets.gpu.peak_tflops,
                                      "gpu_memory_gb": atlas.presets.gpu.memory_gb, "bytes_per_grad": w.bytes_per_grad})
    for sel in covered(atlas, 300):  # every two choices of any two controls together, and more at random
        got = facts.selection_rows(atlas.facts(sel))
        assert [r["replicas"] for r in got] == atlas.replicas.tolist() and list(got[0]) == \
            [c[0] for c in facts.SELECTION_COLUMNS]
        for r in got:
            assert all(r[k] == getattr(atlas.complete(sel), k) for k in ("model", "batch", "network", "gpu",
                                                                          "overlap", "topology", "sharding"))
            _agrees_with_model_md(atlas, {k: render.csv_cell(v) for k, v in r.items()})


def _close(got: float, want: float, rtol: float = 1e-7, atol: float = 0.0) -> None:
    """assert_allclose for two numbers, at a fraction of its cost (the test checks about 45,000 rows)."""
    assert abs(got - want) <= atol + rtol * abs(want), (got, want)


def _agrees_with_model_md(atlas, r: dict) -> None:
    """One CSV row (texts) against MODEL.md's formulas for its selection."""
    N, T, n = float(r["params"]), float(r["global_batch_tokens"]), float(r["replicas"])
    P, u, B = float(r["gpu_peak_tflops"]) * 1e12, float(r["mfu"]), float(r["link_gbytes_per_s"]) * 1e9
    gpu = facts.gpus_of(atlas.presets)[r["gpu"]]
    w = atlas.presets.workshop
    b = {"bf16": w.bytes_per_grad, "fp32": 4}[r["gradient_precision"]]
    assert int(r["bytes_per_grad"]) == b and P == gpu.peak_tflops * 1e12 and u == w.mfu
    assert N == atlas.presets.models[r["model"]].params and T == atlas.presets.batches[r["batch"]].tokens
    B_nvl = gpu.nvlink_gbytes_per_s * 1e9
    network = atlas.presets.networks[r["network"]]
    assert B == (B_nvl if network.nvlink else network.link_gbytes_per_s * 1e9)
    S = b * N
    compute = 6 * N * T / (n * P * u)
    if r["topology"] == "flat":
        allreduce = 2 * (n - 1) / n * S / B
    elif n <= 8:
        allreduce = 2 * (n - 1) / n * S / B_nvl
    else:
        m = n / 8
        allreduce = 2 * 7 / 8 * S / B_nvl + 2 * (m - 1) / m * (S / 8) / B
    # MODEL.md's corrections: ZeRO-1/2 reduce-scatter the gradients (b·N·r) and gather the BF16 weights (2·N·r),
    # ZeRO-3 gathers them for the forward and the backward pass, against the all-reduce's 2·b·N·r; backward-only,
    # ZeRO-3's forward gather hides behind the forward third, the rest behind the backward pass.
    forward, late = {"none": (0.0, 1.0), "zero1": (0.0, (2 + b) / (2 * b)), "zero2": (0.0, (2 + b) / (2 * b)),
                     "zero3": (2 / (2 * b), (2 + b) / (2 * b))}[r.get("sharding", "none")]
    if r["overlap"] == "step":
        step = max(compute, (forward + late) * allreduce)
    else:
        step = compute + max(0.0, forward * allreduce - compute / 3) + max(0.0, late * allreduce - 2 * compute / 3)
    _close(float(r["step_s"]), step, rtol=1e-12)
    _close(float(r["efficiency"]), compute / step, rtol=1e-12)
    _close(float(r["compute_s"]), compute, rtol=1e-12)
    _close(float(r["allreduce_s"]), allreduce, rtol=1e-12, atol=0)
    _close(float(r["tokens_per_replica"]), T / n)
    _close(float(r["sequences_per_replica"]), T / n / w.seq_len)
    if "comm_s" in r:
        _close(float(r["comm_s"]), (forward + late) * allreduce, rtol=1e-12, atol=0)
        _close(float(r["exposed_s"]), step - compute, rtol=1e-9, atol=1e-15)
        assert float(r["gpu_memory_gb"]) == gpu.memory_gb and float(r["nvlink_gbytes_per_s"]) == gpu.nvlink_gbytes_per_s
    memory = gpu.memory_gb * 1e9
    s = w.bytes_per_param_states
    per_param = {"none": s, "zero1": 4 + (s - 4) / n, "zero2": 2 + (s - 2) / n, "zero3": s / n}[r.get("sharding", "none")]
    _close(float(r["model_states_gb"]), per_param * N / 1e9, rtol=1e-12)
    assert r["fits_in_memory"] == ("true" if per_param * N <= memory * (1 + 1e-12) else "false") \
        or abs(per_param * N - memory) < 1e-6 * memory


def test_bucketed_tail_is_at_least_the_backward_bound_and_within_one_bucket(atlas):
    """For a covering set of selections: DDP's buckets' exposed tail ≥ max(0, A − 2C/3) (perfect overlap within the
    backward pass, the model's step − compute under backward-only overlap) and exceeds it by at most the largest
    bucket's fill or send time; the timeline's tail bar is that tail under backward-only overlap."""
    from generator import charts
    from xiv4 import model
    for sel in covered(atlas, 300):  # every two choices of any two controls together, and more at random
        f = atlas.facts(sel)
        p = f.at(f.timeline_replicas)
        C = p.compute_s
        # ZeRO-3's forward all-gather (2·N·r of the all-reduce's 2·b·N·r) hides behind the forward third only
        forward = p.allreduce_s * 2 / (2 * f.inputs.bytes_per_grad) if f.sharding_stage == 3 else 0.0
        A = p.comm_s - forward
        bound = max(0.0, forward - C / 3) + max(0.0, A - 2 * C / 3)
        backward = atlas.facts(replace(f.selection, overlap="backward")).at(f.timeline_replicas)
        assert abs(bound - (backward.step_s - backward.compute_s)) <= 1e-12 * C
        assert f.backward_bound_s == pytest.approx(bound, rel=1e-12, abs=1e-15)
        # buckets sent in order as they fill: the tail exceeds the bound by at most the largest bucket's fill or send
        # time (a link-bound step waits for the first bucket to fill, a compute-bound one sends the last after it)
        one_bucket = max(2 * C / 3, A) * f.largest_bucket_bytes / f.grad_bytes
        assert bound - 1e-12 * C <= f.bucketed_tail_s <= bound + one_bucket + 1e-12 * C, sel
        assert sum(f.buckets[0]) == pytest.approx(f.grad_bytes, rel=1e-12)
        # the timeline draws the chosen overlap: these buckets for the backward pass only; for the workshop's whole
        # step the readout's own step − compute, so the figure and the readout agree on every selection
        tail = f.bucketed_tail_s if f.backward_only else p.step_s - p.compute_s
        bars = [r for r in xfigures.timeline_rows(f) if r["kind"] == "tail"]
        assert (bars[0]["end"] - bars[0]["start"] if bars else 0.0) == pytest.approx(tail, rel=1e-12, abs=1e-15)
        facts_row, = xfigures.timeline_facts(f)
        assert facts_row["step_end"] == pytest.approx(p.compute_s + tail, rel=1e-12)


def test_exact_statements_for_the_prose(atlas):
    """Issue 8's numbers, recomputed from MODEL.md's formulas rather than read back from facts.py."""
    P, u, T, N = 989e12, 0.45, 2**22, 8_030_261_248  # MODEL.md's
    ib = atlas.facts(spec_selection(atlas.presets))
    nv = atlas.facts(spec_selection(atlas.presets, network="nvlink"))
    assert_allclose(ib.meeting_replicas, 1 + 1.5 * T * 50e9 / (P * u), rtol=1e-12)
    assert round(ib.meeting_replicas) == 708 and ib.crossing_replicas == 1024
    assert_allclose([ib.hiding_tokens_per_replica, nv.hiding_tokens_per_replica],
                    [P * u / (1.5 * 50e9), P * u / (1.5 * 450e9)], rtol=1e-12)
    assert round(ib.hiding_tokens_per_replica) == 5934 and round(nv.hiding_tokens_per_replica) == 659
    assert_allclose(ib.model_states_bytes, 16 * N) and ib.gpu_memory_bytes == 80e9
    assert_allclose(ib.gpu_memory_gib_bytes, 80 * 2**30) and not ib.fits_in_gib
    assert ib.embedding_params == 2 * 128256 * 4096 and ib.model.params - ib.embedding_params == 6_979_588_096


def test_the_lines_meet_at_n_star(atlas):
    """For every model, batch and network of the content: compute equals the all-reduce at n*, and the grid's
    crossing is the first power of two past it."""
    w, gpu = atlas.presets.workshop, atlas.presets.gpu
    for m in atlas.presets.models:
        for b in atlas.presets.batches:
            for network in atlas.presets.networks.values():
                f = atlas.facts(Selection(m, b, network.id))
                n = f.meeting_replicas
                compute = 6 * f.model.params * f.batch.tokens / (n * gpu.peak_tflops * 1e12 * w.mfu)
                allreduce = 2 * (n - 1) / n * w.bytes_per_grad * f.model.params / network.link_bytes_per_s(gpu)
                assert_allclose(compute, allreduce, rtol=1e-12)
                past = [int(r) for r in f.grid.replicas if r > n]
                assert f.crossing_replicas == (past[0] if past else None)


def test_the_real_cluster_beside_the_workshop_for_the_spec_selection(atlas):
    """MODEL.md "Model v2" on the default: at 1,024 GPUs the ring's bandwidth term is ≈ 0.080 s against the
    workshop's 0.642 s; a ring call pays 9,657.2 µs of latency (13,520.1 µs with the plateau), a tree call 260.4 µs,
    so NCCL takes the tree for every bucket."""
    f = atlas.facts(spec_selection(atlas.presets))
    assert f.cluster_replicas == 1024
    assert_allclose(f.cluster_ring_bandwidth_s, 0.080, atol=5e-4)
    assert_allclose(f.at(1024).allreduce_s, 0.642, rtol=1e-3)
    assert_allclose([f.ring_latency_us, f.ring_call_latency_us, f.tree_latency_us], [9657.2, 13520.08, 260.4],
                    rtol=1e-9)
    assert f.cluster_algorithm == "tree" and f.cluster_tree_calls == f.cluster_bucket_count == 162
    assert_allclose(f.cluster_latency_s, 162 * 260.4e-6, rtol=1e-9)
    assert_allclose(f.cluster_ring_latency_s, 162 * 13520.08e-6, rtol=1e-9)  # seconds, had NCCL kept the ring
    assert_allclose(f.cluster_comm_s, f.cluster_latency_s + f.cluster_bandwidth_s, rtol=1e-12)
    assert f.cluster_step_s >= f.at(1024).compute_s and f.cluster_efficiency == f.at(1024).compute_s / f.cluster_step_s


def test_the_real_clusters_controls_move_only_its_own_numbers(atlas):
    """bucket_cap_mb and micro-batches change the real cluster, not the workshop's grid; more micro-batches leave
    less backward pass to hide behind; the crossing is where its communication outlasts that window."""
    d = atlas.complete(Selection(*[atlas.axes[k][0] for k in ("model", "batch", "network")]))
    base = atlas.facts(d)
    for bucket in facts.CLUSTER_OPTIONS["bucket"]:
        crossings = []
        for micro in ("1", "16"):
            f = atlas.facts(replace(d, bucket=bucket, micro=micro))
            assert f.index == base.index and f.points == base.points  # the workshop is the same
            n = f.cluster_crossing_replicas
            window = [p.compute_s * 2 / 3 / int(micro) for p in f.points]
            before = [c <= w for c, w, p in zip(f.cluster["comm_s"], window, f.points) if n is None or p.replicas < n]
            assert all(before) and (n is None or f.cluster_at(n)["comm_s"] > f.at(n).compute_s * 2 / 3 / int(micro))
            crossings.append(n or 2 * f.max_replicas)
        assert crossings[1] <= crossings[0]  # sixteen micro-batches hide less than one
    steps = list(base.cluster_step_by_micro.values())
    assert steps == sorted(steps)
    assert base.cluster_step_by_micro["1"] == base.cluster_step_s
    counts = [atlas.facts(replace(d, bucket=b)).cluster_bucket_count for b in ("1", "25", "100", "500")]
    assert counts == sorted(set(counts), reverse=True)  # strictly fewer calls as the cap grows
    assert base.cluster_with(base.max_replicas, bucket="500") == atlas.facts(replace(d, bucket="500")).cluster_at(
        base.max_replicas)
