"""DDP on a real cluster: each bucket's all-reduce at NCCL's cheaper algorithm, scheduled against the backward pass
(spec/MODEL.md "Model v2")."""
from platelib.buckets import bucket_caps, bucketed_tail_seconds, buckets
from platelib.collectives import NODE_GPUS, group_node_gpus, nccl_allreduce, nccl_choice
from platelib.compute import efficiency
from platelib.layout import gpu_tensors

# Achieved, not line, bandwidths (spec/MEASUREMENTS.md rows 1 and 5): what NCCL's ring gets of a link's line rate.
# NVLink: 370 GB/s of bus bandwidth of H100's 450 GB/s, NVLS off (an NCCL maintainer, NVIDIA/nccl-tests issue 212;
# 368.76 GB/s measured in issue 309); the page applies H100's ratio to every GPU's NVLink. A 400 Gb/s (50 GB/s) NIC:
# 46–48 GB/s through NCCL (NVIDIA's answer in nccl-tests issue 290), taken at 47.
NVLINK_MEASURED_GBPS = 370
NVLINK_LINE_GBPS = 450
NIC_MEASURED_GBPS = 47
NIC_LINE_GBPS = 50
NVLINK_ACHIEVED = NVLINK_MEASURED_GBPS / NVLINK_LINE_GBPS
NIC_ACHIEVED = NIC_MEASURED_GBPS / NIC_LINE_GBPS

CLUSTER_FIELDS = ("step_s", "comm_s", "latency_s", "bandwidth_s", "tree_calls", "ring_latency_s", "ring_bandwidth_s")


def gradient_buckets(model, layout, bytes_per_grad, cap_mb):
    """DDP's gradient buckets on one GPU of a replica laid out as layout ({tensor, pipeline}) for a model ({params,
    layers, d_model, ffn, vocab}), b-byte gradients and bucket_cap_mb (None: left unset): [each bucket's bytes in
    the order they are all-reduced, the share of the gradients made when each is full]."""
    caps = bucket_caps(cap_mb)
    made = buckets(gpu_tensors(model["params"], model["layers"], model["d_model"], model["ffn"], model["vocab"],
                               layout["tensor"], layout["pipeline"]), bytes_per_grad, caps[0], caps[1])
    return [made[0], made[1]]


def cluster_domain(nvlink, domain, max_replicas):
    """The real cluster's NVLink domain when the network is the GPU's own link (the GPU's domain, else the whole
    axis); 0 on a network of NICs."""
    if not nvlink:
        return 0
    return domain if domain is not None else max_replicas


def size_kinds(sizes):
    """A model's buckets come in a few sizes: [the distinct sizes, in order of first use; each bucket's index among
    them], so that each is priced once per replica count (the same numbers as pricing every bucket)."""
    first = {}
    kinds = []
    kind = []
    for size in sizes:
        k = first.get(size)
        if k is None:
            k = len(kinds)
            first[size] = k
            kinds.append(size)
        kind.append(k)
    return [kinds, kind]


def priced_point(compute, costs, kind, ready, micro_batches):
    """cluster_point with each distinct size's NCCL costs given (costs[k], nccl_allreduce's, for size_kinds' kinds)
    and each bucket's kind."""
    trees_of = []  # per size: NCCL's pick, and what the call takes, its latency and its bandwidth part under it
    took_of = []
    latency_of = []
    bandwidth_of = []
    for c in costs:
        tree = nccl_choice(c)
        trees_of.append(tree)
        took_of.append(c[2] + c[3] if tree else c[0] + c[1])
        latency_of.append(c[2] if tree else c[0])
        bandwidth_of.append(c[3] if tree else c[1])
    took = []
    comm = 0
    latency = 0
    bandwidth = 0
    ring_latency = 0
    ring_bandwidth = 0
    trees = 0
    for k in kind:  # one pass: each sum adds the buckets in their order, as sum() of each list does
        took.append(took_of[k])
        comm += took_of[k]
        latency += latency_of[k]
        bandwidth += bandwidth_of[k]
        trees += trees_of[k]
        ring_latency += costs[k][0]
        ring_bandwidth += costs[k][1]
    step = compute + bucketed_tail_seconds(compute / micro_batches, comm, took, ready)
    return [step, comm, latency, bandwidth, trees, ring_latency, ring_bandwidth]


def cluster_point(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
                  node_gpus=NODE_GPUS):
    """One step of DDP on the real cluster: each bucket's all-reduce at NCCL's cheaper algorithm, scheduled against
    the last micro-batch's backward pass (no_sync keeps the others silent), so only 2C/(3m) can hide it. Returns
    [step, communication, its latency, its bandwidth part, tree calls, all-ring latency, all-ring bandwidth]."""
    kinds = size_kinds(sizes)
    costs = [nccl_allreduce(size, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus) for size in kinds[0]]
    return priced_point(compute, costs, kinds[1], ready, micro_batches)


def cluster(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
            node_gpus=NODE_GPUS):
    """The real cluster at every replica count (compute: per-step compute at each): {field: list} for
    CLUSTER_FIELDS, with efficiency = compute / step."""
    kinds = size_kinds(sizes)  # the same at every replica count
    points = []
    for c, n in zip(compute, replicas):
        costs = [nccl_allreduce(size, link_bytes_per_s, nvlink_bytes_per_s, int(n), node_gpus) for size in kinds[0]]
        points.append(priced_point(c, costs, kinds[1], ready, micro_batches))
    out = {}
    for i in range(len(CLUSTER_FIELDS)):
        out[CLUSTER_FIELDS[i]] = [p[i] for p in points]
    out["efficiency"] = [efficiency(c, s) for c, s in zip(compute, out["step_s"])]
    return out


def real_cluster(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches, domain,
                 replica_gpus=1):
    """The real cluster from line rates: each NIC and NVLink at its achieved bandwidth (NIC_ACHIEVED,
    NVLINK_ACHIEVED), for replicas of replica_gpus GPUs each. domain 0: a NIC per GPU on 8-GPU NVLink nodes (a
    data-parallel group's GPUs per node: group_node_gpus). domain > 0: the network is the GPU's NVLink itself,
    priced inside one NVLink domain of that many GPUs with NVLink's steps alone; every field is None at replica
    counts whose GPUs outgrow it, where no NVLink reaches (cluster's fields, lists over replicas)."""
    nvlink = nvlink_bytes_per_s * NVLINK_ACHIEVED
    if domain <= 0:
        return cluster(compute, sizes, ready, link_bytes_per_s * NIC_ACHIEVED, nvlink, replicas, micro_batches,
                       int(group_node_gpus(replica_gpus, NODE_GPUS)))
    inside = []
    work = []
    for r in range(len(replicas)):
        if replicas[r] * replica_gpus <= domain:
            inside.append(replicas[r])
            work.append(compute[r])
    made = cluster(work, sizes, ready, nvlink, nvlink, inside, micro_batches, int(group_node_gpus(replica_gpus, domain)))
    out = {}
    for name in made:
        values = []
        for r in range(len(replicas)):
            values.append(made[name][r] if r < len(inside) else None)
        out[name] = values
    return out
