"""Plate XIV.5's facts for one selection (model, GPU, stage, gradient precision, network) of the series catalogue:
what its prose slots, figure descriptions and figures read."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from generator.api import Problems, plain, split_front_matter

from platelib.catalogue import Gpu, Model, Network, Presets, catalogue_path, load_presets

from . import model as zero  # `model` is a selection's preset here
from . import page_facts
# The plate's controls beyond the presets ({key: {id: label}}, the default first), the gradient bytes of each
# precision and the controls in the page's order: declared with the facts the page computes.
from .page_facts import CONTROLS, GRAD_BYTES, PRECISIONS, STAGES

FOLDER = Path(__file__).resolve().parent.parent  # the plate's folder: plate.md, terms.toml, sources.toml


@dataclass(frozen=True)
class Selection:
    """One choice of each control, by id: presets for model, GPU and network; STAGES and PRECISIONS for the rest."""

    model: str
    gpu: str
    stage: str
    precision: str
    network: str


def front_matter(plate_folder: Path) -> dict:
    """plate.md's front matter, split by generator.source.content's reader (its mistakes raised as ContentError)."""
    path = Path(plate_folder) / "plate.md"
    problems = Problems(path.parent)
    parts = split_front_matter(problems, path, path.read_text(encoding="utf-8"))
    problems.raise_if_any()
    assert parts is not None
    return tomllib.loads(parts[0])


def presets_path(plate_folder: Path | None = None) -> Path:
    """The series catalogue this plate reads (plate_folder: a copy of this plate, in a series of its own)."""
    return catalogue_path(FOLDER if plate_folder is None else Path(plate_folder))


def load(plate_folder: Path | None = None) -> Presets:
    """The presets of this plate (or of a copy of it, plate_folder): the series catalogue beside its folder, read and
    checked by the shared reader (platelib.catalogue); its mistakes raised as ContentError at file:line."""
    folder = FOLDER if plate_folder is None else Path(plate_folder)
    problems = Problems(folder)
    presets, _ = load_presets(problems, folder)
    problems.raise_if_any()
    assert presets is not None
    return presets


def gpus_of(presets: Presets) -> dict[str, Gpu]:
    """Every GPU of the presets, the workshop's among them."""
    return {**presets.gpus, presets.workshop.gpu: presets.gpu}


def check(presets: Presets, sel: Selection) -> None:
    """Refuse a selection naming an id the presets or controls do not have (a LookupError naming the control)."""
    tables = {"model": presets.models, "gpu": gpus_of(presets), "stage": STAGES, "precision": PRECISIONS,
              "network": presets.networks}
    for key, table in tables.items():
        chosen = getattr(sel, key)
        if chosen not in table:
            raise LookupError(f"{key} {chosen!r} is not one of {', '.join(map(repr, table))}")


@dataclass(frozen=True)
class StageFacts:
    """One ZeRO stage for the selection's model, GPU and precision."""

    stage: int
    label: str
    states_bytes: np.ndarray  # per GPU at each replica count of the grid
    floor_bytes: float  # what every GPU keeps whole whatever n: the line's level at large n
    smallest_fitting: float  # whole n whose states fit in the GPU's memory in 10⁹ B; NaN if none
    smallest_fitting_gib: float  # the same in GiB (the memory_gb figure read as binary gigabytes)
    smallest_fitting_on_grid: int | None  # the first power of two that fits; None if none on the grid
    traffic_bytes: np.ndarray  # sent per GPU per step at each replica count
    traffic_s: np.ndarray  # that at the selection's link speed per direction
    traffic_ratio: float  # per byte of the all-reduce at the same gradient precision (n ≥ 2)
    traffic_limit_bytes: float  # as n grows (r → 1)
    traffic_limit_s: float  # that at the selection's link speed per direction
    domain_traffic_s: float | None  # over the GPU's NVLink, at one domain's GPUs (None: not NVLink, or no domain)
    latency_s: np.ndarray  # NCCL's latency of the step's FSDP calls at each replica count
    latency_at_s: float  # that at latency_at GPUs


