"""The series catalogue (docs/plates.md, "The series catalogue"): the models, GPUs, networks, global batches and
replica layouts the plates of a series offer, and the workshop's fixed assumptions. They are written once, in the
series' series.toml beside the plates' folders; each plate's own presets.toml is laid over them, adding entries or
replacing one by its id. Read and checked here, each mistake at its own file and line; the engine reads series.toml's
[site] alone (SITE_TABLES) and none of these tables."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.api import (
    MAX_CSV_ROWS, MAX_SELECTIONS, Problems, Range, SINGULAR, Source, belongs, fields, grid_rows, keyed, locate,
    quote, read_toml, unknown_tables)

from platelib.buckets import MAX_LAYERS

CATALOGUE = "series.toml"  # the series' file, beside the plates' folders: the catalogue, and the engine's [site]
PRESETS = "presets.toml"  # a plate's own file: its own tables, and entries it adds to the catalogue's or replaces
SITE_TABLES = ("site",)  # series.toml's tables that are the engine's (generator/source/volume.py), not the catalogue's
KEYED = ("gpus", "models", "batches", "networks", "layouts")  # tables of entries, [gpus.<id>], …
TABLES = ("workshop", *KEYED)


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
    layout: str = ""  # the [layouts.<id>] its published run used, if the catalogue gives one

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
    nvlink: bool = False  # the link is the chosen GPU's own (interconnect = true), named as it

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
class Layout:
    """How one replica is laid over GPUs: tensor parallelism t times pipeline parallelism p (platelib.layout)."""

    id: str
    name: str
    tensor: int
    pipeline: int

    @property
    def gpus(self) -> int:
        """GPUs one replica spans: t·p."""
        return self.tensor * self.pipeline


@dataclass(frozen=True)
class WorkshopSettings:
    """The workshop's fixed assumptions, as the author wrote them."""

    gpu: str
    mfu: float
    bytes_per_grad: int
    seq_len: int
    max_replicas: int  # the replica axis's last count for one-GPU replicas, and the most GPUs any selection draws


@dataclass(frozen=True)
class Presets:
    """Everything the reader can choose, and the workshop they are evaluated in."""

    workshop: WorkshopSettings
    gpu: Gpu
    models: dict[str, Model]
    batches: dict[str, Batch]
    networks: dict[str, Network]
    gpus: dict[str, Gpu] = field(default_factory=dict)  # every GPU the reader can choose; `gpu` is the workshop's
    layouts: dict[str, Layout] = field(default_factory=dict)  # [layouts.<id>]: replicas over t × p GPUs


MAX_REPLICAS = 2**20  # the page embeds every replica count; beyond this it only grows
WORKSHOP_SCHEMA = {"gpu": "text", "mfu": Range("fraction", 0.001, 1), "bytes_per_grad": "count", "seq_len": "count",
                   "max_replicas": "count"}
# Keys earlier files wrote that the catalogue no longer reads, and why (an unknown key's hint).
WORKSHOP_GONE = {"bytes_per_param_states": "model-state bytes now follow the gradient precision, 2 + b + 12 per "
                                           "parameter (platelib.zero); remove it"}
# Bounds far beyond any real accelerator or link, yet keeping every time of the model finite and printable.
TFLOPS = Range("positive", 0.001, 1_000_000, " TFLOP/s")
GIGABYTES = Range("positive", 0.001, 1_000_000, " GB")
GB_PER_S = Range("positive", 0.001, 1_000_000, " GB/s per direction")
GPU_SCHEMA = {"name": "text", "peak_tflops": TFLOPS, "memory_gb": GIGABYTES, "interconnect_gbytes_per_s": GB_PER_S,
              "interconnect_domain": "count", "interconnect_domain_name": "text", "source": "text",
              "interconnect": "text"}
GPU_OPTIONAL = {"interconnect_domain": None, "interconnect_domain_name": "", "source": "",
                "interconnect": Gpu.interconnect}
# The keys for the GPU's own link are vendor-neutral; the NVIDIA-named keys earlier files wrote are read too
# (OLD_GPU_KEYS: old key -> new key), so those files keep building and their mistakes are named as written.
OLD_GPU_KEYS = {"nvlink_gbytes_per_s": "interconnect_gbytes_per_s", "nvlink_domain": "interconnect_domain",
                "nvlink_domain_name": "interconnect_domain_name"}
GPU_FIELDS = {"interconnect_gbytes_per_s": "nvlink_gbytes_per_s", "interconnect_domain": "nvlink_domain",
              "interconnect_domain_name": "nvlink_domain_name"}  # the Gpu fields the keys fill
