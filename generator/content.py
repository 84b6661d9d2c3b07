"""Read content/ into validated dataclasses, checked by schema.py: every mistake as `file, line N: …`."""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .model import MAX_LAYERS
from .schema import (MAX_CSV_ROWS, MAX_ENTRIES, MAX_SELECTIONS, Problems, Range, describe_value, fields, grid_rows,
                     keyed, locate, quote, read_text, read_toml, unknown_tables)

FIGURES_MARK = "[[figures]]"
FRONT_MATTER_FENCE = "---"


@dataclass(frozen=True)
class Source:
    """A work cited by the plate."""

    id: str
    authors: str
    title: str
    venue: str
    url: str
    label: str
    note: str = ""


@dataclass(frozen=True)
class Term:
    """A glossary entry, linked from its first use in the prose."""

    id: str
    name: str
    definition: str
    matches: tuple[str, ...] = ()


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
    link_gbytes_per_s: float  # for the NVLink network, the workshop GPU's NVLink (the model takes the chosen GPU's)
    nvlink: bool = False  # the link is the chosen GPU's NVLink

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
class Presets:
    """Everything the reader can choose, and the workshop they are evaluated in."""

    workshop: WorkshopSettings
    gpu: Gpu
    models: dict[str, Model]
    batches: dict[str, Batch]
    networks: dict[str, Network]
    gpus: dict[str, Gpu] = field(default_factory=dict)  # every GPU the reader can choose; `gpu` is the workshop's


@dataclass(frozen=True)
class Selection:
    """One choice of model, global batch and network, by preset id, and of the options beyond the workshop
    (facts.OPTIONS; each defaults to the workshop's: its GPU, whole-step overlap, BF16, flat ring, no sharding)."""

    model: str
    batch: str
    network: str
    gpu: str = ""  # "" is the workshop's GPU
    overlap: str = "step"
    precision: str = "bf16"
    topology: str = "flat"
    sharding: str = "none"
    bucket: str = "default"  # DDP's bucket_cap_mb on the real cluster (facts.CLUSTER_OPTIONS): left unset
    micro: str = "1"  # micro-batches per step (no_sync on all but the last)


@dataclass(frozen=True)
class Prose:
    """A piece of Markdown with fact slots, and where it starts in its file."""

    text: str
    path: Path
    first_line: int


@dataclass(frozen=True)
class Plate:
    """The front matter and prose of the plate."""

    volume: str
    volume_title: str
    plate: int
    plates_in_volume: int
    title: str
    deck: str
    keywords: tuple[str, ...]
    takeaway: str
    default: Selection
    before_figures: Prose
    after_figures: Prose
    base_url: str = ""
    data_file: str = "data.csv"
    labels: dict = dataclasses.field(default_factory=lambda: dict(LABELS))
    plates: dict = dataclasses.field(default_factory=dict)  # {subject: "XIV.5"}: the plates this one refers to


@dataclass(frozen=True)
class Content:
    """All the content of the plate, validated."""

    root: Path
    plate: Plate
    presets: Presets
    terms: dict[str, Term]
    sources: dict[str, Source]


# --- the files -----------------------------------------------------------------------------------

MAX_REPLICAS = 2**20  # the page embeds every replica count; beyond this it only grows
WORKSHOP_SCHEMA = {"gpu": "text", "mfu": Range("fraction", 0.001, 1), "bytes_per_grad": "count",
                   "bytes_per_param_states": "count", "seq_len": "count", "max_replicas": "count"}
# Bounds far beyond any real accelerator or link, yet keeping every time of the model finite and printable.
TFLOPS = Range("positive", 0.001, 1_000_000, " TFLOP/s")
GIGABYTES = Range("positive", 0.001, 1_000_000, " GB")
GB_PER_S = Range("positive", 0.001, 1_000_000, " GB/s per direction")
GPU_SCHEMA = {"name": "text", "peak_tflops": TFLOPS, "memory_gb": GIGABYTES, "nvlink_gbytes_per_s": GB_PER_S,
              "nvlink_domain": "count", "nvlink_domain_name": "text", "source": "text", "interconnect": "text"}
