"""Prose: fill fact slots from the model, Markdown to sanitised HTML, link terms and citations."""
from __future__ import annotations

import bisect
import contextlib
import functools
import html
import os
import re
import signal
import sys
import threading
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2
import jinja2.sandbox
import markdown
import nh3
import numpy as np

from ..plate import plates
from .content import Content, Prose
from ..page.notation import about, billions, data_size, fraction, gigabytes, num, percent, seconds, sig
from .schema import ContentError, describe_value, quote, shown_path

try:
    import resource
except ImportError:  # not on Windows: no memory limit for the slots there
    resource = None

# What prose may contain once it is HTML: structure and emphasis, links, nothing that runs.
PROSE_TAGS = {"p", "em", "strong", "a", "ul", "ol", "li", "h2", "h3", "h4", "code", "blockquote", "sup",
              "sub", "br", "hr", "abbr", "b", "i", "span"}
PROSE_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}}
CITE_TOKEN = "\u27e6cite:{}\u27e7"  # survives Markdown and sanitising, then becomes a link


# --- numbers as the prose writes them: generator/page/notation.py, shared with the readouts and tables ----


def _needs_value(name: str, function):
    """A filter that explains a missing value instead of failing inside Python's formatting."""
    def checked(value, *args):
        if value is None:
            raise ValueError(f"'{name}' got no value: the fact is empty for this selection "
                             f"(a crossing that does not happen within the grid?)")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError(f"'{name}' needs a number, got {describe_value(value)}")
        return function(value, *args)
    checked.__doc__ = function.__doc__
    return checked


def measure(value, digits: int = 0) -> str:
    """The prose's `num`: a count as it is (num: 1,024); with decimals asked for (`num(1)`, written before the
    one rule), a measure to three significant figures as notation.sig writes it (128.48 → '128')."""
    return num(value) if digits == 0 else sig(value)


FILTERS = {name: _needs_value(name, f) for name, f in
           {"num": measure, "seconds": seconds, "percent": percent, "billions": billions, "fraction": fraction,
            "data_size": data_size, "gigabytes": gigabytes, "sig": sig}.items()}


# --- slots ---------------------------------------------------------------------------------------

# In-page links prose may write, checked at build time: [text](#term-overlap), [text](#source-li2020).
_ANCHOR_LINK = re.compile(r"""(?:\]\(\s*<?|href\s*=\s*["']?)#(term|source)-([^)\s"'>]*)""")
# What prose may read of numpy values (the grid): nothing that writes, to memory or to files.
_NUMPY_READS = {"shape", "size", "ndim", "dtype", "min", "max", "sum", "mean", "prod", "argmin", "argmax",
                "tolist", "item", "round", "any", "all", "real", "imag"}


def _prose_line(error: BaseException, name: str) -> int | None:
    """The template line an error in prose was raised from, if the traceback knows it."""
    if getattr(error, "lineno", None) and isinstance(error, jinja2.TemplateSyntaxError):
        return error.lineno
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == name]
    return lines[-1] if lines else None


@dataclass
class ProseContext:
    """What prose slots may name: the plate module's names (prose_names) and cite()."""

    content: Content
    model: object  # what the plate module made of the content (model_of)

    def variables(self) -> dict:
        """The names a prose template can use."""
        return {**self.content.module.prose_names(self.content, self.model), "cite": self.cite,
                "plates": self.content.plate.plates}

    def cite(self, source_id: str, *rest) -> str:
        """A citation mark for a source of sources.toml."""
        if rest:
            raise LookupError("cite() takes one source id; cite each source on its own")
        if not isinstance(source_id, str) or source_id not in self.content.sources:
            known = ", ".join(self.content.sources) or "none"
            raise LookupError(f"cite(): no source {describe_value(source_id)} in sources.toml (known: {known})")
        return CITE_TOKEN.format(source_id)


# What one operation in a slot may make: far beyond any sentence, far below what would stall or exhaust a build.
MAX_SLOT_ITEMS = 1_000_000  # characters of a text, or items of a list
MAX_SLOT_BITS = 100_000  # of a whole number (about 30,000 digits); Python multiplies huge ones without a pause