GPU_READ = {**GPU_SCHEMA, **{old: GPU_SCHEMA[new] for old, new in OLD_GPU_KEYS.items()}}
GPU_READ_OPTIONAL = {**GPU_OPTIONAL, "interconnect_gbytes_per_s": None, **{old: None for old in OLD_GPU_KEYS}}
# The timeline draws a bar per layer, in the build and on the page: a count far past any model keeps both quick.
LAYERS = Range("count", 1, MAX_LAYERS, " layers")
MODEL_SCHEMA = {"name": "text", "params": "count", "layers": LAYERS, "d_model": "count", "ffn": "count",
                "vocab": "count", "layout": "text"}
MODEL_OPTIONAL = {"layout": ""}
BATCH_SCHEMA = {"name": "text", "tokens": "count"}
NETWORK_SCHEMA = {"name": "text", "short": "text", "link_gbytes_per_s": GB_PER_S, "interconnect": "flag"}
# The GPU's own link (interconnect = true) may leave out its name and short name: both are then the workshop
# GPU's interconnect ("NVLink", "Infinity Fabric"). Earlier files wrote nvlink = true: still read.
NETWORK_OPTIONAL = {"link_gbytes_per_s": None, "interconnect": None, "name": None, "short": None}
NETWORK_READ = {**NETWORK_SCHEMA, "nvlink": "flag"}
NETWORK_READ_OPTIONAL = {**NETWORK_OPTIONAL, "nvlink": None}
# A replica spans t·p GPUs: far past the largest layouts run (Llama 3 405B's 8 × 16), and a whole count each.
PARALLEL = Range("count", 1, 4096)
LAYOUT_SCHEMA = {"name": "text", "tensor": PARALLEL, "pipeline": PARALLEL}
LAYOUT_OPTIONAL = {"name": None}
SCHEMAS = {"gpus": GPU_READ, "models": MODEL_SCHEMA, "batches": BATCH_SCHEMA, "networks": NETWORK_READ,
           "layouts": LAYOUT_SCHEMA}


def _one(table: str) -> str:
    """A table's entry as messages name it: "model", "batch", "layout"."""
    return SINGULAR.get(table, table[:-1])


def layout_name(tensor: int, pipeline: int) -> str:
    """A layout's name from its degrees, as the controls and words write it: "TP 8 × PP 16", "TP 8", "one GPU"."""
    parts = ([f"TP {tensor}"] if tensor > 1 else []) + ([f"PP {pipeline}"] if pipeline > 1 else [])
    return " × ".join(parts) or "one GPU"


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


def _layout(ident: str, values: dict) -> Layout:
    """A Layout from its checked keys, named from its degrees where the file gives no name."""
    name = values["name"] or layout_name(values["tensor"], values["pipeline"])
    return Layout(id=ident, name=name, tensor=values["tensor"], pipeline=values["pipeline"])


@dataclass
class File:
    """One TOML file read for the presets: its path, text and tables (data None when it cannot be read)."""

    path: Path
    text: str = ""
    data: dict | None = None

    def line(self, *keys: str) -> int | None:
        """The line of a table or key in it."""
        return locate(self.text, keys)


@dataclass
class Read:
    """What a plate's presets are read from: the series' catalogue and the plate's own presets.toml (either may be
    absent), the presets made of them, the ids each table declares, and the plate's own tables as TOML gives them."""

    catalogue: File | None
    own_file: File | None
    readable: bool = True  # every file there is parsed
    presets: Presets | None = None
    ids: dict[str, list[str]] = field(default_factory=dict)
    own: dict = field(default_factory=dict)
    origin: dict[tuple[str, str], File] = field(default_factory=dict)  # (table, id): the file its entry is read from

    def at(self, table: str, ident: str, *keys: str) -> tuple[Path, int | None]:
        """(file, line) of an entry, or of one of its keys: in the file the entry was read from."""
        file = self.origin.get((table, ident)) or self.own_file or self.catalogue
        return file.path, file.line(table, ident, *keys) or file.line(table, ident)


def catalogue_path(root: Path) -> Path:
    """The series' catalogue a plate reads: series.toml in the folder that holds the plate's folder (not resolved,
    so that a plate linked into a series reads that series'); relative where root is, so that messages name it as
    they name the plate's own files."""
    root = Path(root)
    if root.name in ("", ".", ".."):
        return Path(os.path.abspath(root)).parent / CATALOGUE
    return root.parent / CATALOGUE


def _file(problems: Problems, path: Path, known: tuple[str, ...], hints: dict[str, str]) -> File:
    """A presets file read and its top-level names checked (data None on a mistake that stops the reading)."""
    data, text = read_toml(problems, path)
    if data is not None:
        unknown_tables(problems, path, text, data, known, hints)
    return File(path, text, data)


