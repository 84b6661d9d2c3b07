"""A series build: every plate its volume files list with a folder, gathered one after another in memory, their
cross-references linked (across volumes too), each volume's index and the series' top page; written by build.build
in one swap, or not at all."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from . import assembly, output, prints, publish
from ..source import checks, volume
from ..plate import plates
from ..page.crossrefs import Links
from ..source.schema import ContentError, quote


def is_series(folder: Path) -> bool:
    """Whether a folder is a series rather than one plate: no plate.md of its own, and a volume.toml of whatever kind
    (a FIFO or a folder there is the series' mistake, named at it; nothing is opened here), or no plate module
    either (a series whose volume.toml is missing)."""
    if os.path.lexists(folder / volume.PLATE_FILE):
        return False
    return bool(volume.volume_files(folder)) or not os.path.lexists(folder / plates.PACKAGE)


def gather(root: Path, warnings: list[str] | None = None, memo: dict | None = None,
           pdfs=None) -> dict[str, str | bytes]:
    """Every file of the series' site as {name: text or bytes}, nothing written: each written plate's page of every
    volume (named as its volume file says), its CSV and preview, each volume's index, the series' top page, and the
    site's one robots.txt and sitemap. ContentError lists every mistake of every plate (each at its file and line),
    so one failing plate fails the whole build. A memo (`plate serve`'s) keeps each plate's figures between builds,
    in a memo of its own. pdfs(page), if given, names the page's PDFs it links ({link text: file name};
    generator/site/prints.py)."""
    shelf = volume.load_series(root)
    if warnings is not None:
        warnings.extend(shelf.warnings)
    written = shelf.written()
    if not written:
        shown = ", ".join(f"{root.name}/{v.file}" for v in shelf.volumes)
        raise ContentError([f"{shown}: no plate to build: give a plate's [[plates]] table its folder"])
    pages = shelf.pages()
    # the index pages' names taken first; their text comes last
    files: dict[str, str | bytes] = {shelf.page: "", **{v.page: "" for v in shelf.volumes}}
    owners: dict[str, str] = {shelf.page: "the series' top page", **{v.page: f"the index of Vol. {v.id}"
                                                                     for v in shelf.volumes}}
    problems: list[str] = []
    built: dict[str, tuple[str, str, str]] = {}
    pictures: dict[str, str] = {}  # each plate's first figure, drawn small on its volume's index
    shared = _shared_inputs(root) if memo is not None else None
    for vol, entry in written:
        ident = vol.plate_id(entry)
        links = Links({i: page for i, page in pages.items() if i != ident}, vol.page, shelf.page)
        figures: list = []
        linked = pdfs(pages[ident]) if pdfs is not None else None
        kept = None if memo is None else memo.setdefault(str(vol.folder(entry)), {})
        # A running `plate serve` (memo) makes a plate again only when something it is made of changed: its
        # folder, the shared library, the templates, the volume files, its links or PDFs; else its last files.
        stamp = None if kept is None else _stamp(vol.folder(entry), (shared, sorted(links.pages.items()),
                                                                     pages[ident], shelf.base_url, linked))
        if kept is not None and kept.get("stamp") == stamp:
            site, front, picture, said = kept["made"]
            if warnings is not None:
                warnings.extend(said)
        else:
            said: list[str] = []
            try:
                site = assembly.gather(vol.folder(entry), said, kept, links=links, page=pages[ident],
                                    base_url=shelf.base_url, pdfs=linked, drawn=figures)
            except ContentError as error:
                problems.extend(error.problems)
                continue
            finally:
                if warnings is not None:
                    warnings.extend(said)
            front, _ = volume.front_matter(vol.folder(entry) / volume.PLATE_FILE)
            picture = figures[0].svg if figures else ""
            if kept is not None:
                kept["stamp"], kept["made"] = stamp, (site, front, picture, said)
        for name, data in site.items():
            if name in files and files[name] != data:  # two plates with one data_file, say
                problems.append(f"{root.name}/{vol.file}, line {entry.line}: plate {ident} writes {quote(name)}, as "
                                f"{owners[name]} does, with other contents; give one of them another name "
                                f"(data_file, page)")
                continue
            files.setdefault(name, data)
            owners.setdefault(name, f"plate {ident}")
        built[ident] = (pages[ident], front["title"], front["deck"])
        if picture:
            pictures[ident] = picture
    if problems:
        raise ContentError(once(problems))
    if warnings is not None:
        warnings[:] = once(warnings)
    files.update(_indexes(shelf, built, pictures, pages))
    return files


def _files_of(folder: Path) -> list[tuple[str, bytes]]:
    """Every file below a folder (not Python's bytecode caches) with its bytes, in a stable order."""
    found = []
    for path in sorted(Path(folder).rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        try:
            found.append((path.relative_to(folder).as_posix(), path.read_bytes()))
        except OSError:
            found.append((path.relative_to(folder).as_posix(), b""))
    return found


def _shared_inputs(root: Path) -> str:
    """A digest of what every plate of the series is made of besides its own folder: the shared library's code, the
    templates (page, styles, scaffold) and the series' volume files."""
    from ..page.theme import TEMPLATES
    digest = hashlib.sha256(repr(plates.library_code()).encode())
    digest.update(repr(_files_of(TEMPLATES)).encode())
    for path in volume.volume_files(root):
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b""))
    return digest.hexdigest()


def _stamp(folder: Path, more) -> str:
    """A digest of a plate's folder's files and more (what else its files are made of)."""
    return hashlib.sha256(repr((_files_of(folder), more)).encode()).hexdigest()


def _indexes(shelf: volume.Series, built: dict[str, tuple[str, str, str]], pictures: dict[str, str],
             pages: dict[str, str]) -> dict[str, str]:
    """The series' own files for the plates built ({id: (page, title, deck)}, each with the static SVG of its
    first figure in pictures): each volume's index, the top page, robots.txt and the sitemap."""
    files = {}
    for vol in shelf.volumes:
        own = {e.number: built[vol.plate_id(e)] for e in vol.written() if vol.plate_id(e) in built}
        drawn = {e.number: pictures[vol.plate_id(e)] for e in vol.written() if vol.plate_id(e) in pictures}
        files[vol.page] = volume.index_html(vol, own, drawn, series_page=shelf.page, pages=pages)
    files[shelf.page] = volume.series_html(shelf, built)
    indexes = [v.page for v in shelf.volumes] + [shelf.page]
    files.update(publish.site_files(shelf.base_url, [page for page, _, _ in built.values()] + indexes))
    return files


# --- one plate into its series' site ------------------------------------------------------------------------------

def series_pages(out: Path) -> list[str]:
    """The pages of out's previous site (as plate's marker lists them) that a plate built alone would not write
    (its only page is index.html): [] unless out holds a series' site."""
    return [name for name in output.own_names(out) if name.endswith(".html") and name != publish.HOME]


def plate_of(content_dir: Path) -> tuple[volume.Series, volume.Volume, volume.Entry] | None:
    """(the series, the volume, the entry) that lists content_dir, a plate's folder, when the folder's parent is a
    series whose volume files list it; None otherwise. ContentError for the series' mistakes."""
    folder = Path(content_dir).resolve()
    if is_series(folder) or not volume.volume_files(folder.parent):
        return None
    shelf = volume.load_series(folder.parent)
    for vol, entry in shelf.written():
        if vol.folder(entry).resolve() == folder:
            return shelf, vol, entry
    return None


def into_site(content_dir: Path, out: Path) -> tuple[volume.Series, volume.Volume, volume.Entry] | None:
    """Whether one plate's build goes into out's series site: (series, volume, entry) when out holds a series' site
    and the plate is one of the series' (its parent's volume files list it); None when out holds no series' site
    (the plate is built alone, as index.html). A series' site that the plate is not part of is refused (OutputError):
    its build would replace every other plate's files."""
    pages = series_pages(out) if not is_series(Path(content_dir)) else []
    if not pages:
        return None
    found = plate_of(content_dir)
    if found is None:
        shown = ", ".join(pages[:3]) + (f" and {len(pages) - 3} more" if len(pages) > 3 else "")
        raise output.OutputError(f"{out}/ holds a series' site ({shown}), and {content_dir} is not a plate its "
                                 f"volume files list; building it alone would replace that site with one page: give "
                                 f"another --out, or build the series")
    return found


_FIRST_FIGURE = re.compile(r'<div class="chart" role="img" aria-labelledby="[^"]*" aria-describedby="[^"]*">'
                           r'(<svg\b.*?</svg>)</div>', re.S)


def _csv_named(page: bytes) -> str | None:
    """The CSV a built page offers as its data (its page data's csv_name), or None."""
    found = re.search(rb'"csv_name":\s*"([^"\\]+)"', page)
    return found[1].decode("utf-8", "replace") if found else None


def first_figure(page: bytes) -> str:
    """The static SVG of a built page's first figure (templates/page.html.j2 writes each inside its .chart), or ""."""
    found = _FIRST_FIGURE.search(page.decode("utf-8", "replace"))
    return found[1] if found else ""


def gather_into(found: tuple[volume.Series, volume.Volume, volume.Entry], out: Path, warnings: list[str] | None,
                memo: dict | None, plan: prints.Plan) -> dict[str, str | bytes]:
    """One plate of a series built into the series' site in out: that plate's files made as a series build makes
    them (its page name, its links to the plates the site holds, the series' base_url), every other plate's files
    taken from the previous site byte for byte (their PDFs and record carried over: plan.carried), and the indexes,
    the top page and the sitemap made again for the plates the site then holds (the others' titles and decks from
    their plate.md, their pictures from their pages). A file of the plate's with another plate's name is a mistake."""
    shelf, vol, entry = found
    ident = vol.plate_id(entry)
    pages = shelf.pages()
    page = pages[ident]
    previous = {name: output.own_file(out, name) for name in output.own_names(out)}
    previous = {name: data for name, data in previous.items() if data is not None}
    present = {i: p for i, p in pages.items() if i == ident or p in previous}
    series_own = {shelf.page, *(v.page for v in shelf.volumes), publish.ROBOTS, publish.SITEMAP, prints.RECORD}
    mine_before = {page, publish.preview_name(page), *prints.names(page).values()}
    owners = {}  # {file name: the plate whose file it is} for the other plates' pages, previews and PDFs
    for other, other_page in present.items():
        if other != ident:
            for name in (other_page, publish.preview_name(other_page), *prints.names(other_page).values()):
                owners[name] = f"plate {other}"
    figures: list = []
    links = Links({i: p for i, p in present.items() if i != ident}, vol.page, shelf.page)
    made = assembly.gather(vol.folder(entry), warnings, memo, links=links, page=page, base_url=shelf.base_url,
                        pdfs=plan.links(page), drawn=figures)
    kept = {name: data for name, data in previous.items() if name not in series_own and name not in mine_before}
    # the CSV this plate's page named before is its own; any other file of the site is another plate's, and is
    # never written over with other bytes
    own_csv = _csv_named(previous.get(page, b""))
    problems = [f"{shelf.root.name}/{vol.file}, line {entry.line}: plate {ident} writes {quote(name)}, which the "
                f"site in {out}/ holds for {owners.get(name, 'another plate')}, with other contents; give it another "
                f"name (data_file, page), or build the series"
                for name, data in made.items() if name in kept and name != own_csv and
                (data.encode() if isinstance(data, str) else data) != kept[name]]
    if problems:
        raise ContentError(problems)
    for name in made:
        kept.pop(name, None)
    plan.carried = {p: old for p, old in plan.old.items() if p != page and p in present.values()}
    for p, old in plan.carried.items():
        for name in old.pdfs:
            kept.pop(name, None)  # carried with their record entry (prints.Plan.made)
    built, pictures = {}, {}
    for other, other_page in present.items():
        folder = shelf_folder(shelf, other)
        front, _ = volume.front_matter(folder / volume.PLATE_FILE) if folder is not None else (None, "")
        title = front.get("title") if front else None
        deck = front.get("deck") if front else None
        if not isinstance(title, str) or not isinstance(deck, str):
            title, deck = title if isinstance(title, str) else other, deck if isinstance(deck, str) else ""
        built[other] = (other_page, title, deck)
        picture = figures[0].svg if other == ident and figures else \
            first_figure(previous[other_page]) if other != ident else ""
        if picture:
            pictures[other] = picture
    return {**kept, **made, **_indexes(shelf, built, pictures, present)}


def shelf_folder(shelf: volume.Series, ident: str) -> Path | None:
    """The folder of the series' plate of this id, or None."""
    for vol, entry in shelf.written():
        if vol.plate_id(entry) == ident:
            return vol.folder(entry)
    return None


def check(root: Path) -> list[str]:
    """Check the volume and every plate it lists with a folder, writing nothing: their warnings, or ContentError
    listing every mistake of every plate, each at its file and line."""
    shelf = volume.load_series(root)
    problems: list[str] = []
    warnings: list[str] = list(shelf.warnings)
    for vol, entry in shelf.written():
        try:
            result = checks.checked(vol.folder(entry))
            checks.page_checked(result)  # as the build would: the page's Python compiled, its promises checked
            warnings.extend(result.warnings)
        except ContentError as error:
            problems.extend(error.problems)
    if problems:
        raise ContentError(once(problems))
    return once(warnings)


def once(lines: list[str]) -> list[str]:
    """Each line once, in the order first given: a mistake in a file several plates read (the series catalogue) is
    reported by each of them."""
    return list(dict.fromkeys(lines))
