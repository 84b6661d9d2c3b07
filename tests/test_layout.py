"""platelib.layout: a replica laid out as t-way tensor parallelism in each of p pipeline stages. Each GPU holds its
stage's layers with every matrix cut t ways, and its DDP buckets are built from those tensors; checked here against
Llama 3.1 405B's published architecture and layout, the buckets made by a formula written out below, not platelib's."""
from __future__ import annotations

import pytest

from platelib import cluster, layout
from platelib.units import MIB

from conftest import SERIES
from generator.source import content

# Llama 3.1 405B's published architecture (its config.json: hidden_size 16384, intermediate_size 53248, 126 layers,
# 128 attention heads of 128, 8 key/value heads, vocabulary 128256), typed here so that nothing is derived by the
# code under test. Llama 3 405B's layout: TP 8 × PP 16 (arXiv:2407.21783, Table 4).
D, FFN, LAYERS, VOCAB, HEAD, KV_HEADS = 16384, 53248, 126, 128256, 128, 8
T, P = 8, 16


def catalogue_405b():
    """The series catalogue's Llama 3.1 405B and its published layout, as the plates read them."""
    c = content.load(SERIES / "xiv-4-data-parallelism")
    m = c.presets.models["llama3-405b"]
    return m, c.presets.layouts[m.layout]


def test_the_catalogue_gives_405b_its_published_layout_and_its_published_shape():
    m, lay = catalogue_405b()
    assert (lay.tensor, lay.pipeline) == (T, P) and lay.gpus == 128
    assert (m.d_model, m.ffn, m.layers, m.vocab) == (D, FFN, LAYERS, VOCAB)
    layer = 2 * D * D + 2 * D * KV_HEADS * HEAD + 3 * D * FFN + 2 * D  # q, o; k, v; gate, up, down; two norms
    assert m.params == LAYERS * layer + 2 * VOCAB * D + D  # the final norm; embedding and head untied


def test_stages_hold_whole_layers_the_ends_short_first():
    assert layout.stage_layers(126, 16) == [7] + [8] * 14 + [7]
    for layers in (1, 2, 5, 32, 80, 126, 127, 128):
        for p in (1, 2, 3, 7, 8, 16, 64):
            got = layout.stage_layers(layers, p)
            assert len(got) == p and sum(got) == layers
            assert max(got) == -(-layers // p) and max(got) - min(got) <= 1
            short = [s for s in range(p) if got[s] < max(got)]
            # the short stages are the ends, taken from both ends in turn
            ends = sorted(list(range(p))[: (len(short) + 1) // 2] + list(range(p))[p - len(short) // 2:])
            assert short == ends


def independent_buckets(tensors: list[float], grad_bytes: int, cap: float, first: float) -> tuple[list, list]:
    """DDP's bucketing as its reducer does it, written out apart from platelib: whole tensors in gradient order, a
    bucket closed once it holds at least its limit (the first's, then the cap)."""
    total = sum(tensors)
    sizes, ready, held, done, limit = [], [], 0.0, 0.0, first
    for t in tensors:
        held += t * grad_bytes
        done += t
        if held >= limit:
            sizes.append(held)
            ready.append(done / total)
            held, limit = 0.0, cap
    if held:
        sizes.append(held)
        ready.append(done / total)
    return sizes, ready


@pytest.mark.parametrize("grad_bytes", [2, 4])
def test_405b_on_tp8_pp16_each_gpu_reduces_8_layers_tensors_cut_8_ways(grad_bytes):
    """The acceptance line of issue 42: at g = 128 (TP 8 × PP 16) each GPU's gradient tensors are 8 layers'
    tensors cut 8 ways (the stages of ⌈126/16⌉ = 8 layers hold the most), and its buckets follow from them."""
    m, lay = catalogue_405b()
    kv = D * KV_HEADS * HEAD
    # one layer on one GPU, in the order its backward pass makes the gradients: down, up, gate, the post-attention
    # norm (whole on every GPU), o, v, k, q, the input norm; every matrix cut T ways
    one = [D * FFN / T, D * FFN / T, D * FFN / T, D, D * D / T, kv / T, kv / T, D * D / T, D]
    expected = one * 8
    got = layout.gpu_tensors(m.params, m.layers, m.d_model, m.ffn, m.vocab, lay.tensor, lay.pipeline)
    assert got == pytest.approx(expected, rel=1e-15)
    assert sum(got) > sum(one) * 7 + VOCAB * D / T  # more than either end stage, which holds 7 layers and a vocabulary
    model = {"params": m.params, "layers": m.layers, "d_model": m.d_model, "ffn": m.ffn, "vocab": m.vocab}
    sizes, ready = cluster.gradient_buckets(model, {"tensor": T, "pipeline": P}, grad_bytes, None)
    want_sizes, want_ready = independent_buckets(expected, grad_bytes, 25 * MIB, 1 * MIB)
    assert sizes == pytest.approx(want_sizes, rel=1e-15) and ready == pytest.approx(want_ready, rel=1e-15)
    assert len(sizes) == len(want_sizes)


def test_405b_per_gpu_parameters_on_its_layout():
    """N/(t·p) per GPU in the workshop (equal stages): Llama 3.1 405B at t = 8, p = 16 gives 3.171 × 10⁹."""
    from platelib.compute import gpu_params
    m, lay = catalogue_405b()
    assert f"{gpu_params(m.params, layout.replica_gpus(lay.tensor, lay.pipeline)) / 1e9:.3f}" == "3.171"


def test_one_gpu_holds_the_whole_model_in_backward_order():
    """t = p = 1: the output head, the final norm, every layer from the last, the input embedding."""
    m, _ = catalogue_405b()
    kv = D * KV_HEADS * HEAD
    one = [D * FFN] * 3 + [D, D * D, kv, kv, D * D, D]
    got = layout.gpu_tensors(m.params, m.layers, m.d_model, m.ffn, m.vocab, 1, 1)
    assert got == pytest.approx([VOCAB * D, D] + one * LAYERS + [VOCAB * D], rel=1e-15)


def test_a_model_known_by_its_size_alone_is_cut_evenly():
    got = layout.gpu_tensors(8e9, 0, 0, 0, 0, 8, 2)
    assert sum(got) == pytest.approx(8e9 / 16, rel=1e-12) and max(got) == pytest.approx(min(got), rel=1e-12)


def test_the_published_choice_takes_the_models_layout_else_one_gpu():
    layouts = {"tp8": {"id": "tp8", "name": "TP 8", "tensor": 8, "pipeline": 1}}
    assert layout.chosen_layout(layout.PUBLISHED, {"layout": "tp8"}, layouts) is layouts["tp8"]
    assert layout.chosen_layout(layout.PUBLISHED, {"layout": ""}, layouts) == layout.ONE_GPU
    assert layout.chosen_layout(layout.PUBLISHED, {}, layouts) == layout.ONE_GPU  # the reader's own model
    assert layout.chosen_layout("tp8", {"layout": ""}, layouts) is layouts["tp8"]


def test_the_replica_axis_stops_at_the_gpu_cap():
    from platelib.compute import replica_counts
    assert replica_counts(16384).tolist() == [2 ** k for k in range(15)]
    assert replica_counts(16384, 128).tolist() == [2 ** k for k in range(8)]
    assert replica_counts(16384, 24).tolist() == [2 ** k for k in range(10)]  # 512 × 24 ≤ 16,384 < 1,024 × 24
    assert replica_counts(64, 128).tolist() == [1]  # one replica at least
