"""Read content/ into validated dataclasses; every mistake is reported as `file, line N: …`."""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIGURES_MARK = "[[figures]]"
FRONT_MATTER_FENCE = "---"


class ContentError(Exception):
    """One or more mistakes in the content, each naming its file and line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


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
    link_gbytes_per_s: float


@dataclass(frozen=True)
class Gpu:
    """The accelerator every replica runs on."""

    id: str
    name: str
    peak_tflops: float
    memory_gb: float
    nvlink_gbytes_per_s: float


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


@dataclass(frozen=True)
class Selection:
    """One choice of model, global batch and network, by preset id."""

    model: str
    batch: str
    network: str


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


@dataclass(frozen=True)
class Content:
    """All the content of the plate, validated."""

    root: Path
    plate: Plate
    presets: Presets
    terms: dict[str, Term]
    sources: dict[str, Source]


# --- locating mistakes ---------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def _split_key(dotted: str) -> tuple[str, ...]:
    """Split a TOML header like models."llama3-8b" into its keys."""
    parts = re.findall(r""""[^"]*"|'[^']*'|[^.\s]+""", dotted)
    return tuple(p.strip("\"'") for p in parts)


def locate(text: str, path: tuple[str, ...], line_offset: int = 0) -> int | None:
    """The line of a table or key in TOML text (1-based), or None if it is not written there."""
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
            if table == path:
                return number + line_offset
            continue
        key = _KEY.match(line)
        if key and table + (key.group(1).strip("\"'"),) == path:
            return number + line_offset
    if len(path) > 1:
        return locate(text, path[:-1], line_offset)
    return None


class Problems:
    """Collects content mistakes so a build can report all of them at once."""

    def __init__(self, root: Path):
        self.root = root
        self.items: list[str] = []

    def where(self, path: Path, line: int | None) -> str:
        """`content/x.toml, line 3` relative to the content folder's parent."""
        try:
            shown = path.relative_to(self.root.parent)
        except ValueError:
            shown = path
        return f"{shown}, line {line}" if line else f"{shown}"

    def add(self, path: Path, line: int | None, message: str) -> None:
        """Record one mistake."""
        self.items.append(f"{self.where(path, line)}: {message}")

    def raise_if_any(self) -> None:
        """Stop the build if anything was recorded."""
        if self.items:
            raise ContentError(self.items)


# --- checking fields -----------------------------------------------------------------------------

def _describe(value: Any) -> str:
    """A value as the author wrote it, for error messages."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a table" if isinstance(value, dict) else "a list"
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(kind: str, value: Any) -> str | None:
    """Why value is not of kind, or None when it is."""
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            return f"must be non-empty text, got {_describe(value)}"
    elif kind == "count":
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            return f"must be a positive whole number, got {_describe(value)}"
    elif kind == "positive":
        if not _is_number(value) or not math.isfinite(value) or value <= 0:
            return f"must be a positive number, got {_describe(value)}"
    elif kind == "fraction":
        if not _is_number(value) or not math.isfinite(value) or not 0 < value <= 1:
            return f"must be a number greater than 0 and at most 1, got {_describe(value)}"
    elif kind == "texts":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            return f"must be a list of non-empty texts, got {_describe(value)}"
    elif kind == "url":
        if not isinstance(value, str) or not re.match(r"^https?://[^\s\"'<>]+$", value):
            return f"must be an http(s) address, got {_describe(value)}"
    elif kind == "table":
        if not isinstance(value, dict):
            return f"must be a table, got {_describe(value)}"
    return None


def _fields(problems: Problems, path: Path, text: str, where: tuple[str, ...], table: Any,
            schema: dict[str, str], optional: dict[str, Any] | None = None,
            line_offset: int = 0, label: str = "") -> dict[str, Any] | None:
    """Check a table against a schema {field: kind}; the checked values, or None on a mistake."""
    optional = optional or {}
    prefix = f"{label}: " if label else ""
    if not isinstance(table, dict):
        problems.add(path, locate(text, where, line_offset), f"{prefix}must be a table, got {_describe(table)}")
        return None
    ok = True
    values: dict[str, Any] = {}
    for name in table:
        if name not in schema:
            known = ", ".join(schema)
            problems.add(path, locate(text, where + (name,), line_offset),
                         f"{prefix}unknown key {name!r} (known keys: {known})")
            ok = False
    for name, kind in schema.items():
        if name not in table:
            if name in optional:
                values[name] = optional[name]
                continue
            problems.add(path, locate(text, where, line_offset), f"{prefix}missing key {name!r}")
            ok = False
            continue
        why = _check(kind, table[name])
        if why:
            problems.add(path, locate(text, where + (name,), line_offset), f"{prefix}{name} {why}")
            ok = False
        else:
            values[name] = table[name]
    return values if ok else None


def _read_toml(problems: Problems, path: Path, text: str | None = None, line_offset: int = 0):
    """Parse TOML, recording a syntax error with its line."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            problems.add(path, None, "file is missing")
            return None, ""
        except (OSError, UnicodeDecodeError) as error:
            problems.add(path, None, f"cannot be read: {error}")
            return None, ""
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line = int(match.group(1)) + line_offset if match else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        if match:
            message += f" (column {match.group(2)})"
        problems.add(path, line, f"TOML syntax error: {message}")
        return None, text