def read(problems: Problems, root: Path, own: tuple[str, ...] = ()) -> Read:
    """A plate's presets: the series' catalogue (series.toml beside root) with root/presets.toml laid over it; own
    names the tables of presets.toml that are the plate's, left for it to read. Each mistake at its file and line."""
    root = Path(root)
    hints = belongs({"[workshop]": WORKSHOP_SCHEMA, "[gpus.<id>]": GPU_SCHEMA, "[models.<id>]": MODEL_SCHEMA,
                     "[batches.<id>]": BATCH_SCHEMA, "[networks.<id>]": NETWORK_SCHEMA,
                     "[layouts.<id>]": LAYOUT_SCHEMA})
    path = catalogue_path(root)
    catalogue = _file(problems, path, TABLES + SITE_TABLES, hints) if os.path.lexists(path) else None
    own_path = root / PRESETS
    # a plate with a catalogue beside it may have no presets.toml; without one, presets.toml holds every table
    if catalogue is None and not os.path.lexists(own_path):
        problems.add(own_path, None, f"file is missing: a plate reads its models, GPUs and networks from the series' "
                                     f"{CATALOGUE} beside its folder ({path}), or from a {PRESETS} of its own")
        return Read(None, None, readable=False)
    mine = _file(problems, own_path, TABLES + own, hints) if os.path.lexists(own_path) else None
    made = Read(catalogue, mine)
    files = [f for f in (catalogue, mine) if f is not None]
    made.ids = {table: list(dict.fromkeys(i for f in files if isinstance(f.data, dict)
                                          and isinstance(f.data.get(table), dict) for i in f.data[table]))
                for table in KEYED}
    made.own = {t: mine.data[t] for t in own if mine is not None and isinstance(mine.data, dict) and t in mine.data}
    if any(f.data is None for f in files):
        made.readable = False
        return made
    made.presets = _presets(problems, made, files)
    return made