def _sized(value) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _result_size(operator: str, left, right) -> str | None:
    """Why `left operator right` would be too large to make, before making it (None when it is not)."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if _sized(seq) is not None and _whole(times) and _sized(seq) * int(times) > MAX_SLOT_ITEMS:
                return (f"{'text' if isinstance(seq, str) else 'a list'} repeated {int(times):,} times would hold "
                        f"{_sized(seq) * int(times):,} {'characters' if isinstance(seq, str) else 'items'}")
        if _whole(left) and _whole(right) and int(left).bit_length() + int(right).bit_length() > MAX_SLOT_BITS:
            return "a product of whole numbers with too many digits"
    elif operator == "**":
        if _whole(left) and _whole(right) and abs(int(left)) > 1 and int(right) > 0 and \
                int(left).bit_length() * int(right) > MAX_SLOT_BITS:
            return "a power of whole numbers with too many digits"
    elif operator == "+":
        if _sized(left) is not None and _sized(right) is not None and _sized(left) + _sized(right) > MAX_SLOT_ITEMS:
            return f"joining them would hold {_sized(left) + _sized(right):,} characters or items"
    return None


class ProseSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """Prose templates may read facts and presets, never change them, reach Python's internals or write files."""

    # Intercepted operators are also never folded at compile time (jinja2.nodes.BinExpr.as_const): a constant
    # {{ 9**(9**9) }} would otherwise be computed, without any limit, while the prose compiles.
    intercepted_binops = frozenset({"*", "**", "+"})

    def is_safe_attribute(self, obj, attr, value) -> bool:
        if isinstance(obj, (np.ndarray, np.generic)) and attr not in _NUMPY_READS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def call_binop(self, context, operator: str, left, right):
        """The operator, refused when its result would be too large to make quickly."""
        why = _result_size(operator, left, right)
        if why:
            raise ValueError(f"'{operator}' in a slot: {why}; prose may make texts and lists of at most "
                             f"{MAX_SLOT_ITEMS:,} items and whole numbers of at most {MAX_SLOT_BITS:,} bits")
        return super().call_binop(context, operator, left, right)


_MARKDOWN_SPECIAL = re.compile(r"""([\\`*_{}\[\]()#+\-.!"'])""")  # what Python-Markdown (with smarty) unescapes
_CITE_ONLY = re.compile("\u27e6cite:[^\u27e7]+\u27e7")


def as_text(value) -> str:
    """What a slot writes into the Markdown: its value as text, so `<turbo>` and `*3*` show as written
    (HTML escaped, Markdown's characters backslash-escaped); cite()'s marks pass as they are."""
    text = str(value)
    if _CITE_ONLY.fullmatch(text):
        return text
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def prose_environment() -> jinja2.Environment:
    """Jinja for prose: sandboxed, strict about names; what slots write is text (as_text), never markup."""
    env = ProseSandbox(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
                       finalize=as_text)
    env.filters.update(FILTERS)
    env.filters.update(WORD_FILTERS)
    env.globals.update(HELPERS)
    return env


def _slot_message(error: Exception, names: tuple[str, ...]) -> str:
    """What went wrong in a slot, in the author's terms (names: what prose can use, the plate's PROSE_NAMES)."""
    if isinstance(error, jinja2.UndefinedError):
        message = re.sub(r"'(?:[\w.]+\.)?(\w+) object'", r"\1", error.message or str(error))
        return f"undefined fact or name in prose: {message} (prose can use {', '.join(names)})"
    if isinstance(error, jinja2.sandbox.SecurityError):
        return f"not allowed in prose: {error}"
    if isinstance(error, (LookupError, ValueError, TimeoutError)) and str(error):
        return str(error)
    if isinstance(error, MemoryError):
        return (f"filling the slots needed more than {MAX_FILL_BYTES // 2**20:,} MB of memory: a text or list "
                f"made far too long (a width, a count, a loop that doubles it)?")
    return f"a slot failed: {type(error).__name__}: {error}"


_BLOCK_TAG = re.compile(r"\{%[-+]?\s*(\w+)([^%]*?)[-+]?%\}")
_BLOCKS = {"if", "for", "macro", "call", "filter", "block", "with", "raw", "autoescape", "trans"}


def _unclosed_block(text: str) -> tuple[int, str] | None:
    """(line, tag) of the innermost {% tag %} never closed by {% endtag %}, for Jinja's end-of-template errors."""
    stack: list[tuple[int, str]] = []
    for match in _BLOCK_TAG.finditer(text):
        tag, rest = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        if tag in _BLOCKS or (tag == "set" and "=" not in rest):
            stack.append((line, tag))
        elif tag.startswith("end") and stack and stack[-1][1] == tag[3:]:
            stack.pop()
    return stack[-1] if stack else None


