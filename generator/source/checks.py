"""The content checks `plate check` and `plate build` share: every mistake at file:line, names in prose slots
with a "did you mean", and warnings about content nothing uses."""
from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import tomllib
import types
import typing
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jinja2
from jinja2 import nodes

from . import content, prose
from .content import Content
from .schema import ContentError, Problems, describe_value, locate, quote, shown_path

MAX_LISTED = 5  # spellings named in a warning: one line stays readable, however many a term has
# What each name a prose slot starts from is, for checking the names read off it.


@dataclass(frozen=True)
class Table:
    """A preset table as prose sees it: ids to objects of one class."""

    name: str
    item: type


@dataclass(frozen=True)
class Method:
    """A method read off an object; calling it gives its return type."""

    returns: object


@dataclass
class Checked:
    """Validated content, the plate module's model of it and the prose as HTML: what a build goes on from."""

    content: Content
    model: object  # what the plate module made of the content (model_of)
    prose_parts: list[str]
    warnings: list[str]


def _did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {quote(close[0])}?)" if close else ""


def _public_names(cls: type) -> list[str]:
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    names |= {n for n in dir(cls) if not n.startswith("_")}
    return sorted(names)


def _plain(annotation) -> object:
    """The class behind an annotation (X | None is X); None for anything not checked further."""
    if isinstance(annotation, (types.UnionType,)) or typing.get_origin(annotation) is typing.Union:
        found = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = found[0] if len(found) == 1 else None
    return annotation if inspect.isclass(annotation) and dataclasses.is_dataclass(annotation) else None


def _hints(obj) -> dict:
    try:
        return typing.get_type_hints(obj)
    except Exception:  # noqa: BLE001 - an annotation that cannot be resolved is simply not followed
        return {}


def _attribute(cls: type, name: str) -> object:
    """What reading name off an instance of cls gives, as far as the checks follow it."""
    member = inspect.getattr_static(cls, name, None)
    if isinstance(member, property):
        return _plain(_hints(member.fget).get("return"))
    if isinstance(member, cached_property):
        return _plain(_hints(member.func).get("return"))
    if inspect.isfunction(member):
        return Method(_plain(_hints(member).get("return")))
    return _plain(_hints(cls).get(name))


class SlotNames:
    """Checks every name a prose part reads off facts and presets, and every filter it applies."""

    def __init__(self, part: content.Prose, ids: dict | None, problems: list[str], module):
        self.part, self.ids, self.problems, self.module = part, ids, problems, module
        self.env = prose.prose_environment()
        self.scope: dict[str, object] = dict(module.SLOT_ROOTS)  # the plate module's names and their types
        self.scope.update({name: Table(name, item) for name, item in module.SLOT_TABLES.items()})
        self.where = shown_path(part.path, part.path.parent)

    def run(self) -> None:
        try:
            tree = prose.parsed(self.part.text)
        except jinja2.TemplateSyntaxError:
            return  # prose.check_prose reports it
        for node in tree.find_all((nodes.Assign, nodes.For)):
            if isinstance(node, nodes.Assign) and isinstance(node.target, nodes.Name):
                self.scope[node.target.name] = self.kind(node.node)
            elif isinstance(node, nodes.For) and isinstance(node.target, nodes.Name):
                self.scope[node.target.name] = self.item_of(node.iter)
        for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
            if isinstance(node, nodes.Filter):
                self.check_filter(node)
            else:
                self.check_read(node)

    def add(self, node: nodes.Node, message: str) -> None:
        line = self.part.first_line + (node.lineno or 1) - 1
        self.problems.append(f"{self.where}, line {line}: {message}")

    def check_filter(self, node: nodes.Filter) -> None:
        if node.name in self.env.filters:
            return
        hint = _did_you_mean(node.name, prose.FILTERS) or _did_you_mean(node.name, self.env.filters)
        self.add(node, f"no filter {quote(node.name)} in prose{hint} (prose's number filters: "
                       f"{', '.join(prose.FILTERS)})")

    def check_read(self, node: nodes.Getattr | nodes.Getitem) -> None:
        owner = self.kind(node.node)
        name = node.attr if isinstance(node, nodes.Getattr) else \
            node.arg.value if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str) else None
        if name is None or owner is None or name.startswith("_"):
            return  # Python's internals are the sandbox's to refuse, with its own message
        if isinstance(owner, Table):
            if isinstance(node, nodes.Getattr) and name in dir(dict):
                return
            known = (self.ids or {}).get(owner.name)
            if known is not None and name not in known:
                self.add(node, f"undefined fact or name in prose: {self.text(node)}: no preset {quote(name)} in "
                               f"[{owner.name}]{_did_you_mean(name, known)} (known: {', '.join(known)})")
            return
        if isinstance(owner, type) and name not in _public_names(owner):
            what = "fact" if owner in self.module.SLOT_CALLS.values() else "field"
            self.add(node, f"undefined fact or name in prose: {self.text(node)}: no {what} {quote(name)} in "
                           f"{owner.__name__}{_did_you_mean(name, _public_names(owner))}")

    def kind(self, node: nodes.Node) -> object:
        """What an expression is, as far as the checks follow it: a class, a Table, a Method, or None."""
        if isinstance(node, nodes.Name):
            return self.scope.get(node.name)
        if isinstance(node, nodes.Call):
            if isinstance(node.node, nodes.Name) and node.node.name in self.module.SLOT_CALLS:
                return self.module.SLOT_CALLS[node.node.name]
            called = self.kind(node.node)
            return called.returns if isinstance(called, Method) else None
        if isinstance(node, (nodes.Getattr, nodes.Getitem)):
            owner = self.kind(node.node)
            if isinstance(owner, Table):
                return owner.item
            name = node.attr if isinstance(node, nodes.Getattr) else None
            if isinstance(owner, type) and name:
                return _attribute(owner, name)
        return None

    def item_of(self, node: nodes.Node) -> object:
        """What a for loop over node gives: a preset table's values are its class."""
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr == "values":
            owner = self.kind(node.node.node)
            return owner.item if isinstance(owner, Table) else None
        return None

    def text(self, node: nodes.Node) -> str:
        """A read as the author wrote it, near enough: default.at_crossing.tokens."""
        if isinstance(node, nodes.Name):
            return node.name
        if isinstance(node, nodes.Getattr):
            return f"{self.text(node.node)}.{node.attr}"
        if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            return f"{self.text(node.node)}[{quote(str(node.arg.value))}]"
        if isinstance(node, nodes.Call):
            return f"{self.text(node.node)}(…)"
        return "…"


