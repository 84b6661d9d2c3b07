"""Read the model's grid for the prose, the readouts and the CSV: crossings, thresholds, memory."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import model
from .content import Batch, Gpu, Model, Network, Presets, Selection

CSV_COLUMNS = (
    "model", "gpu", "network", "global_batch_tokens", "replicas", "params", "gpu_peak_tflops", "mfu",
    "link_gbytes_per_s", "compute_s", "allreduce_s", "step_s", "efficiency", "tokens_per_replica",
    "sequences_per_replica", "model_states_gb", "gpu_memory_gb", "fits_in_memory",
)


def workshop_of(presets: Presets) -> model.Workshop:
    """The model's workshop from the author's presets (units converted to SI)."""
    w = presets.workshop
    return model.Workshop(
        gpu_peak_flops=presets.gpu.peak_tflops * 1e12,
        gpu_memory_bytes=presets.gpu.memory_gb * model.GB,
        mfu=w.mfu,
        bytes_per_grad=w.bytes_per_grad,
        bytes_per_param_states=w.bytes_per_param_states,
        seq_len=w.seq_len,
    )


def evaluate(presets: Presets) -> model.Grid:
    """The grid over every preset model, batch, network and replica count."""
    return model.grid(
        params=[m.params for m in presets.models.values()],
        batch_tokens=[b.tokens for b in presets.batches.values()],
        link_bytes_per_s=[n.link_gbytes_per_s * model.GB for n in presets.networks.values()],
        replicas=model.replica_counts(presets.workshop.max_replicas),
        workshop=workshop_of(presets),
    )


@dataclass(frozen=True)
class Point:
    """The model at one replica count for one selection."""

    replicas: int
    compute_s: float
    allreduce_s: float
    step_s: float
    efficiency: float
    tokens_per_replica: float
    sequences_per_replica: float


@dataclass(frozen=True)
class Facts:
    """What the plate says about one selection, read off the grid."""

    model: Model
    batch: Batch
    network: Network
    gpu: Gpu
    grid: model.Grid
    index: tuple[int, int, int]

    def at(self, replicas: int) -> Point:
        """The model's values at a replica count of the grid."""
        where = np.flatnonzero(self.grid.replicas == replicas)
        if where.size == 0:
            raise ValueError(f"{replicas} is not a replica count of the grid "
                             f"(powers of two up to {int(self.grid.replicas[-1])})")
        return self._point(int(where[0]))

    def _point(self, r: int) -> Point:
        g, i = self.grid, self.index + (r,)
        return Point(
            replicas=int(g.replicas[r]), compute_s=float(g.compute_s[i]), allreduce_s=float(g.allreduce_s[i]),
            step_s=float(g.step_s[i]), efficiency=float(g.efficiency[i]),
            tokens_per_replica=float(g.tokens_per_replica[i]),
            sequences_per_replica=float(g.sequences_per_replica[i]),
        )

    @property
    def points(self) -> list[Point]:
        """Every replica count of the grid, in order."""
        return [self._point(r) for r in range(len(self.grid.replicas))]

    @property
    def crossing_replicas(self) -> int | None:
        """The first replica count at which the all-reduce takes longer than compute."""
        r = int(self.grid.crossing_index[self.index])
        return None if r < 0 else int(self.grid.replicas[r])

    @property
    def at_crossing(self) -> Point | None:
        """The model's values where the lines cross."""
        n = self.crossing_replicas
        return None if n is None else self.at(n)

    @property
    def continuous_crossing(self) -> float:
        """The replica count n* at which compute equals the all-reduce's limit."""
        return float(self.grid.continuous_crossing[self.index])

    @property
    def allreduce_limit_s(self) -> float:
        """2·b·N/B: the all-reduce time for very many replicas."""
        w = self.grid.workshop
        return float(model.RING_FACTOR * w.bytes_per_grad * self.model.params
                     / self.grid.link_bytes_per_s[self.index[2]])

    @property
    def non_embedding_allreduce_s(self) -> float:
        """The all-reduce limit if only non-embedding parameters were reduced (the seed's 0.56 s)."""
        return self.allreduce_limit_s * self.model.non_embedding_params / self.model.params

    @property
    def model_states_gb(self) -> float:
        """Bytes of weights, gradients and optimiser state per replica, in GB."""
        return float(self.grid.model_states_bytes[self.index[0]] / model.GB)

    @property
    def gpu_memory_gb(self) -> float:
        """Memory of one GPU, in GB."""
        return self.grid.workshop.gpu_memory_bytes / model.GB

    @property
    def fits_in_memory(self) -> bool:
        """Whether the model states fit on one GPU."""
        return bool(self.grid.fits_in_memory[self.index[0]])

    # --- exact statements for the prose (issue 8) ---

    @property
    def meeting_replicas(self) -> float:
        """n* where the drawn lines meet, with the exact ring factor: c/n = a·(n−1)/n gives n* = 1 + c/a
        (c the one-replica compute, a the flat ring's limit; whole-step overlap); 1 + 1.5·T·B/(P·u) for BF16."""
        return 1 + self.at(1).compute_s / self.allreduce_limit_s

    @property
    def hiding_tokens_per_replica(self) -> float:
        """Tokens per replica per step at and above which compute outlasts even the all-reduce's limit,
        so the all-reduce stays hidden: T·a/c = b·P·u/(3·B), i.e. P·u/(1.5·B) for BF16 gradients."""
        return self.batch.tokens * self.allreduce_limit_s / self.at(1).compute_s

    @property
    def model_states_bytes(self) -> float:
        """Bytes of model states per replica (the memory verdict compares bytes with bytes)."""
        return float(self.grid.model_states_bytes[self.index[0]])

    @property
    def gpu_memory_bytes(self) -> float:
        """One GPU's memory as NVIDIA quotes it, in GB, read as 10^9 B: the unit the verdict uses."""
        return float(self.grid.workshop.gpu_memory_bytes)

    @property
    def gpu_memory_gib_bytes(self) -> float:
        """The same quoted figure read as GiB (2^30 B), as HBM capacities are built: 80 GiB = 85.9 × 10^9 B."""
        return self.gpu_memory_bytes / model.GB * 2**30

    @property
    def fits_in_gib(self) -> bool:
        """Whether the model states would fit if the quoted memory were GiB."""
        return self.model_states_bytes <= self.gpu_memory_gib_bytes

    @property
    def embedding_params(self) -> int:
        """Parameters of the input embedding and the untied output projection: 2 · vocab · d_model."""
        return self.model.params - self.model.non_embedding_params


