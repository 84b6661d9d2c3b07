"""Plate XIV.4's data-parallel scaling model of spec/MODEL.md: every quantity of a run (evaluate) and of the workshop
(grid), broadcasting over numpy arrays. The formulas are the shared library's (platelib), imported here by name.

Pure numpy: no file access, no charting. The page runs the same platelib formulas compiled, per replica count
(page_facts.py); tests/test_engine.py holds the two equal.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from platelib.buckets import (BUCKET_BYTES, FIRST_BUCKET_BYTES, MAX_LAYERS, PIECE, PIECES,  # noqa: F401
                              bucket_caps, bucket_schedule, bucketed_tail_seconds, buckets, tensor_params)
from platelib.cluster import (CLUSTER_FIELDS, NIC_ACHIEVED, NIC_LINE_GBPS, NIC_MEASURED_GBPS,  # noqa: F401
                              NVLINK_ACHIEVED, NVLINK_LINE_GBPS, NVLINK_MEASURED_GBPS, cluster, cluster_point,
                              gradient_buckets, real_cluster)
from platelib.collectives import (NCCL_BASE_US, NCCL_CHANNELS, NET_US, NODE_GPUS, RING_FACTOR,  # noqa: F401
                                  RING_NVLINK_US, RING_PLATEAU, TREE_BUS, TREE_CORRECTION, TREE_NVLINK_US,
                                  allreduce_seconds, bus_bytes_per_s, group_node_gpus, nccl_allreduce, nccl_choice, nodes,
                                  ring_latency_us, ring_plateau, ring_seconds, tree_correction, tree_latency_us)
from platelib.compute import (FLOPS_PER_PARAM_TOKEN, blocking_gather_step_seconds, compute_seconds,  # noqa: F401
                              continuous_crossing, efficiency, gpu_params, hidden_window, replica_counts,
                              step_seconds, workshop_step)
from platelib.layout import gpu_tensors, stage_layers  # noqa: F401
from platelib.units import GB, MIB  # noqa: F401
from platelib.zero import (GRADIENT_BYTES, OPTIMISER_BYTES, WEIGHT_BYTES, comm_seconds,  # noqa: F401
                           forward_traffic, hiding_comm_seconds, kept_bytes_per_param, smallest_fitting_replicas,
                           state_bytes_per_param, states_per_param, traffic_factor)


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
    gpus_per_replica: object = 1  # tensor × pipeline parallel: the GPUs one replica spans, t·p
    tensor: object = 1  # t and p, the layout's degrees (the model reads their product, gpus_per_replica)
    pipeline: object = 1


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
    share = gpu_params(x["params"], x["gpus_per_replica"])  # each GPU computes, reduces and keeps N/g
    node = group_node_gpus(x["gpus_per_replica"])
    compute, allreduce, comm, step = workshop_step(
        x["params"], x["batch_tokens"], n, x["gpus_per_replica"], x["peak_flops"], x["mfu"], x["bytes_per_grad"],
        x["link_bytes_per_s"], x["nvlink_bytes_per_s"], x["hierarchical"] != 0, x["backward_only"] != 0,
        x["sharding"])
    tokens = x["batch_tokens"] / n
    states = state_bytes_per_param(x["sharding"], n, x["bytes_per_grad"]) * share
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
            x["nvlink_bytes_per_s"], x["hierarchical"] != 0, x["backward_only"] != 0, x["sharding"], node)),
        smallest_fitting=squeeze(smallest_fitting_replicas(share, x["sharding"], x["memory_bytes"],
                                                           x["bytes_per_grad"])),
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
        seq_len=workshop.seq_len,
    ), replicas)
    states = states_per_param(workshop.bytes_per_grad) * N
    return Grid(
        params=np.asarray(params), batch_tokens=np.asarray(batch_tokens), link_bytes_per_s=B,
        replicas=np.asarray(replicas), workshop=workshop, compute_s=run.compute_s, allreduce_s=run.allreduce_s,
        step_s=run.step_s, efficiency=run.efficiency, tokens_per_replica=run.tokens_per_replica,
        sequences_per_replica=run.sequences_per_replica, model_states_bytes=states,
        fits_in_memory=states <= workshop.gpu_memory_bytes, crossing_index=run.crossing_index,
        continuous_crossing=run.continuous_crossing,
    )
