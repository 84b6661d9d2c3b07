"""The output folder: replaced only when plate made it, by writing the new site beside it and swapping it in."""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import os
import re
import shutil
import signal
import stat
import tempfile
from pathlib import Path

from .render import TEMPLATES

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class OutputError(Exception):
    """The output folder cannot be written, or must not be replaced; the message is one line."""

def _inside(inner: Path, outer: Path) -> bool:
    """Whether inner is outer or lies below it."""
    return inner == outer or outer in inner.parents


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
        older = "index.html" in foreign and not (target / MARKER).exists()
        hint = (" (if an older plate built it, before sites carried the marker .plate-site, delete it once by "
                "hand)") if older else ""
        raise OutputError(f"{shown} holds files plate did not write ({_names(foreign)}); "
                          f"choose an empty folder or a previous site{hint}")
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
    inner = [(TEMPLATES.resolve(), "the templates folder"), (Path(__file__).resolve().parent, "the generator")]
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


def _foreign_or_unreadable(folder: Path) -> bool:
    """Whether folder holds anything a build did not write, or cannot be listed."""
    try:
        return bool(foreign_entries(folder))
    except OSError:
        return True


def _write_file(path: Path, text: str | bytes) -> None:
    """Write one file of the site (text as UTF-8 with \\n line ends; PDFs and images as they are), durably."""
    with open(path, "wb") as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        handle.flush()
        os.fsync(handle.fileno())
    path.chmod(0o644)


def write(files: dict[str, str | bytes], out: Path) -> bool:
    """Write files into a fresh folder beside out, then swap it in for out in one step; True once swapped.

    A symlinked out is followed (its target is replaced, the link kept). Ctrl-C raises Interrupted,
    which says whether the new site was already in place."""
    out, target = _target(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_leftovers(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-new-", dir=target.parent))
        lock = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(lock, fcntl.LOCK_EX)  # clean_leftovers of a build running beside this one keeps off
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror or error}") from error
    swapped = False
    try:
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
        if old is not None and not _foreign_or_unreadable(old):  # a file added since the check stays
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
