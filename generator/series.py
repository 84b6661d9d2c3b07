"""A series build: every plate its volume files list with a folder, gathered one after another in memory, their
cross-references linked (across volumes too), each volume's index and the series' top page; written by build.build
in one swap, or not at all."""
from __future__ import annotations

import os
from pathlib import Path

from . import build, checks, plates, publish, volume
from .crossrefs import Links
from .schema import ContentError, quote


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
    generator/prints.py)."""
    shelf = volume.load_series(root)
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
    for vol, entry in written:
        ident = vol.plate_id(entry)
        links = Links({i: page for i, page in pages.items() if i != ident}, vol.page, shelf.page)
        figures: list = []
        try:
            kept = None if memo is None else memo.setdefault(str(vol.folder(entry)), {})
            site = build.gather(vol.folder(entry), warnings, kept, links=links, page=pages[ident],
                                base_url=shelf.base_url, pdfs=pdfs(pages[ident]) if pdfs is not None else None,
                                drawn=figures)
        except ContentError as error:
            problems.extend(error.problems)
            continue
        for name, data in site.items():
            if name in files and files[name] != data:  # two plates with one data_file, say
                problems.append(f"{root.name}/{vol.file}, line {entry.line}: plate {ident} writes {quote(name)}, as "
                                f"{owners[name]} does, with other contents; give one of them another name "
                                f"(data_file, page)")
                continue
            files.setdefault(name, data)
            owners.setdefault(name, f"plate {ident}")
        front, _ = volume.front_matter(vol.folder(entry) / volume.PLATE_FILE)
        built[ident] = (pages[ident], front["title"], front["deck"])
        if figures:
            pictures[ident] = figures[0].svg
    if problems:
        raise ContentError(problems)
    for vol in shelf.volumes:
        own = {e.number: built[vol.plate_id(e)] for e in vol.written()}
        drawn = {e.number: pictures[vol.plate_id(e)] for e in vol.written() if vol.plate_id(e) in pictures}
        files[vol.page] = volume.index_html(vol, own, drawn, series_page=shelf.page, pages=pages)
    files[shelf.page] = volume.series_html(shelf, built)
    indexes = [v.page for v in shelf.volumes] + [shelf.page]
    files.update(publish.site_files(shelf.base_url, [page for page, _, _ in built.values()] + indexes))
    return files


def check(root: Path) -> list[str]:
    """Check the volume and every plate it lists with a folder, writing nothing: their warnings, or ContentError
    listing every mistake of every plate, each at its file and line."""
    shelf = volume.load_series(root)
    problems: list[str] = []
    warnings: list[str] = []
    for vol, entry in shelf.written():
        try:
            result = checks.checked(vol.folder(entry))
            checks.page_checked(result)  # as the build would: the page's Python compiled, its promises checked
            warnings.extend(result.warnings)
        except ContentError as error:
            problems.extend(error.problems)
    if problems:
        raise ContentError(problems)
    return warnings
