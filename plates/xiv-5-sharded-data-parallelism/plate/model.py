"""Plate XIV.5's model: ZeRO's model states and traffic per GPU, one function per formula, broadcasting over arrays.

Pure numpy, in the Python the page runs (docs/plates.md): page_facts.py calls these per replica count, and the page
runs them compiled. Where the shared library (platelib, which XIV.4 takes its formulas from too) has a formula it is
imported, not written again, so that both plates take every number from one source: the state bytes per stage,
the smallest fitting replica count, the per-piece traffic factor of mixed precision, and the ring's time.
"""
from __future__ import annotations

import numpy as np

from platelib.collectives import NODE_GPUS, RING_FACTOR, gather_latency_us, ring_seconds
from platelib.compute import replica_counts
from platelib.units import GB, GIB
from platelib.zero import (GRADIENT_BYTES, OPTIMISER_BYTES, WEIGHT_BYTES, comm_seconds, fsdp_calls,
                           fsdp_latency_seconds, kept_bytes_per_param, smallest_fitting_replicas,
                           state_bytes_per_param, states_per_param, traffic_factor)

STATE_BYTES = states_per_param(GRADIENT_BYTES)  # 16 per parameter with BF16 gradients, the whole state unsharded
STAGES = (0, 1, 2, 3)  # 0: plain data parallelism; 1: + optimiser states sharded; 2: + gradients; 3: + weights
GATHERS = (0, 1, 1, 2)  # all-gathers of the BF16 weights per step: after the update (1, 2), forward and backward (3)
LATENCY_AT = 1024  # the replica count the prose prices NCCL's per-call latency at (XIV.4's default crossing)

__all__ = ["GB", "GIB", "WEIGHT_BYTES", "GRADIENT_BYTES", "OPTIMISER_BYTES", "STATE_BYTES", "STAGES", "GATHERS", "replica_counts", "ring_share",
           "state_bytes", "kept_bytes", "smallest_replicas", "reduce_scatter_bytes", "all_gather_bytes",
           "weight_gathers", "allreduce_bytes", "traffic_bytes", "traffic_limit_bytes", "traffic_ratio", "traffic_seconds",
           "LATENCY_AT", "fsdp_calls", "node_gpus", "call_latency_seconds", "latency_seconds"]


def ring_share(replicas):
    """r = (n−1)/n: the share of a buffer each member of a ring collective sends (and receives); 0 for one."""
    n = np.asarray(replicas, np.float64)
    return (n - 1) / n


def state_bytes(params, stage, replicas, grad_bytes):
    """Model-state bytes on each GPU under stage k over n replicas with b-byte gradients: (2+b+K)·Ψ, (2+b+K/n)·Ψ,
    (2+(b+K)/n)·Ψ, (2+b+K)·Ψ/n (platelib.zero's state_bytes_per_param, times Ψ)."""
    return state_bytes_per_param(stage, replicas, grad_bytes) * np.asarray(params, np.float64)


def kept_bytes(params, stage, grad_bytes):
    """The bytes every GPU keeps whole whatever n, where stage k's line levels off: (2+b+K)·Ψ, (2+b)·Ψ, 2·Ψ, 0."""
    return kept_bytes_per_param(stage, grad_bytes) * np.asarray(params, np.float64)


def smallest_replicas(params, stage, memory_bytes, grad_bytes):
    """The smallest whole n whose states per GPU fit in memory_bytes (give 80 × GB or 80 × GIB); NaN if none."""
    return smallest_fitting_replicas(np.asarray(params, np.float64), stage, memory_bytes, grad_bytes)


def reduce_scatter_bytes(params, grad_bytes, replicas):
    """Bytes each GPU sends to reduce-scatter the gradients: b·Ψ·r."""
    return grad_bytes * np.asarray(params, np.float64) * ring_share(replicas)


def all_gather_bytes(params, replicas):
    """Bytes each GPU sends in one all-gather of the BF16 weights: 2·Ψ·r."""
    return WEIGHT_BYTES * np.asarray(params, np.float64) * ring_share(replicas)


def weight_gathers(stage):
    """All-gathers of the weights per step under stage k: 0, 1, 1, 2."""
    return np.asarray(GATHERS)[stage]


def allreduce_bytes(params, grad_bytes, replicas):
    """Bytes each GPU sends in plain data parallelism's ring all-reduce of the gradients: 2·b·Ψ·r."""
    return RING_FACTOR * grad_bytes * np.asarray(params, np.float64) * ring_share(replicas)


def traffic_ratio(stage, grad_bytes):
    """Stage k's bytes per step per byte of the all-reduce at the same gradient precision, piece by piece
    (platelib.zero's traffic_factor): 1 for stages 0–2 in BF16, 1.5 for stage 3; 0.75 and 1 in FP32."""
    return traffic_factor(stage, grad_bytes)


def traffic_bytes(params, stage, grad_bytes, replicas):
    """Bytes each GPU sends per step under stage k: the all-reduce 2·b·Ψ·r for stage 0; b·Ψ·r + 2·Ψ·r for
    stages 1–2; b·Ψ·r + 2·2·Ψ·r for stage 3."""
    return traffic_ratio(stage, grad_bytes) * allreduce_bytes(params, grad_bytes, replicas)


def traffic_limit_bytes(params, stage, grad_bytes):
    """What traffic_bytes approaches as n grows (r → 1): 2·b·Ψ for stage 0, (b + 2)·Ψ and (b + 4)·Ψ sharded."""
    return traffic_ratio(stage, grad_bytes) * RING_FACTOR * grad_bytes * np.asarray(params, np.float64)


def traffic_seconds(params, stage, grad_bytes, link_bytes_per_s, replicas):
    """The time of a step's traffic under stage k at a link speed per direction, each piece a ring over the same
    link (platelib.zero's comm_seconds of the flat ring's all-reduce time)."""
    params = np.asarray(params, np.float64)
    return comm_seconds(ring_seconds(grad_bytes * params, link_bytes_per_s, np.asarray(replicas, np.float64)),
                        stage, grad_bytes)


def call_latency_seconds(replicas, node_gpus=NODE_GPUS):
    """NCCL's latency of one reduce-scatter or all-gather over n GPUs on n/g nodes (platelib.collectives), in s."""
    return gather_latency_us(replicas, node_gpus) * 1e-6


def latency_seconds(stage, units, replicas, node_gpus=NODE_GPUS):
    """The latency stage k's collectives pay per step, one call each per FSDP unit (platelib.zero)."""
    return fsdp_latency_seconds(stage, units, replicas, node_gpus)


def node_gpus(domain):
    """The GPUs NCCL counts as one node, NVLink steps inside it: the GPU's NVLink domain, else platelib's node."""
    return domain if domain else NODE_GPUS
