"""Read a plate's content folder into validated dataclasses, checked by schema.py: every mistake as `file, line N: …`.

The plate module (generator/plate/plates.py finds it) reads its own presets and its [default]; this module reads the rest."""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..plate import plates
from .schema import MAX_ENTRIES, Problems, describe_value, fields, keyed, locate, quote, read_text, read_toml, unknown_tables

FIGURES_MARK = "[[figures]]"
ASSUMPTIONS_MARK = "[[assumptions]]"  # before [[figures]]: the prose from it to there folds in with the other controls
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
    default: object  # the plate module's Selection: [default]'s choices
    before_figures: Prose
    after_figures: Prose
    data_file: str = "data.csv"
    labels: dict = dataclasses.field(default_factory=lambda: dict(LABELS))
    plates: dict = dataclasses.field(default_factory=dict)  # {subject: "XIV.5"}: the plates this one refers to
    question: str = ""  # the one sentence under the deck that asks what Figure 1 answers
    first_controls: tuple[str, ...] = ()  # the controls beside Figure 1 (none named: the first three)
    assumptions: Prose | None = None  # the prose between [[assumptions]] and [[figures]], in the disclosure


@dataclass(frozen=True)
class Content:
    """All the content of the plate, validated."""

    root: Path
    plate: Plate
    presets: object  # what the plate module read from its presets
    terms: dict[str, Term]
    sources: dict[str, Source]
    module: object = dataclasses.field(default=None, repr=False, compare=False)  # the plate module (plates.py)


# --- the files -----------------------------------------------------------------------------------

TERM_SCHEMA = {"name": "text", "definition": "text", "matches": "texts"}
SOURCE_SCHEMA = {"authors": "text", "title": "text", "venue": "text", "url": "url", "label": "text", "note": "text"}
FRONT_MATTER_SCHEMA = {"volume": "text", "volume_title": "text", "plate": "count", "plates_in_volume": "count",
                       "title": "text", "deck": "text", "keywords": "texts", "takeaway": "text", "default": "table",
                       "data_file": "text", "labels": "table", "plates": "table", "question": "text",
                       "first_controls": "texts"}
# data_file: the CSV's name in the site (else the title's slug); labels: the page's fixed texts, each replaceable;
# plates: the series' plates this one refers to, by subject (sharding = "XIV.5"), which the readout names. Where the
# site is published (base_url) is the volume's: volume.toml's [site].
FRONT_MATTER_OPTIONAL = {"data_file": "", "labels": {}, "plates": {}, "question": "", "first_controls": []}
# question: the sentence under the deck; first_controls: the keys of the controls shown beside Figure 1, the others
# folding into the disclosure with the workshop's assumptions (docs/plates.md, "The first screen").
MAX_DATA_FILE = 100  # characters of the CSV's name (its PDFs add a few): far below any file system's limit
LABELS = {"skip": "Skip to the figures", "figure_data": "in words and numbers",
          "download": "Download the data (CSV)", "download_selection": "this selection's numbers (CSV)",
          "terms": "Terms", "sources": "Sources", "takeaway": "Takeaway", "more": "Assumptions and more controls"}
LABELS_SCHEMA = {key: "text" for key in LABELS}
def belongs(schemas: dict[str, dict[str, str]]) -> dict[str, str]:
    """{key: 'it belongs in [table]'} for keys written at the wrong level."""
    hints: dict[str, str] = {}
    for table, schema in schemas.items():
        for key in schema:
            hints.setdefault(key, f"it belongs in a {table} table")
    return hints


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
    unknown_tables(problems, path, text, data, ("terms",), belongs({"[terms.<id>]": TERM_SCHEMA}))
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
    unknown_tables(problems, path, text, data, ("sources",), belongs({"[sources.<id>]": SOURCE_SCHEMA}))
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


def _assumptions(problems: Problems, path: Path, prose: tuple[Prose, Prose]) -> tuple[Prose, Prose | None] | None:
    """The prose before [[figures]] split at its [[assumptions]] line, if it has one: (the part before, the part
    after or None); None with the mistake recorded (a second mark, or one after [[figures]])."""
    before, after = prose
    lines = before.text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == ASSUMPTIONS_MARK]
    for i, line in enumerate(after.text.splitlines()):
        if line.strip() == ASSUMPTIONS_MARK:
            problems.add(path, after.first_line + i, f"'{ASSUMPTIONS_MARK}' after '{FIGURES_MARK}': the assumptions "
                                                     f"are the prose from it to '{FIGURES_MARK}'")
            return None
    for i in marks[1:]:
        problems.add(path, before.first_line + i, f"a second line '{ASSUMPTIONS_MARK}' (the first is on line "
                                                  f"{before.first_line + marks[0]}); at most one")
    if len(marks) > 1:
        return None
    if not marks:
        return before, None
    m = marks[0]
    return (Prose("\n".join(lines[:m]), before.path, before.first_line),
            Prose("\n".join(lines[m + 1:]), before.path, before.first_line + m + 1))


