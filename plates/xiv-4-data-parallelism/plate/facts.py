"""The model's facts for the prose and the build, one selection at a time: crossings, thresholds, memory; and
facts_data, the same selection's facts as the page holds them (page_facts.facts)."""
from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from platelib.cluster import cluster_domain
from platelib.layout import chosen_layout

from . import model, page_facts
from . import options as _options
from .options import CAPTIONS, CLUSTER_OPTIONS, FP32_BYTES, OPTIONS  # noqa: F401 - the controls, declared once
from .presets import Batch, Gpu, Layout, Model, Network, Presets, Selection, WorkshopSettings

CLUSTER_KEYS = tuple(_options.CLUSTER_KEYS)
KEYS = tuple(_options.KEYS)

def gpus_of(presets: Presets) -> dict[str, Gpu]:
    """Every GPU the reader can choose; the workshop's is `presets.gpu` (at least that one)."""
    return {**presets.gpus, presets.workshop.gpu: presets.gpu}


def presets_data(presets: Presets) -> dict:
    """The presets as the page's facts read them (PAGE's facts, page_facts.facts): the inputs, not their results."""
    return {
        "workshop": dataclasses.asdict(presets.workshop),
        "gpus": {i: dataclasses.asdict(g) for i, g in gpus_of(presets).items()},
        "models": {i: dataclasses.asdict(m) for i, m in presets.models.items()},
        "batches": {i: dataclasses.asdict(b) for i, b in presets.batches.items()},
        "networks": {i: dataclasses.asdict(n) for i, n in presets.networks.items()},
        "layouts": {i: dataclasses.asdict(v) for i, v in presets.layouts.items()},
    }


def layout_of(presets: Presets, sel: Selection) -> Layout:
    """The selection's layout: the catalogue's by id, or (PUBLISHED) its model's published one, else one GPU
    (platelib.layout.chosen_layout, the page's own)."""
    made = chosen_layout(sel.layout, dataclasses.asdict(presets.models[sel.model]),
                         {i: dataclasses.asdict(v) for i, v in presets.layouts.items()})
    return Layout(**made)


def inputs(presets: Presets, sel: Selection) -> model.Inputs:
    """The model's inputs for one selection, in SI units (page_facts.inputs does the same for the page)."""
    m, b, net = presets.models[sel.model], presets.batches[sel.batch], presets.networks[sel.network]
    gpu = gpus_of(presets)[sel.gpu or presets.workshop.gpu]
    w = presets.workshop
    layout = layout_of(presets, sel)
    return model.Inputs(
        params=m.params, batch_tokens=b.tokens, link_bytes_per_s=net.link_bytes_per_s(gpu),
        nvlink_bytes_per_s=gpu.nvlink_gbytes_per_s * model.GB, peak_flops=gpu.peak_tflops * 1e12,
        memory_bytes=gpu.memory_gb * model.GB, mfu=w.mfu,
        bytes_per_grad=FP32_BYTES if sel.precision == "fp32" else w.bytes_per_grad,
        hierarchical=sel.topology == "nodes", backward_only=sel.overlap == "backward",
        sharding=list(OPTIONS["sharding"]).index(sel.sharding), seq_len=w.seq_len,
        gpus_per_replica=float(layout.gpus), tensor=float(layout.tensor), pipeline=float(layout.pipeline),
    )


def axes(presets: Presets) -> dict[str, list[str]]:
    """The ids along each axis of the grid, in KEYS order."""
    return {"model": list(presets.models), "batch": list(presets.batches), "network": list(presets.networks),
            "gpu": list(gpus_of(presets)), **{k: list(v) for k, v in OPTIONS.items()}}


def evaluate(presets: Presets, choices: dict[str, list[str]] | None = None, replicas=None) -> model.Run:
    """The model over the product of the given ids on each axis (every preset and option by default): arrays on
    axes (KEYS…, replicas), each selection in its layout (its model's published one), all on one replica axis (by
    default the one-GPU replicas' whole axis; a selection's own facts stop where its GPUs reach the cap). The build
    evaluates only small products (facts.extremes, the CSV's rows); a product of every axis is for tests."""
    axis = model.replica_counts(presets.workshop.max_replicas) if replicas is None else replicas
    return model.evaluate(evaluate_inputs(presets, choices or {}), axis)


