"""Checking TOML and front matter field by field, with the file and line of every mistake."""
from __future__ import annotations

import codecs
import difflib
import functools
import json
import math
import os
import re
import stat
import tomllib
from dataclasses import dataclass
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
MAX_FILE_BYTES = 2_000_000  # 2 MB: ten times the real plate's content, far below what would slow a build
# What a series needs, 100 models × 20 batches × 20 networks × 10 GPUs: the page carries the presets, not their
# product, and the build evaluates the model only for the selections its prose names (and the presets' extremes).
MAX_SELECTIONS = 400_000  # models × batches × networks × GPUs
MAX_CSV_ROWS = 1_000_000  # rows of the site's CSV (a plate writes one per point of its grid): about 150 MB
MAX_ENTRIES = 1_000  # terms or sources: each term's spellings are searched for in every run of prose text
CONTENT_FILES = ("plate.md", "presets.toml", "terms.toml", "sources.toml")
# Characters no page can show (C0 and C1 controls but tab, line feed and carriage return): a NUL in a
# preset name aborted vl-convert's Rust, other controls break HTML, CSV and JSON consumers.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")
SINGULAR = {"models": "model", "batches": "batch", "networks": "network", "gpus": "gpu", "terms": "term",
            "sources": "source", "layouts": "layout"}


def grid_rows(*axes: int) -> int:
    """The product of some axes' lengths: selections (models × batches × networks × GPUs) or the CSV's rows."""
    return math.prod(axes)


def _codepoint(char: str) -> str:
    """'U+0000 (NUL)'-style name of a control character."""
    names = {0: "NUL", 7: "BEL", 8: "backspace", 0x0B: "vertical tab", 0x0C: "form feed", 0x1B: "escape", 0x7F: "DEL"}
    name = names.get(ord(char))
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


# --- locating mistakes ---------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def _split_key(dotted: str) -> tuple[str, ...]:
    """Split a TOML header like models."big-1" into its keys."""
    parts = re.findall(r""""[^"]*"|'[^']*'|[^.\s]+""", dotted)
    return tuple(p.strip("\"'") for p in parts)


@functools.lru_cache(maxsize=8)
def _toml_lines(text: str) -> tuple[dict, dict]:
    """({table or key path: its first line}, {table path: first line of a table inside it}) of TOML text,
    computed once per text: files of thousands of presets are located in linear time."""
    exact: dict[tuple[str, ...], int] = {}
    below: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
            exact.setdefault(table, number)
            for k in range(1, len(table)):
                below.setdefault(table[:k], number)
            continue
        key = _KEY.match(line)
        if key:
            exact.setdefault(table + (key.group(1).strip("\"'"),), number)
    return exact, below


def locate(text: str, path: tuple[str, ...], line_offset: int = 0) -> int | None:
    """The line of a table or key in TOML text (1-based), or None if it is not written there; a table
    only ever written as [path.sub] is found at its first sub-table, a missing key at its table."""
    exact, below = _toml_lines(text)
    while path:
        line = exact.get(path) or below.get(path)
        if line:
            return line + line_offset
        path = path[:-1]
    return None


def shown_path(path: Path, root: Path) -> Path:
    """A content path as messages show it: content/plate.md (a file of another plate, as one plate's presets read
    from beside it, from the same parent: xiv-4-data-parallelism/presets.toml)."""
    try:
        return path.relative_to(root.parent)
    except ValueError:
        pass
    try:  # one of them absolute, the other relative: the same files, seen from the same folder
        return Path(path).resolve().relative_to(Path(root).resolve().parent)
    except (ValueError, OSError):
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


def default_choice(problems: "Problems", root: Path, front: str, key: str, chosen: str, known: list[str],
                   among: str) -> None:
    """plate.md's [default] choosing, for key, an id not in known: a mistake at its line, with the closest id as a
    hint (among: what the choices are, as the message names them)."""
    if not known or chosen in known:
        return
    close = difflib.get_close_matches(chosen, known, n=1)
    hint = f"did you mean {quote(close[0])}? " if close else ""
    problems.add(Path(root) / "plate.md", locate(front, ("default", key), 1),
                 f"[default]: {key} {quote(chosen)} is not one of {among} ({hint}known: {', '.join(known)})")


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


