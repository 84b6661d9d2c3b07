"""The data-parallel scaling model of spec/MODEL.md, vectorised over presets × replicas.

Pure numpy: no file access, no charting. Every number the plate shows is read off `Grid`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOPS_PER_PARAM_TOKEN = 6  # 2 forward + 4 backward
RING_FACTOR = 2  # a ring all-reduce sends and receives 2·(n−1)/n of the buffer
GB = 1e9  # decimal gigabytes, as GPU memory and link speeds are quoted


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
    """Every quantity of the model on axes (model, batch, network, replicas)."""

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


def replica_counts(max_replicas: int) -> np.ndarray:
    """Powers of two from 1 to max_replicas inclusive."""
    return 2 ** np.arange(int(np.log2(max_replicas)) + 1, dtype=np.int64)


def compute_seconds(params, batch_tokens, replicas, workshop: Workshop):
    """Per-replica compute time of one optimiser step: 6·N·T / (n·P·u)."""
    flops = FLOPS_PER_PARAM_TOKEN * params * batch_tokens
    return flops / (replicas * workshop.gpu_peak_flops * workshop.mfu)


def allreduce_seconds(params, link_bytes_per_s, replicas, workshop: Workshop):
    """Ring all-reduce time of the gradients: 2·(n−1)/n · b·N / B (zero for one replica)."""
    buffer = workshop.bytes_per_grad * params
    return RING_FACTOR * (replicas - 1) / replicas * buffer / link_bytes_per_s


def model_states_bytes(params, workshop: Workshop):
    """Weights, gradients, master weights and Adam moments held on every replica."""
    return workshop.bytes_per_param_states * params


def continuous_crossing(batch_tokens, link_bytes_per_s, workshop: Workshop):
    """n* where 6NT/(nPu) = 2·2N/B for large n: 1.5·T·B/(P·u) when b = 2; independent of N."""
    return (
        FLOPS_PER_PARAM_TOKEN * batch_tokens * link_bytes_per_s
        / (RING_FACTOR * workshop.bytes_per_grad * workshop.gpu_peak_flops * workshop.mfu)
    )


def grid(params, batch_tokens, link_bytes_per_s, replicas, workshop: Workshop) -> Grid:
    """Evaluate the model on every combination of the given axes."""
    N = np.asarray(params, dtype=np.float64)[:, None, None, None]
    T = np.asarray(batch_tokens, dtype=np.float64)[None, :, None, None]
    B = np.asarray(link_bytes_per_s, dtype=np.float64)[None, None, :, None]
    n = np.asarray(replicas, dtype=np.float64)[None, None, None, :]
    shape = np.broadcast_shapes(N.shape, T.shape, B.shape, n.shape)

    compute = np.broadcast_to(compute_seconds(N, T, n, workshop), shape)
    allreduce = np.broadcast_to(allreduce_seconds(N, B, n, workshop), shape)
    step = np.maximum(compute, allreduce)
    tokens = np.broadcast_to(T / n, shape)
    crossed = allreduce > compute
    first = np.argmax(crossed, axis=-1)
    states = model_states_bytes(np.asarray(params, dtype=np.float64), workshop)
    return Grid(
        params=np.asarray(params),
        batch_tokens=np.asarray(batch_tokens),
        link_bytes_per_s=np.asarray(link_bytes_per_s, dtype=np.float64),
        replicas=np.asarray(replicas),
        workshop=workshop,
        compute_s=compute,
        allreduce_s=allreduce,
        step_s=step,
        efficiency=compute / step,
        tokens_per_replica=tokens,
        sequences_per_replica=tokens / workshop.seq_len,
        model_states_bytes=states,
        fits_in_memory=states <= workshop.gpu_memory_bytes,
        crossing_index=np.where(crossed.any(axis=-1), first, -1),
        continuous_crossing=np.broadcast_to(
            continuous_crossing(
                np.asarray(batch_tokens, dtype=np.float64)[None, :, None],
                np.asarray(link_bytes_per_s, dtype=np.float64)[None, None, :],
                workshop,
            ),
            shape[:-1],
        ),
    )
