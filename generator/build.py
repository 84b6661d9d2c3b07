"""Gather the whole site in memory, then write it at once: a failed build leaves site/ as it was."""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import re
import shutil
import signal
import stat
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


def _runtime_seal(data: bytes) -> str:
    """What the sidecar of a cached runtime holds: its length and sha256."""
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}\n"


def _cached_runtime(path: Path) -> str | None:
    """The runtime kept at path, or None when it is missing, unreadable, truncated or altered.

    A sidecar (path + '.sha256') states the code's length and hash: a build killed while writing, a full
    disk or an edit by hand shows up as a mismatch, and the runtime is bundled anew."""
    try:
        data = path.read_bytes()
        seal = path.with_name(path.name + ".sha256").read_text(encoding="ascii")
        return data.decode("utf-8") if data.strip() and seal == _runtime_seal(data) else None
    except (OSError, UnicodeDecodeError):
        return None


def _store_runtime(path: Path, code: str) -> None:
    """Keep the runtime at path, then its sidecar (an unwritable cache only costs a second next time)."""
    data = code.encode("utf-8")
    for target, content in ((path, data), (path.with_name(path.name + ".sha256"), _runtime_seal(data).encode())):
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(content)
            tmp.replace(target)
        except OSError:
            tmp.unlink(missing_ok=True)
            return


def runtime_js() -> str:
    """The Vega runtime, bundled once per vl-convert version and kept in the cache (checked on every read)."""
    path = cache_dir() / runtime.cache_name()
    code = _cached_runtime(path)
    if code is None:
        code = runtime.bundle()
        if not code.strip():
            raise RuntimeError("vl-convert returned an empty Vega runtime; the page's figures could not start")
        _store_runtime(path, code)
    return code


MAX_STEP_SECONDS = 1e9  # about 32 years per step: beyond it a preset is a typo, and times no longer print


def check_grid(atlas: Atlas, root: Path) -> None:
    """Presets that are each within bounds can still combine into absurd times (1e15 parameters on a
    0.001 TFLOP/s GPU): the longest step is named at its model's line."""
    g = atlas.grid
    arrays = (g.compute_s, g.allreduce_s, g.step_s, g.efficiency, g.tokens_per_replica, g.model_states_bytes,
              g.continuous_crossing)
    path = root / "presets.toml"
    problems = schema.Problems(root)
    if not all(np.isfinite(a).all() for a in arrays):
        problems.add(path, None, "the presets are too large or too small for the model: some times or "
                                 "efficiencies come out infinite or undefined")
        problems.raise_if_any()
    worst = np.unravel_index(np.argmax(g.step_s), g.step_s.shape)
    if g.step_s[worst] > MAX_STEP_SECONDS:
        p = atlas.presets
        model, batch, network = (list(table)[i] for table, i in zip((p.models, p.batches, p.networks), worst))
        text = path.read_text(encoding="utf-8-sig")
        problems.add(path, schema.locate(text, ("models", model, "params")),
                     f"model {schema.quote(model)} with batch {schema.quote(batch)} over network "
                     f"{schema.quote(network)}: one step would take {g.step_s[worst]:.3g} s, more than "
                     f"{MAX_STEP_SECONDS:,.0f} s (about 32 years); check params, tokens, peak_tflops, mfu and "
                     f"link_gbytes_per_s")
        problems.raise_if_any()


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


# --- the output folder: replaced only when plate made it -------------------------------------------

MARKER = ".plate-site"
MARKER_HEAD = "# Written by plate (plate-generator); the next build may replace this folder while it holds only:"
_LEFTOVER = "-(?:new|old|probe)-[a-z0-9_]{8}"  # tempfile.mkdtemp's names for staging folders


def marker_text(names) -> str:
    """The marker a build leaves in its folder: what wrote it and the files it wrote (the same bytes every build)."""
    return "".join(f"{line}\n" for line in (MARKER_HEAD, MARKER, *sorted(names)))


def _marked_files(folder: Path) -> set[str] | None:
    """The files plate's marker in folder lists, or None when folder holds no marker plate wrote."""
    path = folder / MARKER
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            lines = handle.read(65536).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return set(lines[1:]) | {MARKER} if lines and lines[0] == MARKER_HEAD else None


def foreign_entries(folder: Path) -> list[str]:
    """What in folder a build did not write (sub-folders as `name/`); [] for an empty folder or a site."""
    with os.scandir(folder) as scan:
        entries = list(scan)
    allowed = (_marked_files(folder) or set()) if entries else set()
    return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in entries
                  if not (e.name in allowed and e.is_file(follow_symlinks=False)))


def _read_only(folder: Path) -> str | None:
    """Why folder must not be replaced because someone made it read-only, or None.

    Mode bits, not os.access: the owner's write bit says what the author meant, even to root."""
    if os.statvfs(folder).f_flag & os.ST_RDONLY:
        return "is on a read-only file system"
    if not os.stat(folder).st_mode & stat.S_IWUSR:
        return "is read-only"
    locked = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)
              and not e.stat(follow_symlinks=False).st_mode & stat.S_IWUSR]
    return f"holds read-only files ({', '.join(sorted(locked))})" if locked else None


