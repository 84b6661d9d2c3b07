"""Gather the whole site in memory, then write it at once: a failed build leaves site/ as it was."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from . import charts, content, render, runtime
from .facts import Atlas


def cache_dir() -> Path:
    """Where the Vega runtime bundle is kept between builds ($PLATE_CACHE, else the user's cache)."""
    if os.environ.get("PLATE_CACHE"):
        return Path(os.environ["PLATE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "plate"


def runtime_js() -> str:
    """The Vega runtime, bundled once per vl-convert version and kept in the cache."""
    path = cache_dir() / runtime.cache_name()
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    code = runtime.bundle()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(code, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # an unwritable cache only costs a second on the next build
    return code


def gather(content_dir: Path) -> dict[str, str]:
    """Every file of the site as {relative path: text}, computed without writing anything."""
    plate = content.load(content_dir)
    atlas = Atlas(plate.presets)
    figures = charts.figures(atlas, plate.plate.default)
    html = render.page(plate, atlas, figures, runtime_js())
    return {"index.html": html, render.CSV_NAME: render.csv_text(atlas)}


def write(files: dict[str, str], out: Path) -> None:
    """Write files into a fresh folder beside out, then swap it in for out in one step."""
    out = Path(out).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    old = None
    try:
        for name, text in sorted(files.items()):
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        staging.chmod(0o755)
        if out.exists():
            old = out.with_name(f".{out.name}-old-{os.getpid()}")
            out.rename(old)
        staging.rename(out)
    except BaseException:
        if old is not None and not out.exists():
            old.rename(out)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(content_dir: Path, out: Path) -> dict[str, str]:
    """Build the site from content_dir into out; returns what was written."""
    files = gather(Path(content_dir))
    write(files, Path(out))
    return files