class Atlas:
    """The grid with the presets that index it: facts for any selection, rows for the CSV."""

    def __init__(self, presets: Presets):
        self.presets = presets
        self.grid = evaluate(presets)
        self._models = list(presets.models)
        self._batches = list(presets.batches)
        self._networks = list(presets.networks)

    def facts(self, selection: Selection) -> Facts:
        """Facts for one selection of preset ids."""
        return Facts(
            model=self.presets.models[selection.model],
            batch=self.presets.batches[selection.batch],
            network=self.presets.networks[selection.network],
            gpu=self.presets.gpu,
            grid=self.grid,
            index=(self._models.index(selection.model), self._batches.index(selection.batch),
                   self._networks.index(selection.network)),
        )

    @cached_property
    def selections(self) -> list[Selection]:
        """Every selection the reader can make, in preset order."""
        return [Selection(m, b, n) for m in self._models for b in self._batches for n in self._networks]

    def rows(self) -> list[dict]:
        """One dict per grid cell with the CSV's columns, in a stable order."""
        g, p = self.grid, self.presets
        out = []
        for sel in self.selections:
            f = self.facts(sel)
            for point in f.points:
                out.append({
                    "model": sel.model, "gpu": p.workshop.gpu, "network": sel.network,
                    "global_batch_tokens": f.batch.tokens, "replicas": point.replicas,
                    "params": f.model.params, "gpu_peak_tflops": p.gpu.peak_tflops,
                    "mfu": g.workshop.mfu, "link_gbytes_per_s": f.network.link_gbytes_per_s,
                    "compute_s": point.compute_s, "allreduce_s": point.allreduce_s, "step_s": point.step_s,
                    "efficiency": point.efficiency, "tokens_per_replica": point.tokens_per_replica,
                    "sequences_per_replica": point.sequences_per_replica,
                    "model_states_gb": f.model_states_gb, "gpu_memory_gb": f.gpu_memory_gb,
                    "fits_in_memory": f.fits_in_memory,
                })
        return out
