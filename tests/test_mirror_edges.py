"""The page's formulas (platelib's Python, compiled for the page by generator/page/compiler.py, run under node) against the
same Python at the edges random runs do not reach: gradients that fill one bucket or close one at its limit exactly,
NCCL's ties; and prose's compare() on tiny and huge numbers alike."""
from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from generator.source import prose
from generator.plate import texts
from generator.page import compiler
from platelib import buckets as lib_buckets, collectives
from xiv4 import model

RTOL = 1e-12
ENTRIES = {"buckets": lib_buckets.buckets, "bucket_schedule": lib_buckets.bucket_schedule,
           "bucketed_tail_seconds": lib_buckets.bucketed_tail_seconds, "nccl_allreduce": collectives.nccl_allreduce,
           "nccl_choice": collectives.nccl_choice}


def in_node(calls: list[list], folder) -> list:
    """Each [function name, args] of calls (ENTRIES) run compiled, as the page runs it, under node."""
    from test_compiler import node_run
    modules = {**texts.engine_modules(), **compiler.compile_page(ENTRIES).modules}
    modules[compiler.LIBRARY] = compiler.library(modules)  # PScript's library, once for every compiled module
    return node_run(modules, calls, folder)


def edge_runs() -> list[tuple[float, float, list[float]]]:
    """(compute, comm, tensors in gradient order, BF16): one tensor to many, each side of the first bucket's 1 MiB
    and the later ones' 25 MiB (a bucket closes at its limit exactly), a tensor larger than a bucket, with the link
    faster and slower than the backward pass fills a bucket."""
    first, cap = model.FIRST_BUCKET_BYTES / 2, model.BUCKET_BYTES / 2  # elements that fill each limit in BF16
    lists = [[1.0], [first - 1], [first], [first + 1], [first, 1.0], [first, cap - 1], [first, cap], [first, cap, 1.0],
             [first / 2] * 2 + [cap / 4] * 4 + [3 * cap], [cap / 3] * 40, [10 * cap, 1.0, 10 * cap]]
    times = [(1.0, 0.01), (1.0, 0.5), (1.0, 2 / 3), (1.0, 1.0), (1.0, 3.0), (0.002, 0.7)]
    return [(c, a, tensors) for tensors in lists for c, a in times]


def test_the_bucketed_tail_matches_python_from_one_bucket_up(tmp_path):
    runs = edge_runs()
    made = in_node([["buckets", [tensors, 2]] for _, _, tensors in runs], tmp_path / "buckets")
    timed = in_node([[name, [compute, comm, *made[i]]] for i, (compute, comm, _) in enumerate(runs)
                     for name in ("bucket_schedule", "bucketed_tail_seconds")], tmp_path / "timed")
    got = [[*made[i], timed[2 * i], timed[2 * i + 1]] for i in range(len(runs))]
    counts = [len(sizes) for sizes, *_ in got]
    assert 1 in counts and 2 in counts and max(counts) > 3  # a single bucket, two, and many
    per_list = counts[::6]  # each tensor list once (six timings each)
    # a bucket closes at its limit exactly: 1 MiB then one element make two buckets, 1 MiB, 25 MiB and one make three
    assert per_list[4] == 2 and per_list[7] == 3 and per_list[5] == 2
    for (compute, comm, tensors), (sizes, ready, schedule, tail) in zip(runs, got):
        label = f"compute {compute}, comm {comm}, tensors {tensors}"
        python = model.buckets(tensors, 2)
        assert [sizes, ready] == [list(v) for v in python], label
        assert schedule == [list(v) for v in model.bucket_schedule(compute, comm, *python)], label
        assert_allclose(tail, model.bucketed_tail_seconds(compute, comm, *python), rtol=RTOL, atol=1e-15,
                        err_msg=label)
        # at least the backward pass's perfect overlap, at most the largest bucket's fill or send time more
        bound, share = max(0.0, comm - 2 * compute / 3), max(sizes) / sum(sizes)
        assert bound - 1e-12 <= tail <= bound + max(comm, compute * 2 / 3) * share + 1e-12, label


def test_an_exact_tie_between_ring_and_tree_goes_to_the_tree_as_in_nccls_loop_and_one_gpu_to_the_ring(tmp_path):
    """NCCL's topoGetAlgoInfo walks tree before ring and takes a later algorithm only when strictly cheaper: a tie is
    the tree's. With one rank it prices the ring alone. Python and the page alike."""
    # Two nodes of one GPU each: the ring's 2(n - 1) = 2 network steps and the tree's 2 log2(2) = 2 cost the same,
    # 8.4 + 2 x 14 us; a call of no bytes has no bandwidth part. A tie by NCCL's own numbers, exact in doubles.
    latency = (8.4 + 2 * 14.0) * 1e-6
    cases = [([0.0, 50e9, 450e9, 2, 1], [latency, 0.0, latency, 0.0]),
             ([2**20, 50e9, 450e9, 1], [0.25, 0.5, 0.5, 0.25]),  # one GPU; and a tie in sums exact in binary
             ([2**30, 50e9, 450e9, 16], [0.5, 0.25, 0.5, 0.25 + 2**-50])]  # the ring, by the least it can win
    python = [[model.nccl_allreduce(*args), model.nccl_choice(model.nccl_allreduce(*args)), model.nccl_choice(costs)]
              for args, costs in cases]
    assert python[0][0] == [latency, 0.0, latency, 0.0] and python[1][0] == [0.0] * 4
    assert [[choice, tie] for _, choice, tie in python] == [[1, 1], [0, 1], [0, 0]]
    priced = in_node([["nccl_allreduce", args] for args, _ in cases], tmp_path / "priced")
    chosen = in_node([["nccl_choice", [costs]] for costs in priced] + [["nccl_choice", [costs]] for _, costs in cases],
                     tmp_path / "chosen")
    assert [[priced[i], chosen[i], chosen[len(cases) + i]] for i in range(len(cases))] == python


@pytest.mark.parametrize("scale", [1e-15, 1e-9, 1e-3, 1.0, 1e6, 1e15])
def test_compare_is_relative_at_every_scale(scale):
    words = ("less", "same", "more")
    assert prose.compare(1.0 * scale, 1.0 * scale, *words) == "same"
    assert prose.compare(scale, scale * (1 + 1e-12), *words) == "same"  # the last bits of a double
    assert prose.compare(scale * (1 + 1e-12), scale, *words) == "same"
    assert prose.compare(scale, 1.5 * scale, *words) == "less"
    assert prose.compare(1.5 * scale, scale, *words) == "more"
    assert prose.compare(scale, scale * (1 + 1e-6), *words) == "less"  # a real difference, however small the numbers
    assert prose.compare(-scale, scale, *words) == "less"