def _syntax_problem(prose: Prose, error: jinja2.TemplateSyntaxError, root: Path) -> str:
    """A template syntax error in prose, at the line an author would look at."""
    line = prose.first_line + (error.lineno or 1) - 1
    message = error.message or str(error)
    opened = _unclosed_block(prose.text) if "end of template" in message else None
    if opened:
        line = prose.first_line + opened[0] - 1
        message = f"{{% {opened[1]} %}} is never closed by {{% end{opened[1]} %}}"
    return f"{shown_path(prose.path, root)}, line {line}: template syntax error in prose: {message}"


# Prose that Markdown and Jinja can read fast: Python-Markdown's inline parsing grows with the square (or
# worse) of the brackets in a paragraph, and both recurse once per level of nesting.
MAX_PROSE_CHARS = 50_000  # about 8,000 words, seven times the real plate; Markdown takes ~0.6 ms an emphasis
MAX_BLOCK_CHARS = 20_000  # one paragraph, list or quote (lines between blank lines)
MAX_NESTING = 16  # levels of {% if %}/{% for %}, brackets, HTML tags, list indentation or > quotes
_BRACKET = re.compile(r"[\[\](){}]")
_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)\b[^<>]*?(/?)>")
_VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source", "track"}
_LIST_OR_QUOTE = re.compile(r"^([ \t]*)((?:>[ \t]*)*)(?:[-*+]|\d+[.)])?")


def _deepest(tokens, opens, closes) -> tuple[int, int] | None:
    """(offset, depth) where nesting first exceeds MAX_NESTING among (offset, token) pairs, or None."""
    depth = 0
    for offset, token in tokens:
        if opens(token):
            depth += 1
            if depth > MAX_NESTING:
                return offset, depth
        elif closes(token):
            depth = max(depth - 1, 0)
    return None


def nesting_problems(prose: Prose, root: Path) -> list[str]:
    """Prose too long or nested too deeply for Markdown and Jinja to read in reasonable time: `file, line N: …`."""
    text = prose.text

    def where(offset: int) -> str:
        return f"{shown_path(prose.path, root)}, line {prose.first_line + text.count(chr(10), 0, offset)}"
    if len(text) > MAX_PROSE_CHARS:
        return [f"{where(0)}: this part of the prose holds {len(text):,} characters, more than the "
                f"{MAX_PROSE_CHARS:,} a plate may hold"]
    blocks = [(m.start(), m.group()) for m in _BLOCK_TAG.finditer(text)]
    deep = _deepest(blocks, lambda t: _BLOCK_TAG.match(t).group(1) in _BLOCKS,
                    lambda t: _BLOCK_TAG.match(t).group(1).startswith("end"))
    if deep:
        return [f"{where(deep[0])}: {{% … %}} blocks nested {MAX_NESTING + 1} deep; at most {MAX_NESTING} "
                f"levels are allowed"]
    for block in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text):
        start, body = block.start(), block.group()
        if len(body) > MAX_BLOCK_CHARS:
            return [f"{where(start)}: a paragraph of {len(body):,} characters (lines without a blank line "
                    f"between them), more than {MAX_BLOCK_CHARS:,}; split it with blank lines"]
        brackets = [(start + m.start(), m.group()) for m in _BRACKET.finditer(body)]
        deep = _deepest(brackets, lambda t: t in "[({", lambda t: t in "])}")
        if deep:
            return [f"{where(deep[0])}: brackets nested or left open {MAX_NESTING + 1} deep; at most "
                    f"{MAX_NESTING} levels are allowed"]
        tags = [(start + m.start(), m) for m in _TAG.finditer(body)]
        deep = _deepest(tags, lambda m: not m.group(1) and not m.group(3) and m.group(2).lower() not in _VOID,
                        lambda m: bool(m.group(1)))
        if deep:
            return [f"{where(deep[0])}: HTML tags nested or left open {MAX_NESTING + 1} deep; at most "
                    f"{MAX_NESTING} levels are allowed"]
        offset = start
        for line in body.splitlines(keepends=True):
            indent, quotes = _LIST_OR_QUOTE.match(line).group(1, 2)
            if len(indent.expandtabs(4)) // 4 > MAX_NESTING or quotes.count(">") > MAX_NESTING:
                return [f"{where(offset)}: lists or quotes nested more than {MAX_NESTING} levels deep"]
            offset += len(line)
    return []


