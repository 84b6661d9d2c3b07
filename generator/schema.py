"""Checking TOML and front matter field by field, with the file and line of every mistake."""
from __future__ import annotations

import codecs
import difflib
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any


class ContentError(Exception):
    """One or more mistakes in the content, each naming its file and line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# --- limits --------------------------------------------------------------------------------------

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MAX_COUNT = 2**53  # whole numbers above this lose precision as floats, in the model and in JSON
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


def shown_path(path: Path, root: Path) -> Path:
    """A content path as messages show it: content/plate.md."""
    try:
        return path.relative_to(root.parent)
    except ValueError:
        return path


class Problems:
    """Collects content mistakes so a build can report all of them at once."""

    def __init__(self, root: Path):
        self.root = root
        self.items: list[str] = []

    def where(self, path: Path, line: int | None) -> str:
        """`content/x.toml, line 3` relative to the content folder's parent."""
        shown = shown_path(path, self.root)
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


def describe_value(value: Any) -> str:
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
            return f"must be non-empty text, got {describe_value(value)}"
    elif kind == "count":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value > 0:
            return (f"must be a whole number written without a decimal point or exponent "
                    f"(e.g. {int(value):_}), got {describe_value(value)}")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            return f"must be a positive whole number, got {describe_value(value)}"
        if value > MAX_COUNT:
            return f"must be at most 2^53 = {MAX_COUNT:,}, got {describe_value(value)}"
    elif kind == "positive":
        if not _is_number(value) or not _finite(value) or value <= 0:
            return f"must be a positive number, got {describe_value(value)}"
    elif kind == "fraction":
        if not _is_number(value) or not _finite(value) or not 0 < value <= 1:
            return f"must be a number greater than 0 and at most 1, got {describe_value(value)}"
    elif kind == "texts":
        if not isinstance(value, list):
            return f"must be a list of texts like [\"a\", \"b\"], got {describe_value(value)}"
        bad = [v for v in value if not isinstance(v, str) or not v.strip()]
        if bad:
            return f"must be a list of non-empty texts, but holds {describe_value(bad[0])}"
    elif kind == "url":
        if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s\"'<>/]+[^\s\"'<>]*", value):
            return f"must be an http:// or https:// address, got {describe_value(value)}"
    elif kind == "flag":
        if not isinstance(value, bool):
            return f"must be true or false, got {describe_value(value)}"
    elif kind == "table":
        if not isinstance(value, dict):
            return f"must be a table, got {describe_value(value)}"
    return None


def _unknown(name: str, known, hints: dict[str, str] | None) -> str:
    """'unknown key "x"' with a hint: where it belongs, or the key it may be a typo of."""
    if hints and name in hints:
        return f"unknown key {quote(name)} here ({hints[name]})"
    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f"unknown key {quote(name)} (did you mean {quote(close[0])}?)"
    return f"unknown key {quote(name)} (known keys: {', '.join(known)})"


def fields(problems: Problems, path: Path, text: str, where: tuple[str, ...], table: Any,
           schema: dict[str, str], optional: dict[str, Any] | None = None,
           line_offset: int = 0, label: str = "", fallback_line: int | None = None,
           hints: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Check a table against a schema {field: kind}; the checked values, or None on a mistake."""
    optional = optional or {}
    prefix = f"{label}: " if label else ""
    table_line = locate(text, where, line_offset) if where else None
    table_line = table_line or fallback_line
    if not isinstance(table, dict):
        problems.add(path, table_line, f"{prefix}must be a table, got {describe_value(table)}")
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


def read_text(problems: Problems, path: Path) -> str | None:
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


def read_toml(problems: Problems, path: Path, text: str | None = None, line_offset: int = 0):
    """Parse TOML, recording a syntax error with its line; (data or None, text)."""
    if text is None:
        text = read_text(problems, path)
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


def keyed(problems: Problems, path: Path, text: str, data: dict, section: str,
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
                     f"[{section}] must hold at least one [{section}.<id>] table, got {describe_value(tables)}")
        return {}
    out = {}
    seen: dict[tuple[str, str], str] = {}
    for ident, table in tables.items():
        line = locate(text, (section, ident))
        if not isinstance(table, dict):
            hint = f" ({quote(ident)} belongs inside a [{section}.<id>] table)" if ident in schema else ""
            problems.add(path, line, f"[{section}]: {ident} = {describe_value(table)} is not a "
                                     f"[{section}.<id>] table{hint}")
            continue
        if not ID_PATTERN.fullmatch(ident):
            problems.add(path, line, f"{one} id {quote(ident)} must start with a letter or digit and hold only "
                                     f"letters, digits, '-' and '_' (it appears in links)")
            continue
        label = f"{one} {quote(ident)}"
        values = fields(problems, path, text, (section, ident), table, schema, optional, label=label)
        if values is None:
            continue
        clash = False
        for name in unique:
            key = (name, str(values[name]).strip().casefold())
            if key in seen:
                problems.add(path, locate(text, (section, ident, name)),
                             f"{label}: {name} {describe_value(values[name])} is also the {name} of {one} "
                             f"{quote(seen[key])}; readers could not tell them apart")
                clash = True
            else:
                seen[key] = ident
        if not clash:
            out[ident] = make(ident, values)
    return out


def unknown_tables(problems: Problems, path: Path, text: str, data: dict, known: tuple[str, ...],
                   hints: dict[str, str] | None = None) -> None:
    """Report top-level keys the loader does not read."""
    for name in data:
        if name not in known:
            hint = hints.get(name) if hints else None
            close = difflib.get_close_matches(name, known, n=1)
            why = f" ({hint})" if hint else f" (did you mean [{close[0]}]?)" if close else \
                f" (known: {', '.join(known)})"
            problems.add(path, locate(text, (name,)), f"unknown table or key {quote(name)}{why}")