def extremes(presets: Presets) -> dict[str, list[str]]:
    """The presets at the ends of each axis the model is monotone in: the smallest and largest model (params) and
    batch (tokens), the slowest and fastest network of its own speed and one over NVLink (whose speed is each GPU's);
    every GPU and option. Every time, size and efficiency of the full product lies between its values on these
    (step, compute and communication grow with params and tokens and shrink with bandwidth), so checking them checks
    every selection, in time linear in the presets."""
    def ends(table: dict, key) -> list[str]:
        ids = list(table)
        if not ids:
            return []
        low, high = min(ids, key=lambda i: key(table[i])), max(ids, key=lambda i: key(table[i]))
        return [i for i in ids if i in (low, high)]  # in preset order, as the product would meet them
    own = {i: n for i, n in presets.networks.items() if not n.nvlink}
    nvlink = [i for i, n in presets.networks.items() if n.nvlink][:1]
    networks = set(ends(own, lambda n: n.link_gbytes_per_s)) | set(nvlink)
    return {"model": ends(presets.models, lambda m: m.params), "batch": ends(presets.batches, lambda b: b.tokens),
            "network": [i for i in presets.networks if i in networks]}


@functools.lru_cache(maxsize=1024)
def _cluster(shape, bytes_per_grad, cap_mb, compute, link, nvlink, replicas, micro, domain, layout=(1, 1)
             ) -> dict[str, list]:
    """model.real_cluster for one model, precision, cap, compute, links, NVLink domain and layout (t, p): the
    overlap, topology and sharding do not change it, so the selections that differ only in those share one
    evaluation."""
    sizes, ready = model.gradient_buckets(dict(zip(("params", "layers", "d_model", "ffn", "vocab"), shape)),
                                          {"tensor": layout[0], "pipeline": layout[1]}, bytes_per_grad, cap_mb)
    return model.real_cluster(list(compute), sizes, ready, link, nvlink, list(replicas), micro, domain,
                              layout[0] * layout[1])


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
    comm_s: float = 0.0  # the all-reduce × the sharding's traffic factor: what the step waits for
    exposed_s: float = 0.0  # step − compute
    states_gb: float = 0.0  # model states per GPU at this replica count
    states_bytes: float = 0.0  # the same in bytes
    fits: bool = False