@dataclass(frozen=True)
class Facts:
    """The selection's facts: its presets, the grid of replica counts, and each stage's facts."""

    presets: Presets
    selection: Selection

    @property
    def model(self) -> Model:
        return self.presets.models[self.selection.model]

    @property
    def gpu(self) -> Gpu:
        return gpus_of(self.presets)[self.selection.gpu]

    @property
    def network(self) -> Network:
        return self.presets.networks[self.selection.network]

    @property
    def params(self) -> int:
        return self.model.params

    @property
    def stage_index(self) -> int:
        """The selected stage as a number, 0–3."""
        return list(STAGES).index(self.selection.stage)

    @property
    def grad_bytes(self) -> int:
        """b, the selected gradient precision's bytes."""
        return GRAD_BYTES[self.selection.precision]

    @property
    def precision_name(self) -> str:
        return PRECISIONS[self.selection.precision]

    @property
    def max_replicas(self) -> int:
        return self.presets.workshop.max_replicas

    @cached_property
    def replicas(self) -> np.ndarray:
        """Powers of two from 1 to the workshop's max_replicas."""
        return zero.replica_counts(self.max_replicas)

    @property
    def memory_bytes(self) -> float:
        """The GPU's memory as the vendor writes it, in 10⁹ B."""
        return self.gpu.memory_gb * zero.GB

    @property
    def memory_gib_bytes(self) -> float:
        """The same figure read as GiB, in bytes (80 GiB = 85.9 × 10⁹ B)."""
        return self.gpu.memory_gb * zero.GIB

    @property
    def link_bytes_per_s(self) -> float:
        """The network's speed per direction for this GPU (the GPU's own NVLink for the NVLink network)."""
        return self.network.link_bytes_per_s(self.gpu)

    weight_bytes = zero.WEIGHT_BYTES  # BF16 weights
    optimiser_bytes = zero.OPTIMISER_BYTES  # K

    @property
    def gradient_bytes(self) -> int:
        """b: the gradients are kept in the precision they are reduced in."""
        return self.grad_bytes

    @property
    def state_bytes_per_param(self) -> int:
        """2 + b + K: 16 with BF16 gradients, 18 with FP32 ones (platelib.zero)."""
        return int(zero.states_per_param(self.grad_bytes))

    @property
    def unsharded_bytes(self) -> float:
        """Every state on every GPU: (2 + b + K)·Ψ."""
        return float(zero.state_bytes(self.params, 0, 1, self.grad_bytes))

    def states_bytes(self, stage: int, replicas) -> float:
        """Model-state bytes per GPU under stage k over n replicas."""
        return float(zero.state_bytes(self.params, stage, replicas, self.grad_bytes))

    def traffic(self, stage: int, grad_bytes: int | None = None, replicas=None) -> float:
        """Bytes each GPU sends per step under stage k (default: the selection's precision; as n grows)."""
        b = self.grad_bytes if grad_bytes is None else grad_bytes
        if replicas is None:
            return float(zero.traffic_limit_bytes(self.params, stage, b))
        return float(zero.traffic_bytes(self.params, stage, b, replicas))

    latency_at = zero.LATENCY_AT  # where the prose prices NCCL's latency

    @property
    def fsdp_units(self) -> int:
        """FSDP units, one per transformer layer: each calls its own reduce-scatter and gathers."""
        return self.model.layers

    @property
    def node_gpus(self) -> int:
        """The GPUs NCCL counts as one node (NVLink steps inside it)."""
        return zero.node_gpus(self.gpu.nvlink_domain)

    @property
    def hypothetical(self) -> np.ndarray:
        """At each replica count, whether the times are over an NVLink wider than its domain (none is built)."""
        return self.network.nvlink & (self.replicas > self.node_gpus)

    def call_latency_s(self, replicas) -> float:
        """NCCL's latency of one reduce-scatter or all-gather over n GPUs."""
        return float(zero.call_latency_seconds(int(replicas), self.node_gpus))

    def latency_s(self, stage: int, replicas) -> float:
        """The latency stage k's FSDP collectives pay per step over n GPUs."""
        return float(zero.latency_seconds(stage, self.fsdp_units, int(replicas), self.node_gpus))

    def traffic_s(self, stage: int, replicas) -> float:
        """Stage k's bytes per step over n GPUs at the link speed per direction."""
        return float(zero.traffic_seconds(self.params, stage, self.grad_bytes, self.link_bytes_per_s, replicas))

    def traffic_ratio(self, stage: int, grad_bytes: int | None = None) -> float:
        """Stage k's traffic per byte of the all-reduce at the same precision."""
        return float(zero.traffic_ratio(stage, self.grad_bytes if grad_bytes is None else grad_bytes))

    def stage(self, k: int) -> StageFacts:
        """Stage k's facts (0–3)."""
        return self.stages[k]

    @cached_property
    def stages(self) -> tuple[StageFacts, ...]:
        out = []
        n = self.replicas.astype(np.float64)
        for k, label in zip(zero.STAGES, STAGES.values()):
            states = zero.state_bytes(self.params, k, n, self.grad_bytes)
            fits = states <= self.memory_bytes
            traffic = zero.traffic_bytes(self.params, k, self.grad_bytes, n)
            out.append(StageFacts(
                stage=k, label=label, states_bytes=states,
                floor_bytes=float(zero.kept_bytes(self.params, k, self.grad_bytes)),
                smallest_fitting=float(zero.smallest_replicas(self.params, k, self.memory_bytes, self.grad_bytes)),
                smallest_fitting_gib=float(zero.smallest_replicas(self.params, k, self.memory_gib_bytes,
                                                                  self.grad_bytes)),
                smallest_fitting_on_grid=int(self.replicas[np.argmax(fits)]) if fits.any() else None,
                traffic_bytes=traffic,
                traffic_s=zero.traffic_seconds(self.params, k, self.grad_bytes, self.link_bytes_per_s, n),
                traffic_ratio=self.traffic_ratio(k), traffic_limit_bytes=self.traffic(k),
                traffic_limit_s=self.traffic(k) / self.link_bytes_per_s,
                domain_traffic_s=(float(zero.traffic_seconds(self.params, k, self.grad_bytes, self.link_bytes_per_s,
                                                             self.gpu.nvlink_domain))
                                  if self.network.nvlink and self.gpu.nvlink_domain else None),
                latency_s=np.array([self.latency_s(k, m) for m in self.replicas]),
                latency_at_s=self.latency_s(k, self.latency_at),
            ))
        return tuple(out)

    @property
    def selected(self) -> StageFacts:
        """The selected stage's facts."""
        return self.stages[self.stage_index]


