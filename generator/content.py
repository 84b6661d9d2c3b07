"""Read content/ into validated dataclasses; every mistake is reported as `file, line N: …`."""
from __future__ import annotations

import codecs
import difflib
import json
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


# --- limits --------------------------------------------------------------------------------------

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MAX_COUNT = 2**53  # whole numbers above this lose precision as floats, in the model and in JSON
MAX_REPLICAS = 2**20  # the page embeds every replica count; beyond this it only grows
SINGULAR = {"models": "model", "batches": "batch", "networks": "network", "gpus": "gpu", "terms": "term",
            "sources": "source"}


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
    below = None  # the first table inside path, for a table only ever written as [path.sub]
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
            if table == path:
                return number + line_offset
            if path and table[:len(path)] == path and below is None:
                below = number + line_offset
            continue
        key = _KEY.match(line)
        if key and table + (key.group(1).strip("\"'"),) == path:
            return number + line_offset
    if below is not None:
        return below
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

def quote(value: str) -> str:
    """A name or id as messages show it: "ib-400"."""
    return json.dumps(value, ensure_ascii=False)


def _describe(value: Any) -> str:
    """A value as the author wrote it, for error messages."""
    if isinstance(value, str):
        return quote(value if len(value) <= 60 else value[:57] + "…")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int) and len(str(abs(value))) > 24:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: int | float) -> bool:
    """Whether a number is finite as a float (TOML integers may be too large to be one)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _check(kind: str, value: Any) -> str | None:
    """Why value is not of kind, or None when it is."""
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            return f"must be non-empty text, got {_describe(value)}"
    elif kind == "count":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value > 0:
            return (f"must be a whole number written without a decimal point or exponent "
                    f"(e.g. {int(value):_}), got {_describe(value)}")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            return f"must be a positive whole number, got {_describe(value)}"
        if value > MAX_COUNT:
            return f"must be at most 2^53 = {MAX_COUNT:,}, got {_describe(value)}"
    elif kind == "positive":
        if not _is_number(value) or not _finite(value) or value <= 0:
            return f"must be a positive number, got {_describe(value)}"
    elif kind == "fraction":
        if not _is_number(value) or not _finite(value) or not 0 < value <= 1:
            return f"must be a number greater than 0 and at most 1, got {_describe(value)}"
    elif kind == "texts":
        if not isinstance(value, list):
            return f"must be a list of texts like [\"a\", \"b\"], got {_describe(value)}"
        bad = [v for v in value if not isinstance(v, str) or not v.strip()]
        if bad:
            return f"must be a list of non-empty texts, but holds {_describe(bad[0])}"
    elif kind == "url":
        if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s\"'<>/]+[^\s\"'<>]*", value):
            return f"must be an http:// or https:// address, got {_describe(value)}"
    elif kind == "table":
        if not isinstance(value, dict):
            return f"must be a table, got {_describe(value)}"
    return None


def _unknown(name: str, known, hints: dict[str, str] | None) -> str:
    """'unknown key "x"' with a hint: where it belongs, or the key it may be a typo of."""
    if hints and name in hints:
        return f"unknown key {quote(name)} here ({hints[name]})"
    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f"unknown key {quote(name)} (did you mean {quote(close[0])}?)"
    return f"unknown key {quote(name)} (known keys: {', '.join(known)})"


def _fields(problems: Problems, path: Path, text: str, where: tuple[str, ...], table: Any,
            schema: dict[str, str], optional: dict[str, Any] | None = None,
            line_offset: int = 0, label: str = "", fallback_line: int | None = None,
            hints: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Check a table against a schema {field: kind}; the checked values, or None on a mistake."""
    optional = optional or {}
    prefix = f"{label}: " if label else ""
    table_line = locate(text, where, line_offset) if where else None
    table_line = table_line or fallback_line
    if not isinstance(table, dict):
        problems.add(path, table_line, f"{prefix}must be a table, got {_describe(table)}")
        return None
    ok = True
    values: dict[str, Any] = {}
    for name in table:
        if name not in schema:
            line = locate(text, where + (name,), line_offset) or table_line
            problems.add(path, line, f"{prefix}{_unknown(name, schema, hints)}")
            ok = False
    for name, kind in schema.items():
        if name not in table:
            if name in optional:
                values[name] = optional[name]
                continue
            problems.add(path, table_line, f"{prefix}missing key {quote(name)}")
            ok = False
            continue
        why = _check(kind, table[name])
        if why:
            problems.add(path, locate(text, where + (name,), line_offset) or table_line, f"{prefix}{name} {why}")
            ok = False
        else:
            values[name] = table[name]
    return values if ok else None


