"""A series: its volume files (volume.toml, volume-<id>.toml) checked field by field, alone and against each other,
their plates' front matter held to them, each volume's index page and the series' top page."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from ..plate import charts
from ..page import crossrefs, theme
from ..site import publish
from .content import split_front_matter
from .schema import ID_PATTERN, Problems, describe_value, fields, locate, quote, read_text, read_toml, unknown_tables
from ..page.theme import TEMPLATES

VOLUME_FILE = "volume.toml"
# The series' own file beside the volume files: its [site] is the engine's; every other table in it is the plates'
# (their catalogue, read and checked by the plate modules' library, platelib), which the engine does not read.
SERIES_FILE = "series.toml"
# Each further volume of the series has a file of its own beside volume.toml, named by its id: volume-xi.toml.
OTHER_VOLUME_FILE = re.compile(r"volume-([A-Za-z0-9]+)\.toml")
SERIES_PAGE = "volumes.html"  # the series' top page: every volume, its plates, links to the written ones
SERIES_TEMPLATE = "series.html.j2"
PLATE_FILE = "plate.md"
VOLUME_SCHEMA = {"id": "text", "title": "text", "page": "text", "intro": "text"}
VOLUME_OPTIONAL = {"page": "", "intro": ""}  # intro: the index's introduction, plain text (docs/checks.md)
SITE_SCHEMA = {"base_url": "url"}  # [site]: where the series is published (docs/checks.md)
ENTRY_SCHEMA = {"number": "count", "title": "text", "folder": "text", "page": "text"}
# A plate to come may be untitled; a written plate has a folder, and its page in a series build is `page`, else
# the folder's name less its "<volume>-<number>-" prefix: xiv-6-subject/ gives subject.html.
ENTRY_OPTIONAL = {"title": "", "folder": "", "page": ""}
MAX_PLATES = 1_000  # entries of one volume: far beyond a series, and the index stays one page of links
VOLUME_ID = re.compile(r"[A-Za-z0-9]+")  # a plate is named "<volume id>.<number>": the id may hold no dot
PAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.html")
MAX_PAGE_NAME = 100  # characters of the index page's file name: far below any file system's limit
INDEX_TEMPLATE = "volume.html.j2"
INDEX_STYLE = "volume.css"  # the index's own rules, after the plate's stylesheet
SERIES_STYLE = "series.css"  # the top page's own rules, after the index's


@dataclass(frozen=True)
class Entry:
    """One plate of the volume, written or to come."""

    number: int
    title: str = ""
    folder: str = ""  # under the series folder; "" for a plate to come
    line: int | None = None  # of its [[plates]] header in volume.toml
    title_line: int | None = None  # of its title there, when it has one
    page: str = ""  # its page's file name in a series build, as written ("" for the folder's)


@dataclass(frozen=True)
class Volume:
    """The volume: its id, title, index page and every plate in order."""

    root: Path  # the series folder, holding volume.toml and the plates' folders
    id: str
    title: str
    page: str
    plates: tuple[Entry, ...]
    base_url: str = ""  # [site]'s, ending in '/'; '' when the site is not published at an address
    intro: str = ""  # the index's introduction as written: paragraphs apart by a blank line
    file: str = VOLUME_FILE  # its file's name in root
    id_line: int | None = None  # of its id in that file
    page_line: int | None = None  # of its page (else its [volume] header) in that file
    site_line: int | None = None  # of its [site] table, when it has one

    def plate_id(self, entry: Entry) -> str:
        """How the series names a plate: "XIV.5"."""
        return f"{self.id}.{entry.number}"

    def written(self) -> list[Entry]:
        """The plates with a folder, in order."""
        return [e for e in self.plates if e.folder]

    def folder(self, entry: Entry) -> Path:
        """A written plate's folder."""
        return self.root / entry.folder

    def page_of(self, entry: Entry) -> str:
        """A written plate's page in a series build: its `page`, else its folder's name without the plate's own
        prefix ("xiv-5-"), .html."""
        if entry.page:
            return entry.page
        prefix = f"{self.id.lower()}-{entry.number}-"
        name = entry.folder[len(prefix):] if entry.folder.lower().startswith(prefix) else entry.folder
        return f"{name or entry.folder}.html"


