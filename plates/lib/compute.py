"""The compute of one optimiser step and the step time around it: the window communication hides behind, the
step, the scaling efficiency and the replica count where communication fills its window (spec/MODEL.md)."""
import math

import numpy as np

from platelib.collectives import NODE_GPUS, RING_FACTOR, allreduce_seconds, group_node_gpus
from platelib.zero import comm_seconds, forward_traffic, traffic_factor

FLOPS_PER_PARAM_TOKEN = 6  # 2 forward + 4 backward (the usual convention; attention scores left out)


def replica_counts(max_replicas, gpus_per_replica=1):
    """The replica axis: powers of two from 1 while replicas × GPUs per replica stays within max_replicas GPUs (the
    catalogue's [workshop] max_replicas, 16,384 for the series: Llama 3 405B's largest run), one replica at least.
    One-GPU replicas run to max_replicas; replicas of 128 GPUs to max_replicas/128."""
    most = max(1, math.floor(max_replicas / gpus_per_replica))
    return np.asarray([2**k for k in range(math.floor(math.log2(most)) + 1)])


def gpu_params(params, gpus_per_replica):
    """Parameters each GPU of a replica computes, reduces and keeps: N/g for a replica of g = t·p GPUs, split evenly
    by tensor and pipeline parallelism (platelib.layout; unequal stages, the pipeline's bubble and tensor
    parallelism's own traffic are left out)."""
    return params / gpus_per_replica


def compute_seconds(params, batch_tokens, replicas, peak_flops, mfu):
    """Per-replica compute time of one optimiser step: 6·N·T / (n·P·u)."""
    return FLOPS_PER_PARAM_TOKEN * params * batch_tokens / (replicas * peak_flops * mfu)


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


def blocking_gather_step_seconds(compute, comm, gather, backward_only):
    """Step time when ZeRO-1/2's all-gather of the updated weights (gather) runs after the optimiser step and
    blocks, as DeepSpeed's stages 1 and 2 run it: backward only, the rest of the communication hides behind the
    backward pass and the gather adds in full, C/3 + max(2C/3, A − G) + G; over the whole step as step_seconds."""
    late = np.maximum(compute, compute / 3 + (comm - gather)) + gather
    return np.where(backward_only, late, np.maximum(compute, comm))


def workshop_step(params, batch_tokens, replicas, gpus_per_replica, peak_flops, mfu, bytes_per_grad, link_bytes_per_s,
                  nvlink_bytes_per_s, hierarchical, backward_only, sharding):
    """One optimiser step of the workshop on n replicas of g GPUs each: [compute, the gradient all-reduce, the
    communication the step waits for (the all-reduce, or ZeRO stage k's pieces), the step], each GPU computing and
    reducing N/g; a ring over the network or hierarchical on 8-GPU nodes, hidden behind the whole step or the
    backward pass. Every plate that states the workshop's step time takes it from here (broadcasts over arrays)."""
    share = gpu_params(params, gpus_per_replica)
    compute = compute_seconds(share, batch_tokens, replicas, peak_flops, mfu)
    allreduce = allreduce_seconds(share, bytes_per_grad, link_bytes_per_s, nvlink_bytes_per_s, replicas, hierarchical,
                                  group_node_gpus(gpus_per_replica))
    comm = comm_seconds(allreduce, sharding, bytes_per_grad)
    step = step_seconds(compute, comm, backward_only, forward_traffic(sharding, bytes_per_grad) * allreduce)
    return [compute, allreduce, comm, step]


def efficiency(compute, step):
    """Scaling efficiency: compute / step."""
    return compute / step


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