def _names(entries: list[str], most: int = 6) -> str:
    """'notes/, thesis.txt' (at most a few, then how many more)."""
    more = f", and {len(entries) - most:,} more" if len(entries) > most else ""
    return ", ".join(entries[:most]) + more


def check_replaceable(target: Path, shown: Path) -> None:
    """Refuse to replace an existing folder unless it is empty or a site plate wrote, and writable."""
    try:
        foreign = foreign_entries(target)
        locked = _read_only(target)
    except OSError as error:
        raise OutputError(f"cannot read {shown}: {error.strerror or error}") from error
    if foreign:
        raise OutputError(f"{shown} holds files plate did not write ({_names(foreign)}); "
                          f"choose an empty folder or a previous site")
    if locked:
        raise OutputError(f"{shown} {locked}; make it writable (chmod -R u+w) or choose another folder")


def _target(out: Path) -> tuple[Path, Path]:
    """(out as shown in messages, the folder a build writes): a symlinked out is followed, the link kept."""
    shown = Path(os.path.abspath(out))
    return shown, Path(os.path.realpath(shown))


def check_output(out: Path, content_dir: Path | None = None) -> None:
    """Refuse an output folder that cannot be written or whose replacement would destroy something else."""
    out, target = _target(out)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{out} is a file, not a folder")
    if target == target.parent:
        raise OutputError(f"{out} is the root folder; choose an empty folder or a previous site")
    guarded = [(Path.cwd().resolve(), "the current folder"), (PACKAGE_ROOT, "the generator")]
    inner = [(render.TEMPLATES.resolve(), "the templates folder"), (Path(__file__).resolve().parent, "the generator")]
    if content_dir is not None:
        guarded.insert(0, (Path(content_dir).resolve(), "the content folder"))
        inner.insert(0, (Path(content_dir).resolve(), "the content folder"))
    for place, what in guarded:
        if _inside(place, target):
            raise OutputError(f"{out} holds {what}; building there would replace it (choose another --out)")
    for place, what in inner:
        if _inside(target, place):
            raise OutputError(f"{out} is inside {what}; choose an --out outside it")
    if target.is_dir():
        check_replaceable(target, out)
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot create {out}: {parent} is a file")
    try:
        probe = tempfile.mkdtemp(prefix=f".{target.name}-probe-", dir=parent)
        os.rmdir(probe)
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror or error} in {parent}") from error


def clean_leftovers(target: Path) -> list[Path]:
    """Remove staging folders a killed build left beside target: only ones named as write() names them,
    holding nothing but a build's files, and not locked by a build still running; the folders removed."""
    pattern = re.compile(re.escape(f".{target.name}") + _LEFTOVER)
    removed = []
    for entry in os.scandir(target.parent):
        if not (pattern.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
            continue
        folder = Path(entry.path)
        try:
            if foreign_entries(folder):
                continue
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a running build holds it
            shutil.rmtree(folder)
            removed.append(folder)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while write() ran; swapped tells whether the new site was already in place."""

    def __init__(self, swapped: bool):
        super().__init__()
        self.swapped = swapped


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


def _swap(staging: Path, target: Path) -> Path | None:
    """Put staging in target's place; the folder now holding the previous site, if there was one."""
    if target.is_dir() and _exchange(staging, target):
        return staging
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}-old-", dir=target.parent))
        target.rename(old)
    try:
        staging.rename(target)
    except BaseException:
        if old is not None:
            old.rename(target)
        raise
    return old


@contextlib.contextmanager
def _uninterrupted():
    """Hold Ctrl-C back for a moment, so that whether the swap happened is always known."""
    held = hasattr(signal, "pthread_sigmask")
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _write_file(path: Path, text: str) -> None:
    """Write one file of the site and make it durable before the swap."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    path.chmod(0o644)


def write(files: dict[str, str], out: Path) -> bool:
    """Write files into a fresh folder beside out, then swap it in for out in one step; True once swapped.

    A symlinked out is followed (its target is replaced, the link kept). Ctrl-C raises Interrupted,
    which says whether the new site was already in place."""
    out, target = _target(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_leftovers(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-new-", dir=target.parent))
        lock = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror or error}") from error
    swapped = False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # clean_leftovers of a build running beside this one keeps off
        _write_file(staging / MARKER, marker_text(files))  # first: a killed build's staging is recognisable
        for name, text in sorted(files.items()):
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            _write_file(staging / name, text)
        staging.chmod(0o755)
        if target.is_dir():
            check_replaceable(target, out)  # again: the folder may have changed while the site was built
        with _uninterrupted():
            old = _swap(staging, target)
            swapped, staging = True, None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException as error:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted(swapped) from None
        if isinstance(error, OSError):
            raise OutputError(f"cannot write {out}: {error.strerror or error}") from error
        raise
    finally:
        os.close(lock)
    return swapped


def build(content_dir: Path, out: Path) -> dict[str, str]:
    """Build the site from content_dir into out; returns what was written."""
    check_output(out, content_dir)
    files = gather(Path(content_dir))
    write(files, Path(out))
    return files