def _read_text(problems: Problems, path: Path) -> str | None:
    """A content file's text (UTF-8, a leading byte-order mark dropped), or None with the reason recorded."""
    if not path.exists():
        expected = {"plate.md", "presets.toml", "terms.toml", "sources.toml"}
        siblings = [p.name for p in path.parent.iterdir() if p.name not in expected] if path.parent.is_dir() else []
        close = difflib.get_close_matches(path.name, siblings, n=1, cutoff=0.75)
        hint = f" (found {quote(close[0])}: a typo in its name?)" if close else ""
        problems.add(path, None, f"file is missing{hint}")
        return None
    if path.is_dir():
        problems.add(path, None, "is a folder, not a file")
        return None
    try:
        data = path.read_bytes()
    except OSError as error:
        problems.add(path, None, f"cannot be read: {error.strerror or error}")
        return None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        problems.add(path, line, f"is not UTF-8 text (byte 0x{data[error.start]:02x} cannot be decoded); "
                                 f"save the file as UTF-8")
        return None


def _parse_error_line(text: str, message: str) -> int | None:
    """Where an error tomllib places 'at end of document' starts: the first line of the run of
    prefixes of text that all fail the same way (a duplicate last key, an unclosed string or array)."""
    lines = text.splitlines()
    found = None
    for k in range(len(lines), 0, -1):
        try:
            tomllib.loads("\n".join(lines[:k]))
            break
        except tomllib.TOMLDecodeError as error:
            if re.sub(r"\s*\(at .*\)$", "", str(error)) != message:
                break
            found = k
    return found


def _toml_message(message: str) -> str:
    """tomllib's message, with what the author most likely did."""
    declared = re.match(r"Cannot declare \((.*)\) twice", message)
    if declared:
        keys = ".".join(k.strip().strip("'\"") for k in declared.group(1).split(",") if k.strip())
        return f"the table [{keys}] is written twice{message[declared.end():]}"
    if message.startswith("Cannot overwrite a value"):
        return f"a key is written twice in one table{message[len('Cannot overwrite a value'):]}"
    if message.startswith("Illegal character '\\n'"):
        return f"a text is not closed on this line: a closing quote is missing{message[len(chr(92)) + 21:]}"
    if message.startswith("Invalid value"):
        return f"invalid value{message[13:]}: text must be quoted (\"…\"), numbers written plainly"
    return message


def _read_toml(problems: Problems, path: Path, text: str | None = None, line_offset: int = 0):
    """Parse TOML, recording a syntax error with its line; (data or None, text)."""
    if text is None:
        text = _read_text(problems, path)
        if text is None:
            return None, ""
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        message = re.sub(r"\s*\(at .*\)$", "", str(error))
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        if match:
            line = int(match.group(1))
            message += f" (column {match.group(2)})"
        else:
            line = _parse_error_line(text, message)
        problems.add(path, line + line_offset if line else None, f"TOML syntax error: {_toml_message(message)}")
        return None, text


def _keyed(problems: Problems, path: Path, text: str, data: dict, section: str,
           schema: dict[str, str], make, optional: dict[str, Any] | None = None,
           unique: tuple[str, ...] = ("name",)) -> dict:
    """Read a table of tables ([section.id]) into {id: make(id, **fields)}."""
    one = SINGULAR.get(section, section)
    tables = data.get(section)
    if tables is None:
        problems.add(path, None, f"missing table [{section}.<id>]: at least one {one} is needed")
        return {}
    if not isinstance(tables, dict) or not tables:
        problems.add(path, locate(text, (section,)),
                     f"[{section}] must hold at least one [{section}.<id>] table, got {_describe(tables)}")
        return {}
    out = {}
    seen: dict[tuple[str, str], str] = {}
    for ident, table in tables.items():
        line = locate(text, (section, ident))
        if not isinstance(table, dict):
            hint = f" ({quote(ident)} belongs inside a [{section}.<id>] table)" if ident in schema else ""
            problems.add(path, line, f"[{section}]: {ident} = {_describe(table)} is not a "
                                     f"[{section}.<id>] table{hint}")
            continue
        if not ID_PATTERN.fullmatch(ident):
            problems.add(path, line, f"{one} id {quote(ident)} must start with a letter or digit and hold only "
                                     f"letters, digits, '-' and '_' (it appears in links)")
            continue
        label = f"{one} {quote(ident)}"
        values = _fields(problems, path, text, (section, ident), table, schema, optional, label=label)
        if values is None:
            continue
        clash = False
        for name in unique:
            key = (name, str(values[name]).strip().casefold())
            if key in seen:
                problems.add(path, locate(text, (section, ident, name)),
                             f"{label}: {name} {_describe(values[name])} is also the {name} of {one} "
                             f"{quote(seen[key])}; readers could not tell them apart")
                clash = True
            else:
                seen[key] = ident
        if not clash:
            out[ident] = make(ident, values)
    return out


