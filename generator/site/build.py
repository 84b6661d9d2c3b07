"""Gather the whole site in memory, then write it at once: a failed build leaves site/ as it was. A series'
plates are gathered by series.py, one plate's files by assembly.py."""
from __future__ import annotations

import os  # noqa: F401 - tests replace os.fsync through it, as the writes in output.py call it
from pathlib import Path

from . import assembly, output, prints, series
from .output import MARKER, Interrupted, OutputError, check_output, write  # noqa: F401 - the command's names


def build(content_dir: Path, out: Path, warnings: list[str] | None = None, plan: prints.Plan | None = None,
          memo: dict | None = None, notes: list[str] | None = None) -> dict[str, str | bytes]:
    """Build the site from content_dir into out; returns what was written (warnings added to warnings). The plate
    pages' PDFs (plan: by default, those of the previous site) are kept, printed or dropped as plan says, and join
    the site in the same swap; notes get one line for each page's PDFs, and one for pages the previous site held
    that this build does not write."""
    check_output(out, content_dir)
    plan = plan if plan is not None else prints.Plan()
    plan.old = prints.previous(out)
    into = series.into_site(Path(content_dir), Path(out))  # one plate of a series, into that series' site
    with assembly.session() as steps:
        files = _site(Path(content_dir), warnings, memo, plan, into, out)
        if plan.settle(files):  # some PDFs are dropped: their pages are rendered again, without the links
            files = _site(Path(content_dir), [], memo, plan, into, out)
    files.update(plan.made(files, Path(out)))
    gone = [n for n in output.own_names(out) if n.endswith(".html") and n not in files]
    write(files, Path(out), warnings)
    if notes is not None:
        notes.extend(f"{line} (made anew, now cached)" for line in steps)
        notes.extend(plan.notes)
        if gone:
            notes.append(f"replaced a site with more pages: {', '.join(gone)} {'is' if len(gone) == 1 else 'are'} "
                         f"gone ({content_dir} builds {', '.join(plan.pages)} alone)")
    return files


def _site(content_dir: Path, warnings: list[str] | None, memo: dict | None, plan: prints.Plan, into=None,
          out: Path | None = None) -> dict[str, str]:
    """Every file of the site: a series' (every plate and the index), one plate's into its series' site (into:
    series.into_site's), or one plate's alone, each page linking its PDFs."""
    if series.is_series(content_dir):  # a folder of plates with its volume.toml: every plate, and the index
        return series.gather(content_dir, warnings, memo, pdfs=plan.links)
    if into is not None:
        return series.gather_into(into, out, warnings, memo, plan)
    return assembly.gather(content_dir, warnings, memo, pdfs=plan.links("index.html"))