def facts(presets: Presets, sel: Selection) -> Facts:
    """The facts of one selection, checked against the presets and controls."""
    check(presets, sel)
    return Facts(presets=presets, selection=sel)


def default_selection(plate_folder: Path, presets: Presets) -> Selection:
    """plate.md's [default], each control missing from it taken as the first of its table."""
    given = front_matter(plate_folder).get("default", {})
    first = {"model": next(iter(presets.models)), "gpu": presets.workshop.gpu, "stage": next(iter(STAGES)),
             "precision": next(iter(PRECISIONS)), "network": next(iter(presets.networks))}
    unknown = set(given) - set(CONTROLS)
    if unknown:
        raise LookupError(f"{Path(plate_folder) / 'plate.md'}: [default] sets {', '.join(sorted(unknown))}, "
                          f"not a control of this plate ({', '.join(CONTROLS)})")
    return Selection(**{**first, **given})


def prose_context(presets: Presets, sel: Selection, plates: dict | None = None) -> dict:
    """The names plate.md's {{ }} slots may use (the engine adds cite() and its number filters): the default
    selection's facts, its GPU and network, the workshop, every preset, scenario(**ids) for another selection,
    and plates, the front matter's [plates] (the series' plates referred to, by subject)."""
    f = facts(presets, sel)
    return {"default": f, "gpu": f.gpu, "network": f.network, "workshop": presets.workshop,
            "models": presets.models, "gpus": gpus_of(presets), "networks": presets.networks,
            "scenario": lambda **choice: facts(presets, replace(sel, **choice)), "plates": dict(plates or {})}


PROSE_NAMES = ("default", "gpu", "network", "workshop", "models", "gpus", "networks", "scenario", "plates")


def facts_data(f: Facts) -> dict:
    """The facts of one selection as plain JSON: page_facts.facts of its ids under presets_data, as the page makes
    them."""
    return page_facts.facts({key: getattr(f.selection, key) for key in CONTROLS}, plain(presets_data(f.presets)))


def presets_data(presets: Presets) -> dict:
    """The presets as page_facts.facts reads them: the models, GPUs (the workshop's among them), networks
    and workshop, each table as its dataclass's fields (the catalogue's, without its batches and layouts)."""
    import dataclasses
    return {"workshop": dataclasses.asdict(presets.workshop),
            "gpus": {i: dataclasses.asdict(g) for i, g in gpus_of(presets).items()},
            "models": {i: dataclasses.asdict(m) for i, m in presets.models.items()},
            "networks": {i: dataclasses.asdict(n) for i, n in presets.networks.items()}}


def words_context(facts: list[Facts] | None = None, plates: dict | None = None) -> dict:
    """W, what page_words needs besides the facts (the page data carries the same): the plates this one refers
    to (plate.md's [plates])."""
    return {"plates": dict(plates or {})}