GPU_OPTIONAL = {"nvlink_domain": None, "nvlink_domain_name": "", "source": "", "interconnect": Gpu.interconnect}
# The timeline draws a bar per layer, in the build and on the page: a count far past any model keeps both quick.
LAYERS = Range("count", 1, MAX_LAYERS, " layers")
MODEL_SCHEMA = {"name": "text", "params": "count", "layers": LAYERS, "d_model": "count", "ffn": "count",
                "vocab": "count"}
BATCH_SCHEMA = {"name": "text", "tokens": "count"}
NETWORK_SCHEMA = {"name": "text", "short": "text", "link_gbytes_per_s": GB_PER_S, "nvlink": "flag"}
NETWORK_OPTIONAL = {"link_gbytes_per_s": None, "nvlink": False}
TERM_SCHEMA = {"name": "text", "definition": "text", "matches": "texts"}
SOURCE_SCHEMA = {"authors": "text", "title": "text", "venue": "text", "url": "url", "label": "text", "note": "text"}
FRONT_MATTER_SCHEMA = {"volume": "text", "volume_title": "text", "plate": "count", "plates_in_volume": "count",
                       "title": "text", "deck": "text", "keywords": "texts", "takeaway": "text", "default": "table",
                       "base_url": "url", "data_file": "text", "labels": "table", "plates": "table"}
# base_url: where the site is published (canonical link, previews, sitemap); data_file: the CSV's name in the
# site (else the title's slug); labels: the page's fixed texts, each replaceable; plates: the series' plates this one
# refers to, by subject (sharding = "XIV.5"), which the readout names.
FRONT_MATTER_OPTIONAL = {"base_url": "", "data_file": "", "labels": {}, "plates": {}}
MAX_DATA_FILE = 100  # characters of the CSV's name (its PDFs add a few): far below any file system's limit
LABELS = {"skip": "Skip to the figures", "figure_data": "in words and numbers",
          "download": "Download the data (CSV)", "download_selection": "this selection's numbers (CSV)",
          "terms": "Terms", "sources": "Sources", "takeaway": "Takeaway"}
LABELS_SCHEMA = {key: "text" for key in LABELS}
# [default]: the page's first selection, by id; any control may be set (facts.OPTIONS and CLUSTER_OPTIONS name the
# allowed ids, presets.toml the GPUs), the rest keep the workshop's (Selection's own defaults).
DEFAULT_CONTROLS = ("gpu", "overlap", "precision", "topology", "sharding", "bucket", "micro")
DEFAULT_SCHEMA = {"model": "text", "batch": "text", "network": "text", **{key: "text" for key in DEFAULT_CONTROLS}}
DEFAULT_OPTIONAL = {key: getattr(Selection, key) for key in DEFAULT_CONTROLS}


def _belongs(schemas: dict[str, dict[str, str]]) -> dict[str, str]:
    """{key: 'it belongs in [table]'} for keys written at the wrong level."""
    hints: dict[str, str] = {}
    for table, schema in schemas.items():
        for key in schema:
            hints.setdefault(key, f"it belongs in a {table} table")
    return hints


def declared_ids(data: dict | None) -> dict[str, list[str]]:
    """The preset ids written in presets.toml, valid or not (so one mistake is not reported twice)."""
    data = data or {}
    return {kind: list(data.get(kind)) if isinstance(data.get(kind), dict) else []
            for kind in ("models", "batches", "networks", "gpus")}


