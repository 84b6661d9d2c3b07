"""The presets plates share (a plate's presets.toml): the models, batches, networks and GPUs a reader chooses from,
the workshop's fixed assumptions, and their reader and checker. XIV.4 declares them; XIV.5 reads XIV.4's file."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.content import Source, belongs
from generator.schema import (MAX_CSV_ROWS, MAX_SELECTIONS, Problems, Range, fields, grid_rows, keyed, locate, quote,
                              read_toml, unknown_tables)

from platelib.buckets import MAX_LAYERS

@dataclass(frozen=True)
class Model:
    """A transformer whose every gradient is all-reduced."""

    id: str
    name: str
    params: int
    layers: int
    d_model: int
    ffn: int
    vocab: int

    @property
    def non_embedding_params(self) -> int:
        """Parameters outside the (untied) input embedding and output head."""
        return self.params - 2 * self.vocab * self.d_model


@dataclass(frozen=True)
class Batch:
    """A global batch size, in tokens per optimiser step."""

    id: str
    name: str
    tokens: int


@dataclass(frozen=True)
class Network:
    """The link each replica reduces its gradients over."""

    id: str
    name: str
    short: str
    link_gbytes_per_s: float  # for the GPU's own link, the workshop GPU's (the model takes the chosen GPU's)
    nvlink: bool = False  # the link is the chosen GPU's own (presets.toml: interconnect = true), named as it

    def link_bytes_per_s(self, gpu: "Gpu") -> float:
        """Bytes per second per direction this network gives each replica of the given GPU."""
        return (gpu.nvlink_gbytes_per_s if self.nvlink else self.link_gbytes_per_s) * 1e9


@dataclass(frozen=True)
class Gpu:
    """The accelerator every replica runs on."""

    id: str
    name: str
    peak_tflops: float
    memory_gb: float
    nvlink_gbytes_per_s: float
    nvlink_domain: int | None = None  # the most GPUs one NVLink fabric joins; beyond it NVLink is hypothetical
    nvlink_domain_name: str = ""  # what joins them: "the NVLink Switch System"
    source: str = ""  # id in sources.toml
    interconnect: str = "NVLink"  # what the words call the GPU's own link and its domain: "Infinity Fabric"


@dataclass(frozen=True)
class WorkshopSettings:
    """The workshop's fixed assumptions, as the author wrote them."""

    gpu: str
    mfu: float
    bytes_per_grad: int
    bytes_per_param_states: int
    seq_len: int
    max_replicas: int


@dataclass(frozen=True)
class Layout:
    """A published run's layout: its name and the controls' ids that select it ({control key: id}; the plate that
    offers the controls checks them)."""

    id: str
    name: str
    choices: dict[str, str]


@dataclass(frozen=True)
class Presets:
    """Everything the reader can choose, and the workshop they are evaluated in."""

    workshop: WorkshopSettings
    gpu: Gpu
    models: dict[str, Model]
    batches: dict[str, Batch]
    networks: dict[str, Network]
    gpus: dict[str, Gpu] = field(default_factory=dict)  # every GPU the reader can choose; `gpu` is the workshop's
    layouts: dict[str, Layout] = field(default_factory=dict)  # [layouts.<id>]: selections real runs used


MAX_REPLICAS = 2**20  # the page embeds every replica count; beyond this it only grows
WORKSHOP_SCHEMA = {"gpu": "text", "mfu": Range("fraction", 0.001, 1), "bytes_per_grad": "count",
                   "bytes_per_param_states": "count", "seq_len": "count", "max_replicas": "count"}
# Bounds far beyond any real accelerator or link, yet keeping every time of the model finite and printable.
TFLOPS = Range("positive", 0.001, 1_000_000, " TFLOP/s")
GIGABYTES = Range("positive", 0.001, 1_000_000, " GB")
GB_PER_S = Range("positive", 0.001, 1_000_000, " GB/s per direction")
GPU_SCHEMA = {"name": "text", "peak_tflops": TFLOPS, "memory_gb": GIGABYTES, "interconnect_gbytes_per_s": GB_PER_S,
              "interconnect_domain": "count", "interconnect_domain_name": "text", "source": "text",
              "interconnect": "text"}