_SLOT = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_CITE_CALL = re.compile(r"""\bcite\(\s*(["'])([^"'\n]*)\1\s*\)""")
_SCENARIO_CALL = re.compile(r"\bscenario\(([^)\n]*)\)")
_KEYWORD = re.compile(r"""\b(\w+)\s*=\s*(["'])([^"'\n]*)\2""")


def check_prose(parts, terms: dict | None, sources: dict | None, ids: dict | None, problems: list[str]) -> None:
    # ids: {scenario() keyword: the preset ids it may name} (the plate module's scenario_ids), or None
    """What of the prose can be checked before the model runs: template syntax, cite("…") and
    scenario(…="…") naming what exists, #term-/#source- links. (content.load calls this, so these mistakes
    are reported with those of the files; a None table is one whose file has mistakes: not checked against.)"""
    for prose in parts:
        root = prose.path.parent
        deep = nesting_problems(prose, root)
        if deep:
            problems.extend(deep)
            continue
        try:
            parsed(prose.text)
        except jinja2.TemplateSyntaxError as error:
            problems.append(_syntax_problem(prose, error, root))
            continue
        _check_links(prose, terms, sources, problems, root)
        for slot in _SLOT.finditer(prose.text):  # only code, not words that happen to read cite("x")
            line = slot.group(0)
            number = prose.first_line + prose.text.count("\n", 0, slot.start())
            where = f"{shown_path(prose.path, root)}, line {number}"
            if sources is not None:
                for _, ident in _CITE_CALL.findall(line):
                    if ident not in sources:
                        problems.append(f"{where}: cite(): no source {quote(ident)} in sources.toml "
                                        f"(known: {', '.join(sources) or 'none'})")
            if ids is not None:
                for call in _SCENARIO_CALL.findall(line):
                    for kind, _, ident in _KEYWORD.findall(call):
                        table = ids.get(kind)
                        if table is not None and ident not in table:
                            problems.append(f"{where}: scenario(): {kind} {quote(ident)} is not a preset "
                                            f"(known: {', '.join(table)})")


MAX_FILL_SECONDS = 5  # the real plate fills in a few milliseconds; nested loops over range() could run for hours
# Memory the slots may take on top of what the process holds: the operators' checks (call_binop) cannot foresee
# everything, e.g. a text doubled in a loop ({% set ns.s = ns.s ~ ns.s %}); the real plate needs a few MB.
MAX_FILL_BYTES = 512 * 2**20