@dataclass(frozen=True)
class Range:
    """A number kind ("positive" or "fraction") with bounds: values far outside them are typos, and would
    overflow the model (1e-300 GB/s) or print as nonsense."""

    kind: str
    low: float
    high: float
    unit: str = ""

    def bounds(self) -> str:
        """What a value outside the bounds is told (the page's free inputs show the same words)."""
        return f"must be from {_plain(self.low)} to {_plain(self.high)}{self.unit}"


def _plain(number: float) -> str:
    """1000000.0 → '1,000,000'; 0.001 → '0.001'."""
    return f"{number:,.10g}"


def _control_in(value: Any) -> str | None:
    """Why a text (or a list of texts) holds a character no page can show, or None."""
    for text in value if isinstance(value, list) else [value]:
        found = CONTROL.search(text) if isinstance(text, str) else None
        if found:
            return f"holds the control character {_codepoint(found.group())}, which no page can show; remove it"
    return None


# The number kinds' checks as data: this module and a plate's checker of free inputs (its PAGE's own role, which the
# page runs compiled) both read them, so a rule and its message are written once. A rule is (the tests a value must
# pass, in order; what a value failing one is told); the first rule failed says why. Tests: "int" (a whole number as
# TOML writes one), "number", "finite", "not_whole_float" (13e9 for a count: a whole value written as a float),
# ["above", x], ["at_least", x], ["at_most", x]. "{example}" in a message is the value as a whole number, digits
# grouped by "_".
NUMBER_RULES = {
    "count": ((("not_whole_float",), "must be a whole number written without a decimal point or exponent "
                                     "(e.g. {example})"),
              (("int", ("above", 0)), "must be a positive whole number"),
              ((("at_most", MAX_COUNT),), f"must be at most 2^53 = {MAX_COUNT:,}")),
    "positive": ((("number", "finite", ("above", 0)), "must be a positive number"),),
    "fraction": ((("number", "finite", ("above", 0), ("at_most", 1)),
                  "must be a number greater than 0 and at most 1"),),
}


def rules(kind: str | Range) -> list[tuple[tuple, str]]:
    """A number kind's rules, a bounded kind's bounds last."""
    if isinstance(kind, Range):
        return [*rules(kind.kind), ((("at_least", kind.low), ("at_most", kind.high)), kind.bounds())]
    return list(NUMBER_RULES[kind])


def passes(test: str | tuple, value: Any) -> bool:
    """Whether value passes one test of a rule (see NUMBER_RULES)."""
    name, *arg = (test,) if isinstance(test, str) else test
    if name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return _is_number(value)
    if name == "finite":
        return _finite(value)
    if name == "not_whole_float":
        return not (isinstance(value, float) and math.isfinite(value) and value.is_integer() and value > 0)
    if name == "above":
        return value > arg[0]
    if name == "at_least":
        return value >= arg[0]
    if name == "at_most":
        return value <= arg[0]
    raise ValueError(f"unknown test {test!r}")


def broken_rule(rules_: list[tuple[tuple, str]], value: Any) -> str | None:
    """What value is told by the first rule it fails, or None when it passes them all."""
    for tests, say in rules_:
        if not all(passes(test, value) for test in tests):
            return say.replace("{example}", f"{int(value):_}") if "{example}" in say else say
    return None


def _check(kind: str | Range, value: Any) -> str | None:
    """Why value is not of kind, or None when it is."""
    if isinstance(kind, Range) or kind in NUMBER_RULES:
        why = broken_rule(rules(kind), value)
        return None if why is None else f"{why}, got {describe_value(value)}"
    if kind in ("text", "texts", "url") and _control_in(value):
        return _control_in(value)
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            return f"must be non-empty text, got {describe_value(value)}"
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
           schema: dict[str, str | Range], optional: dict[str, Any] | None = None,
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