@dataclass(frozen=True)
class Facts:
    """What the plate says about one selection, read off its run of the model (grid, at index)."""

    model: Model
    batch: Batch
    network: Network
    gpu: Gpu
    grid: model.Run
    index: tuple[int, ...]
    selection: Selection | None = None
    workshop: WorkshopSettings | None = None
    inputs: model.Inputs | None = None
    layout: Layout = Layout(id="", name="one GPU", tensor=1, pipeline=1)  # t × p GPUs per replica

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
            comm_s=float(g.comm_s[i]), exposed_s=float(g.exposed_s[i]), states_gb=float(g.states_bytes[i] / model.GB),
            states_bytes=float(g.states_bytes[i]),
            fits=bool(g.fits[i]),
        )

    @cached_property
    def points(self) -> list[Point]:
        """Every replica count of the grid, in order."""
        return [self._point(r) for r in range(len(self.grid.replicas))]

    @property
    def crossing_replicas(self) -> int | None:
        """The first replica count at which communication outlasts the compute it can hide behind."""
        r = int(self.grid.crossing_index[self.index])
        return None if r < 0 else int(self.grid.replicas[r])

    @property
    def at_crossing(self) -> Point | None:
        """The model's values where the lines cross."""
        n = self.crossing_replicas
        return None if n is None else self.at(n)

    @property
    def continuous_crossing(self) -> float:
        """n*: the replica count, not necessarily a power of two, at which communication exactly fills its window."""
        return float(self.grid.continuous_crossing[self.index])

    @property
    def max_replicas(self) -> int:
        """The last replica count of the grid."""
        return int(self.grid.replicas[-1])

    @property
    def caption(self) -> str:
        """'Llama 3 8B · 4M tokens · 400 Gb/s', then the GPU and options where they are not the workshop's."""
        parts = [self.model.name, self.batch.name, self.network.short]
        if self.workshop and self.gpu.id != self.workshop.gpu:
            parts.append(self.gpu.name)
        if self.layout.gpus > 1:
            parts.append(self.layout.name + " per replica")
        if self.selection is not None:
            parts += [CAPTIONS[k][getattr(self.selection, k)] for k in CAPTIONS
                      if getattr(self.selection, k) in CAPTIONS[k]]
        return " · ".join(parts)

    @property
    def options(self) -> dict[str, str]:
        """The selection's option labels: {"overlap": "whole step", …}."""
        sel = self.selection or Selection(self.model.id, self.batch.id, self.network.id)
        return {k: OPTIONS[k][getattr(sel, k)] for k in OPTIONS}

    @property
    def backward_only(self) -> bool:
        """Whether only the backward pass can hide communication."""
        return self.selection is not None and self.selection.overlap == "backward"

    @property
    def sharding_stage(self) -> int:
        """ZeRO stage 0–3."""
        return 0 if self.selection is None else list(OPTIONS["sharding"]).index(self.selection.sharding)

    @property
    def link_gbytes_per_s(self) -> float:
        """The network's bandwidth per replica, per direction, for this GPU."""
        return self.network.link_bytes_per_s(self.gpu) / model.GB

    @property
    def smallest_fitting_replicas(self) -> int | None:
        """The smallest whole replica count whose model states fit on one GPU (in 10⁹ B); None if none does."""
        n = float(self.grid.smallest_fitting[self.index])
        return None if np.isnan(n) else int(n)

    @property
    def smallest_fitting_on_grid(self) -> int | None:
        """The first replica count of the grid whose model states fit."""
        r = int(self.grid.smallest_fitting_index[self.index])
        return None if r < 0 else int(self.grid.replicas[r])

    @property
    def hypothetical_from(self) -> int | None:
        """Over NVLink, the replica count beyond which no real NVLink domain of this GPU holds the replicas' GPUs
        (page_facts.hypothetical_from, the page's own)."""
        return page_facts.hypothetical_from(self.network.nvlink, self.gpu.nvlink_domain,
                                            float(self.inputs.gpus_per_replica), self.max_replicas)

    @property
    def timeline_replicas(self) -> int:
        """The replica count the step timeline shows: the first crossing, else the largest count."""
        return self.crossing_replicas or self.max_replicas

    @property
    def grad_bytes(self) -> float:
        """Bytes of gradients each replica reduces per step: b·N."""
        return float(self.inputs.bytes_per_grad * self.inputs.params)

    @property
    def forward_comm_s(self) -> float:
        """At the timeline's replica count: what must travel during the forward pass (ZeRO-3's all-gather)."""
        p = self.at(self.timeline_replicas)
        return float(model.forward_traffic(self.sharding_stage, self.inputs.bytes_per_grad) * p.allreduce_s)

    @property
    def forward_exposed_s(self) -> float:
        """At the timeline's replica count: the part of the forward communication the forward pass cannot hide."""
        return max(0.0, self.forward_comm_s - self.at(self.timeline_replicas).compute_s / 3)

    @property
    def timeline_comm_s(self) -> float:
        """At the timeline's replica count: the communication the backward pass's buckets carry (all but ZeRO-3's
        forward all-gather)."""
        return float(self.at(self.timeline_replicas).comm_s - self.forward_comm_s)

    @cached_property
    def buckets(self) -> tuple[list[float], list[float]]:
        """DDP's gradient buckets for this model, gradient precision and bucket_cap_mb: the bytes of each, in the
        order they are all-reduced, and the share of the gradients made when each is full (the timeline's, and the
        real cluster's)."""
        return self.cluster_buckets

    @property
    def bucket_count(self) -> int:
        """How many gradient buckets DDP all-reduces each step."""
        return len(self.buckets[0])

    @property
    def smallest_bucket_bytes(self) -> float:
        """The smallest gradient bucket, in bytes."""
        return min(self.buckets[0])

    @property
    def largest_bucket_bytes(self) -> float:
        """The largest gradient bucket, in bytes."""
        return max(self.buckets[0])

    @property
    def bucket_schedule(self) -> tuple[list[float], list[float]]:
        """At the timeline's replica count: when each bucket's all-reduce starts and ends."""
        p = self.at(self.timeline_replicas)
        return model.bucket_schedule(p.compute_s, self.timeline_comm_s, *self.buckets)

    @property
    def bucketed_tail_s(self) -> float:
        """At the timeline's replica count: communication left after compute with DDP's buckets (plus what the
        forward pass could not hide)."""
        p = self.at(self.timeline_replicas)
        return self.forward_exposed_s + float(model.bucketed_tail_seconds(p.compute_s, self.timeline_comm_s,
                                                                          *self.buckets))

    @property
    def timeline_tail_s(self) -> float:
        """The timeline's exposed tail under the chosen overlap: the buckets' tail for the backward pass only; for
        the workshop's whole step, step − compute, as the readout says (no buckets: nothing waits for a gradient)."""
        return self.bucketed_tail_s if self.backward_only else float(self.at(self.timeline_replicas).exposed_s)

    @property
    def timeline_bound_s(self) -> float:
        """The timeline's bound under the chosen overlap: perfect overlap within each pass, or the whole step."""
        return self.backward_bound_s if self.backward_only else self.timeline_tail_s

    @property
    def backward_bound_s(self) -> float:
        """At the timeline's replica count: the tail with perfect overlap within each pass (for all but ZeRO-3,
        max(0, A − 2C/3))."""
        p = self.at(self.timeline_replicas)
        return float(model.step_seconds(p.compute_s, p.comm_s, True, self.forward_comm_s) - p.compute_s)

    # --- the real cluster beside the workshop (issue 22): DDP on NCCL, 8-GPU nodes with a NIC per GPU ---

    @property
    def bucket_cap_mb(self) -> float | None:
        """DDP's bucket_cap_mb on the real cluster; None when left unset (25 MiB, the first bucket 1 MiB)."""
        chosen = self.selection.bucket if self.selection else "default"
        return None if chosen == "default" else float(chosen)

    @property
    def micro_batches(self) -> int:
        """Micro-batches per optimiser step on the real cluster (DDP's no_sync on all but the last)."""
        return int(self.selection.micro) if self.selection else 1

    @cached_property
    def cluster_buckets(self) -> tuple[list[float], list[float]]:
        """DDP's buckets under the chosen bucket_cap_mb: the bytes of each, in all-reduce order, and the share of
        the gradients made when each is full."""
        made = model.gradient_buckets(dataclasses.asdict(self.model), dataclasses.asdict(self.layout),
                                      self.inputs.bytes_per_grad, self.bucket_cap_mb)
        return made[0], made[1]

    @cached_property
    def cluster(self) -> dict[str, list]:
        """The real cluster at every replica count: model.CLUSTER_FIELDS and efficiency, lists over the grid."""
        x, m = self.inputs, self.model
        made = _cluster((m.params, m.layers, m.d_model, m.ffn, m.vocab), float(x.bytes_per_grad), self.bucket_cap_mb,
                        tuple(p.compute_s for p in self.points), float(x.link_bytes_per_s),
                        float(x.nvlink_bytes_per_s), tuple(p.replicas for p in self.points), self.micro_batches,
                        self.cluster_domain, (self.layout.tensor, self.layout.pipeline))
        return {name: list(values) for name, values in made.items()}

    @property
    def cluster_domain(self) -> int:
        """The real cluster's NVLink domain when the network is NVLink itself (the GPU's, else the whole grid); 0 on
        a network of NICs (page_facts.cluster_domain, the page's own)."""
        domain = self.gpu.nvlink_domain
        return cluster_domain(self.network.nvlink, int(domain) if domain is not None else None, self.max_replicas)

    @property
    def nvlink_achieved(self) -> list[float]:
        """[achieved, line rate] of H100's NVLink for NCCL's ring, GB/s per direction: the ratio the real cluster
        applies to every GPU's NVLink."""
        return [model.NVLINK_MEASURED_GBPS, model.NVLINK_LINE_GBPS]

    @property
    def nic_achieved(self) -> list[float]:
        """[achieved, line rate] of a 400 Gb/s NIC through NCCL, GB/s per direction: the ratio the real cluster
        applies to the network's link."""
        return [model.NIC_MEASURED_GBPS, model.NIC_LINE_GBPS]

    def blocking_efficiency(self, replicas: int) -> float:
        """Scaling efficiency at a replica count if ZeRO-1/2's all-gather of the updated weights ran after the
        optimiser step and blocked (DeepSpeed's stages 1 and 2), where the model prefetches it behind the next
        forward pass (FSDP's SHARD_GRAD_OP); the model's own efficiency for the other stages."""
        p = self.at(replicas)
        if self.sharding_stage not in (1, 2):
            return p.efficiency
        gather = float(model.forward_traffic(self.sharding_stage, self.inputs.bytes_per_grad) * p.allreduce_s)
        step = model.blocking_gather_step_seconds(p.compute_s, p.comm_s, gather, self.backward_only)
        return float(model.efficiency(p.compute_s, step))

    @property
    def cluster_reach(self) -> int:
        """The largest replica count the real cluster is priced at: the grid's, or the last inside the NVLink
        domain when the network is NVLink."""
        priced = [p.replicas for p, s in zip(self.points, self.cluster["step_s"]) if s is not None]
        return priced[-1] if priced else 0

    def cluster_at(self, replicas: int) -> dict[str, float]:
        """The real cluster's values at a replica count of the grid."""
        r = [p.replicas for p in self.points].index(self.at(replicas).replicas)
        return {name: values[r] for name, values in self.cluster.items()}

    @property
    def cluster_replicas(self) -> int:
        """Where the prose compares the real cluster with the workshop: the workshop's first crossing, else the
        largest count."""
        return self.timeline_replicas

    @property
    def cluster_crossing_replicas(self) -> int | None:
        """The first replica count at which the real cluster's communication outlasts the last micro-batch's
        backward pass (2C/(3m)), all it can hide behind; None if never on the grid."""
        for p, comm in zip(self.points, self.cluster["comm_s"]):
            if comm is not None and comm > p.compute_s * 2 / 3 / self.micro_batches:
                return p.replicas
        return None

    @property
    def cluster_step_s(self) -> float:
        """The real cluster's step at cluster_replicas."""
        return self.cluster_at(self.cluster_replicas)["step_s"]

    @property
    def cluster_efficiency(self) -> float:
        """The real cluster's scaling efficiency at cluster_replicas."""
        return self.cluster_at(self.cluster_replicas)["efficiency"]

    @property
    def cluster_comm_s(self) -> float:
        """At cluster_replicas: every bucket's all-reduce, each at NCCL's cheaper algorithm, summed."""
        return self.cluster_at(self.cluster_replicas)["comm_s"]

    @property
    def cluster_latency_s(self) -> float:
        """At cluster_replicas: the latency part of cluster_comm_s (each call pays it once)."""
        return self.cluster_at(self.cluster_replicas)["latency_s"]

    @property
    def cluster_bandwidth_s(self) -> float:
        """At cluster_replicas: the bandwidth part of cluster_comm_s (bytes over the chosen algorithm's bandwidth)."""
        return self.cluster_at(self.cluster_replicas)["bandwidth_s"]

    @property
    def cluster_ring_bandwidth_s(self) -> float:
        """At cluster_replicas: the ring's bandwidth term for all the gradients, 2(n−1)/n · b·N / (g·B_net), NVLink
        capping g·B_net (≈ 0.080 s for the default against the workshop's 0.642 s)."""
        return self.cluster_at(self.cluster_replicas)["ring_bandwidth_s"]

    @property
    def cluster_ring_latency_s(self) -> float:
        """At cluster_replicas: what the buckets' latency would cost if NCCL always took the ring."""
        return self.cluster_at(self.cluster_replicas)["ring_latency_s"]

    @property
    def cluster_bucket_count(self) -> int:
        """How many all-reduce calls DDP makes per step under the chosen bucket_cap_mb."""
        return len(self.cluster_buckets[0])

    @property
    def cluster_tree_calls(self) -> int:
        """At cluster_replicas: how many of those calls NCCL sends by tree."""
        return int(self.cluster_at(self.cluster_replicas)["tree_calls"])

    @property
    def cluster_algorithm(self) -> str:
        """At cluster_replicas: 'tree', 'ring', or 'ring and tree', as NCCL picks for the buckets."""
        tree = self.cluster_tree_calls
        return "tree" if tree == self.cluster_bucket_count else "ring" if tree == 0 else "ring and tree"

    @property
    def ring_latency_us(self) -> float:
        """NCCL's ring latency per all-reduce at cluster_replicas, its table's value (µs; 9,657.2 at 1,024)."""
        return float(model.ring_latency_us(self.cluster_replicas))

    @property
    def ring_call_latency_us(self) -> float:
        """The same with the ring's plateau factor as it applies to a 25 MiB call (µs; 13,520.1 at 1,024)."""
        n = self.cluster_replicas
        return float(model.ring_latency_us(n) * model.ring_plateau(model.BUCKET_BYTES, n))

    @property
    def tree_latency_us(self) -> float:
        """NCCL's tree latency per all-reduce at cluster_replicas (µs; 260.4 at 1,024)."""
        return float(model.tree_latency_us(self.cluster_replicas))

    @property
    def cluster_step_by_bucket(self) -> dict[str, float]:
        """The real cluster's step at cluster_replicas for each bucket_cap_mb choice: {choice id: seconds}."""
        return {b: self.cluster_with(self.cluster_replicas, bucket=b)["step_s"] for b in CLUSTER_OPTIONS["bucket"]}

    @property
    def cluster_step_by_micro(self) -> dict[str, float]:
        """The real cluster's step at cluster_replicas for each micro-batch count: {choice id: seconds}."""
        return {m: self.cluster_with(self.cluster_replicas, micro=m)["step_s"] for m in CLUSTER_OPTIONS["micro"]}

    def cluster_with(self, replicas: int, bucket: str | None = None, micro: str | None = None) -> dict[str, float]:
        """The real cluster at a replica count with another bucket_cap_mb or micro-batch count (choice ids):
        cluster_with(16384, bucket="500")["step_s"]."""
        sel = self.selection or Selection(self.model.id, self.batch.id, self.network.id)
        sel = replace(sel, bucket=sel.bucket if bucket is None else bucket, micro=sel.micro if micro is None else micro)
        return replace(self, selection=sel).cluster_at(replicas)

    @property
    def allreduce_limit_s(self) -> float:
        """The all-reduce time for very many replicas: 2·b·N/B for a flat ring; hierarchical, the in-node ring
        over NVLink plus 2·(b·N/g)/B across nodes."""
        x = self.inputs
        buffer = x.bytes_per_grad * x.params
        if not x.hierarchical:
            return float(model.RING_FACTOR * buffer / x.link_bytes_per_s)
        inside = model.ring_seconds(buffer, x.nvlink_bytes_per_s, model.NODE_GPUS)
        return float(inside + model.RING_FACTOR * buffer / model.NODE_GPUS / x.link_bytes_per_s)

    @property
    def non_embedding_allreduce_s(self) -> float:
        """The all-reduce limit if only non-embedding parameters were reduced (the seed's 0.56 s)."""
        return self.allreduce_limit_s * self.model.non_embedding_params / self.model.params

    @property
    def state_bytes_per_param(self) -> float:
        """Model-state bytes per parameter with the selection's gradients, whole (platelib.zero): 16 with BF16
        gradients, 18 with FP32 ones."""
        return float(model.states_per_param(self.inputs.bytes_per_grad))

    @property
    def model_states_gb(self) -> float:
        """Bytes of weights, gradients and optimiser state per replica without sharding, in GB."""
        return float(self.state_bytes_per_param * self.model.params / model.GB)

    @property
    def gpu_memory_gb(self) -> float:
        """Memory of one GPU, in GB."""
        return float(self.gpu.memory_gb)

    @property
    def fits_in_memory(self) -> bool:
        """Whether the model states fit on one GPU without sharding."""
        return self.model_states_gb <= self.gpu_memory_gb

    # --- exact statements for the prose (issue 8) ---

    @property
    def meeting_replicas(self) -> float:
        """n* where the drawn lines meet, with the exact ring factor (the prose's name for continuous_crossing):
        1 + 1.5·T·B/(P·u) for the workshop's BF16 flat ring and whole-step overlap."""
        return self.continuous_crossing

    @property
    def hiding_tokens_per_replica(self) -> float:
        """Tokens per replica per step at and above which compute outlasts even the all-reduce's limit,
        so the all-reduce stays hidden: T·a/c = b·P·u/(3·B), i.e. P·u/(1.5·B) for BF16 gradients."""
        return self.batch.tokens * self.allreduce_limit_s / self.at(1).compute_s

    @property
    def model_states_bytes(self) -> float:
        """Bytes of model states per replica (the memory verdict compares bytes with bytes)."""
        return float(self.state_bytes_per_param * self.model.params)

    @property
    def gpu_memory_bytes(self) -> float:
        """One GPU's memory as NVIDIA quotes it, in GB, read as 10⁹ B: the unit the verdict uses."""
        return float(self.gpu.memory_gb * model.GB)

    @property
    def gpu_memory_gib_bytes(self) -> float:
        """The same quoted figure read as GiB (2^30 B), as HBM capacities are built: 80 GiB = 85.9 × 10⁹ B."""
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
    """The presets and their options: facts for any selection, evaluated when first asked for."""

    def __init__(self, presets: Presets):
        self.presets = presets
        self.axes = axes(presets)
        self.replicas = model.replica_counts(presets.workshop.max_replicas)
        self._facts: dict[Selection, Facts] = {}

    def complete(self, selection: Selection) -> Selection:
        """The selection with the workshop's GPU filled in where it names none."""
        return selection if selection.gpu else replace(selection, gpu=self.presets.workshop.gpu)

    def facts(self, selection: Selection) -> Facts:
        """Facts for one selection of preset ids: the model evaluated for it alone, once."""
        sel = self.complete(selection)
        if sel not in self._facts:
            p = self.presets
            ins = inputs(p, sel)
            layout = layout_of(p, sel)
            self._facts[sel] = Facts(
                model=p.models[sel.model], batch=p.batches[sel.batch], network=p.networks[sel.network],
                gpu=gpus_of(p)[sel.gpu], index=(), selection=sel, workshop=p.workshop, inputs=ins, layout=layout,
                grid=model.evaluate(ins, model.replica_counts(p.workshop.max_replicas, layout.gpus)),
            )
        return self._facts[sel]

    @cached_property
    def selections(self) -> list[Selection]:
        """Every selection the reader can make (presets × options), in preset order: for tests; the build never
        goes through them all."""
        return [Selection(*combo) for combo in itertools.product(*self.axes.values())]