GPU_OPTIONAL = {"interconnect_domain": None, "interconnect_domain_name": "", "source": "",
                "interconnect": Gpu.interconnect}
# presets.toml's keys for the GPU's own link are vendor-neutral; the NVIDIA-named keys earlier files wrote are read
# too (OLD_GPU_KEYS: old key -> new key), so those files keep building and their mistakes are named as written.
OLD_GPU_KEYS = {"nvlink_gbytes_per_s": "interconnect_gbytes_per_s", "nvlink_domain": "interconnect_domain",
                "nvlink_domain_name": "interconnect_domain_name"}
GPU_FIELDS = {"interconnect_gbytes_per_s": "nvlink_gbytes_per_s", "interconnect_domain": "nvlink_domain",
              "interconnect_domain_name": "nvlink_domain_name"}  # the Gpu fields the keys fill
GPU_READ = {**GPU_SCHEMA, **{old: GPU_SCHEMA[new] for old, new in OLD_GPU_KEYS.items()}}
GPU_READ_OPTIONAL = {**GPU_OPTIONAL, "interconnect_gbytes_per_s": None, **{old: None for old in OLD_GPU_KEYS}}
# The timeline draws a bar per layer, in the build and on the page: a count far past any model keeps both quick.
LAYERS = Range("count", 1, MAX_LAYERS, " layers")
MODEL_SCHEMA = {"name": "text", "params": "count", "layers": LAYERS, "d_model": "count", "ffn": "count",
                "vocab": "count"}
BATCH_SCHEMA = {"name": "text", "tokens": "count"}
NETWORK_SCHEMA = {"name": "text", "short": "text", "link_gbytes_per_s": GB_PER_S, "interconnect": "flag"}
# The GPU's own link (interconnect = true) may leave out its name and short name: both are then the workshop
# GPU's interconnect ("NVLink", "Infinity Fabric"). Earlier files wrote nvlink = true: still read.
NETWORK_OPTIONAL = {"link_gbytes_per_s": None, "interconnect": None, "name": None, "short": None}
NETWORK_READ = {**NETWORK_SCHEMA, "nvlink": "flag"}
NETWORK_READ_OPTIONAL = {**NETWORK_OPTIONAL, "nvlink": None}


def _gpu(ident: str, values: dict) -> Gpu | dict:
    """A Gpu from its checked keys, new or old; {"twice": {new: old}} when a key is given under both names."""
    given = values["_given"]
    twice = {new: old for old, new in OLD_GPU_KEYS.items() if old in given and new in given}
    if twice:
        return {"twice": twice}
    merged = {k: v for k, v in values.items() if k not in OLD_GPU_KEYS and k != "_given"}
    for old, new in OLD_GPU_KEYS.items():
        if values[old] is not None:
            merged[new] = values[old]
    return Gpu(id=ident, **{GPU_FIELDS.get(k, k): v for k, v in merged.items()})


def _network(ident: str, values: dict) -> Network | dict:
    """A Network from its checked keys (interconnect = true, or the old nvlink = true, is the field `nvlink`)."""
    values = dict(values)
    new, old = values.pop("interconnect"), values.pop("nvlink")
    if new is not None and old is not None:
        return {"twice": {"interconnect": "nvlink"}}
    return Network(id=ident, nvlink=bool(new or old), **values)


def declared_ids(data: dict | None) -> dict[str, list[str]]:
    """The preset ids written in presets.toml, valid or not (so one mistake is not reported twice)."""
    data = data or {}
    return {kind: list(data.get(kind)) if isinstance(data.get(kind), dict) else []
            for kind in ("models", "batches", "networks", "gpus")}