def entry_spans(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of each [[plates]] table in volume.toml, 1-based and inclusive, in order; a table
    runs to the line before the next header (or the end of the file)."""
    lines = text.splitlines()
    headers = [(i, re.match(r"\s*\[\[\s*plates\s*\]\]\s*(#.*)?$", line) is not None)
               for i, line in enumerate(lines, start=1) if re.match(r"\s*\[", line)]
    spans = []
    for k, (line, is_entry) in enumerate(headers):
        if is_entry:
            end = headers[k + 1][0] - 1 if k + 1 < len(headers) else len(lines)
            spans.append((line, end))
    return spans


def _entry_text(text: str, span: tuple[int, int]) -> str:
    """The lines of one [[plates]] table (locate() then finds its keys, offset by its first line)."""
    return "\n".join(text.splitlines()[span[0] - 1:span[1]])


def load(root: Path, name: str = VOLUME_FILE) -> Volume:
    """Read and check one volume file (root/volume.toml unless named) and hold each written plate's front matter to
    it; ContentError listing every mistake, each at its file and line. A series' build loads them all (load_series)."""
    root = Path(root)
    problems = Problems(root)
    volume = read(problems, root, name)
    if volume is not None:
        agree(problems, volume)
    problems.raise_if_any()
    assert volume is not None
    return volume


def read(problems: Problems, root: Path, name: str = VOLUME_FILE) -> Volume | None:
    """One volume file checked on its own (its plates' folders exist and hold a plate.md), or None with the
    mistakes recorded."""
    path = root / name
    if not os.path.lexists(path):
        problems.add(path, None, f"file is missing: a series' folder lists its plates in {VOLUME_FILE} (and a plate's "
                                 f"folder holds its {PLATE_FILE}; {root.name or root}/ has neither)")
        return None
    data, text = read_toml(problems, path)
    if data is None:
        return None
    before = len(problems.items)
    unknown_tables(problems, path, text, data, ("volume", "site", "plates"))
    base_url = site_base_url(problems, path, text, data)
    head = None
    if "volume" not in data:
        problems.add(path, None, "missing table [volume] (id, title, page)")
    else:
        head = fields(problems, path, text, ("volume",), data["volume"], VOLUME_SCHEMA, VOLUME_OPTIONAL,
                      label="[volume]")
    if head is not None:
        head = _check_head(problems, path, text, head)
    if head is not None and not _named_for(problems, path, text, head["id"]):
        head = None
    entries = _entries(problems, path, text, data.get("plates"), root)
    if head is None or entries is None or len(problems.items) > before:
        return None
    made = Volume(root=root, id=head["id"], title=head["title"], page=head["page"], plates=tuple(entries),
                  base_url=base_url or "", intro=head["intro"], file=name,
                  id_line=locate(text, ("volume", "id")),
                  page_line=locate(text, ("volume", "page")) or locate(text, ("volume",)),
                  site_line=locate(text, ("site",)) if "site" in data else None)
    return made if _pages_apart(problems, path, text, made) else None


def _named_for(problems: Problems, path: Path, text: str, ident: str) -> bool:
    """A further volume's file is named for its id (volume-xi.toml holds Vol. XI), so `plate new --volume XI` and a
    reader find it; volume.toml may hold any volume."""
    named = OTHER_VOLUME_FILE.fullmatch(path.name)
    if named is None or named.group(1).casefold() == ident.casefold():
        return True
    problems.add(path, locate(text, ("volume", "id")), f"[volume]: id {describe_value(ident)} is not the volume this "
                 f"file is named for: {path.name} holds Vol. {named.group(1).upper()} (or rename it "
                 f"volume-{ident.lower()}.toml)")
    return False


def site_base_url(problems: Problems, path: Path, text: str, data: dict) -> str | None:
    """[site]'s base_url as a folder URL ('' when not set), or None with the mistake recorded at its line."""
    if "site" not in data:
        return ""
    site = fields(problems, path, text, ("site",), data["site"], SITE_SCHEMA, {"base_url": ""}, label="[site]")
    if site is None:
        return None
    why = publish.base_url_problem(site["base_url"]) if site["base_url"] else None
    if why:
        problems.add(path, locate(text, ("site", "base_url")), f"[site]: base_url {describe_value(site['base_url'])} "
                                                               f"{why}")
        return None
    return publish.folder_url(site["base_url"])


def series_site(problems: Problems, root: Path) -> tuple[str | None, int | None]:
    """series.toml's [site] in a series folder: (its base_url as a folder URL, '' when not set; the line of [site],
    None when the file or the table is absent), or (None, None) with the mistake recorded at its line. The file's
    other tables are the plates' catalogue: not read here."""
    path = root / SERIES_FILE
    if not os.path.lexists(path):
        return "", None
    data, text = read_toml(problems, path)
    if data is None:
        return None, None
    base_url = site_base_url(problems, path, text, data)
    return base_url, locate(text, ("site",)) if "site" in data else None


def moved_site(file: str, line: int | None) -> str:
    """The warning for a [site] still written in a volume file (file as messages show it)."""
    return (f"{file}, line {line}: [site] belongs in {SERIES_FILE} now, beside the volume files (the site covers "
            f"every volume); read from here until it moves")


def base_url_beside(plate_folder: Path, warnings: list[str] | None = None) -> str:
    """For a plate built alone: the [site] base_url of the series in its folder's parent, from series.toml or else a
    volume file ('' without one; a volume file's [site] adds a warning to warnings); ContentError when such a file or
    its [site] has a mistake (the rest of them is the series build's to check)."""
    parent = Path(os.path.abspath(plate_folder)).parent  # not resolved: a symlinked plate belongs where it is shown
    problems = Problems(parent)
    base_url, line = series_site(problems, parent)
    problems.raise_if_any()
    if line is not None:
        return base_url or ""
    for path in volume_files(parent):
        if not path.is_file():
            continue
        problems = Problems(parent)
        data, text = read_toml(problems, path)
        base_url = site_base_url(problems, path, text, data) if isinstance(data, dict) else None
        problems.raise_if_any()
        if isinstance(data, dict) and "site" in data and warnings is not None:
            warnings.append(moved_site(f"{parent.name}/{path.name}", locate(text, ("site",))))
        if base_url:
            return base_url
    return ""


def file_name(volume_id: str) -> str:
    """The file a further volume of a series is listed in: volume-xi.toml for Vol. XI."""
    return f"volume-{volume_id.lower()}.toml"


def file_for(root: Path, volume_id: str) -> Path:
    """The file that lists a volume's plates: its own volume-<id>.toml when there is one, else volume.toml."""
    own = root / file_name(volume_id)
    return own if os.path.lexists(own) else root / VOLUME_FILE


def volume_files(root: Path) -> list[Path]:
    """The series' volume files: volume.toml (when there is one, of whatever kind), then each volume-<id>.toml by
    name."""
    try:
        names = sorted(n for n in os.listdir(root) if OTHER_VOLUME_FILE.fullmatch(n))
    except OSError:
        names = []
    first = [root / VOLUME_FILE] if os.path.lexists(root / VOLUME_FILE) else []
    return first + [root / n for n in names]


def _pages_apart(problems: Problems, path: Path, text: str, made: Volume) -> bool:
    """No two pages of a series build share a file name: each plate's, and the index's."""
    owner = {made.page: ("the volume's index", locate(text, ("volume", "page")) or locate(text, ("volume",)))}
    ok = True
    if made.page == SERIES_PAGE:
        problems.add(path, owner[made.page][1], f"[volume]: page {quote(made.page)} is the series' top page; set "
                                                 f"page = \"…\" to another name")
        ok = False
    owner.setdefault(SERIES_PAGE, ("the series' top page", None))
    for entry in made.written():
        page = made.page_of(entry)
        if page in owner:
            at = f" (line {owner[page][1]})" if owner[page][1] else ""
            problems.add(path, entry.line, f"[[plates]] #{entry.number}: its page {quote(page)} is also the page of "
                                           f"{owner[page][0]}{at}; set page = \"…\" to another name")
            ok = False
        owner.setdefault(page, (f"plate {made.plate_id(entry)}", entry.line))
    return ok


def _check_head(problems: Problems, path: Path, text: str, head: dict) -> dict | None:
    """[volume]'s id usable in "XIV.5" and its page a file name (the id's slug when not given)."""
    ok = True
    if not VOLUME_ID.fullmatch(head["id"]):
        problems.add(path, locate(text, ("volume", "id")), f"[volume]: id {describe_value(head['id'])} must hold "
                     f"only letters and digits (a plate is named by it and its number, as in XIV.5)")
        ok = False
    if not head["page"]:
        head = {**head, "page": f"volume-{head['id'].lower()}.html"}
    elif not PAGE_NAME.fullmatch(head["page"]) or len(head["page"]) > MAX_PAGE_NAME:
        problems.add(path, locate(text, ("volume", "page")), f"[volume]: page must be a file name ending in .html "
                     f"(letters, digits, '.', '-', '_'), of at most {MAX_PAGE_NAME} characters, got "
                     f"{describe_value(head['page'])}")
        ok = False
    return head if ok else None


def _entries(problems: Problems, path: Path, text: str, tables, root: Path) -> list[Entry] | None:
    """The [[plates]] tables as entries: numbered 1, 2, … in order, each folder a plate folder under root."""
    if tables is None:
        problems.add(path, None, "missing [[plates]] tables: the volume lists its plates, one [[plates]] each "
                                 "(number, and title and folder when known)")
        return None
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        problems.add(path, locate(text, ("plates",)), f"plates must be [[plates]] tables, one per plate, got "
                                                      f"{describe_value(tables)}")
        return None
    if len(tables) > MAX_PLATES:
        problems.add(path, locate(text, ("plates",)), f"the volume lists {len(tables):,} plates, more than the "
                                                      f"{MAX_PLATES:,} an index can show")
        return None
    spans = entry_spans(text)
    if len(spans) != len(tables):  # written inline (plates = [{…}]): no line per entry to point at
        spans = [(locate(text, ("plates",)) or 1, locate(text, ("plates",)) or 1)] * len(tables)
    entries: list[Entry] = []
    numbers: dict[int, int] = {}
    folders: dict[str, int] = {}
    titles: dict[str, int] = {}  # {a title, ignoring case and spaces around it: the line that gives it first}
    ok = True
    for position, (table, span) in enumerate(zip(tables, spans), start=1):
        own = _entry_text(text, span)
        values = fields(problems, path, own, ("plates",), table, ENTRY_SCHEMA, ENTRY_OPTIONAL,
                        line_offset=span[0] - 1, label=f"[[plates]] #{position}", fallback_line=span[0])
        if values is None:
            ok = False
            continue
        number_line = locate(own, ("plates", "number"), span[0] - 1)
        number = values["number"]
        if number in numbers:
            problems.add(path, number_line, f"[[plates]] #{position}: number {number} is also the number of the "
                                            f"plate at line {numbers[number]}; each plate has its own")
            ok = False
        elif number != position:
            problems.add(path, number_line, f"[[plates]] #{position}: number {number} is out of order; the plates "
                                            f"are listed by number, 1, 2, 3, …, so this one is {position}")
            ok = False
        numbers.setdefault(number, number_line or span[0])
        if values["title"]:
            title_line = locate(own, ("plates", "title"), span[0] - 1) or span[0]
            key = title_key(values["title"])
            if key in titles:
                problems.add(path, title_line, f"[[plates]] #{position}: title {quote(values['title'])} is also the "
                                               f"title of the plate at line {titles[key]}; each plate has its own")
                ok = False
            titles.setdefault(key, title_line)
        if values["folder"]:
            folder_line = locate(own, ("plates", "folder"), span[0] - 1)
            why = _folder_problem(root, values["folder"])
            if why is None and values["folder"] in folders:
                why = f"is also the folder of the plate at line {folders[values['folder']]}"
            if why:
                problems.add(path, folder_line, f"[[plates]] #{position}: folder {quote(values['folder'])} {why}")
                ok = False
            folders.setdefault(values["folder"], folder_line or span[0])
        if values["page"]:
            page_line = locate(own, ("plates", "page"), span[0] - 1)
            if not values["folder"]:
                problems.add(path, page_line, f"[[plates]] #{position}: page is set, but folder is not: a plate to "
                                              f"come has no page yet")
                ok = False
            elif not PAGE_NAME.fullmatch(values["page"]) or len(values["page"]) > MAX_PAGE_NAME:
                problems.add(path, page_line, f"[[plates]] #{position}: page must be a file name ending in .html "
                             f"(letters, digits, '.', '-', '_'), of at most {MAX_PAGE_NAME} characters, got "
                             f"{describe_value(values['page'])}")
                ok = False
        entries.append(Entry(number=number, title=values["title"], folder=values["folder"], line=span[0],
                             page=values["page"], title_line=(locate(own, ("plates", "title"), span[0] - 1) or span[0])
                             if values["title"] else None))
    return entries if ok else None


def title_key(title: str) -> str:
    """A title as two plates may not share it: ignoring case and the spaces around and between its words."""
    return " ".join(title.split()).casefold()


def _folder_problem(root: Path, folder: str) -> str | None:
    """Why a [[plates]] folder is not a plate folder under the series folder, or None."""
    if not ID_PATTERN.fullmatch(folder):
        return ("must be the name of a folder beside volume.toml (letters, digits, '-' and '_', starting with a "
                "letter or digit)")
    where = root / folder
    try:
        inside = where.resolve().parent == root.resolve()
    except OSError as error:
        return f"cannot be used: {error.strerror or error}"
    if not where.is_dir():
        return "does not exist beside volume.toml" if not where.exists() else "is a file, not a folder"
    if not inside:
        return "leads outside the series folder (a symbolic link?); plates live beside volume.toml"
    if not (where / PLATE_FILE).is_file():
        return f"is not a plate folder: it holds no {PLATE_FILE}"
    return None


def front_matter(path: Path) -> tuple[dict | None, str]:
    """A plate.md's front matter as TOML data, and its text; (None, "") when it cannot be read: the plate's own
    mistakes are reported by its own load, once."""
    quiet = Problems(path.parent)
    text = read_text(quiet, path)
    parts = split_front_matter(quiet, path, text) if text is not None else None
    front, front_text = read_toml(quiet, path, parts[0], line_offset=1) if parts else (None, "")
    return (front, front_text) if isinstance(front, dict) else (None, "")


# What a plate's front matter must say of its volume: (front matter key, what the volume gives, what it is).
def _expected(volume: Volume, entry: Entry) -> list[tuple[str, object, str]]:
    where = f"{volume.file}, line {entry.line}" if entry.line else volume.file
    return [("volume", volume.id, f"the volume's id in {volume.file}"),
            ("plate", entry.number, f"its number in {where}"),
            ("volume_title", volume.title, f"the volume's title in {volume.file}"),
            ("plates_in_volume", len(volume.plates), f"the plates {volume.file} lists")]


def agree(problems: Problems, volume: Volume) -> None:
    """Each written plate's front matter names its volume and number as volume.toml does: else a mistake at the
    plate.md line. A front matter that cannot be read is left to the plate's own checks, which report it."""
    fronts = {entry.number: front_matter(volume.folder(entry) / PLATE_FILE) for entry in volume.written()}
    shown = {}  # {number: the title the index shows: a written plate's front matter's, else volume.toml's}
    for entry in volume.plates:
        front = fronts.get(entry.number, (None, ""))[0]
        title = front.get("title") if front is not None else None
        shown[entry.number] = title if isinstance(title, str) and title.strip() else entry.title
    for entry in volume.written():
        path = volume.folder(entry) / PLATE_FILE
        front, front_text = fronts[entry.number]
        if front is None:
            continue
        title = shown[entry.number]
        same = [e for e in volume.plates if e.number != entry.number and shown[e.number] and title and
                title_key(shown[e.number]) == title_key(title)]
        if same and isinstance(front.get("title"), str):
            other = same[0]
            line = other.line if other.folder else other.title_line or other.line
            at = f"{volume.file}, line {line}" if line else volume.file
            problems.add(path, locate(front_text, ("title",), 1) or 1,
                         f"front matter: title {quote(title)} is also the title of plate {volume.plate_id(other)} "
                         f"({at}); each plate of a volume has its own")
        for key, wanted, what in _expected(volume, entry):
            got = front.get(key)
            if got is None or isinstance(got, bool) or type(got) is not type(wanted):
                continue  # missing or of the wrong kind: the plate's own check says so
            if got != wanted:
                problems.add(path, locate(front_text, (key,), 1) or 1,
                             f"front matter: {key} {describe_value(got)} does not agree with the volume: "
                             f"{what} is {describe_value(wanted)}")


# --- the series: every volume file --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Series:
    """The series: its volumes in order (by the Roman numeral of their id; others after, by id) and its address."""

    root: Path
    volumes: tuple[Volume, ...]
    base_url: str = ""  # the one [site]'s, ending in '/'; '' when the site is not published at an address
    page: str = SERIES_PAGE
    warnings: tuple[str, ...] = ()  # what `plate check` says of the volume files besides their mistakes

    def written(self) -> list[tuple[Volume, Entry]]:
        """Every plate with a folder, volume by volume, in order."""
        return [(v, e) for v in self.volumes for e in v.written()]

    def pages(self) -> dict[str, str]:
        """{"XIV.5": its page's file name} of every written plate of every volume."""
        return {v.plate_id(e): v.page_of(e) for v, e in self.written()}


def roman(text: str) -> int | None:
    """A Roman numeral's value ("XIV" -> 14), or None when the text is not one written the usual way."""
    values = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
    upper = text.upper()
    if not upper or any(c not in values for c in upper):
        return None
    total = sum(-values[c] if values.get(upper[i + 1:i + 2], 0) > values[c] else values[c]
                for i, c in enumerate(upper))
    return total if _as_roman(total) == upper else None


def _as_roman(number: int) -> str:
    """A positive whole number as the usual Roman numeral."""
    out = ""
    for value, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        count, number = divmod(number, value)
        out += letters * count
    return out


def load_series(root: Path) -> Series:
    """Read and check every volume file of the series, each alone and all together (no id, index page, plate
    folder or page given twice across them, one [site] at most), and hold each written plate's front matter to its
    volume; ContentError listing every mistake, each at its file and line."""
    root = Path(root)
    problems = Problems(root)
    paths = volume_files(root)
    if not paths:
        read(problems, root, VOLUME_FILE)  # says the file is missing
    made = [read(problems, root, p.name) for p in paths]
    volumes = [v for v in made if v is not None]
    series_url, series_line = series_site(problems, root)
    if len(volumes) == len(made):
        _apart(problems, volumes)
    for vol in volumes:
        agree(problems, vol)
    warnings = []
    for vol in volumes:
        if vol.site_line is None:
            continue
        if series_line is not None:
            problems.add(root / vol.file, vol.site_line, f"[site] is also set in {SERIES_FILE}, line {series_line}: "
                                                         f"the series is published at one address, set there")
        else:
            warnings.append(moved_site(f"{root.name}/{vol.file}", vol.site_line))
    problems.raise_if_any()
    base_url = series_url if series_line is not None else next((v.base_url for v in volumes if v.base_url), "")
    # the series' address is every volume's: each index's canonical link is under it
    volumes = sorted((replace(v, base_url=base_url) for v in volumes),
                     key=lambda v: (roman(v.id) is None, roman(v.id) or 0, v.id))
    return Series(root=root, volumes=tuple(volumes), base_url=base_url or "", warnings=tuple(warnings))


def _apart(problems: Problems, volumes: list[Volume]) -> None:
    """The volumes, each sound alone, checked against each other: ids, index and plate pages, plate folders apart,
    and the site's address set in one file only."""
    def at(vol: Volume, line: int | None) -> str:
        return f"{vol.file}, line {line}" if line else vol.file
    ids: dict[str, Volume] = {}
    pages: dict[str, str] = {}
    folders: dict[str, str] = {}
    site: Volume | None = None
    for vol in volumes:
        path = vol.root / vol.file
        key = vol.id.casefold()
        if key in ids:
            problems.add(path, vol.id_line, f"[volume]: id {quote(vol.id)} is also the id of the volume in "
                                            f"{at(ids[key], ids[key].id_line)}; each volume has its own")
        ids.setdefault(key, vol)
        if vol.site_line is not None:
            if site is not None:
                problems.add(path, vol.site_line, f"[site] is also set in {at(site, site.site_line)}: the series is "
                                                  f"published at one address, set in one volume file")
            site = site or vol
        owned = [(vol.page, vol.page_line, "the index of Vol. " + vol.id)]
        owned += [(vol.page_of(e), e.line, f"plate {vol.plate_id(e)}") for e in vol.written()]
        for page, line, what in owned:
            if page in pages:
                problems.add(path, line, f"{what}: its page {quote(page)} is also the page of {pages[page]}; "
                                         f"set page = \"…\" to another name")
            pages.setdefault(page, f"{what.split(':')[0]} ({at(vol, line)})")
        for entry in vol.written():
            if entry.folder in folders:
                problems.add(path, entry.line, f"[[plates]] #{entry.number}: folder {quote(entry.folder)} is also the "
                                               f"folder of {folders[entry.folder]}; a plate belongs to one volume")
            folders.setdefault(entry.folder, f"plate {vol.plate_id(entry)} ({at(vol, entry.line)})")


# --- the index page ----------------------------------------------------------------------------------------------

def environment() -> jinja2.Environment:
    """Jinja for the index: autoescaped, strict about names."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                              autoescape=True, trim_blocks=True, lstrip_blocks=True)


def index_html(volume: Volume, built: dict[int, tuple[str, str, str]], pictures: dict[int, str] | None = None,
               series_page: str = "", pages: dict[str, str] | None = None) -> str:
    """The volume's index page: its introduction, every plate in order, a link (title and deck) for each built one
    ({number: (page file name, title, deck)}) with a small picture of its first figure (pictures: {number: that
    figure's static SVG}), "to come" for the others; the plate's stylesheet, a CSP of its own, no script; its
    canonical link when the site has a base_url. In a series build its head links the series' top page
    (series_page), and its intro's "plate XI.2" links any plate of the series built (pages: {id: page})."""
    env = environment()
    pictures = pictures or {}
    own = {volume.plate_id(e): built[e.number][0] for e in volume.plates if e.number in built}
    rows = []
    for entry in volume.plates:
        page, title, deck = built.get(entry.number, ("", entry.title, ""))
        picture = pictures.get(entry.number, "") if page else ""
        rows.append({"id": volume.plate_id(entry), "number": entry.number, "page": page, "title": title,
                     "deck": deck, "picture": Markup(inline_picture(picture, f"plate-{entry.number}"))})
    return env.get_template(INDEX_TEMPLATE).render(
        volume=volume, rows=rows, built=sum(1 for r in rows if r["page"]),
        intro=intro_html(volume.intro, {**(pages or {}), **own}), url=publish.page_url(volume.base_url, volume.page),
        series_page=series_page, **_styled(env))


def _styled(env: jinja2.Environment, *more: str) -> dict:
    """An index page's style (the plate's stylesheet, then the index's rules, then more) and its CSP hash."""
    from ..page.render import csp_hash  # the plate page's hashing, so every page carries the same policy
    style = "\n".join([theme.current().page_css()] + [env.loader.get_source(env, name)[0]
                                                      for name in (INDEX_STYLE, *more)])
    return {"style": Markup(style), "csp_style": Markup(csp_hash(style))}


def series_html(series: Series, built: dict[str, tuple[str, str, str]]) -> str:
    """The series' top page: each volume in order, linked to its index, with its title, its intro's first paragraph
    and its plates, a link for each built one ({"XI.2": (page file name, title, deck)}), "to come" for the others;
    the index's style and CSP, no script; its canonical link when the site has a base_url."""
    env = environment()
    pages = {ident: page for ident, (page, _, _) in built.items()}
    shelves = []
    for vol in series.volumes:
        plates = []
        for entry in vol.plates:
            ident = vol.plate_id(entry)
            page, title, _ = built.get(ident, ("", entry.title, ""))
            plates.append({"id": ident, "page": page, "title": title})
        first = intro_html(vol.intro, pages)[:1]
        shelves.append({"volume": vol, "intro": first[0] if first else "", "plates": plates,
                        "built": sum(1 for p in plates if p["page"])})
    return env.get_template(SERIES_TEMPLATE).render(
        shelves=shelves, plates=sum(len(v.plates) for v in series.volumes), built=len(built),
        url=publish.page_url(series.base_url, series.page), **_styled(env, SERIES_STYLE))


def intro_html(text: str, pages: dict[str, str]) -> list[Markup]:
    """The introduction's paragraphs (apart by a blank line) as HTML: its text escaped, each "plate XIV.5" a link
    when that plate is built (crossrefs)."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n[ \t]*\n", text.strip())]
    return [Markup(crossrefs.link_plates(str(escape(p)), pages)) for p in paragraphs if p]


def inline_picture(svg: str, prefix: str) -> str:
    """A figure's static SVG as the index shows it inline: its ids (and what names them) prefixed, so that no two
    pictures, nor two plates whose figures share an id, share one."""
    return charts.unique_ids(svg, prefix) if svg else ""