def _address_space() -> int | None:
    """The process's virtual memory size in bytes (Linux), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def _memory_limit(extra: int):
    """MemoryError in the block, instead of a machine out of memory, beyond extra bytes more than now. (The limit
    is the process's address space: other threads, serve's, share the room while slots fill, a few ms for real
    prose.)"""
    now = _address_space() if resource is not None else None
    if now is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = now + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        yield  # already bounded as tightly
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise TimeoutError in the block after seconds, MemoryError beyond MAX_FILL_BYTES more memory (main thread
    only: where signals arrive, and nothing else of plate runs meanwhile)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"filling the slots took more than {seconds} s: a loop that runs too often?")
    previous = signal.signal(signal.SIGALRM, expired)
    try:
        with _memory_limit(MAX_FILL_BYTES):
            signal.setitimer(signal.ITIMER_REAL, seconds)
            try:
                yield
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)  # first: no alarm may cut short lifting the memory limit
    finally:
        signal.signal(signal.SIGALRM, previous)


@functools.lru_cache(maxsize=8)
def parsed(text: str) -> jinja2.nodes.Template:
    """The prose's syntax tree, parsed once per text for the checks that read it (never changed: the compiler,
    which may rewrite a tree, parses its own)."""
    return prose_environment().parse(text)


@functools.lru_cache(maxsize=8)
def compiled(text: str, name: str) -> jinja2.Template:
    """The prose compiled as a template, once per text: a build checks the prose, then renders it into the page."""
    template = prose_environment().from_string(text)
    template.filename = name
    return template


def _filled(template: jinja2.Template, variables: dict) -> str:
    """The template rendered, stopped where it has made more than MAX_SLOT_ITEMS characters: a loop that writes
    would otherwise fill the memory (or the time limit) first, and say nothing of where."""
    chunks, size = [], 0
    stream = template.generate(variables)
    for chunk in stream:
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_SLOT_ITEMS:  # raised where the template is, so the error names its line
            stream.throw(ValueError(f"filling the slots made more than {MAX_SLOT_ITEMS:,} characters of prose: a "
                                    f"loop that runs too often?"))
    return "".join(chunks)


def fill_slots(prose: Prose, context: ProseContext, problems: list[str], root: Path) -> str:
    """Prose with its {{ slots }} filled from the model; mistakes appended to problems with their line."""
    name = str(prose.path)
    shown = shown_path(prose.path, root)
    try:
        with _time_limit(MAX_FILL_SECONDS):  # compiling too: Jinja evaluates constant expressions while it compiles
            return _filled(compiled(prose.text, name), context.variables())
    except jinja2.TemplateSyntaxError as error:
        problems.append(_syntax_problem(prose, error, root))
    except plates.ModuleError:
        raise  # the plate module's hook failed (prose_names): its own one line, not the prose's
    except Exception as error:  # noqa: BLE001 - any failure of a slot is the author's to fix
        where = _prose_line(error, name)
        line = f", line {prose.first_line + where - 1}" if where else ""
        names = context.content.module.PROSE_NAMES
        if names is None:  # the plate declares none (generator/plate/plates.py): the names its slots are given
            names = tuple(context.variables())
        problems.append(f"{shown}{line}: {_slot_message(error, names)}")
    return ""


def check_links(prose: Prose, content: Content, problems: list[str], root: Path) -> None:
    """Links in prose to #term-<id> and #source-<id> must name a term or a source that exists."""
    _check_links(prose, content.terms, content.sources, problems, root)


def _check_links(prose: Prose, terms: dict | None, sources: dict | None, problems: list[str], root: Path) -> None:
    for number, line in enumerate(prose.text.splitlines(), start=prose.first_line):
        for kind, ident in _ANCHOR_LINK.findall(line):
            table = terms if kind == "term" else sources
            if table is not None and ident not in table:
                file = "terms.toml" if kind == "term" else "sources.toml"
                problems.append(f"{shown_path(prose.path, root)}, line {number}: link to #{kind}-{ident}: no {kind} "
                                f"{quote(ident)} in {file} (known: {', '.join(table) or 'none'})")


# --- Markdown and links --------------------------------------------------------------------------

def slug(text: str) -> str:
    """'Linear until it is not' → 'linear-until-it-is-not'."""
    return re.sub(r"[^a-z0-9]+", "-", html.unescape(text).lower()).strip("-") or "section"


