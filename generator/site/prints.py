"""The site's PDFs (generator/site/pdf.py prints them): which plate pages link theirs, and whether a build keeps them,
prints them again or drops them. A record in the site names the bytes of the page each pair was printed from."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import output, pdf

# Hidden from a reader of the site (a dot file), and listed with its hash in the marker like every file plate writes.
RECORD = ".plate-prints.json"
LINK_TEXTS = {"A4": "A4", "Letter": "US Letter"}  # each paper as the page's links name it
_FRAGMENT = re.compile(r"[A-Za-z0-9_.=&-]*")  # what fragment_of makes: key=id pairs joined by '&'


def names(page: str) -> dict[str, str]:
    """A page's PDFs per paper, named after it: index.html gives index-a4.pdf and index-letter.pdf."""
    return pdf.pdf_names(Path(page).stem)


def _sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


@dataclass(frozen=True)
class Old:
    """A page's PDFs in the previous site: the SHA-256 of the page they print, its URL fragment, and their bytes."""

    sha256: str
    select: str
    pdfs: dict[str, bytes]


def _entry(out: Path, page: object, entry: object) -> Old | None:
    """One page's record, checked field by field, with its PDFs as plate wrote them; None for anything else."""
    if not (isinstance(page, str) and isinstance(entry, dict) and set(entry) == {"pdfs", "select", "sha256"}):
        return None
    digest, select, files = entry["sha256"], entry["select"], entry["pdfs"]
    if not (isinstance(digest, str) and re.fullmatch("[0-9a-f]{64}", digest) and isinstance(select, str)
            and _FRAGMENT.fullmatch(select) and files == list(names(page).values())):
        return None
    pdfs = {name: output.own_file(out, name) for name in files}
    if any(data is None for data in pdfs.values()):
        return None
    return Old(digest, select, pdfs)


def previous(out: Path) -> dict[str, Old]:
    """The PDFs of the previous site in out, by page: read only from files that plate's marker there lists, each
    with the bytes plate wrote; {} when there are none, or anything is not as plate wrote it."""
    text = output.own_file(out, RECORD)
    try:
        record = json.loads(text) if text is not None else None
    except ValueError:
        return {}
    pages = record.get("pages") if isinstance(record, dict) else None
    if not isinstance(pages, dict):
        return {}
    found = {page: _entry(out, page, entry) for page, entry in pages.items()}
    return {page: old for page, old in found.items() if old is not None}


def _listed(items: list[str]) -> str:
    return ", ".join(items)


@dataclass
class Plan:
    """What a build does with the site's PDFs: asked by the command, filled in by build.build as it builds."""

    every: bool = False  # `plate pdf`: print every plate's page
    select: str = ""  # the URL fragment `plate pdf` prints them with (one plate's selection)
    reprint: bool = True  # a page changed since its PDFs were printed: print them again, else drop them
    old: dict[str, Old] = field(default_factory=dict)  # the previous site's (previous())
    pages: list[str] = field(default_factory=list)  # the plate pages this build renders, in order
    dropped: set[str] = field(default_factory=set)  # pages whose PDFs go: rendered without the links
    notes: list[str] = field(default_factory=list)  # one line per plate page: what became of its PDFs
    # pages this build keeps as the previous site has them (other plates', when one plate is built into its series'
    # site): their PDFs and record entries carried over untouched
    carried: dict[str, Old] = field(default_factory=dict)

    def links(self, page: str) -> dict[str, str]:
        """{link text: file name} of a plate page's PDFs when the new site will hold them, else {}."""
        if page not in self.pages:
            self.pages.append(page)
        if page in self.dropped or not (self.every or page in self.old):
            return {}
        return {LINK_TEXTS[paper]: name for paper, name in names(page).items()}

    def _stale(self, files: dict[str, str | bytes]) -> list[str]:
        """The pages whose previous PDFs print other bytes than the page the build made."""
        return [p for p in self.pages if p in self.old and _sha256(files[p]) != self.old[p].sha256]

    def settle(self, files: dict[str, str | bytes]) -> bool:
        """Drop the PDFs of changed pages that will not be printed again (no Chromium, or `plate serve`): True when
        the build must render those pages again, without the links."""
        stale = [] if self.every else [p for p in self._stale(files) if p not in self.dropped]
        if not stale:
            return False
        why = "plate pdf prints them again"
        if self.reprint:
            try:
                pdf.chromium()
                return False
            except pdf.PrintError as error:
                why = f"they cannot be printed again: {error}"
        for page in stale:
            self.dropped.add(page)
            self.notes.append(f"dropped {_listed(list(names(page).values()))}, and {page} links no PDF ({page} "
                              f"changed; {why})")
        return True

    def made(self, files: dict[str, str | bytes], out: Path) -> dict[str, str | bytes]:
        """The PDFs and the record to add to the site (kept, or printed now), and a note for each page."""
        linked = [p for p in self.pages if p not in self.dropped and (self.every or p in self.old)]
        stale = set(self._stale(files))
        fresh = {p: (self.select if self.every else self.old[p].select) for p in linked if self.every or p in stale}
        printed = pdf.printed(files, fresh) if fresh else {}
        added: dict[str, str | bytes] = {}
        record = {}
        for page in linked:
            if page in printed:
                pdfs = {names(page)[paper]: data for paper, data in printed[page].items()}
                select = fresh[page]
            else:
                pdfs, select = self.old[page].pdfs, self.old[page].select
            added.update(pdfs)
            record[page] = {"pdfs": list(pdfs), "select": select, "sha256": _sha256(files[page])}
            self.notes.extend(self._said(page, pdfs, page in printed, out))
        for page, old in sorted(self.carried.items()):
            added.update(old.pdfs)
            record[page] = {"pdfs": list(old.pdfs), "select": old.select, "sha256": old.sha256}
        for page in sorted(set(self.old) - set(self.pages) - set(self.carried)):
            self.notes.append(f"dropped {_listed(list(names(page).values()))} (this build writes no {page})")
        if record:
            added[RECORD] = json.dumps({"pages": record}, indent=1, sort_keys=True) + "\n"
        return added

    def _said(self, page: str, pdfs: dict[str, bytes], printed: bool, out: Path) -> list[str]:
        """What became of a page's PDFs: each printed one with its page count (plate pdf), or one line for both."""
        if self.every:
            return [f"printed {out / name}: {count} page{'s' if count != 1 else ''} ({paper})"
                    for (paper, name), count in zip(names(page).items(), map(pdf.page_count, pdfs.values()))]
        if printed:
            return [f"printed {_listed(list(pdfs))} again ({page} changed)"]
        return [f"kept {_listed(list(pdfs))} ({page} unchanged)"]