def check_prose(module, parts, terms, sources, ids, problems: list[str]) -> None:
    """prose.check_prose, and the names every slot reads (content.load calls this when files have mistakes); ids:
    the preset ids presets.toml declares, or None."""
    prose.check_prose(parts, terms, sources, None if ids is None else module.scenario_ids(ids), problems)
    for part in parts:
        if not prose.nesting_problems(part, part.path.parent):  # too deep for Jinja's parser: reported above
            SlotNames(part, ids, problems, module).run()


def _lines(path: Path, parse: bool = True) -> tuple[str, dict]:
    """A content file's text, and its TOML parsed if asked (a glossary of 1,000 terms takes tomllib 0.3 s)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
        return text, tomllib.loads(text) if parse else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "", {}


def unused(checked_content: Content, prose_parts: list[str]) -> list[str]:
    """Warnings, each at file:line: terms and sources the prose never uses, and the plate module's own (unused)."""
    c = checked_content
    problems = Problems(c.root)
    html = "".join(prose_parts)
    linked = set(re.findall(r'href="#(term|source)-([^"]*)"', html))  # once: a search per entry grew with both
    terms_text, _ = _lines(c.root / "terms.toml", parse=False)
    for term in c.terms.values():
        if ("term", term.id) not in linked:
            written = (term.name, *term.matches)
            spellings = ", ".join(describe_value(s) for s in written[:MAX_LISTED])
            if len(written) > MAX_LISTED:
                spellings += f" or any of its {len(written) - MAX_LISTED:,} other spellings"
            problems.add(c.root / "terms.toml", locate(terms_text, ("terms", term.id)),
                         f"term {quote(term.id)} is never used: the prose never writes {spellings} (singular "
                         f"or plural) nor links to #term-{term.id}")
    sources_text, _ = _lines(c.root / "sources.toml", parse=False)
    for source in c.sources.values():
        if ("source", source.id) not in linked:
            problems.add(c.root / "sources.toml", locate(sources_text, ("sources", source.id)),
                         f"source {quote(source.id)} is never cited: the prose has no cite({quote(source.id)}) "
                         f"nor a link to #source-{source.id}")
    parts = [p for p in (c.plate.assumptions, c.plate.before_figures, c.plate.after_figures) if p is not None]
    problems.items.extend(prose.raw_html_removed(parts))
    problems.items.extend(c.module.unused(c))
    return problems.items


def checked(content_dir: Path) -> Checked:
    """Validate all content and run the model and the prose (no figures, nothing written); ContentError lists
    every mistake at file:line."""
    c = content.load(Path(content_dir), check_prose=check_prose)
    problems: list[str] = []
    module = c.module
    ids = {name: list(getattr(c.presets, name)) for name in module.SLOT_TABLES}
    parts = tuple(p for p in (c.plate.assumptions, c.plate.before_figures, c.plate.after_figures) if p is not None)
    check_prose(module, parts, c.terms, c.sources, ids, problems)
    model = module.model_of(c)
    module.check_model(model, c.root)
    try:
        parts = prose.prose_html(c, model)
    except ContentError as error:
        # Rendering stops at a part's first failing slot: keep what it found on lines not reported above.
        seen = {p.split(": ", 1)[0] for p in problems}
        problems += [p for p in error.problems if p.split(": ", 1)[0] not in seen and p not in problems]
    if problems:
        raise ContentError(problems)
    return Checked(c, model, parts, unused(c, [*parts, parts.assumptions]))  # the disclosure's prose counts too


def page_checked(result: Checked) -> None:
    """What the build's page stage refuses of a plate's PAGE, with nothing written or bundled: its Python compiled
    for the page (generator/page/compiler.py: a call or construct the page cannot run, at its file and line) and joined
    with the engine's page modules, and its promises at the default selection (render.page_datasets: every figure
    has rows, a title and words, every control changes something), the figures drawn or, as a build does, taken
    from the build cache. `plate check` runs it, so that it fails wherever `plate build` would."""
    from ..site import cache  # here: only `plate check` needs them
    from ..page import jsmodules, render, runtime
    from ..plate import texts
    c, model = result.content, result.model
    module = c.module
    if texts.page_of(module) is None:
        return
    jsmodules.concatenate(texts.page_modules(module))  # a name two modules declare fails here as in the build
    store = cache.at(runtime.cache_dir(), module)
    figures = module.figures(c, model, store)
    fill = module.page(c, model, figures, None, store)
    render.page_datasets(module, fill["data"], figures)