def load_presets(problems: Problems, path: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """Read presets.toml: the workshop, the GPU, models, batches and networks; and the ids declared."""
    data, text = read_toml(problems, path)
    if data is None:
        return None, None
    return _presets(problems, path, text, data), declared_ids(data)


def _presets(problems: Problems, path: Path, text: str, data: dict) -> Presets | None:
    """Check the tables of presets.toml into Presets."""
    hints = _belongs({"[workshop]": WORKSHOP_SCHEMA, "[gpus.<id>]": GPU_SCHEMA, "[models.<id>]": MODEL_SCHEMA,
                      "[batches.<id>]": BATCH_SCHEMA, "[networks.<id>]": NETWORK_SCHEMA})
    unknown_tables(problems, path, text, data, ("workshop", "gpus", "models", "batches", "networks"), hints)
    workshop = None
    if "workshop" not in data:
        problems.add(path, None, "missing table [workshop] (gpu, mfu, bytes_per_grad, bytes_per_param_states, "
                                 "seq_len, max_replicas)")
    else:
        workshop = fields(problems, path, text, ("workshop",), data["workshop"], WORKSHOP_SCHEMA,
                          label="[workshop]", hints=hints)
    gpus = keyed(problems, path, text, data, "gpus", GPU_SCHEMA, lambda i, v: Gpu(id=i, **v), optional=GPU_OPTIONAL)
    models = keyed(problems, path, text, data, "models", MODEL_SCHEMA, lambda i, v: Model(id=i, **v))
    batches = keyed(problems, path, text, data, "batches", BATCH_SCHEMA, lambda i, v: Batch(id=i, **v))
    networks = keyed(problems, path, text, data, "networks", NETWORK_SCHEMA, lambda i, v: Network(id=i, **v),
                     optional=NETWORK_OPTIONAL, unique=("name", "short"))
    bad_network = False
    for ident, net in list(networks.items()):
        if (net.link_gbytes_per_s is None) == (not net.nvlink):  # exactly one of the two
            problems.add(path, locate(text, ("networks", ident)),
                         f"network {quote(ident)}: give either link_gbytes_per_s (GB/s per replica, per direction) "
                         f"or nvlink = true (the chosen GPU's NVLink), " + ("not both" if net.nvlink else "one is missing"))
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
    networks = {i: replace(n, link_gbytes_per_s=gpu.nvlink_gbytes_per_s) if n.nvlink else n
                for i, n in networks.items()}
    return Presets(workshop=WorkshopSettings(**workshop), gpu=gpu, models=models, batches=batches,
                   networks=networks, gpus=gpus)


def _check_spellings(problems: Problems, path: Path, text: str, terms: dict[str, Term]) -> dict[str, Term]:
    """Each spelling of a term (its name and matches) may belong to one term only."""
    owner: dict[str, str] = {}
    out = {}
    for term in terms.values():
        clash = False
        for spelling in (term.name, *term.matches):
            key = spelling.strip().casefold()
            if owner.get(key, term.id) != term.id:
                field_name = "name" if spelling == term.name else "matches"
                problems.add(path, locate(text, ("terms", term.id, field_name)),
                             f"term {quote(term.id)}: {quote(spelling)} is already a spelling of term "
                             f"{quote(owner[key])}; each spelling may link to one term only")
                clash = True
            owner.setdefault(key, term.id)
        if not clash:
            out[term.id] = term
    return out


def load_terms(problems: Problems, path: Path) -> dict[str, Term]:
    """Read terms.toml."""
    data, text = read_toml(problems, path)
    if data is None:
        return {}
    unknown_tables(problems, path, text, data, ("terms",), _belongs({"[terms.<id>]": TERM_SCHEMA}))
    terms = keyed(problems, path, text, data, "terms", TERM_SCHEMA,
                  lambda i, v: Term(id=i, name=v["name"], definition=v["definition"],
                                    matches=tuple(v["matches"])),
                  optional={"matches": []}, unique=(), most=MAX_ENTRIES)
    return _check_spellings(problems, path, text, terms)


def load_sources(problems: Problems, path: Path) -> dict[str, Source]:
    """Read sources.toml."""
    data, text = read_toml(problems, path)
    if data is None:
        return {}
    unknown_tables(problems, path, text, data, ("sources",), _belongs({"[sources.<id>]": SOURCE_SCHEMA}))
    return keyed(problems, path, text, data, "sources", SOURCE_SCHEMA, lambda i, v: Source(id=i, **v),
                 optional={"note": ""}, unique=("label",), most=MAX_ENTRIES)


def split_front_matter(problems: Problems, path: Path, text: str) -> tuple[str, str, int] | None:
    """(front matter, body, line where the body starts) of a Markdown file fenced by ---."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FRONT_MATTER_FENCE:
        first = next((i for i, line in enumerate(lines, 1) if line.strip() == FRONT_MATTER_FENCE), None)
        if first is not None and all(not line.strip() for line in lines[:first - 1]):
            problems.add(path, 1, f"the front matter must start on line 1, but its '{FRONT_MATTER_FENCE}' "
                                  f"is on line {first}: remove the blank lines above it")
        else:
            problems.add(path, 1, f"must start with a front matter block: a line '{FRONT_MATTER_FENCE}', "
                                  f"TOML, and another line '{FRONT_MATTER_FENCE}'")
        return None
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == FRONT_MATTER_FENCE:
            return "\n".join(lines[1:number - 1]), "\n".join(lines[number:]), number + 1
    problems.add(path, 1, f"the front matter opened here is never closed by a line '{FRONT_MATTER_FENCE}'")
    return None


def _figures_marks(problems: Problems, path: Path, body: str, body_line: int) -> list[int] | None:
    """The index of the one [[figures]] line in body, or None with the mistake recorded."""
    lines = body.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == FIGURES_MARK]
    inline = [i for i, line in enumerate(lines) if FIGURES_MARK in line and line.strip() != FIGURES_MARK]
    for i in inline:
        problems.add(path, body_line + i, f"'{FIGURES_MARK}' must stand on a line of its own")
    if inline:
        return None
    if not marks:
        problems.add(path, None, f"the prose has no line '{FIGURES_MARK}' (it marks where the workshop's "
                                 f"controls and figures go; exactly one is needed)")
        return None
    for i in marks[1:]:
        problems.add(path, body_line + i, f"a second line '{FIGURES_MARK}' (the first is on line "
                                          f"{body_line + marks[0]}); exactly one is needed")
    return marks if len(marks) == 1 else None


def load_plate(problems: Problems, path: Path) -> tuple[Plate | None, str, tuple[Prose, Prose] | None]:
    """Read plate.md: TOML front matter, then Markdown prose with one [[figures]] line;
    (plate, front matter, the two parts of the prose even when the front matter has mistakes)."""
    text = read_text(problems, path)
    if text is None:
        return None, "", None
    parts = split_front_matter(problems, path, text)
    if parts is None:
        return None, "", None
    front, body, body_line = parts
    data, _ = read_toml(problems, path, front, line_offset=1)
    marks = _figures_marks(problems, path, body, body_line)
    prose = None
    if marks is not None:
        body_lines = body.splitlines()
        prose = (Prose("\n".join(body_lines[:marks[0]]), path, body_line),
                 Prose("\n".join(body_lines[marks[0] + 1:]), path, body_line + marks[0] + 1))
    if data is None:
        return None, front, prose
    if not data:
        required = [key for key in FRONT_MATTER_SCHEMA if key not in FRONT_MATTER_OPTIONAL]
        problems.add(path, 1, f"the front matter is empty; it needs {', '.join(required)}")
        return None, front, prose
    hints = _belongs({"[default]": DEFAULT_SCHEMA})
    hints["figures"] = f"the line '{FIGURES_MARK}' belongs in the prose, after the closing '{FRONT_MATTER_FENCE}'"
    values = fields(problems, path, front, (), data, FRONT_MATTER_SCHEMA, FRONT_MATTER_OPTIONAL, line_offset=1,
                    label="front matter", fallback_line=1, hints=hints)
    labels = None
    if values is not None:
        labels = fields(problems, path, front, ("labels",), values["labels"], LABELS_SCHEMA, LABELS,
                        line_offset=1, label="[labels]", fallback_line=1)
        plates = fields(problems, path, front, ("plates",), values["plates"],
                        {subject: "text" for subject in values["plates"]}, line_offset=1, label="[plates]",
                        fallback_line=1)
        values = None if plates is None else {**values, "plates": plates}
    if values is not None:
        if not values["data_file"]:
            # the title's slug, cut at a word so that a long title still makes a name every file system takes
            words = re.sub(r"[^a-z0-9]+", "-", values["title"].lower()).strip("-")
            slug = words[:MAX_DATA_FILE - len(".csv")]
            if len(slug) < len(words) and "-" in slug:
                slug = slug.rsplit("-", 1)[0]
            values["data_file"] = f"{slug.strip('-') or 'data'}.csv"
        elif not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.csv", values["data_file"]) or \
                values["data_file"] == "index.html" or len(values["data_file"]) > MAX_DATA_FILE:
            problems.add(path, locate(front, ("data_file",), 1), f"front matter: data_file must be a file name "
                         f"ending in .csv (letters, digits, '.', '-', '_'), of at most {MAX_DATA_FILE} characters, "
                         f"got {describe_value(values['data_file'])}")
            values = None
    default = None
    if isinstance(data.get("default"), dict):
        default = fields(problems, path, front, ("default",), data["default"], DEFAULT_SCHEMA, DEFAULT_OPTIONAL,
                         line_offset=1, label="[default]", fallback_line=1)
    if values is not None and values["plate"] > values["plates_in_volume"]:
        problems.add(path, locate(front, ("plate",), 1),
                     f"front matter: plate {values['plate']} is beyond plates_in_volume "
                     f"{values['plates_in_volume']}")
        values = None
    if values is None or default is None or prose is None or labels is None:
        return None, front, prose
    return Plate(
        volume=values["volume"], volume_title=values["volume_title"], plate=values["plate"],
        plates_in_volume=values["plates_in_volume"], title=values["title"], deck=values["deck"],
        keywords=tuple(values["keywords"]), takeaway=values["takeaway"],
        default=Selection(**default), before_figures=prose[0], after_figures=prose[1], base_url=values["base_url"],
        data_file=values["data_file"], labels=labels, plates=values["plates"],
    ), front, prose


def _check_default(problems: Problems, path: Path, front: str, plate: Plate, ids: dict[str, list[str]]) -> None:
    """The default selection must name presets that presets.toml declares and choices the controls offer."""
    from .facts import CLUSTER_OPTIONS, OPTIONS  # facts reads this module's dataclasses
    tables = {"model": ids["models"], "batch": ids["batches"], "network": ids["networks"], "gpu": ids["gpus"],
              **{key: list(choices) for key, choices in {**OPTIONS, **CLUSTER_OPTIONS}.items()}}
    for key, table in tables.items():
        chosen = getattr(plate.default, key)
        if key == "gpu" and chosen == "":  # not set: the workshop's
            continue
        if table and chosen not in table:  # no ids at all: presets.toml's own mistake is reported already
            close = difflib.get_close_matches(chosen, table, n=1)
            hint = f"did you mean {quote(close[0])}? " if close else ""
            what = "a preset in presets.toml" if key in ("model", "batch", "network", "gpu") else "a choice"
            problems.add(path, locate(front, ("default", key), 1),
                         f"[default]: {key} {quote(chosen)} is not {what} ({hint}known: {', '.join(table) or 'none'})")


def _check_gpu_sources(problems: Problems, path: Path, presets: Presets, sources: dict[str, Source]) -> None:
    """A GPU's `source` must name a table of sources.toml."""
    text = path.read_text(encoding="utf-8")
    for gpu in presets.gpus.values():
        if gpu.source and gpu.source not in sources:
            problems.add(path, locate(text, ("gpus", gpu.id, "source")),
                         f"gpu {quote(gpu.id)}: source {quote(gpu.source)} is not in sources.toml "
                         f"(known: {', '.join(sources) or 'none'})")


def load(root: Path, check_prose=None) -> Content:
    """Read and check every content file under root; raise ContentError listing all mistakes.

    When the files have mistakes, check_prose(prose parts, terms, sources, preset ids, problems), if given,
    checks what of the prose can be checked without the model (template syntax, cited sources, scenarios,
    links), so those are reported together with the files' own; it gets None for a file with mistakes of its
    own. (Slots that need the model's facts are checked by rendering, once the files are right.)"""
    root = Path(root)
    problems = Problems(root)
    if not root.is_dir():
        problems.add(root, None, "the content folder does not exist" if not root.exists() else
                     "the content folder is a file, not a folder")
        problems.raise_if_any()
    try:
        os.listdir(root)
    except OSError as error:
        problems.add(root, None, f"the content folder cannot be read: {error.strerror or error}")
        problems.raise_if_any()
    plate, front, prose = load_plate(problems, root / "plate.md")
    before = len(problems.items)
    presets, ids = load_presets(problems, root / "presets.toml")
    ids_ok = len(problems.items) == before
    before = len(problems.items)
    terms = load_terms(problems, root / "terms.toml")
    terms_ok = len(problems.items) == before
    before = len(problems.items)
    sources = load_sources(problems, root / "sources.toml")
    sources_ok = len(problems.items) == before
    if plate and ids:
        _check_default(problems, root / "plate.md", front, plate, ids)
    if presets and sources_ok:
        _check_gpu_sources(problems, root / "presets.toml", presets, sources)
    if check_prose is not None and prose is not None and problems.items:  # else the full check follows
        check_prose(prose, terms if terms_ok else None, sources if sources_ok else None,
                    ids if ids_ok else None, problems.items)
    problems.raise_if_any()
    assert plate is not None and presets is not None
    return Content(root=root, plate=plate, presets=presets, terms=terms, sources=sources)