def _unknown_tables(problems: Problems, path: Path, text: str, data: dict, known: tuple[str, ...],
                    hints: dict[str, str] | None = None) -> None:
    """Report top-level keys the loader does not read."""
    for name in data:
        if name not in known:
            hint = hints.get(name) if hints else None
            close = difflib.get_close_matches(name, known, n=1)
            why = f" ({hint})" if hint else f" (did you mean [{close[0]}]?)" if close else \
                f" (known: {', '.join(known)})"
            problems.add(path, locate(text, (name,)), f"unknown table or key {quote(name)}{why}")


# --- the files -----------------------------------------------------------------------------------

WORKSHOP_SCHEMA = {"gpu": "text", "mfu": "fraction", "bytes_per_grad": "count", "bytes_per_param_states": "count",
                   "seq_len": "count", "max_replicas": "count"}
GPU_SCHEMA = {"name": "text", "peak_tflops": "positive", "memory_gb": "positive", "nvlink_gbytes_per_s": "positive"}
MODEL_SCHEMA = {"name": "text", "params": "count", "layers": "count", "d_model": "count", "ffn": "count",
                "vocab": "count"}
BATCH_SCHEMA = {"name": "text", "tokens": "count"}
NETWORK_SCHEMA = {"name": "text", "short": "text", "link_gbytes_per_s": "positive"}
TERM_SCHEMA = {"name": "text", "definition": "text", "matches": "texts"}
SOURCE_SCHEMA = {"authors": "text", "title": "text", "venue": "text", "url": "url", "label": "text", "note": "text"}
FRONT_MATTER_SCHEMA = {"volume": "text", "volume_title": "text", "plate": "count", "plates_in_volume": "count",
                       "title": "text", "deck": "text", "keywords": "texts", "takeaway": "text", "default": "table"}
DEFAULT_SCHEMA = {"model": "text", "batch": "text", "network": "text"}


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
            for kind in ("models", "batches", "networks")}