def markdown_to_html(text: str, used_ids: set[str] | None = None) -> str:
    """Markdown → HTML with raw HTML sanitised away and headings given ids (unique across used_ids)."""
    used = set() if used_ids is None else used_ids
    rendered = markdown.markdown(text, extensions=["smarty"], output_format="html")
    clean = nh3.clean(rendered, tags=PROSE_TAGS, attributes=PROSE_ATTRIBUTES,
                      url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer")

    def heading(m: re.Match) -> str:
        base = slug(re.sub("<[^>]+>", "", m.group(2)))
        ident, k = base, 2
        while ident in used:
            ident, k = f"{base}-{k}", k + 1
        used.add(ident)
        return f'<h{m.group(1)} id="{ident}">{m.group(2)}</h{m.group(1)}>'
    return re.sub(r"<h([234])>(.*?)</h\1>", heading, clean, flags=re.S)


_RAW_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s[^<>]*)?)/?>")
_ATTRIBUTE = re.compile(r"([^\s=/]+)(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?")
_CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$|`[^`\n]*`", re.M | re.S)  # fenced blocks and code spans: text


def raw_html_removed(parts) -> list[str]:
    """Warnings, at their lines, for raw HTML in the prose that sanitising removes: a tag prose may not hold
    (<script>, <div>, <img>, …) or an attribute it may not (<a onclick>, <span style>); the text inside stays."""
    found = []
    for prose in parts:
        text = _CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose.text)  # code is shown, not run
        for tag in _RAW_TAG.finditer(text):
            name = tag.group(1).lower()
            line = prose.first_line + text.count("\n", 0, tag.start())
            where = f"{shown_path(prose.path, prose.path.parent)}, line {line}"
            if name not in PROSE_TAGS:
                found.append(f"{where}: raw HTML <{name}> in the prose is removed from the page (prose is Markdown; "
                             f"the tags it may hold: {', '.join(sorted(PROSE_TAGS))})")
                continue
            allowed = PROSE_ATTRIBUTES.get(name, set())
            dropped = [a.group(1) for a in _ATTRIBUTE.finditer(tag.group(2)) if a.group(1).lower() not in allowed]
            if dropped:
                found.append(f"{where}: raw HTML <{name}>: its {', '.join(dropped)} "
                             f"{'is' if len(dropped) == 1 else 'are'} removed from the page (prose's <{name}> may "
                             f"hold {', '.join(sorted(allowed)) or 'no attribute'})")
    return found


_CITE_TOKEN = re.compile("\u27e6cite:([^\u27e7]+)\u27e7")


def citation_order(texts: list[str], content: Content) -> list[str]:
    """Source ids in the order the prose first cites them (cite() tokens only, not forged ones)."""
    order: list[str] = []
    for text in texts:
        for sid in _CITE_TOKEN.findall(text):
            if sid in content.sources and sid not in order:
                order.append(sid)
    return order


def sources_in_order(content: Content, order: list[str]) -> dict:
    """The sources as the page lists them: cited ones in reading order, then any never cited, in file order."""
    return {sid: content.sources[sid] for sid in [*order, *(s for s in content.sources if s not in order)]}


def link_citations(prose_html: str, content: Content, order: list[str] | None = None) -> str:
    """Replace citation tokens with links numbered in reading order (only tokens cite() made can match)."""
    numbers = list(sources_in_order(content, order or []))

    def link(match: re.Match) -> str:
        sid = match.group(1)
        if sid not in content.sources:
            return match.group(0)
        number = numbers.index(sid) + 1
        return f'<sup class="cite"><a href="#source-{sid}" aria-label="source {number}">[{number}]</a></sup>'
    return _CITE_TOKEN.sub(link, prose_html)


def _term_link(term_id: str, text: str) -> str:
    """A link to a glossary term, as automatic and hand-written links both come out."""
    return f'<a class="term" href="#term-{term_id}" aria-describedby="def-{term_id}">{text}</a>'


_HAND_TERM_LINK = re.compile(r'<a\b[^>]*?\bhref="#term-([^"]*)"[^>]*>')


def _fold(char: str) -> str:
    """A character as the term index compares it: lower case, where that is one character."""
    lower = char.lower()
    return lower if len(lower) == 1 else char


def _folded(text: str) -> str:
    """Each character of text as _fold gives it (at once where lower case keeps the length, as it nearly always
    does)."""
    lower = text.lower()
    return lower if len(lower) == len(text) else "".join(map(_fold, text))


_END_OF_TERM = re.compile(r"[\w-]")  # a spelling must not be followed by one of these (nor preceded, with & and #)


class TermIndex:
    """Every spelling of every term, found in one pass over a text: a regular expression of the spellings' first
    characters finds where one may start, a sorted list of them says which do (narrowed by bisection a character
    at a time, as a trie would be walked); about linear in the text, whatever the number of terms (a search per
    term was quadratic). Where several terms match at one place, the first in terms.toml wins, with its longest
    spelling there, as when each term was searched for on its own."""

    def __init__(self, spellings: tuple[tuple[str, tuple[str, ...]], ...]):
        self.ids = [term_id for term_id, _ in spellings]
        self.owners: dict[str, set[int]] = {}
        for index, (_, written) in enumerate(spellings):
            # as the sanitised HTML writes them (Q&A is Q&amp;A there); never inside an entity such as &amp;
            for spelling in written:
                self.owners.setdefault(_folded(html.escape(spelling, quote=False)), set()).add(index)
        self.sorted = sorted(self.owners)
        self.starts = re.compile(r"(?<![\w&#-])" + _prefix_regex({s[:3] for s in self.sorted}), re.IGNORECASE)

    @classmethod
    @functools.lru_cache(maxsize=4)
    def of(cls, spellings: tuple[tuple[str, tuple[str, ...]], ...]) -> "TermIndex":
        """The index of ((term id, its spellings), …), made once while they stay the same (check, then render)."""
        return cls(spellings)

    def matches_at(self, text: str, folded: str, start: int) -> dict[int, int]:
        """{term index: end of its longest spelling} for the spellings that match text (folded: _folded(text))
        at start."""
        found: dict[int, int] = {}
        low, high, end = 0, len(self.sorted), start
        while low < high:
            if end > start and self.sorted[low] == folded[start:end] and \
                    (end == len(text) or not _END_OF_TERM.match(text, end)):
                for index in self.owners[self.sorted[low]]:
                    found[index] = end  # later ends are longer spellings
            if end == len(text):
                break
            prefix = folded[start:end + 1]  # the spellings that begin with it lie together in the sorted list
            low = bisect.bisect_left(self.sorted, prefix, low, high)
            if ord(prefix[-1]) < sys.maxunicode:
                high = bisect.bisect_left(self.sorted, prefix[:-1] + chr(ord(prefix[-1]) + 1), low, high)
            end += 1
        return found

    def link_first(self, text: str, pending: set[int]) -> str:
        """Link, in one run of text, the earliest use of each pending term (removed from pending as linked)."""
        result, position = [], 0
        search_from, folded = 0, _folded(text)
        while pending:
            found = self.starts.search(text, search_from)
            if found is None:
                break
            start = found.start()
            here = [(index, end) for index, end in self.matches_at(text, folded, start).items() if index in pending]
            if not here:  # no spelling here after all, or only terms linked already: one may start within
                search_from = start + 1
                continue
            index, end = min(here)
            pending.discard(index)
            result.append(text[position:start])
            result.append(_term_link(self.ids[index], text[start:end]))
            position = search_from = end
        result.append(text[position:])
        return "".join(result)


def _prefix_regex(prefixes: set[str]) -> str:
    """A regular expression for a set of short strings, shaped like their trie (an alternation of thousands of
    words would be tried one by one at every place)."""
    if not prefixes:
        return "(?!)"  # matches nowhere
    groups: dict[str, set[str]] = {}
    for prefix in prefixes:
        groups.setdefault(prefix[:1], set()).add(prefix[1:])
    branches = []
    for first, rests in sorted(groups.items()):
        longer = rests - {""}
        tail = f"(?:{_prefix_regex(longer)}){'?' if '' in rests else ''}" if longer else ""
        branches.append(re.escape(first) + tail)
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


def plural_of(spelling: str) -> str | None:
    """A spelling's English plural as the glossary finds it (docs/checks.md; case is ignored): -ies for a consonant
    and y, -es after s, x, z, ch or sh, else -s; None where it does not end in a letter (C++, x86-64)."""
    if not spelling[-1:].isalpha():
        return None
    lower = spelling.lower()
    if lower.endswith("y") and lower[-2:-1].isalpha() and lower[-2] not in "aeiou":
        return spelling[:-1] + "ies"
    return spelling + ("es" if lower.endswith(("s", "x", "z", "ch", "sh")) else "s")


def term_spellings(terms: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """((term id, every spelling the prose may use it by), …) in terms.toml's order: its name and matches, and the
    plural of each; a plural that another term writes as a spelling of its own is left to that term."""
    written = {s.strip().casefold(): t.id for t in terms.values() for s in (t.name, *t.matches)}
    out = []
    for term in terms.values():
        own = (term.name, *term.matches)
        plurals = (plural_of(s) for s in own)
        out.append((term.id, own + tuple(p for p in plurals if p and written.get(p.casefold(), term.id) == term.id)))
    return tuple(out)


def link_terms(parts: list[str], content: Content) -> list[str]:
    """Link each glossary term at its first use across the prose parts (outside links and headings), by any of its
    spellings or their plurals; a term the author linked by hand ([x](#term-id)) gets the same link and is not
    linked again after it."""
    index = TermIndex.of(term_spellings(content.terms))
    pending = set(range(len(index.ids)))
    number = {term_id: i for i, term_id in enumerate(index.ids)}
    out = []
    for part in parts:
        pieces = re.split(r"(<[^>]+>)", part)
        blocked = 0
        for i, piece in enumerate(pieces):
            if piece.startswith("<"):
                hand = _HAND_TERM_LINK.match(piece)
                if hand and hand.group(1) in content.terms:
                    pending.discard(number[hand.group(1)])
                    pieces[i] = _term_link(hand.group(1), "")[:-len("</a>")]
                tag = re.match(r"</?([a-zA-Z0-9]+)", piece)
                if tag and tag.group(1).lower() in {"a", "h2", "h3", "h4", "sup"}:
                    blocked += -1 if piece.startswith("</") else 1
                continue
            if blocked or not pending:
                continue
            pieces[i] = index.link_first(piece, pending)
        out.append("".join(pieces))
    return out


class ProseHtml(tuple):
    """The prose before and after the figures as safe HTML (index 0 and 1), the sources in citation order, and the
    workshop's assumptions ("" when the plate marks none)."""

    sources: dict
    assumptions: str

    def __new__(cls, parts: list[str], sources: dict, assumptions: str = ""):
        made = super().__new__(cls, parts)
        made.sources = sources
        made.assumptions = assumptions
        return made


def prose_html(content: Content, model) -> ProseHtml:
    """The prose before and after the figures as safe HTML; ContentError listing every mistake in it."""
    problems: list[str] = []
    context = ProseContext(content, model)
    plate = content.plate
    texts = []
    # In the page's order: the assumptions (in the disclosure beside Figure 1), then the prose before and after.
    parts = (plate.assumptions, plate.before_figures, plate.after_figures) if plate.assumptions is not None else \
        (plate.before_figures, plate.after_figures)
    problems = [p for part in parts for p in nesting_problems(part, content.root)]
    if problems:
        raise ContentError(problems)
    for part in parts:
        texts.append(fill_slots(part, context, problems, content.root))
        check_links(part, content, problems, content.root)
    if problems:
        raise ContentError(problems)
    used: set[str] = set()
    order = citation_order(texts, content)
    parts = [link_citations(markdown_to_html(t, used), content, order) for t in texts]
    assumptions = parts.pop(0) if plate.assumptions is not None else ""
    # Terms link at their first use as a reader with scripts reads: the disclosure of the assumptions, closed on
    # screen, after the prose (citations keep the page's order, where the assumptions come first).
    *parts, assumptions = link_terms([*parts, assumptions], content)
    return ProseHtml(parts, sources_in_order(content, order), assumptions)


# --- words that follow the facts: prose states no relation its numbers contradict (issue 8) -------

def _number(name: str, value) -> float:
    if value is None:
        raise ValueError(f"{name}() got no value: a fact is empty for this selection "
                         f"(a crossing that does not happen within the grid?)")
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise ValueError(f"{name}() needs numbers, got {describe_value(value)}")
    return float(value)


def compare(a, b, less: str, same: str, more: str) -> str:
    """The word for how a stands to b: compare(x, y, "sooner", "at the same count", "later")."""
    x, y = _number("compare", a), _number("compare", b)
    if abs(x - y) <= 1e-9 * max(abs(x), abs(y)):
        return same
    return less if x < y else more


_SCALES = {2: "doubles", 3: "triples", 4: "quadruples", 0.5: "halves", 1: "leaves unchanged"}


def scales(ratio) -> str:
    """What multiplying by a ratio does, as a verb: 2 → 'doubles', 0.5 → 'halves'."""
    r = _number("scales", ratio)
    for value, word in _SCALES.items():
        if abs(r - value) <= 1e-9 * value:
            return word
    return f"multiplies by {num(r, 2)}"


def check(condition, message: str) -> str:
    """Refuse the build when a claim the prose makes without a number is false: {{ check(a == b, "why") }}."""
    if not isinstance(condition, (bool, np.bool_)):
        raise ValueError(f"check() needs a true-or-false condition, got {describe_value(condition)}")
    if not condition:
        raise ValueError(f"the prose claims something its facts contradict: {message}")
    return ""


def modifier(name: str) -> str:
    """A preset name as a compound modifier: '1M tokens' → '1M-token' (a 1M-token batch)."""
    if not isinstance(name, str):
        raise ValueError(f"'modifier' needs a name, got {describe_value(name)}")
    head, _, unit = name.strip().rpartition(" ")
    if not head:
        return name
    return f"{head}-{unit[:-1] if unit.endswith('s') and not unit.endswith('ss') else unit}"


HELPERS = {"compare": compare, "scales": scales, "check": check}
WORD_FILTERS = {"about": _needs_value("about", about), "modifier": modifier}