def _keyed(problems: Problems, path: Path, text: str, data: dict, section: str,
           schema: dict[str, str], make, optional: dict[str, Any] | None = None) -> dict:
    """Read a table of tables ([section.id]) into {id: make(id, **fields)}."""
    tables = data.get(section)
    if tables is None:
        problems.add(path, None, f"missing table [{section}.<id>]")
        return {}
    if not isinstance(tables, dict) or not tables:
        problems.add(path, locate(text, (section,)), f"[{section}] must hold at least one [{section}.<id>] table")
        return {}
    out = {}
    for ident, table in tables.items():
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", ident):
            problems.add(path, locate(text, (section, ident)),
                         f"id {ident!r} must be letters, digits, '-' or '_' (it appears in links)")
            continue
        label = f"{section.rstrip('s')} {ident!r}"
        values = _fields(problems, path, text, (section, ident), table, schema, optional, label=label)
        if values is not None:
            out[ident] = make(ident, values)
    return out


def _unknown_tables(problems: Problems, path: Path, text: str, data: dict, known: tuple[str, ...]) -> None:
    """Report top-level keys the loader does not read."""
    for name in data:
        if name not in known:
            problems.add(path, locate(text, (name,)),
                         f"unknown table {name!r} (known: {', '.join(known)})")


# --- the files -----------------------------------------------------------------------------------

def declared_ids(data: dict | None) -> dict[str, list[str]]:
    """The preset ids written in presets.toml, valid or not (so one mistake is not reported twice)."""
    data = data or {}
    return {kind: list(data.get(kind)) if isinstance(data.get(kind), dict) else []
            for kind in ("models", "batches", "networks")}