def load_presets(problems: Problems, path: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """Read presets.toml: the workshop, the GPU, models, batches and networks; and the ids declared."""
    data, text = _read_toml(problems, path)
    if data is None:
        return None, None
    return _presets(problems, path, text, data), declared_ids(data)


def _presets(problems: Problems, path: Path, text: str, data: dict) -> Presets | None:
    """Check the tables of presets.toml into Presets."""
    hints = _belongs({"[workshop]": WORKSHOP_SCHEMA, "[gpus.<id>]": GPU_SCHEMA, "[models.<id>]": MODEL_SCHEMA,
                      "[batches.<id>]": BATCH_SCHEMA, "[networks.<id>]": NETWORK_SCHEMA})
    _unknown_tables(problems, path, text, data, ("workshop", "gpus", "models", "batches", "networks"), hints)
    workshop = None
    if "workshop" not in data:
        problems.add(path, None, "missing table [workshop] (gpu, mfu, bytes_per_grad, bytes_per_param_states, "
                                 "seq_len, max_replicas)")
    else:
        workshop = _fields(problems, path, text, ("workshop",), data["workshop"], WORKSHOP_SCHEMA,
                           label="[workshop]", hints=hints)
    gpus = _keyed(problems, path, text, data, "gpus", GPU_SCHEMA, lambda i, v: Gpu(id=i, **v))
    models = _keyed(problems, path, text, data, "models", MODEL_SCHEMA, lambda i, v: Model(id=i, **v))
    batches = _keyed(problems, path, text, data, "batches", BATCH_SCHEMA, lambda i, v: Batch(id=i, **v))
    networks = _keyed(problems, path, text, data, "networks", NETWORK_SCHEMA, lambda i, v: Network(id=i, **v),
                      unique=("name", "short"))
    ok = workshop is not None
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
    if not (ok and models and batches and networks):
        return None
    return Presets(workshop=WorkshopSettings(**workshop), gpu=gpus[workshop["gpu"]],
                   models=models, batches=batches, networks=networks)


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
    data, text = _read_toml(problems, path)
    if data is None:
        return {}
    _unknown_tables(problems, path, text, data, ("terms",), _belongs({"[terms.<id>]": TERM_SCHEMA}))
    terms = _keyed(problems, path, text, data, "terms", TERM_SCHEMA,
                   lambda i, v: Term(id=i, name=v["name"], definition=v["definition"],
                                     matches=tuple(v["matches"])),
                   optional={"matches": []}, unique=())
    return _check_spellings(problems, path, text, terms)


def load_sources(problems: Problems, path: Path) -> dict[str, Source]:
    """Read sources.toml."""
    data, text = _read_toml(problems, path)
    if data is None:
        return {}
    _unknown_tables(problems, path, text, data, ("sources",), _belongs({"[sources.<id>]": SOURCE_SCHEMA}))
    return _keyed(problems, path, text, data, "sources", SOURCE_SCHEMA, lambda i, v: Source(id=i, **v),
                  optional={"note": ""}, unique=("label",))


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
    text = _read_text(problems, path)
    if text is None:
        return None, "", None
    parts = split_front_matter(problems, path, text)
    if parts is None:
        return None, "", None
    front, body, body_line = parts
    data, _ = _read_toml(problems, path, front, line_offset=1)
    marks = _figures_marks(problems, path, body, body_line)
    prose = None
    if marks is not None:
        body_lines = body.splitlines()
        prose = (Prose("\n".join(body_lines[:marks[0]]), path, body_line),
                 Prose("\n".join(body_lines[marks[0] + 1:]), path, body_line + marks[0] + 1))
    if data is None:
        return None, front, prose
    if not data:
        problems.add(path, 1, f"the front matter is empty; it needs {', '.join(FRONT_MATTER_SCHEMA)}")
        return None, front, prose
    hints = _belongs({"[default]": DEFAULT_SCHEMA})
    hints["figures"] = f"the line '{FIGURES_MARK}' belongs in the prose, after the closing '{FRONT_MATTER_FENCE}'"
    values = _fields(problems, path, front, (), data, FRONT_MATTER_SCHEMA, line_offset=1,
                     label="front matter", fallback_line=1, hints=hints)
    default = None
    if isinstance(data.get("default"), dict):
        default = _fields(problems, path, front, ("default",), data["default"], DEFAULT_SCHEMA,
                          line_offset=1, label="[default]", fallback_line=1)
    if values is not None and values["plate"] > values["plates_in_volume"]:
        problems.add(path, locate(front, ("plate",), 1),
                     f"front matter: plate {values['plate']} is beyond plates_in_volume "
                     f"{values['plates_in_volume']}")
        values = None
    if values is None or default is None or prose is None:
        return None, front, prose
    return Plate(
        volume=values["volume"], volume_title=values["volume_title"], plate=values["plate"],
        plates_in_volume=values["plates_in_volume"], title=values["title"], deck=values["deck"],
        keywords=tuple(values["keywords"]), takeaway=values["takeaway"],
        default=Selection(**default), before_figures=prose[0], after_figures=prose[1],
    ), front, prose


def _check_default(problems: Problems, path: Path, front: str, plate: Plate, ids: dict[str, list[str]]) -> None:
    """The default selection must name presets that presets.toml declares."""
    for key, table in (("model", ids["models"]), ("batch", ids["batches"]), ("network", ids["networks"])):
        chosen = getattr(plate.default, key)
        if table and chosen not in table:  # no ids at all: presets.toml's own mistake is reported already
            close = difflib.get_close_matches(chosen, table, n=1)
            hint = f"did you mean {quote(close[0])}? " if close else ""
            problems.add(path, locate(front, ("default", key), 1),
                         f"[default]: {key} {quote(chosen)} is not a preset in presets.toml "
                         f"({hint}known: {', '.join(table) or 'none'})")


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
    if check_prose is not None and prose is not None and problems.items:  # else the full check follows
        check_prose(prose, terms if terms_ok else None, sources if sources_ok else None,
                    ids if ids_ok else None, problems.items)
    problems.raise_if_any()
    assert plate is not None and presets is not None
    return Content(root=root, plate=plate, presets=presets, terms=terms, sources=sources)
