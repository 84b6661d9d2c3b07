"""DDP on a real cluster: each bucket's all-reduce at NCCL's cheaper algorithm, scheduled against the backward pass
(spec/MODEL.md "Model v2")."""
from platelib.buckets import bucketed_tail_seconds
from platelib.collectives import NODE_GPUS, nccl_allreduce, nccl_choice
from platelib.compute import efficiency

CLUSTER_FIELDS = ("step_s", "comm_s", "latency_s", "bandwidth_s", "tree_calls", "ring_latency_s", "ring_bandwidth_s")


def cluster_point(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
                  node_gpus=NODE_GPUS):
    """One step of DDP on the real cluster: each bucket's all-reduce at NCCL's cheaper algorithm, scheduled against
    the last micro-batch's backward pass (no_sync keeps the others silent), so only 2C/(3m) can hide it. Returns
    [step, communication, its latency, its bandwidth part, tree calls, all-ring latency, all-ring bandwidth]."""
    priced = {}  # a model's buckets come in a few sizes: each priced once (the same numbers as pricing every one)
    took = []
    comm = 0
    latency = 0
    bandwidth = 0
    ring_latency = 0
    ring_bandwidth = 0
    trees = 0
    for size in sizes:  # one pass: each sum adds the buckets in their order, as sum() of each list does
        c = priced.get(size)
        if c is None:
            c = nccl_allreduce(size, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus)
            priced[size] = c
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


def cluster(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
            node_gpus=NODE_GPUS):
    """The real cluster at every replica count (compute: per-step compute at each): {field: list} for
    CLUSTER_FIELDS, with efficiency = compute / step."""
    points = [cluster_point(c, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, int(n), micro_batches, node_gpus)
              for c, n in zip(compute, replicas)]
    out = {}
    for i in range(len(CLUSTER_FIELDS)):
        out[CLUSTER_FIELDS[i]] = [p[i] for p in points]
    out["efficiency"] = [efficiency(c, s) for c, s in zip(compute, out["step_s"])]
    return out