def load_presets(problems: Problems, path: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """Read presets.toml: the workshop, the GPU, models, batches and networks; and the ids declared."""
    data, text = _read_toml(problems, path)
    if data is None:
        return None, None
    return _presets(problems, path, text, data), declared_ids(data)


def _presets(problems: Problems, path: Path, text: str, data: dict) -> Presets | None:
    """Check the tables of presets.toml into Presets."""
    _unknown_tables(problems, path, text, data, ("workshop", "gpus", "models", "batches", "networks"))
    workshop = _fields(problems, path, text, ("workshop",), data.get("workshop", {}), {
        "gpu": "text", "mfu": "fraction", "bytes_per_grad": "count", "bytes_per_param_states": "count",
        "seq_len": "count", "max_replicas": "count"}, label="[workshop]")
    gpus = _keyed(problems, path, text, data, "gpus",
                  {"name": "text", "peak_tflops": "positive", "memory_gb": "positive",
                   "nvlink_gbytes_per_s": "positive"},
                  lambda i, v: Gpu(id=i, **v))
    models = _keyed(problems, path, text, data, "models",
                    {"name": "text", "params": "count", "layers": "count", "d_model": "count",
                     "ffn": "count", "vocab": "count"},
                    lambda i, v: Model(id=i, **v))
    batches = _keyed(problems, path, text, data, "batches", {"name": "text", "tokens": "count"},
                     lambda i, v: Batch(id=i, **v))
    networks = _keyed(problems, path, text, data, "networks",
                      {"name": "text", "short": "text", "link_gbytes_per_s": "positive"},
                      lambda i, v: Network(id=i, **v))
    if workshop is None:
        return None
    if workshop["max_replicas"] & (workshop["max_replicas"] - 1):
        problems.add(path, locate(text, ("workshop", "max_replicas")),
                     f"[workshop]: max_replicas must be a power of two, got {workshop['max_replicas']}")
        return None
    if workshop["gpu"] not in gpus:
        problems.add(path, locate(text, ("workshop", "gpu")),
                     f"[workshop]: gpu {workshop['gpu']!r} is not a preset (known: {', '.join(gpus) or 'none'})")
        return None
    if not (models and batches and networks):
        return None
    return Presets(workshop=WorkshopSettings(**workshop), gpu=gpus[workshop["gpu"]],
                   models=models, batches=batches, networks=networks)


def load_terms(problems: Problems, path: Path) -> dict[str, Term]:
    """Read terms.toml."""
    data, text = _read_toml(problems, path)
    if data is None:
        return {}
    _unknown_tables(problems, path, text, data, ("terms",))
    return _keyed(problems, path, text, data, "terms",
                  {"name": "text", "definition": "text", "matches": "texts"},
                  lambda i, v: Term(id=i, name=v["name"], definition=v["definition"],
                                    matches=tuple(v["matches"])),
                  optional={"matches": []})


def load_sources(problems: Problems, path: Path) -> dict[str, Source]:
    """Read sources.toml."""
    data, text = _read_toml(problems, path)
    if data is None:
        return {}
    _unknown_tables(problems, path, text, data, ("sources",))
    return _keyed(problems, path, text, data, "sources",
                  {"authors": "text", "title": "text", "venue": "text", "url": "url", "label": "text",
                   "note": "text"},
                  lambda i, v: Source(id=i, **v), optional={"note": ""})


def split_front_matter(problems: Problems, path: Path, text: str) -> tuple[str, str, int] | None:
    """(front matter, body, line where the body starts) of a Markdown file fenced by ---."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FRONT_MATTER_FENCE:
        problems.add(path, 1, f"must start with a front matter block: a line '{FRONT_MATTER_FENCE}', "
                              f"TOML, and another line '{FRONT_MATTER_FENCE}'")
        return None
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == FRONT_MATTER_FENCE:
            return "\n".join(lines[1:number - 1]), "\n".join(lines[number:]), number + 1
    problems.add(path, 1, f"the front matter opened here is never closed by a line '{FRONT_MATTER_FENCE}'")
    return None


def load_plate(problems: Problems, path: Path) -> Plate | None:
    """Read plate.md: TOML front matter, then Markdown prose with one [[figures]] line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.add(path, None, "file is missing")
        return None
    except (OSError, UnicodeDecodeError) as error:
        problems.add(path, None, f"cannot be read: {error}")
        return None
    parts = split_front_matter(problems, path, text)
    if parts is None:
        return None
    front, body, body_line = parts
    data, _ = _read_toml(problems, path, front, line_offset=1)
    if data is None:
        return None
    values = _fields(problems, path, front, (), data, {
        "volume": "text", "volume_title": "text", "plate": "count", "plates_in_volume": "count",
        "title": "text", "deck": "text", "keywords": "texts", "takeaway": "text", "default": "table"},
        line_offset=1, label="front matter")
    default = None
    if values is not None:
        default = _fields(problems, path, front, ("default",), values["default"],
                          {"model": "text", "batch": "text", "network": "text"},
                          line_offset=1, label="[default]")
        if values["plate"] > values["plates_in_volume"]:
            problems.add(path, locate(front, ("plate",), 1),
                         f"front matter: plate {values['plate']} is beyond plates_in_volume "
                         f"{values['plates_in_volume']}")
    marks = [i for i, line in enumerate(body.splitlines()) if line.strip() == FIGURES_MARK]
    if len(marks) != 1:
        where = body_line + marks[1] if len(marks) > 1 else None
        problems.add(path, where, f"the prose must contain exactly one line '{FIGURES_MARK}' "
                                  f"(where the workshop's figures go), found {len(marks)}")
        return None
    if values is None or default is None:
        return None
    body_lines = body.splitlines()
    mark = marks[0]
    return Plate(
        volume=values["volume"], volume_title=values["volume_title"], plate=values["plate"],
        plates_in_volume=values["plates_in_volume"], title=values["title"], deck=values["deck"],
        keywords=tuple(values["keywords"]), takeaway=values["takeaway"],
        default=Selection(**default),
        before_figures=Prose("\n".join(body_lines[:mark]), path, body_line),
        after_figures=Prose("\n".join(body_lines[mark + 1:]), path, body_line + mark + 1),
    )


def _check_default(problems: Problems, path: Path, plate: Plate, ids: dict[str, list[str]]) -> None:
    """The default selection must name presets that presets.toml declares."""
    front = split_front_matter(Problems(problems.root), path, path.read_text(encoding="utf-8"))
    front_text = front[0] if front else ""
    for key, table in (("model", ids["models"]), ("batch", ids["batches"]), ("network", ids["networks"])):
        chosen = getattr(plate.default, key)
        if chosen not in table:
            problems.add(path, locate(front_text, ("default", key), 1),
                         f"[default]: {key} {chosen!r} is not a preset in presets.toml "
                         f"(known: {', '.join(table)})")


def load(root: Path) -> Content:
    """Read and check every content file under root; raise ContentError listing all mistakes."""
    root = Path(root)
    problems = Problems(root)
    plate = load_plate(problems, root / "plate.md")
    presets, ids = load_presets(problems, root / "presets.toml")
    terms = load_terms(problems, root / "terms.toml")
    sources = load_sources(problems, root / "sources.toml")
    if plate and ids:
        _check_default(problems, root / "plate.md", plate, ids)
    problems.raise_if_any()
    assert plate is not None and presets is not None
    return Content(root=root, plate=plate, presets=presets, terms=terms, sources=sources)