def evaluate_inputs(presets: Presets, choices: dict[str, list[str]]) -> model.Inputs:
    """The model's inputs over the product of the given ids, as evaluate stacks them."""
    ax = {**axes(presets), **choices}
    shape = tuple(len(ax[k]) for k in KEYS)
    cells = [inputs(presets, Selection(*combo)) for combo in itertools.product(*(ax[k] for k in KEYS))]
    return model.Inputs(**{f: np.array([getattr(c, f) for c in cells], dtype=np.float64).reshape(shape)
                           for f in model.Inputs.__dataclass_fields__})


def facts_data(f: Facts) -> dict:
    """One selection's facts as the page holds them: PAGE's facts (page_facts.facts) of f's selection, with the
    reader's own values (custom.OwnFacts) as the page's selection carries them, under f's presets."""
    sel = {k: getattr(f.selection, k) for k in KEYS + CLUSTER_KEYS}
    workshop = dataclasses.asdict(f.workshop)
    own_mfu = getattr(f, "workshop_mfu", None)  # OwnFacts: the workshop's MFU; the reader's is in the selection
    if own_mfu is not None and own_mfu != workshop["mfu"]:
        sel["mfu"], workshop["mfu"] = workshop["mfu"], own_mfu
    presets = {"workshop": workshop, "gpus": {f.gpu.id: dataclasses.asdict(f.gpu)},
               "models": {f.model.id: dataclasses.asdict(f.model)},
               "batches": {f.batch.id: dataclasses.asdict(f.batch)},
               "networks": {f.network.id: dataclasses.asdict(f.network)},
               "layouts": {f.layout.id: dataclasses.asdict(f.layout)} if f.layout.id else {}}
    return page_facts.facts(sel, presets)

