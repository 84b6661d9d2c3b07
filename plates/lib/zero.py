"""Model states per GPU and traffic per step under ZeRO's stages (0: plain data parallelism; 1: optimiser states
sharded; 2: + gradients; 3: + weights), in mixed precision."""
import numpy as np

from platelib.collectives import NODE_GPUS, gather_latency_us

WEIGHT_BYTES = 2  # BF16 weights on each GPU (the rest of the states: gradients, then optimiser); ZeRO gathers these
GRADIENT_BYTES = 2  # BF16 gradients: the workshop's, and what ZeRO's weights all-gather is counted against
OPTIMISER_BYTES = 12  # K: FP32 master weights 4 and Adam's two FP32 moments 4 + 4 (Rajbhandari et al. 2020)
STATE_FIGURES = 4  # a sentence states model states to four significant figures, 128.5 GB and 144.5 GB beside 80 GB


def states_per_param(grad_bytes):
    """Model-state bytes per parameter with Adam in mixed precision, whole: weights 2 + gradients b + K, so 16 with
    BF16 gradients and 18 with FP32 ones (the gradients kept in the precision they are reduced in)."""
    return WEIGHT_BYTES + grad_bytes + OPTIMISER_BYTES


def kept_bytes_per_param(sharding, grad_bytes):
    """State bytes per parameter every GPU keeps whole under ZeRO stage k: all of them (2 + b + K), weights and
    gradients (2 + b), weights (2), none."""
    return np.where(np.equal(sharding, 0), states_per_param(grad_bytes),
                    np.where(np.equal(sharding, 1), WEIGHT_BYTES + grad_bytes,
                             np.where(np.equal(sharding, 2), WEIGHT_BYTES, 0)))


def state_bytes_per_param(sharding, replicas, grad_bytes):
    """Model-state bytes per parameter on each GPU under ZeRO stage k over n replicas, b-byte gradients:
    2 + b + K · 2 + b + K/n · 2 + (b + K)/n · (2 + b + K)/n; with BF16 gradients 16 · 4 + 12/n · 2 + 14/n · 16/n."""
    kept = kept_bytes_per_param(sharding, grad_bytes)
    return kept + (states_per_param(grad_bytes) - kept) / replicas


def smallest_fitting_replicas(params, sharding, memory_bytes, grad_bytes):
    """The smallest whole replica count whose model states per GPU fit in memory; NaN when none does."""
    kept = kept_bytes_per_param(sharding, grad_bytes) * params
    sharded = (states_per_param(grad_bytes) - kept_bytes_per_param(sharding, grad_bytes)) * params
    room = memory_bytes - kept
    # divided only where there is room (elsewhere NaN is taken), so numpy warns of no 0/0 or x/0
    needed = np.maximum(1, np.ceil(sharded / np.where(room > 0, room, 1)))
    return np.where(sharded == 0, np.where(kept <= memory_bytes, 1.0, np.nan), np.where(room > 0, needed, np.nan))


def forward_traffic(sharding, bytes_per_grad):
    """Bytes moved in the forward pass per byte of the all-reduce (2·b·N): an all-gather of the BF16 weights, 2·N,
    for ZeRO-3 (the weights it needs for the forward) and for ZeRO-1/2 (the weights the last optimiser step
    updated, prefetched behind the next forward pass, as FSDP's SHARD_GRAD_OP does); nothing otherwise."""
    return np.where(np.equal(sharding, 0), 0.0, WEIGHT_BYTES / (2 * bytes_per_grad))


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
    """The communication that must fit in the hidden window (Figure 1's line, drawn against it): all of it; but
    backward only under ZeRO, pass by pass, whichever phase fills its pass first, at the backward pass's scale: the
    backward share, or the all-gather behind the forward pass doubled (that pass is half the backward pass's length),
    so the line meets the backward pass at n*."""
    forward = np.where(backward_only, forward_traffic(sharding, bytes_per_grad), 0.0) * allreduce
    return np.where(forward > 0, np.maximum(comm - forward, 2 * forward), comm)


def fsdp_calls(sharding, units):
    """Reduce-scatters and all-gathers per step when each FSDP unit (a layer by default) calls its own: none under
    stage 0 (DDP's bucketed all-reduce), a gather and a reduce-scatter per unit for stages 1–2 (SHARD_GRAD_OP keeps
    the weights from forward to backward), two gathers and a reduce-scatter for stage 3 (FULL_SHARD)."""
    return np.where(np.equal(sharding, 0), 0, np.where(np.equal(sharding, 3), 3, 2)) * units


def fsdp_latency_seconds(sharding, units, replicas, node_gpus=NODE_GPUS):
    """The latency a step's FSDP collectives pay by NCCL's cost model: calls per step × one ring call's latency
    (replicas: one whole count)."""
    return fsdp_calls(sharding, units) * gather_latency_us(replicas, node_gpus) * 1e-6