def load_presets(problems: Problems, root: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """The engine's load_presets hook for a plate that offers the catalogue alone: (presets, {table: ids})."""
    made = read(problems, root)
    return made.presets, made.ids if made.readable else None


def _entries(problems: Problems, made: Read, files: list[File], table: str, make, optional: dict | None = None,
             unique: tuple[str, ...] = ("name",), required: bool = True) -> dict:
    """[table.<id>] of every file, each checked in its own file; a later file's entry replaces an earlier one's of
    the same id, in the earlier one's place. A required table no file gives is a mistake."""
    out: dict = {}
    for f in files:
        if table in f.data:
            for ident, value in keyed(problems, f.path, f.text, f.data, table, SCHEMAS[table], make, optional,
                                      unique=unique).items():
                out[ident] = value
                made.origin[(table, ident)] = f
    if required and not any(table in f.data for f in files):
        problems.add(files[0].path, None, f"missing table [{table}.<id>]: at least one {_one(table)} is needed (in "
                                          f"{CATALOGUE}, for the whole series, or in a plate's {PRESETS})")
    return out


def _distinct_across(problems: Problems, made: Read, table: str, entries: dict, names: tuple[str, ...]) -> dict:
    """Entries whose names another file's entry already gives left out, each reported at its line (within one file
    keyed() has checked them)."""
    seen: dict[tuple[str, str], str] = {}
    out = {}
    for ident, entry in entries.items():
        clash = False
        for name in names:
            value = getattr(entry, name)
            if value is None:
                continue
            key = (name, str(value).strip().casefold())
            if key in seen and made.origin[(table, seen[key])] is not made.origin[(table, ident)]:
                path, line = made.at(table, ident, name)
                problems.add(path, line, f"{_one(table)} {quote(ident)}: {name} "
                                         f"{quote(str(value))} is also the {name} of {quote(seen[key])} in "
                                         f"{made.origin[(table, seen[key])].path.name}; readers could not tell them "
                                         f"apart")
                clash = True
            seen.setdefault(key, ident)
        if not clash:
            out[ident] = entry
    return out


def _workshop(problems: Problems, files: list[File]) -> dict | None:
    """[workshop], the catalogue's with each key a plate's presets.toml gives in its place, each checked in its file."""
    optional = {name: None for name in WORKSHOP_SCHEMA}
    merged: dict = {}
    ok = True
    for f in files:
        if "workshop" in f.data:
            values = fields(problems, f.path, f.text, ("workshop",), f.data["workshop"], WORKSHOP_SCHEMA, optional,
                            label="[workshop]", hints=WORKSHOP_GONE)
            if values is None:
                ok = False
                continue
            merged.update({k: v for k, v in values.items() if v is not None})
    given = [f for f in files if "workshop" in f.data]
    if not given:
        problems.add(files[0].path, None, f"missing table [workshop] ({', '.join(WORKSHOP_SCHEMA)}), in {CATALOGUE} "
                                          f"for the whole series")
        return None
    missing = [name for name in WORKSHOP_SCHEMA if name not in merged]
    if ok and missing:
        problems.add(given[0].path, given[0].line("workshop"),
                     f"[workshop]: missing key{'s' if len(missing) > 1 else ''} {', '.join(map(quote, missing))}")
        return None
    return merged if ok else None


def _presets(problems: Problems, made: Read, files: list[File]) -> Presets | None:
    """Check the tables of the files into Presets."""
    workshop = _workshop(problems, files)
    given = {}  # which spelling each GPU wrote, by file
    for f in files:
        tables = f.data.get("gpus") if isinstance(f.data.get("gpus"), dict) else {}
        given.update({i: set(t) for i, t in tables.items() if isinstance(t, dict)})
    gpus = _read_twice(problems, made, "gpu", _entries(
        problems, made, files, "gpus", lambda i, v: _gpu(i, {**v, "_given": given.get(i, set())}), GPU_READ_OPTIONAL))
    models = _entries(problems, made, files, "models", lambda i, v: Model(id=i, **v), MODEL_OPTIONAL)
    batches = _entries(problems, made, files, "batches", lambda i, v: Batch(id=i, **v))
    networks = _read_twice(problems, made, "network", _entries(problems, made, files, "networks", _network,
                                                               NETWORK_READ_OPTIONAL, unique=()))
    layouts = _entries(problems, made, files, "layouts", _layout, LAYOUT_OPTIONAL, unique=(), required=False)
    gpus = _distinct_across(problems, made, "gpus", gpus, ("name",))
    models = _distinct_across(problems, made, "models", models, ("name",))
    batches = _distinct_across(problems, made, "batches", batches, ("name",))
    layouts = _distinct_across(problems, made, "layouts", layouts, ("name",))
    bad = False
    for ident, g in list(gpus.items()):
        if g.nvlink_gbytes_per_s is None:
            problems.add(*made.at("gpus", ident), f"gpu {quote(ident)}: missing key {quote('interconnect_gbytes_per_s')}")
            del gpus[ident]
    for ident, net in list(networks.items()):
        if (net.link_gbytes_per_s is None) == (not net.nvlink):  # exactly one of the two
            problems.add(*made.at("networks", ident),
                         f"network {quote(ident)}: give either link_gbytes_per_s (GB/s per replica, per direction) "
                         f"or interconnect = true (the chosen GPU's own link), " +
                         ("not both" if net.nvlink else "one is missing"))
            del networks[ident]
            bad = True
        elif not net.nvlink and (net.name is None or net.short is None):
            problems.add(*made.at("networks", ident),
                         f"network {quote(ident)}: missing key {quote('name' if net.name is None else 'short')} "
                         f"(only the GPU's own link, interconnect = true, may leave its names to the GPU)")
            del networks[ident]
            bad = True
    ok = workshop is not None and not bad
    for ident, m in list(models.items()):
        embedding = 2 * m.vocab * m.d_model
        if m.params <= embedding:
            problems.add(*made.at("models", ident, "params"),
                         f"model {quote(ident)}: params {m.params:,} must exceed the embedding and output "
                         f"head, 2 · vocab · d_model = {embedding:,}")
            ok = False
        if m.layout and m.layout not in layouts:
            if m.layout not in made.ids["layouts"]:  # a declared layout with mistakes is reported already
                problems.add(*made.at("models", ident, "layout"),
                             f"model {quote(ident)}: layout {quote(m.layout)} is not a [layouts.<id>] table "
                             f"(known: {', '.join(made.ids['layouts']) or 'none'})")
            ok = False
    if workshop is not None:
        ok = _check_workshop(problems, made, files, workshop, gpus) and ok
    if ok and models and batches and networks:
        ok = _check_sizes(problems, made, files, workshop, models, batches, networks, gpus)
    if not (ok and models and batches and networks):
        return None
    gpu = gpus[workshop["gpu"]]
    networks = {i: replace(n, link_gbytes_per_s=gpu.nvlink_gbytes_per_s, name=n.name or gpu.interconnect,
                           short=n.short or gpu.interconnect) if n.nvlink else n
                for i, n in networks.items()}
    if not _distinct(problems, made, networks):
        return None
    return Presets(workshop=WorkshopSettings(**workshop), gpu=gpu, models=models, batches=batches,
                   networks=networks, gpus=gpus, layouts=layouts)


def _workshop_at(files: list[File], key: str) -> tuple[Path, int | None]:
    """Where a [workshop] key is written: the last file that gives it (its value is the one read)."""
    for f in reversed(files):
        if isinstance(f.data.get("workshop"), dict) and key in f.data["workshop"]:
            return f.path, f.line("workshop", key)
    return files[0].path, files[0].line("workshop")


def _check_workshop(problems: Problems, made: Read, files: list[File], workshop: dict, gpus: dict) -> bool:
    """The replica axis's end is a power of two; the workshop's GPU is one of the GPUs."""
    ok = True
    n = workshop["max_replicas"]
    if n & (n - 1) or n > MAX_REPLICAS:
        problems.add(*_workshop_at(files, "max_replicas"),
                     f"[workshop]: max_replicas must be a power of two from 1 to {MAX_REPLICAS:,} "
                     f"(the replica axis runs 1, 2, 4, …), got {n:,}")
        ok = False
    if workshop["gpu"] not in gpus:
        if workshop["gpu"] not in made.ids["gpus"]:  # a declared GPU with mistakes is reported already
            problems.add(*_workshop_at(files, "gpu"),
                         f"[workshop]: gpu {quote(workshop['gpu'])} is not a [gpus.<id>] table "
                         f"(known: {', '.join(made.ids['gpus']) or 'none'})")
        ok = False
    return ok


def _check_sizes(problems: Problems, made: Read, files: list[File], workshop: dict, models: dict, batches: dict,
                 networks: dict, gpus: dict) -> bool:
    """The page offers every model × batch × network × GPU; the site's CSV has a row per model, batch, network and
    replica count (under the workshop's GPU and options). Nothing else grows with their product."""
    counts = (len(models), len(batches), len(networks), len(gpus))
    selections = grid_rows(*counts)
    replicas = workshop["max_replicas"].bit_length()
    rows = grid_rows(*counts[:3], replicas)
    gpus_text = f"{counts[3]:,} GPU{'s' if counts[3] != 1 else ''}"
    if selections > MAX_SELECTIONS:
        problems.add(*made.at("models", next(iter(models))),
                     f"{selections:,} selections ({counts[0]:,} models × {counts[1]:,} batches × {counts[2]:,} "
                     f"networks × {gpus_text}), more than the {MAX_SELECTIONS:,} a page can offer; remove presets")
        return False
    if rows > MAX_CSV_ROWS:
        problems.add(*_workshop_at(files, "max_replicas"),
                     f"the data file would have {rows:,} rows ({counts[0]:,} models × {counts[1]:,} batches × "
                     f"{counts[2]:,} networks × {replicas} replica counts), more than the {MAX_CSV_ROWS:,} it "
                     f"can hold; remove presets or lower max_replicas")
        return False
    return True


def _read_twice(problems: Problems, made: Read, one: str, read_: dict) -> dict:
    """The tables read; those that give a key under both its new and its old name reported and left out."""
    out = {}
    for ident, value in read_.items():
        if isinstance(value, dict):
            for new, old in value["twice"].items():
                problems.add(*made.at(f"{one}s", ident, old),
                             f"{one} {quote(ident)}: {old} is the old name of {new}; give only {new}")
        else:
            out[ident] = value
    return out


def _distinct(problems: Problems, made: Read, networks: dict[str, Network]) -> bool:
    """No two networks share a name or a short name (after the GPU's own link has taken its names)."""
    seen: dict[tuple[str, str], str] = {}
    ok = True
    for ident, net in networks.items():
        for name in ("name", "short"):
            key = (name, getattr(net, name).strip().casefold())
            if key in seen:
                problems.add(*made.at("networks", ident, name),
                             f"network {quote(ident)}: {name} {quote(getattr(net, name))} is also the {name} of "
                             f"network {quote(seen[key])}; readers could not tell them apart")
                ok = False
            else:
                seen[key] = ident
    return ok


def check_gpu_sources(problems: Problems, made: Read, sources: dict[str, Source]) -> None:
    """A GPU's `source` must name a table of the plate's sources.toml (at the GPU's line, in its file)."""
    if made.presets is None:
        return
    for gpu in made.presets.gpus.values():
        if gpu.source and gpu.source not in sources:
            problems.add(*made.at("gpus", gpu.id, "source"),
                         f"gpu {quote(gpu.id)}: source {quote(gpu.source)} is not in sources.toml "
                         f"(known: {', '.join(sources) or 'none'})")
