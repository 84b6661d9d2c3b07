"""Collective communication: the ring all-reduce and its hierarchical form (spec/MODEL.md), and NCCL's own ring and
tree cost model for one call (spec/MODEL.md "Model v2")."""
import math

import numpy as np

RING_FACTOR = 2  # a ring all-reduce sends and receives 2·(n−1)/n of the buffer
NODE_GPUS = 8  # GPUs per node joined by NVLink, for the hierarchical all-reduce


def group_node_gpus(gpus_per_replica, node_gpus=NODE_GPUS):
    """GPUs of one data-parallel group in a node: replicas of g GPUs share a node g to g (node_gpus/g of the group in
    it); a replica of a node or more meets its peers only across nodes, one to a node."""
    return np.maximum(1.0, np.floor(node_gpus / gpus_per_replica))


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


# --- a real cluster: nodes of g GPUs with a NIC per GPU ---------------------------------------------------------
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
RING_NVLINK_US = 3.4  # hwLatencies[NVLINK][RING][SIMPLE]: per step inside a node
TREE_NVLINK_US = 4.0  # hwLatencies[NVLINK][TREE][SIMPLE]
NET_US = 14.0  # hwLatencies[NET][RING|TREE][SIMPLE]: per step across nodes
RING_PLATEAU = 1.4  # ncclTopoGetAlgoTime: ring/Simple all-reduce on several nodes, bytes/(channels·n) ≥ 64
NCCL_CHANNELS = 32  # assumed (H100 with 8 NICs); it only decides the plateau for small buckets on many GPUs
TREE_BUS = 0.92 * 0.5  # tree all-reduce: bus bandwidth × 0.92, and algorithm bandwidth = bus / 2
# treeCorrectionFactor[SIMPLE]: tree bandwidth × this for log2(bytes/64) = 0 … 22; 1 beyond
TREE_CORRECTION = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)


def nodes(replicas, node_gpus=NODE_GPUS):
    """Nodes the replicas fill: one up to g GPUs, n/g beyond."""
    return max(1, replicas // node_gpus)


def floor_log2(count):
    """floor(log2 m) of a whole m ≥ 1, by halving (exact, where a float log2 can round up just below a power of 2)."""
    levels = 0
    q = count
    while q >= 2:
        levels += 1
        q = q // 2
    return levels


def ring_latency_us(replicas, node_gpus=NODE_GPUS):
    """NCCL's ring all-reduce latency (µs, its table's value): base + (2(n−1) − 2(m−1))·NVLink + 2(m−1)·net."""
    across = 2 * (nodes(replicas, node_gpus) - 1)
    return NCCL_BASE_US + (2 * (replicas - 1) - across) * RING_NVLINK_US + across * NET_US


def tree_latency_us(replicas, node_gpus=NODE_GPUS):
    """NCCL's tree all-reduce latency (µs): base + 2·((n/m − 1)·NVLink + floor(log2 m)·network)."""
    m = nodes(replicas, node_gpus)
    return NCCL_BASE_US + 2 * ((replicas // m - 1) * TREE_NVLINK_US + floor_log2(m) * NET_US)


def gather_latency_us(replicas, node_gpus=NODE_GPUS):
    """NCCL's latency of one reduce-scatter or all-gather (µs): a ring, base + ((n−1) − (m−1))·NVLink + (m−1)·net;
    0 for one GPU."""
    # tuning.cc gives these two no tree: besides the ring only PAT (one GPU per node), NVLS and CollNet (in-switch,
    # one node or SHARP), none of which this model keeps. The ring's ×1.4 plateau is the all-reduce's only.
    if replicas <= 1:
        return 0.0
    across = nodes(replicas, node_gpus) - 1
    return NCCL_BASE_US + (replicas - 1 - across) * RING_NVLINK_US + across * NET_US


def ring_plateau(buffer_bytes, replicas, node_gpus=NODE_GPUS):
    """The ring's latency multiplier: 1.4 on several nodes once a call is large enough, else 1."""
    return RING_PLATEAU if nodes(replicas, node_gpus) > 1 and buffer_bytes / (NCCL_CHANNELS * replicas) >= 64 else 1.0


def tree_correction(buffer_bytes):
    """The tree's bandwidth correction for a call of this size (treeCorrectionFactor, by log2 of 64-byte units)."""
    size = -1
    q = math.floor(buffer_bytes / 64)
    while q >= 1:
        size += 1
        q = math.floor(q / 2)
    return TREE_CORRECTION[size] if size >= 0 and size < len(TREE_CORRECTION) else 1.0


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
