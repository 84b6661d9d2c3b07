"""A series build: every plate volume.toml lists with a folder, gathered one after another in memory, their
cross-references linked, and the volume's index; written by build.build in one swap, or not at all."""
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
    return os.path.lexists(folder / volume.VOLUME_FILE) or not os.path.lexists(folder / plates.PACKAGE)


def gather(root: Path, warnings: list[str] | None = None, memo: dict | None = None,
           pdfs=None) -> dict[str, str | bytes]:
    """Every file of the series' site as {name: text or bytes}, nothing written: each written plate's page (named
    as volume.toml says), its CSV and preview, the volume's index, and the site's one robots.txt and sitemap.
    ContentError lists every mistake of every plate (each at its file and line), so one failing plate fails the
    whole build. A memo (`plate serve`'s) keeps each plate's figures between builds, in a memo of its own.
    pdfs(page), if given, names the page's PDFs it links ({link text: file name}; generator/prints.py)."""
    vol = volume.load(root)
    written = vol.written()
    shown = f"{root.name}/{volume.VOLUME_FILE}"
    if not written:
        raise ContentError([f"{shown}: no plate to build: give a plate's [[plates]] table its folder"])
    pages = {vol.plate_id(entry): vol.page_of(entry) for entry in written}
    files: dict[str, str | bytes] = {vol.page: ""}  # the index's name taken first; its text comes last
    owners: dict[str, str] = {vol.page: "the volume's index"}
    problems: list[str] = []
    built: dict[int, tuple[str, str, str]] = {}
    pictures: dict[int, str] = {}  # each plate's first figure, drawn small on the index
    for entry in written:
        ident = vol.plate_id(entry)
        links = Links({i: page for i, page in pages.items() if i != ident}, vol.page)
        figures: list = []
        try:
            kept = None if memo is None else memo.setdefault(str(vol.folder(entry)), {})
            site = build.gather(vol.folder(entry), warnings, kept, links=links, page=pages[ident],
                                base_url=vol.base_url, pdfs=pdfs(pages[ident]) if pdfs is not None else None,
                                drawn=figures)
        except ContentError as error:
            problems.extend(error.problems)
            continue
        for name, data in site.items():
            if name in files and files[name] != data:  # two plates with one data_file, say
                problems.append(f"{shown}, line {entry.line}: plate {ident} writes {quote(name)}, as "
                                f"{owners[name]} does, with other contents; give one of them another name "
                                f"(data_file, page)")
                continue
            files.setdefault(name, data)
            owners.setdefault(name, f"plate {ident}")
        front, _ = volume.front_matter(vol.folder(entry) / volume.PLATE_FILE)
        built[entry.number] = (pages[ident], front["title"], front["deck"])
        if figures:
            pictures[entry.number] = figures[0].svg
    if problems:
        raise ContentError(problems)
    files[vol.page] = volume.index_html(vol, built, pictures)
    files.update(publish.site_files(vol.base_url, [page for page, _, _ in built.values()] + [vol.page]))
    return files


def check(root: Path) -> list[str]:
    """Check the volume and every plate it lists with a folder, writing nothing: their warnings, or ContentError
    listing every mistake of every plate, each at its file and line."""
    vol = volume.load(root)
    problems: list[str] = []
    warnings: list[str] = []
    for entry in vol.written():
        try:
            warnings.extend(checks.checked(vol.folder(entry)).warnings)
        except ContentError as error:
            problems.extend(error.problems)
    if problems:
        raise ContentError(problems)
    return warnings
