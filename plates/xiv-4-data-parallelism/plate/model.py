"""The data-parallel scaling model of spec/MODEL.md: one function per formula, broadcasting over numpy arrays.

Pure numpy: no file access, no charting. templates/page/model.js mirrors every function here under the same name,
operation for operation (so both give the same doubles); tests/test_engine.py holds the two equal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

FLOPS_PER_PARAM_TOKEN = 6  # 2 forward + 4 backward (the usual convention; attention scores left out)
RING_FACTOR = 2  # a ring all-reduce sends and receives 2·(n−1)/n of the buffer
GB = 1e9  # decimal gigabytes, as GPU memory and link speeds are quoted
NODE_GPUS = 8  # GPUs per node joined by NVLink, for the hierarchical all-reduce
WEIGHT_BYTES = 2  # BF16 weights on each GPU (the rest of the states: gradients, then optimiser); ZeRO gathers these
GRADIENT_BYTES = 2  # BF16 gradients on each GPU


def replica_counts(max_replicas: int) -> np.ndarray:
    """Powers of two from 1 to max_replicas inclusive."""
    return 2 ** np.arange(int(np.log2(max_replicas)) + 1, dtype=np.int64)


def compute_seconds(params, batch_tokens, replicas, peak_flops, mfu):
    """Per-replica compute time of one optimiser step: 6·N·T / (n·P·u)."""
    return FLOPS_PER_PARAM_TOKEN * params * batch_tokens / (replicas * peak_flops * mfu)


def ring_seconds(buffer_bytes, link_bytes_per_s, replicas):
    """A ring all-reduce of a buffer S over n members: 2·(n−1)/n · S / B (zero for one member)."""
    return RING_FACTOR * (replicas - 1) / replicas * buffer_bytes / link_bytes_per_s


def allreduce_seconds(params, bytes_per_grad, link_bytes_per_s, nvlink_bytes_per_s, replicas, hierarchical,
                      node_gpus=NODE_GPUS):
    """The gradient all-reduce: a flat ring over the network, or hierarchical on nodes of g GPUs
    (a ring over NVLink inside the node, then a ring of 1/g of the buffer across the n/g nodes on each
    GPU's own link; phases summed, not pipelined)."""
    buffer = bytes_per_grad * params
    flat = ring_seconds(buffer, link_bytes_per_s, replicas)
    inside = ring_seconds(buffer, nvlink_bytes_per_s, np.minimum(replicas, node_gpus))
    across = ring_seconds(buffer / node_gpus, link_bytes_per_s, np.maximum(replicas / node_gpus, 1))
    return np.where(hierarchical, inside + across, flat)


def forward_traffic(sharding, bytes_per_grad):
    """Bytes moved in the forward pass per byte of the all-reduce (2·b·N): ZeRO-3's all-gather of the BF16
    weights, 2·N; nothing otherwise."""
    return np.where(np.equal(sharding, 3), WEIGHT_BYTES / (2 * bytes_per_grad), 0.0)


def traffic_factor(sharding, bytes_per_grad):
    """Bytes moved per step per byte of the all-reduce (2·b·N), piece by piece in mixed precision: ZeRO-1/2
    reduce-scatter the gradients (b·N) and all-gather the BF16 weights (2·N); ZeRO-3 gathers them for the forward
    and again for the backward pass (2·2·N) and reduce-scatters the gradients (b·N)."""
    gathers = np.where(np.equal(sharding, 3), 2, np.where(np.equal(sharding, 0), 0, 1))
    return np.where(np.equal(sharding, 0), 1.0, (gathers * WEIGHT_BYTES + bytes_per_grad) / (2 * bytes_per_grad))


def comm_seconds(allreduce, sharding, bytes_per_grad):
    """Communication time of one step: the all-reduce scaled by the sharding's traffic (each piece a ring
    collective over the same links, so its time is in proportion to its bytes)."""
    return traffic_factor(sharding, bytes_per_grad) * allreduce


def hiding_comm_seconds(comm, allreduce, sharding, bytes_per_grad, backward_only):
    """The communication that must fit in the hidden window: all of it, but backward only, not ZeRO-3's forward
    all-gather (it hides behind the forward pass)."""
    return comm - np.where(backward_only, forward_traffic(sharding, bytes_per_grad), 0.0) * allreduce


def hidden_window(compute, backward_only):
    """The compute communication can hide behind: the whole step, or the backward pass (2/3 of it)."""
    return np.where(backward_only, compute * 2 / 3, compute)


def step_seconds(compute, comm, backward_only, forward_comm=0.0):
    """Step time: compute, plus whatever communication outlasts its window (max(C, A) for the whole step,
    C/3 + max(2C/3, A) for the backward pass only). Backward only, ZeRO-3's forward all-gather (forward_comm)
    hides behind the forward third and the rest behind the backward two thirds, each phase on its own."""
    forward = np.where(backward_only, forward_comm, 0.0)
    late = np.maximum(compute, compute - hidden_window(compute, backward_only) + (comm - forward))
    return late + np.maximum(0.0, forward - compute / 3)


def efficiency(compute, step):
    """Scaling efficiency: compute / step."""
    return compute / step


def kept_bytes_per_param(sharding, state_bytes):
    """State bytes per parameter every GPU keeps whole: all of them, weights and gradients, weights, none."""
    return np.where(np.equal(sharding, 0), state_bytes,
                    np.where(np.equal(sharding, 1), WEIGHT_BYTES + GRADIENT_BYTES,
                             np.where(np.equal(sharding, 2), WEIGHT_BYTES, 0)))


def state_bytes_per_param(sharding, replicas, state_bytes=16):
    """Model-state bytes per parameter on each GPU under ZeRO stage k: 16 · 4+12/n · 2+14/n · 16/n."""
    kept = kept_bytes_per_param(sharding, state_bytes)
    return kept + (state_bytes - kept) / replicas


def smallest_fitting_replicas(params, sharding, memory_bytes, state_bytes=16):
    """The smallest whole replica count whose model states per GPU fit in memory; NaN when none does."""
    kept = kept_bytes_per_param(sharding, state_bytes) * params
    sharded = (state_bytes - kept_bytes_per_param(sharding, state_bytes)) * params
    room = memory_bytes - kept
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.maximum(1, np.ceil(sharded / room))
    return np.where(sharded == 0, np.where(kept <= memory_bytes, 1.0, np.nan), np.where(room > 0, needed, np.nan))


def continuous_crossing(batch_tokens, peak_flops, mfu, bytes_per_grad, link_bytes_per_s, nvlink_bytes_per_s,
                        hierarchical, backward_only, sharding, node_gpus=NODE_GPUS):
    """n* where communication exactly fills its window, solved per piece in closed form. Per gradient
    byte, so N cancels: flat 1 + W·B/(2f) (1 + 1.5·T·B/(P·u) for the workshop); hierarchical inside a node
    1 + W·B_nvl/(2f), beyond it (W/f + 2/B) / (2(g−1)/(g·B_nvl) + 2/(g·B))."""
    work = FLOPS_PER_PARAM_TOKEN * batch_tokens / (peak_flops * mfu * bytes_per_grad)  # compute·n per byte
    forward = np.where(backward_only, forward_traffic(sharding, bytes_per_grad), 0.0)
    late = hidden_window(work, backward_only) / (traffic_factor(sharding, bytes_per_grad) - forward)
    # the phase that fills its window first: the forward all-gather behind the forward third, or the rest
    window = np.where(forward > 0, np.minimum(late, work / 3 / np.where(forward > 0, forward, 1.0)), late)
    flat = 1 + window * link_bytes_per_s / RING_FACTOR
    inside = 1 + window * nvlink_bytes_per_s / RING_FACTOR
    beyond = (window + RING_FACTOR / link_bytes_per_s) / (
        RING_FACTOR * (node_gpus - 1) / node_gpus / nvlink_bytes_per_s + RING_FACTOR / (node_gpus * link_bytes_per_s))
    return np.where(hierarchical, np.where(inside <= node_gpus, inside, beyond), flat)


MIB = 2**20
BUCKET_BYTES = 25 * MIB  # PyTorch DDP's bucket_cap_mb default (torch/nn/parallel/distributed.py, 25 MiB)
FIRST_BUCKET_BYTES = MIB  # its first bucket's limit when bucket_cap_mb is left unset (reducer.hpp, 1 MiB)
PIECE = MIB  # elements per tensor of a model known by its size alone (no layer shape to cut it by) …
PIECES = 4096  # … in at most this many pieces (the page cuts the same list at every change)
MAX_LAYERS = 10_000  # deeper than any model trained; past it the shape is not used (nine tensors a layer)


def tensor_params(params, layers, d_model, ffn, vocab):
    """The model's parameter tensors (elements each) in the order the backward pass makes their gradients: the
    output head, the final norm, each layer from the last (down, up, gate, post-attention norm, o, v, k, q, input
    norm), the input embedding. k and v are as wide as makes the shapes add up to params (grouped-query
    attention); where no width up to d_model does, a layer's attention is four equal tensors. A model without a
    shape (or deeper than MAX_LAYERS) is cut in equal pieces of PIECE elements, or in PIECES pieces where that
    makes too many."""
    if layers <= 0 or d_model <= 0 or layers > MAX_LAYERS:
        count = min(math.ceil(params / PIECE), PIECES)
        return [params / count] * count
    d = d_model
    embedding = vocab * d
    rest = params - 2 * embedding
    norm = min(d, rest)
    layer = (rest - norm) / layers
    attention = layer - 3 * d * ffn - 2 * d
    kv = (attention - 2 * d * d) / (2 * d)
    if 0 < kv <= d:
        q, k = d * d, d * kv
    elif attention > 0:
        q, k = attention / 4, attention / 4
    else:  # no room for attention beside the MLP: the layer as three equal matrices
        q, k = 0, 0
    mlp = d * ffn if attention > 0 else layer / 3
    norms = d if attention > 0 else 0
    one = [mlp, mlp, mlp, norms, q, k, k, q, norms]
    out = [embedding, norm] + one * layers + [embedding]
    return [t for t in out if t > 0]


def buckets(tensors, bytes_per_element, cap_bytes=BUCKET_BYTES, first_bytes=FIRST_BUCKET_BYTES):
    """DDP's gradient buckets in the order they are all-reduced, as its reducer assigns them: whole tensors in
    gradient order, a bucket closed once it holds at least its limit (first_bytes for the first, cap_bytes after),
    a tensor never split, so a bucket holds more than its limit when a tensor crosses it. Returns each bucket's
    bytes and the share of the gradients made when it is full."""
    total = sum(tensors)
    sizes, ready = [], []
    size, done, limit = 0.0, 0.0, first_bytes
    for tensor in tensors:
        size += tensor * bytes_per_element
        done += tensor
        if size >= limit:
            sizes.append(size)
            ready.append(done / total)
            size, limit = 0.0, cap_bytes
    if size > 0:
        sizes.append(size)
        ready.append(done / total)
    return sizes, ready


def bucket_schedule(compute, comm, sizes, ready):
    """When each bucket's all-reduce starts and ends: once the backward pass (the last 2/3 of compute, at a rate
    in proportion to parameters) has filled it and the link has sent the one before; each takes its share of comm."""
    total = sum(sizes)
    starts, ends = [], []
    free = 0.0
    for size, share in zip(sizes, ready):
        start = max(compute / 3 + compute * 2 / 3 * share, free)
        free = start + comm * size / total
        starts.append(start)
        ends.append(free)
    return starts, ends


def bucketed_tail_seconds(compute, comm, sizes, ready):
    """Communication left after compute when the buckets go during the backward pass: at least max(0, A − 2C/3),
    more when a large bucket fills late (the input embedding's comes last)."""
    if comm <= 0 or not sizes:
        return 0.0
    return max(bucket_schedule(compute, comm, sizes, ready)[1][-1], compute) - compute


# --- a real cluster: DDP's buckets on NCCL, nodes of g GPUs with a NIC per GPU (spec/MODEL.md "Model v2") -----
# NCCL's own cost model, NVIDIA/nccl src/graph/tuning.cc at v2.30.7-1 (docs/model-v2-sources.md §2), for the Simple
# protocol (the one large buckets use). Kept: base latency, per-step NVLink and network latency for ring and tree,
# the ring's step counts (2(n−1), 2(m−1) across nodes) and the tree's (2·((n/m − 1) + log2(m))), the ring's ×1.4
# latency plateau on many nodes (SM80 and later), the tree's ×0.92 and ×0.5 (bus to algorithm bandwidth) and its
# size-dependent correction, the ring's n/(2(n−1)), and the cheaper of the two per call. Dropped: LL and LL128
# (small messages), NVLS, CollNet/SHARP and PAT (in-network and other algorithms), the per-channel bandwidth
# caps (they do not bind at 8 × 400 Gb/s), the tree pattern's ×0.85, AMD hosts' 3 × 2 µs floor per ring step
# (Intel's 3 × 1 µs is below 3.4 µs), the network device's own latency (0 for InfiniBand), the two-node rule that
# prices on intra-node bandwidth, pipelining of several calls, tuner plugins, and DDP's first iteration (one
# bucket for everything). Bus bandwidth is g·B_net (a channel per NIC), capped by NVLink; NVLink alone in one node.
NCCL_BASE_US = 8.4  # baseLatencies[TREE|RING][SIMPLE]
RING_NVLINK_US, TREE_NVLINK_US = 3.4, 4.0  # hwLatencies[NVLINK][RING|TREE][SIMPLE]: per step inside a node
NET_US = 14.0  # hwLatencies[NET][RING|TREE][SIMPLE]: per step across nodes
RING_PLATEAU = 1.4  # ncclTopoGetAlgoTime: ring/Simple all-reduce on several nodes, bytes/(channels·n) ≥ 64
NCCL_CHANNELS = 32  # assumed (H100 with 8 NICs); it only decides the plateau for small buckets on many GPUs
TREE_BUS = 0.92 * 0.5  # tree all-reduce: bus bandwidth × 0.92, and algorithm bandwidth = bus / 2
# treeCorrectionFactor[SIMPLE]: tree bandwidth × this for log2(bytes/64) = 0 … 22; 1 beyond
TREE_CORRECTION = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)


