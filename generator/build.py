"""Gather the whole site in memory, then write it at once: a failed build leaves site/ as it was."""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from . import charts, content, prose, render, runtime, schema
from .facts import Atlas

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class OutputError(Exception):
    """The output folder cannot be written, or must not be replaced; the message is one line."""


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
    except (OSError, UnicodeDecodeError):
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


def check_grid(atlas: Atlas, root: Path) -> None:
    """Presets that are each valid can still overflow the model (say 1e300 parameters at mfu 1e-300)."""
    g = atlas.grid
    arrays = (g.compute_s, g.allreduce_s, g.step_s, g.efficiency, g.tokens_per_replica, g.states_bytes,
              g.continuous_crossing)
    if not all(np.isfinite(a).all() for a in arrays):
        shown = schema.Problems(root).where(root / "presets.toml", None)
        raise schema.ContentError([f"{shown}: the presets are too large or too small for the model: some "
                                   f"times or efficiencies come out infinite or undefined"])


def gather(content_dir: Path) -> dict[str, str]:
    """Every file of the site as {relative path: text}, computed without writing anything."""
    plate = content.load(content_dir, check_prose=prose.check_prose)
    atlas = Atlas(plate.presets)
    check_grid(atlas, plate.root)
    prose.prose_html(plate, atlas)  # prose mistakes surface before the figures are drawn
    figures = charts.figures(atlas, plate.plate.default)
    html = render.page(plate, atlas, figures, runtime_js())
    return {"index.html": html, render.CSV_NAME: render.csv_text(atlas)}


def _inside(inner: Path, outer: Path) -> bool:
    """Whether inner is outer or lies below it."""
    return inner == outer or outer in inner.parents


def check_output(out: Path, content_dir: Path | None = None) -> None:
    """Refuse an output folder that cannot be written or whose replacement would destroy something else."""
    out = Path(os.path.abspath(out))
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is a file, not a folder")
    guarded = [(Path.cwd().resolve(), "the current folder"), (PACKAGE_ROOT, "the generator")]
    if content_dir is not None:
        guarded.insert(0, (Path(content_dir).resolve(), "the content folder"))
    resolved = out.resolve()
    for place, what in guarded:
        if _inside(place, resolved):
            raise OutputError(f"{out} holds {what}; building there would replace it (choose another --out)")
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot create {out}: {parent} is a file")
    try:
        probe = tempfile.mkdtemp(prefix=f".{out.name}-probe-", dir=parent)
        os.rmdir(probe)
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror or error} in {parent}") from error


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def write(files: dict[str, str], out: Path) -> None:
    """Write files into a fresh folder beside out, then swap it in for out in one step."""
    out = Path(os.path.abspath(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror or error}") from error
    old = None
    try:
        for name, text in sorted(files.items()):
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            target.chmod(0o644)
        staging.chmod(0o755)
        if out.is_dir() and _exchange(staging, out):
            old, staging = staging, None  # staging now holds the previous site
        else:
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
                out.rename(old)
            staging.rename(out)
            staging = None
    except BaseException as error:
        if old is not None and not out.exists():
            old.rename(out)
            old = None
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise OutputError(f"cannot write {out}: {error.strerror or error}") from error
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(content_dir: Path, out: Path) -> dict[str, str]:
    """Build the site from content_dir into out; returns what was written."""
    check_output(out, content_dir)
    files = gather(Path(content_dir))
    write(files, Path(out))
    return files