def _read_bounded(path: Path) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file, opened so that a FIFO swapped in cannot block."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "it is no longer a regular file")
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind_of_file(mode: int) -> str:
    """'a FIFO', 'a device', … for a file that is not a regular file."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_text(problems: Problems, path: Path) -> str | None:
    """A content file's text (UTF-8, a leading byte-order mark dropped), or None with the reason recorded.

    Only regular files of at most MAX_FILE_BYTES are read: a FIFO or /dev/zero named as content
    gets a message instead of a hang or a memory error."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        try:
            siblings = [p.name for p in path.parent.iterdir() if p.name not in CONTENT_FILES]
        except OSError:
            siblings = []
        close = difflib.get_close_matches(path.name, siblings, n=1, cutoff=0.75)
        hint = f" (found {quote(close[0])}: a typo in its name?)" if close else ""
        problems.add(path, None, f"file is missing{hint}")
        return None
    except OSError as error:
        problems.add(path, None, f"cannot be read: {error.strerror or error}")
        return None
    if stat.S_ISDIR(info.st_mode):
        problems.add(path, None, "is a folder, not a file")
        return None
    if not stat.S_ISREG(info.st_mode):
        problems.add(path, None, f"is {_kind_of_file(info.st_mode)}, not a regular file; content files must be "
                                 f"ordinary files")
        return None
    try:
        data = _read_bounded(path) if info.st_size <= MAX_FILE_BYTES else b""
    except OSError as error:
        problems.add(path, None, f"cannot be read: {error.strerror or error}")
        return None
    if info.st_size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:
        size = max(info.st_size, len(data))
        problems.add(path, None, f"is {size:,} bytes, more than the {MAX_FILE_BYTES:,} bytes (2 MB) a content file "
                                 f"may hold")
        return None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        problems.add(path, line, f"is not UTF-8 text (byte 0x{data[error.start]:02x} cannot be decoded); "
                                 f"save the file as UTF-8")
        return None
    control = CONTROL.search(text)
    if control:
        problems.add(path, text.count("\n", 0, control.start()) + 1,
                     f"holds the control character {_codepoint(control.group())}, which no page can show; "
                     f"remove it")
        return None
    return text


def _parse_error_line(text: str, message: str) -> int | None:
    """Where an error tomllib places 'at end of document' starts: the first line from which every prefix of
    text fails the same way (a duplicate last key, an unclosed string or array); found by bisection, so a
    2 MB file costs a few dozen parses, not one per line."""
    lines = text.splitlines()

    def fails(k: int) -> bool:
        try:
            tomllib.loads("\n".join(lines[:k]))
        except tomllib.TOMLDecodeError as error:
            return re.sub(r"\s*\(at .*\)$", "", str(error)) == message
        return False
    if not lines or not fails(len(lines)):
        return None
    low, high = 1, len(lines)  # fails(high) holds
    while low < high:
        middle = (low + high) // 2
        if fails(middle):
            high = middle
        else:
            low = middle + 1
    return high


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


MAX_TOML_NESTING = 100  # arrays and inline tables inside one another: real content needs 2; tomllib recurses
_TOML_TOKEN = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]',
                         re.S)


def _too_deep(text: str) -> int | None:
    """The line where arrays and inline tables first nest more than MAX_TOML_NESTING deep (strings and comments
    skipped), or None."""
    depth = 0
    for token in _TOML_TOKEN.finditer(text):
        bracket = token.group()  # or a string or a comment, skipped whole
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_TOML_NESTING:
                return text.count("\n", 0, token.start()) + 1
        elif bracket in ("]", "}"):
            depth = max(depth - 1, 0)
    return None


def read_toml(problems: Problems, path: Path, text: str | None = None, line_offset: int = 0):
    """Parse TOML, recording a syntax error with its line; (data or None, text)."""
    if text is None:
        text = read_text(problems, path)
        if text is None:
            return None, ""
    try:
        return tomllib.loads(text), text
    except RecursionError:  # tomllib reads nested values by recursion
        line = _too_deep(text)
        problems.add(path, line + line_offset if line else None,
                     f"arrays or inline tables nested more than {MAX_TOML_NESTING} levels deep; real content needs "
                     f"two or three")
        return None, text
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
          unique: tuple[str, ...] = ("name",), most: int | None = None) -> dict:
    """Read a table of tables ([section.id]) into {id: make(id, **fields)}; at most `most` of them."""
    one = SINGULAR.get(section, section)
    tables = data.get(section)
    if tables is None:
        problems.add(path, None, f"missing table [{section}.<id>]: at least one {one} is needed")
        return {}
    if not isinstance(tables, dict) or not tables:
        problems.add(path, locate(text, (section,)),
                     f"[{section}] must hold at least one [{section}.<id>] table, got {describe_value(tables)}")
        return {}
    if most is not None and len(tables) > most:
        problems.add(path, locate(text, (section,)), f"[{section}] holds {len(tables):,} tables, more than the "
                                                     f"{most:,} a plate can show")
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