def nodes(replicas, node_gpus=NODE_GPUS):
    """Nodes the replicas fill: one up to g GPUs, n/g beyond."""
    return max(1, replicas // node_gpus)


def ring_latency_us(replicas, node_gpus=NODE_GPUS):
    """NCCL's ring all-reduce latency (µs, its table's value): base + (2(n−1) − 2(m−1))·NVLink + 2(m−1)·net."""
    across = 2 * (nodes(replicas, node_gpus) - 1)
    return NCCL_BASE_US + (2 * (replicas - 1) - across) * RING_NVLINK_US + across * NET_US


def tree_latency_us(replicas, node_gpus=NODE_GPUS):
    """NCCL's tree all-reduce latency (µs): base + 2·((n/m − 1)·NVLink + floor(log2 m)·network)."""
    m = nodes(replicas, node_gpus)
    return NCCL_BASE_US + 2 * ((replicas // m - 1) * TREE_NVLINK_US + (m.bit_length() - 1) * NET_US)


def ring_plateau(buffer_bytes, replicas, node_gpus=NODE_GPUS):
    """The ring's latency multiplier: 1.4 on several nodes once a call is large enough, else 1."""
    return RING_PLATEAU if nodes(replicas, node_gpus) > 1 and buffer_bytes / (NCCL_CHANNELS * replicas) >= 64 else 1.0


def tree_correction(buffer_bytes):
    """The tree's bandwidth correction for a call of this size (treeCorrectionFactor, by log2 of 64-byte units)."""
    size, q = -1, math.floor(buffer_bytes / 64)
    while q >= 1:
        size, q = size + 1, math.floor(q / 2)
    return TREE_CORRECTION[size] if 0 <= size < len(TREE_CORRECTION) else 1.0


def bus_bytes_per_s(link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus=NODE_GPUS):
    """NCCL's bus bandwidth: NVLink inside one node; across nodes every GPU's NIC carries a channel, g·B_net per
    node, capped by NVLink."""
    if nodes(replicas, node_gpus) == 1:
        return nvlink_bytes_per_s
    return min(node_gpus * link_bytes_per_s, nvlink_bytes_per_s)


def nccl_allreduce(buffer_bytes, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus=NODE_GPUS):
    """One all-reduce as NCCL prices it, ring and tree: [ring latency, ring bandwidth, tree latency, tree
    bandwidth] in seconds (bandwidth terms: bytes over algorithm bandwidth); all zero for one GPU."""
    if replicas <= 1:
        return [0.0, 0.0, 0.0, 0.0]
    bus = bus_bytes_per_s(link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus)
    return [ring_latency_us(replicas, node_gpus) * ring_plateau(buffer_bytes, replicas, node_gpus) * 1e-6,
            buffer_bytes / (bus * replicas / (2 * (replicas - 1))),
            tree_latency_us(replicas, node_gpus) * 1e-6,
            buffer_bytes / (bus * TREE_BUS * tree_correction(buffer_bytes))]


def nccl_choice(costs):
    """NCCL's pick for one call from nccl_allreduce's costs: 1 for the tree when it costs no more than the ring, else
    0 (ring); 0 for one GPU, whose costs are all zero."""
    # NCCL's topoGetAlgoInfo (enqueue.cc) walks the algorithms in order, tree (0) before ring (1), and moves on to a
    # later one only when it is strictly cheaper: an exact tie stays with the tree. One rank has the ring priced alone.
    if not any(costs):
        return 0
    return 1 if costs[2] + costs[3] <= costs[0] + costs[1] else 0


def bucket_caps(cap_mb):
    """DDP's bucket limits for bucket_cap_mb: [later buckets, first bucket] in bytes; the first is 1 MiB only when
    bucket_cap_mb is left unset (None), else the cap too."""
    if cap_mb is None:
        return [BUCKET_BYTES, FIRST_BUCKET_BYTES]
    return [cap_mb * MIB, cap_mb * MIB]


def cluster_point(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
                  node_gpus=NODE_GPUS):
    """One step of DDP on the real cluster: each bucket's all-reduce at NCCL's cheaper algorithm, scheduled against
    the last micro-batch's backward pass (no_sync keeps the others silent), so only 2C/(3m) can hide it. Returns
    [step, communication, its latency, its bandwidth part, tree calls, all-ring latency, all-ring bandwidth]."""
    priced = {}  # a model's buckets come in a few sizes: each priced once (the same numbers as pricing every one)
    took = []
    comm = latency = bandwidth = ring_latency = ring_bandwidth = 0
    trees = 0
    for size in sizes:  # one pass: each sum adds the buckets in their order, as sum() of each list does
        c = priced.get(size)
        if c is None:
            c = priced[size] = nccl_allreduce(size, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus)
        tree = nccl_choice(c)
        t = c[2] + c[3] if tree else c[0] + c[1]
        took.append(t)
        comm += t
        latency += c[2] if tree else c[0]
        bandwidth += c[3] if tree else c[1]
        trees += tree
        ring_latency += c[0]
        ring_bandwidth += c[1]
    step = compute + bucketed_tail_seconds(compute / micro_batches, comm, took, ready)
    return [step, comm, latency, bandwidth, trees, ring_latency, ring_bandwidth]


CLUSTER_FIELDS = ("step_s", "comm_s", "latency_s", "bandwidth_s", "tree_calls", "ring_latency_s", "ring_bandwidth_s")


def cluster(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
            node_gpus=NODE_GPUS):
    """The real cluster at every replica count (compute: per-step compute at each): {field: list} for
    CLUSTER_FIELDS, with efficiency = compute / step."""
    points = [cluster_point(c, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, int(n), micro_batches, node_gpus)
              for c, n in zip(compute, replicas)]
    out = {name: [p[i] for p in points] for i, name in enumerate(CLUSTER_FIELDS)}
    out["efficiency"] = [efficiency(c, s) for c, s in zip(compute, out["step_s"])]
    return out


@dataclass(frozen=True)
class Inputs:
    """One run (or arrays of runs, broadcast together): everything the model needs, in SI units."""

    params: object
    batch_tokens: object
    link_bytes_per_s: object
    nvlink_bytes_per_s: object
    peak_flops: object
    memory_bytes: object
    mfu: object
    bytes_per_grad: object = 2
    hierarchical: object = False
    backward_only: object = False
    sharding: object = 0
    seq_len: object = 8192
    state_bytes: object = 16


@dataclass(frozen=True)
class Run:
    """The model for given inputs: arrays over (input axes…, replicas), and per-run facts."""

    replicas: np.ndarray
    compute_s: np.ndarray
    allreduce_s: np.ndarray
    comm_s: np.ndarray
    step_s: np.ndarray
    exposed_s: np.ndarray  # step − compute: communication left outside the window
    efficiency: np.ndarray
    tokens_per_replica: np.ndarray
    sequences_per_replica: np.ndarray
    states_bytes: np.ndarray  # model states per GPU at each replica count
    fits: np.ndarray
    crossing_index: np.ndarray  # first replica index with efficiency < 1; −1 where none on the grid
    continuous_crossing: np.ndarray
    smallest_fitting: np.ndarray  # whole replica count, NaN where no count fits
    smallest_fitting_index: np.ndarray  # first replica index whose states fit; −1 where none


def evaluate(inputs: Inputs, replicas) -> Run:
    """Every quantity of the model, inputs broadcast against a trailing replica axis."""
    x = {f.name: np.asarray(getattr(inputs, f.name), dtype=np.float64)[..., None] for f in fields(Inputs)}
    n = np.asarray(replicas, dtype=np.float64)
    shape = np.broadcast_shapes(n.shape, *(v.shape for v in x.values()))
    compute = compute_seconds(x["params"], x["batch_tokens"], n, x["peak_flops"], x["mfu"])
    allreduce = allreduce_seconds(x["params"], x["bytes_per_grad"], x["link_bytes_per_s"], x["nvlink_bytes_per_s"],
                                  n, x["hierarchical"] != 0)
    comm = comm_seconds(allreduce, x["sharding"], x["bytes_per_grad"])
    step = step_seconds(compute, comm, x["backward_only"] != 0, forward_traffic(x["sharding"], x["bytes_per_grad"]) * allreduce)
    tokens = x["batch_tokens"] / n
    states = state_bytes_per_param(x["sharding"], n, x["state_bytes"]) * x["params"]
    fits = np.broadcast_to(states <= x["memory_bytes"], shape)
    crossed = np.broadcast_to(step > compute, shape)
    wide = {k: np.broadcast_to(v, shape) for k, v in
            dict(compute=compute, allreduce=allreduce, comm=comm, step=step, tokens=tokens, states=states).items()}
    first = lambda mask: np.where(mask.any(axis=-1), np.argmax(mask, axis=-1), -1)  # noqa: E731
    squeeze = lambda v: np.broadcast_to(v[..., 0], shape[:-1])  # noqa: E731
    return Run(
        replicas=n, compute_s=wide["compute"], allreduce_s=wide["allreduce"], comm_s=wide["comm"],
        step_s=wide["step"], exposed_s=wide["step"] - wide["compute"], efficiency=efficiency(wide["compute"], wide["step"]),
        tokens_per_replica=wide["tokens"], sequences_per_replica=wide["tokens"] / x["seq_len"],
        states_bytes=wide["states"], fits=fits, crossing_index=first(crossed),
        continuous_crossing=squeeze(continuous_crossing(
            x["batch_tokens"], x["peak_flops"], x["mfu"], x["bytes_per_grad"], x["link_bytes_per_s"],
            x["nvlink_bytes_per_s"], x["hierarchical"] != 0, x["backward_only"] != 0, x["sharding"])),
        smallest_fitting=squeeze(smallest_fitting_replicas(x["params"], x["sharding"], x["memory_bytes"],
                                                           x["state_bytes"])),
        smallest_fitting_index=first(fits),
    )


# --- the workshop alone: the three axes of the seed (model, batch, network) -----------------------

@dataclass(frozen=True)
class Workshop:
    """The fixed assumptions of the workshop: one GPU type, utilisation, precisions."""

    gpu_peak_flops: float
    gpu_memory_bytes: float
    mfu: float
    bytes_per_grad: float
    bytes_per_param_states: float
    seq_len: int


@dataclass(frozen=True)
class Grid:
    """Every quantity of the workshop on axes (model, batch, network, replicas)."""

    params: np.ndarray  # (M,)
    batch_tokens: np.ndarray  # (T,)
    link_bytes_per_s: np.ndarray  # (L,)
    replicas: np.ndarray  # (R,)
    workshop: Workshop
    compute_s: np.ndarray  # (M, T, L, R)
    allreduce_s: np.ndarray
    step_s: np.ndarray
    efficiency: np.ndarray
    tokens_per_replica: np.ndarray
    sequences_per_replica: np.ndarray
    model_states_bytes: np.ndarray  # (M,)
    fits_in_memory: np.ndarray  # (M,)
    crossing_index: np.ndarray  # (M, T, L): index into replicas, -1 where they never cross
    continuous_crossing: np.ndarray  # (M, T, L): n* where compute = all-reduce


def grid(params, batch_tokens, link_bytes_per_s, replicas, workshop: Workshop) -> Grid:
    """The workshop (whole-step overlap, flat ring, no sharding) on every combination of the given axes."""
    N = np.asarray(params, dtype=np.float64)
    T = np.asarray(batch_tokens, dtype=np.float64)
    B = np.asarray(link_bytes_per_s, dtype=np.float64)
    run = evaluate(Inputs(
        params=N[:, None, None], batch_tokens=T[None, :, None], link_bytes_per_s=B[None, None, :],
        nvlink_bytes_per_s=B[None, None, :], peak_flops=workshop.gpu_peak_flops,
        memory_bytes=workshop.gpu_memory_bytes, mfu=workshop.mfu, bytes_per_grad=workshop.bytes_per_grad,
        seq_len=workshop.seq_len, state_bytes=workshop.bytes_per_param_states,
    ), replicas)
    states = workshop.bytes_per_param_states * N
    return Grid(
        params=np.asarray(params), batch_tokens=np.asarray(batch_tokens), link_bytes_per_s=B,
        replicas=np.asarray(replicas), workshop=workshop, compute_s=run.compute_s, allreduce_s=run.allreduce_s,
        step_s=run.step_s, efficiency=run.efficiency, tokens_per_replica=run.tokens_per_replica,
        sequences_per_replica=run.sequences_per_replica, model_states_bytes=states,
        fits_in_memory=states <= workshop.gpu_memory_bytes, crossing_index=run.crossing_index,
        continuous_crossing=run.continuous_crossing,
    )