def load_plate(problems: Problems, path: Path, module) -> tuple[Plate | None, str, tuple[Prose, Prose] | None]:
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
    hints = belongs({"[default]": module.DEFAULT_SCHEMA})
    hints["base_url"] = "the site's address is set once for the whole series now: base_url in volume.toml's [site]"
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
    if values is not None and not _plates_named(problems, path, front, values):
        values = None
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
        default = fields(problems, path, front, ("default",), data["default"], module.DEFAULT_SCHEMA,
                         module.DEFAULT_OPTIONAL,
                         line_offset=1, label="[default]", fallback_line=1)
    if values is not None and values["plate"] > values["plates_in_volume"]:
        problems.add(path, locate(front, ("plate",), 1),
                     f"front matter: plate {values['plate']} is beyond plates_in_volume "
                     f"{values['plates_in_volume']}")
        values = None
    split = _assumptions(problems, path, prose) if prose is not None else None
    if values is None or default is None or prose is None or labels is None or split is None:
        return None, front, prose
    intro, assumptions = split
    return Plate(
        volume=values["volume"], volume_title=values["volume_title"], plate=values["plate"],
        plates_in_volume=values["plates_in_volume"], title=values["title"], deck=values["deck"],
        keywords=tuple(values["keywords"]), takeaway=values["takeaway"],
        default=module.Selection(**default), before_figures=intro, after_figures=prose[1],
        data_file=values["data_file"], labels=labels, plates=values["plates"], question=values["question"],
        first_controls=tuple(values["first_controls"]), assumptions=assumptions,
    ), front, prose


PLATE_ID = re.compile(r"([A-Za-z0-9]+)\.(\d+)")  # a plate by its volume's id and its number


def _plates_named(problems: Problems, path: Path, front: str, values: dict) -> bool:
    """[plates] names each plate by its id; one of the plate's own volume must be among its plates_in_volume (another
    volume's plates are not listed here, so they cannot be checked)."""
    ok = True
    volume, most = values["volume"], values["plates_in_volume"]
    for subject, ident in values["plates"].items():
        line = locate(front, ("plates", subject), 1) or 1
        found = PLATE_ID.fullmatch(ident)
        if found is None:
            problems.add(path, line, f"[plates]: {subject} must name a plate by its volume's id and its number, as "
                                     f"in {volume}.1, got {describe_value(ident)}")
            ok = False
        elif found[1].casefold() == volume.casefold() and not 1 <= int(found[2]) <= most:
            problems.add(path, line, f"[plates]: {subject} {quote(ident)} is not a plate of this volume: Vol. "
                                     f"{volume} has plates {volume}.1 to {volume}.{most} (plates_in_volume {most})")
            ok = False
    return ok


def load(root: Path, check_prose=None) -> Content:
    """Read and check every content file under root; raise ContentError listing all mistakes.

    When the files have mistakes, check_prose(plate module, prose parts, terms, sources, preset ids, problems), if given,
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
    module = plates.module_of(problems, root)
    plate, front, prose = load_plate(problems, root / "plate.md", module)
    before = len(problems.items)
    presets, ids = module.load_presets(problems, root)
    ids_ok = len(problems.items) == before
    before = len(problems.items)
    terms = load_terms(problems, root / "terms.toml")
    terms_ok = len(problems.items) == before
    before = len(problems.items)
    sources = load_sources(problems, root / "sources.toml")
    sources_ok = len(problems.items) == before
    module.check_content(problems, root, front, plate, presets, ids, sources if sources_ok else None)
    if check_prose is not None and prose is not None and problems.items:  # else the full check follows
        check_prose(module, prose, terms if terms_ok else None, sources if sources_ok else None,
                    ids if ids_ok else None, problems.items)
    problems.raise_if_any()
    assert plate is not None and presets is not None
    return Content(root=root, plate=plate, presets=presets, terms=terms, sources=sources, module=module)