def load_presets(problems: Problems, root: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """Read root/presets.toml: the workshop, the GPU, models, batches and networks; and the ids declared."""
    path = root / "presets.toml"
    data, text = read_toml(problems, path)
    if data is None:
        return None, None
    return _presets(problems, path, text, data), declared_ids(data)


def _presets(problems: Problems, path: Path, text: str, data: dict) -> Presets | None:
    """Check the tables of presets.toml into Presets."""
    hints = belongs({"[workshop]": WORKSHOP_SCHEMA, "[gpus.<id>]": GPU_SCHEMA, "[models.<id>]": MODEL_SCHEMA,
                      "[batches.<id>]": BATCH_SCHEMA, "[networks.<id>]": NETWORK_SCHEMA})
    unknown_tables(problems, path, text, data, ("workshop", "gpus", "models", "batches", "networks", "layouts"),
                   hints)
    workshop = None
    if "workshop" not in data:
        problems.add(path, None, "missing table [workshop] (gpu, mfu, bytes_per_grad, bytes_per_param_states, "
                                 "seq_len, max_replicas)")
    else:
        workshop = fields(problems, path, text, ("workshop",), data["workshop"], WORKSHOP_SCHEMA,
                          label="[workshop]", hints=hints)
    tables = data.get("gpus") if isinstance(data.get("gpus"), dict) else {}
    given = {i: set(t) for i, t in tables.items() if isinstance(t, dict)}  # which spelling each GPU wrote
    gpus = _read_twice(problems, path, text, "gpu",
                       keyed(problems, path, text, data, "gpus", GPU_READ,
                             lambda i, v: _gpu(i, {**v, "_given": given.get(i, set())}), optional=GPU_READ_OPTIONAL))
    models = keyed(problems, path, text, data, "models", MODEL_SCHEMA, lambda i, v: Model(id=i, **v))
    batches = keyed(problems, path, text, data, "batches", BATCH_SCHEMA, lambda i, v: Batch(id=i, **v))
    networks = _read_twice(problems, path, text, "network",
                           keyed(problems, path, text, data, "networks", NETWORK_READ, _network,
                                 optional=NETWORK_READ_OPTIONAL, unique=()))
    bad_network = False
    for ident, g in list(gpus.items()):
        if g.nvlink_gbytes_per_s is None:
            problems.add(path, locate(text, ("gpus", ident)),
                         f"gpu {quote(ident)}: missing key {quote('interconnect_gbytes_per_s')}")
            del gpus[ident]
    for ident, net in list(networks.items()):
        if (net.link_gbytes_per_s is None) == (not net.nvlink):  # exactly one of the two
            problems.add(path, locate(text, ("networks", ident)),
                         f"network {quote(ident)}: give either link_gbytes_per_s (GB/s per replica, per direction) "
                         f"or interconnect = true (the chosen GPU's own link), " +
                         ("not both" if net.nvlink else "one is missing"))
            del networks[ident]
            bad_network = True
        elif not net.nvlink and (net.name is None or net.short is None):
            problems.add(path, locate(text, ("networks", ident)),
                         f"network {quote(ident)}: missing key {quote('name' if net.name is None else 'short')} "
                         f"(only the GPU's own link, interconnect = true, may leave its names to the GPU)")
            del networks[ident]
            bad_network = True
    ok = workshop is not None and not bad_network
    for ident, m in list(models.items()):
        embedding = 2 * m.vocab * m.d_model
        if m.params <= embedding:
            problems.add(path, locate(text, ("models", ident, "params")),
                         f"model {quote(ident)}: params {m.params:,} must exceed the embedding and output "
                         f"head, 2 · vocab · d_model = {embedding:,}")
            ok = False
    if workshop is not None:
        n = workshop["max_replicas"]
        if n & (n - 1) or n > MAX_REPLICAS:
            problems.add(path, locate(text, ("workshop", "max_replicas")),
                         f"[workshop]: max_replicas must be a power of two from 1 to {MAX_REPLICAS:,} "
                         f"(the replica axis runs 1, 2, 4, …), got {n:,}")
            ok = False
        declared = data.get("gpus") if isinstance(data.get("gpus"), dict) else {}
        if workshop["gpu"] not in gpus:
            if workshop["gpu"] not in declared:  # a declared GPU with mistakes is reported already
                problems.add(path, locate(text, ("workshop", "gpu")),
                             f"[workshop]: gpu {quote(workshop['gpu'])} is not a [gpus.<id>] table "
                             f"(known: {', '.join(declared) or 'none'})")
            ok = False
    if ok and models and batches and networks:
        # The page offers every model × batch × network × GPU; the site's CSV has a row per model, batch, network
        # and replica count (under the workshop's GPU and options). Nothing else grows with their product.
        counts = (len(models), len(batches), len(networks), len(gpus))
        selections = grid_rows(*counts)
        replicas = workshop["max_replicas"].bit_length()
        rows = grid_rows(*counts[:3], replicas)
        gpus_text = f"{counts[3]:,} GPU{'s' if counts[3] != 1 else ''}"
        if selections > MAX_SELECTIONS:
            problems.add(path, locate(text, ("models",)),
                         f"{selections:,} selections ({counts[0]:,} models × {counts[1]:,} batches × {counts[2]:,} "
                         f"networks × {gpus_text}), more than the {MAX_SELECTIONS:,} a page can offer; remove presets")
            ok = False
        elif rows > MAX_CSV_ROWS:
            problems.add(path, locate(text, ("workshop", "max_replicas")),
                         f"the data file would have {rows:,} rows ({counts[0]:,} models × {counts[1]:,} batches × "
                         f"{counts[2]:,} networks × {replicas} replica counts), more than the {MAX_CSV_ROWS:,} it "
                         f"can hold; remove presets or lower max_replicas")
            ok = False
    if not (ok and models and batches and networks):
        return None
    gpu = gpus[workshop["gpu"]]
    networks = {i: replace(n, link_gbytes_per_s=gpu.nvlink_gbytes_per_s, name=n.name or gpu.interconnect,
                           short=n.short or gpu.interconnect) if n.nvlink else n
                for i, n in networks.items()}
    if not _distinct(problems, path, text, networks):
        return None
    return Presets(workshop=WorkshopSettings(**workshop), gpu=gpu, models=models, batches=batches,
                   networks=networks, gpus=gpus, layouts=layouts(problems, path, text, data))


def layouts(problems: Problems, path: Path, text: str, data: dict) -> dict[str, Layout]:
    """[layouts.<id>]: each a name and control ids, all text (which ids a control offers is the plate's to check)."""
    out = {}
    tables = data.get("layouts", {})
    if not isinstance(tables, dict):
        problems.add(path, locate(text, ("layouts",)), "[layouts] must be tables [layouts.<id>]")
        return out
    for ident, table in tables.items():
        if not isinstance(table, dict) or not isinstance(table.get("name"), str) or \
                not all(isinstance(v, str) for v in table.values()):
            problems.add(path, locate(text, ("layouts", ident)),
                         f"layout {quote(ident)}: a name and the controls' ids, each a string "
                         f'(name = "…", model = "…", replica_gpus = "128")')
            continue
        out[ident] = Layout(id=ident, name=table["name"], choices={k: v for k, v in table.items() if k != "name"})
    return out


def _read_twice(problems: Problems, path: Path, text: str, one: str, read: dict) -> dict:
    """The tables read; those that give a key under both its new and its old name reported and left out."""
    out = {}
    for ident, made in read.items():
        if isinstance(made, dict):
            for new, old in made["twice"].items():
                problems.add(path, locate(text, (f"{one}s", ident, old)),
                             f"{one} {quote(ident)}: {old} is the old name of {new}; give only {new}")
        else:
            out[ident] = made
    return out


def _distinct(problems: Problems, path: Path, text: str, networks: dict[str, Network]) -> bool:
    """No two networks share a name or a short name (after the GPU's own link has taken its names)."""
    seen: dict[tuple[str, str], str] = {}
    ok = True
    for ident, net in networks.items():
        for name in ("name", "short"):
            key = (name, getattr(net, name).strip().casefold())
            if key in seen:
                problems.add(path, locate(text, ("networks", ident, name)) or locate(text, ("networks", ident)),
                             f"network {quote(ident)}: {name} {quote(getattr(net, name))} is also the {name} of "
                             f"network {quote(seen[key])}; readers could not tell them apart")
                ok = False
            else:
                seen[key] = ident
    return ok


def check_gpu_sources(problems: Problems, path: Path, presets: Presets, sources: dict[str, Source]) -> None:
    """A GPU's `source` must name a table of sources.toml."""
    text = path.read_text(encoding="utf-8")
    for gpu in presets.gpus.values():
        if gpu.source and gpu.source not in sources:
            problems.add(path, locate(text, ("gpus", gpu.id, "source")),
                         f"gpu {quote(gpu.id)}: source {quote(gpu.source)} is not in sources.toml "
                         f"(known: {', '.join(sources) or 'none'})")
