"""Facts read off the grid for the real presets: what the prose and the readout state."""
import csv
from dataclasses import replace
import io

import pytest
from numpy.testing import assert_allclose

from generator.source import content
from generator.page import render
from xiv4 import Selection

from conftest import CONTENT, covered, spec_selection
from xiv4 import PLATE, facts, rows_of, selection_rows, site_rows, xpage, xwords
from generator.page.notation import percent


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
    rows = site_rows(atlas)
    p = atlas.presets
    # each model on its published layout: its replica axis stops where its replicas' GPUs reach the cap
    axis = {m: len(atlas.facts(Selection(m, next(iter(p.batches)), next(iter(p.networks)))).points) for m in p.models}
    assert len(rows) == sum(axis[m] for m in p.models) * len(p.batches) * len(p.networks)
    assert tuple(rows[0]) == xpage.CSV_COLUMNS
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
    assert len(rows) == len(site_rows(atlas))
    assert list(rows[0]) == list(xpage.CSV_COLUMNS)
    w = atlas.presets.workshop
    for r in rows:  # under the workshop: its GPU and options
        _agrees_with_model_md(atlas, {**r, "gpu": w.gpu, "overlap": "step", "gradient_precision": "bf16",
                                      "topology": "flat", "sharding": "none", "mfu": w.mfu,
                                      "gpu_peak_tflops": atlas.presets.gpu.peak_tflops,
                                      "gpu_memory_gb": atlas.presets.gpu.memory_gb, "bytes_per_grad": w.bytes_per_grad})
    for sel in covered(atlas, 300):  # every two choices of any two controls together, and more at random
        f = atlas.facts(sel)
        got = selection_rows(f)
        assert [r["replicas"] for r in got] == [p.replicas for p in f.points] and list(got[0]) == \
            [c[0] for c in PLATE.page_rows.SELECTION_COLUMNS]
        assert f.points[-1].replicas * f.layout.gpus <= atlas.presets.workshop.max_replicas or len(f.points) == 1
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
    # a replica of g = t·p GPUs (Model v3): each GPU computes, reduces and keeps N/g; its data-parallel peers share
    # a node 8/g to a node, or meet one to a node from a node's worth of GPUs on
    g = float(r["gpus_per_replica"]) if "gpus_per_replica" in r else 1.0
    node = max(1.0, float(8 // g))
    S = b * N / g
    compute = 6 * N * T / (n * g * P * u)
    if r["topology"] == "flat":
        allreduce = 2 * (n - 1) / n * S / B
    elif n <= node:
        allreduce = 2 * (n - 1) / n * S / B_nvl
    else:
        m = n / node
        allreduce = 2 * (node - 1) / node * S / B_nvl + 2 * (m - 1) / m * (S / node) / B
    # MODEL.md's corrections: ZeRO-1/2 reduce-scatter the gradients (b·N·r) and gather the BF16 weights (2·N·r),
    # ZeRO-3 gathers them for the forward and the backward pass, against the all-reduce's 2·b·N·r; backward-only,
    # ZeRO-3's forward gather hides behind the forward third, the rest behind the backward pass. Model v3: ZeRO-1/2's
    # gather of the updated weights runs after the optimiser step, prefetched behind the next forward pass (FSDP's
    # SHARD_GRAD_OP, the schedule the page draws): it too hides behind the forward third, the reduce-scatter behind
    # the backward pass.
    forward, late = {"none": (0.0, 1.0), "zero1": (2 / (2 * b), b / (2 * b)), "zero2": (2 / (2 * b), b / (2 * b)),
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
    b = float(r["bytes_per_grad"]) if "bytes_per_grad" in r else w.bytes_per_grad
    s = 2 + b + 12  # BF16 weights, the gradients as kept, FP32 master weights and Adam's two moments
    per_param = {"none": s, "zero1": 2 + b + (s - 2 - b) / n, "zero2": 2 + (s - 2) / n,
                 "zero3": s / n}[r.get("sharding", "none")]
    _close(float(r["model_states_gb"]), per_param * N / g / 1e9, rtol=1e-12)
    assert r["fits_in_memory"] == ("true" if per_param * N / g <= memory * (1 + 1e-12) else "false") \
        or abs(per_param * N / g - memory) < 1e-6 * memory


def test_bucketed_tail_is_at_least_the_backward_bound_and_within_one_bucket(atlas):
    """For a covering set of selections: DDP's buckets' exposed tail ≥ max(0, A − 2C/3) (perfect overlap within the
    backward pass, the model's step − compute under backward-only overlap) and exceeds it by at most the largest
    bucket's fill or send time; the timeline's tail bar is that tail under backward-only overlap."""
    from generator.plate import charts
    from xiv4 import model
    for sel in covered(atlas, 300):  # every two choices of any two controls together, and more at random
        f = atlas.facts(sel)
        p = f.at(f.timeline_replicas)
        C = p.compute_s
        # ZeRO's all-gather behind the forward pass (2·N·r of the all-reduce's 2·b·N·r; ZeRO-1/2's of the updated
        # weights, prefetched) hides behind the forward third only
        forward = p.allreduce_s * 2 / (2 * f.inputs.bytes_per_grad) if f.sharding_stage > 0 else 0.0
        A = p.comm_s - forward
        bound = max(0.0, forward - C / 3) + max(0.0, A - 2 * C / 3)
        backward = atlas.facts(replace(f.selection, overlap="backward")).at(f.timeline_replicas)
        assert abs(bound - (backward.step_s - backward.compute_s)) <= 1e-12 * C
        assert f.backward_bound_s == pytest.approx(bound, rel=1e-12, abs=1e-15)
        # buckets sent in order as they fill: the tail exceeds the bound by at most the largest bucket's fill or send
        # time (a link-bound step waits for the first bucket to fill, a compute-bound one sends the last after it)
        # the buckets are the fullest pipeline stage's (on one GPU, the whole model's); A is spread over them
        one_bucket = max(2 * C / 3, A) * f.largest_bucket_bytes / sum(f.buckets[0])
        assert bound - 1e-12 * C <= f.bucketed_tail_s <= bound + one_bucket + 1e-12 * C, sel
        if f.layout.gpus == 1:
            assert sum(f.buckets[0]) == pytest.approx(f.grad_bytes, rel=1e-12)
        # the timeline draws the chosen overlap: these buckets for the backward pass only; for the workshop's whole
        # step the readout's own step − compute, so the figure and the readout agree on every selection
        tail = f.bucketed_tail_s if f.backward_only else p.step_s - p.compute_s
        bars = [r for r in rows_of(f)["timeline"] if r["kind"] == "tail"]
        assert (bars[0]["end"] - bars[0]["start"] if bars else 0.0) == pytest.approx(tail, rel=1e-12, abs=1e-15)
        facts_row, = rows_of(f)["timeline_facts"]
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
    """MODEL.md "Model v2" on the default: at 1,024 GPUs the ring's bandwidth term is ≈ 0.080 s at line rates
    (test_model pins that), and at the achieved rates of "Model v3" (8 NICs × 47 GB/s, capped by NVLink's 370 GB/s)
    2·1023/1024 · 2N / 370 GB/s ≈ 0.0867 s, against the workshop's 0.642 s; a ring call pays 9,657.2 µs of latency
    (13,520.1 µs with the plateau), a tree call 260.4 µs, so NCCL takes the tree for every bucket."""
    f = atlas.facts(spec_selection(atlas.presets))
    assert f.cluster_replicas == 1024
    bus = min(8 * 47e9, 450e9 * 370 / 450)
    assert bus == 370e9  # NVLink's achieved rate binds before the eight NICs'
    assert_allclose(f.cluster_ring_bandwidth_s, 2 * 1023 / 1024 * 2 * f.model.params / bus, rtol=1e-9)
    assert_allclose(f.cluster_ring_bandwidth_s, 0.0867, atol=5e-4)
    assert_allclose(f.at(1024).allreduce_s, 0.642, rtol=1e-3)
    assert_allclose([f.ring_latency_us, f.ring_call_latency_us, f.tree_latency_us], [9657.2, 13520.08, 260.4],
                    rtol=1e-9)
    assert f.cluster_algorithm == "tree" and f.cluster_tree_calls == f.cluster_bucket_count == 162
    assert_allclose(f.cluster_latency_s, 162 * 260.4e-6, rtol=1e-9)
    assert_allclose(f.cluster_ring_latency_s, 162 * 13520.08e-6, rtol=1e-9)  # seconds, had NCCL kept the ring
    assert_allclose(f.cluster_comm_s, f.cluster_latency_s + f.cluster_bandwidth_s, rtol=1e-12)
    assert f.cluster_step_s >= f.at(1024).compute_s and f.cluster_efficiency == f.at(1024).compute_s / f.cluster_step_s
    # the selection's CSV (the page's download) puts each of them under its own column, not its neighbour's
    row = next(r for r in selection_rows(f) if r["replicas"] == 1024)
    assert_allclose([row["cluster_latency_s"], row["cluster_bandwidth_s"], row["cluster_comm_s"]],
                    [162 * 260.4e-6, f.cluster_comm_s - 162 * 260.4e-6, f.cluster_comm_s], rtol=1e-9)
    assert row["cluster_tree_calls"] == 162


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


def test_zero12_gather_of_the_updated_weights_under_both_schedules(atlas):
    """Model v3: behind the backward pass only, ZeRO-1/2's all-gather of the updated weights exists only after the
    optimiser step. Prefetched behind the next forward pass (FSDP's SHARD_GRAD_OP, the schedule the page draws) or
    waited for after the step (DeepSpeed's stages 1 and 2): at 512 replicas of the default, from MODEL.md's algebra
    (reduce-scatter b·N·r, all-gather 2·N·r over the link B), ≈ 97.3% and ≈ 73.4%, no longer 94.7%."""
    for stage in ("zero1", "zero2"):
        for precision, b in (("bf16", 2), ("fp32", 4)):
            f = atlas.facts(spec_selection(atlas.presets, overlap="backward", sharding=stage, precision=precision))
            N, T, n = f.model.params, f.batch.tokens, 512
            B, P, u = f.network.link_gbytes_per_s * 1e9, f.gpu.peak_tflops * 1e12, atlas.presets.workshop.mfu
            C = 6 * N * T / (n * P * u)
            reduce_scatter = (n - 1) / n * b * N / B
            gather = (n - 1) / n * 2 * N / B
            prefetched = C + max(0.0, gather - C / 3) + max(0.0, reduce_scatter - 2 * C / 3)
            blocking = C / 3 + max(2 * C / 3, reduce_scatter) + gather
            assert_allclose(f.at(n).step_s, prefetched, rtol=1e-12)
            assert_allclose(f.at(n).efficiency, C / prefetched, rtol=1e-12)
            assert_allclose(f.blocking_efficiency(n), C / blocking, rtol=1e-12)
            text = xwords.readout(f)
            assert "SHARD_GRAD_OP" in text and "DeepSpeed" in text
            assert percent(C / blocking) in text and percent(C / prefetched) in text
            assert "all-reduce" not in text.replace("all-reduces", "")  # ZeRO's traffic is never called one
            if precision == "bf16":
                assert_allclose([C / prefetched, C / blocking], [0.973, 0.734], atol=5e-4)
                assert percent(C / prefetched) != "94.7%"
        # over the whole step both schedules are the workshop's max(C, A)
        whole = atlas.facts(spec_selection(atlas.presets, sharding=stage))
        assert whole.blocking_efficiency(512) == whole.at(512).efficiency
    # the readout names the schedule it draws
    page = xwords.readout(atlas.facts(spec_selection(atlas.presets, overlap="backward", sharding="zero1")))
    assert "the page prefetches their all-gather behind the next forward pass" in page


def test_the_real_cluster_over_nvlink_stays_inside_the_nvlink_domain(atlas):
    """Model v3: with Network = NVLink the real cluster has no NICs: GB200 NVL72 at 64 GPUs is one 72-GPU NVLink
    domain, priced with NCCL's NVLink steps (ring 8.4 + 2(n−1)·3.4 µs, tree 8.4 + 2(n−1)·4.0 µs; no 14 µs network
    step) and NVLink's achieved bandwidth (900 × 370/450 GB/s), and not priced beyond the domain."""
    f = atlas.facts(spec_selection(atlas.presets, network="nvlink", gpu="gb200-nvl72"))
    sizes = f.cluster_buckets[0]
    n = 64
    bus = 900e9 * 370 / 450
    ring_latency = (8.4 + 2 * (n - 1) * 3.4) * 1e-6
    tree_latency = (8.4 + 2 * (n - 1) * 4.0) * 1e-6
    ring_bandwidth = [2 * (n - 1) / n * s / bus for s in sizes]
    # the tree is dearer for every call: more latency, and at most 0.46 of the bus against the ring's n/(2(n−1))
    assert tree_latency > ring_latency and 0.46 < n / (2 * (n - 1))
    c = f.cluster_at(n)
    assert c["tree_calls"] == 0
    assert_allclose(c["latency_s"], len(sizes) * ring_latency, rtol=1e-12)
    assert_allclose(c["ring_latency_s"], len(sizes) * ring_latency, rtol=1e-12)
    assert_allclose(c["bandwidth_s"], sum(ring_bandwidth), rtol=1e-12)
    assert_allclose(c["bandwidth_s"], 2 * 63 / 64 * 2 * f.model.params / bus, rtol=1e-9)
    for beyond in (128, f.max_replicas):  # past the 72-GPU rack no NVLink reaches: not priced, not drawn
        assert all(v is None for v in f.cluster_at(beyond).values())
    assert f.cluster_reach == 64
    rows = selection_rows(f)
    assert [r["cluster_step_s"] == "" for r in rows] == [r["replicas"] > 72 for r in rows]
    text = xwords.describe(f, "fig-time")
    assert "inside one NVLink domain of up to 72 GPUs" in text and "stops at 64 replicas" in text
    # an HGX H100 board: a domain of 8
    h = atlas.facts(spec_selection(atlas.presets, network="nvlink"))
    assert h.cluster_reach == 8 and h.cluster_at(16)["step_s"] is None
    assert_allclose(h.cluster_at(8)["ring_latency_s"], len(sizes) * (8.4 + 14 * 3.4) * 1e-6, rtol=1e-12)
