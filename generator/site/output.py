"""The output folder: replaced only when plate made it, by writing the new site beside it and swapping it in."""
from __future__ import annotations

import contextlib
import hashlib
import ctypes
import errno
import fcntl
import os
import re
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..page.render import TEMPLATES

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class OutputError(Exception):
    """The output folder cannot be written, or must not be replaced; the message is one line."""

def _inside(inner: Path, outer: Path) -> bool:
    """Whether inner is outer or lies below it."""
    return inner == outer or outer in inner.parents


MARKER = ".plate-site"
MARKER_HEAD = ("# Written by plate (plate-generator); the next build may replace this folder while it holds only these "
               "files, each with these bytes (SHA-256):")
OLD_MARKER_HEAD = "# Written by plate (plate-generator); the next build may replace this folder while it holds only:"
STAGING = ".plate-staging"
STAGING_HEAD = ("# A staging folder plate made beside the site named below, to swap a new site in or the previous one "
                "out; a later build may remove it while it holds only that site's files:")
_LEFTOVER = "-(?:new|old|probe)-[a-z0-9_]{8}"  # tempfile.mkdtemp's names for staging folders
_MARKER_BYTES = 1 << 20  # a marker listing ~10,000 files; a larger .plate-site is not one plate wrote


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def marker_text(files: Mapping[str, str | bytes]) -> str:
    """The marker a build leaves in its folder: what wrote it, and each file it wrote with the SHA-256 of its bytes
    (the same bytes every build; lines as `sha256sum` writes them)."""
    lines = [MARKER_HEAD]
    for name, data in sorted(files.items()):
        if any(c in name for c in "\n\r") or name != name.strip():
            raise OutputError(f"cannot write a file named {name!r}: a site's file names hold no line breaks and "
                              f"no leading or trailing spaces")
        lines.append(f"{_sha256(data.encode('utf-8') if isinstance(data, str) else data)}  {name}")
    return "".join(f"{line}\n" for line in lines)


def staging_text(target: Path) -> str:
    """The marker of a staging folder: what it is for, and the site (its real path) it belongs beside."""
    return f"{STAGING_HEAD}\n{target}\n"


def _small_text(path: Path, most: int = _MARKER_BYTES) -> str | None:
    """The UTF-8 text of a regular file of at most `most` bytes (never a link, FIFO or device), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > most:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(most + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _file_hash(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes (never following a link, never opening a FIFO or device), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass
class Survey:
    """What a folder holds besides what plate wrote: entries no marker covers (folders as `name/`), files a marker
    lists whose bytes have changed since, and whether its marker is an older plate's (names without hashes)."""
    foreign: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    old_marker: bool = False
    plates: list[str] = field(default_factory=list)  # the files plate wrote, bytes unchanged (markers included)

    @property
    def clean(self) -> bool:
        return not (self.foreign or self.changed or self.old_marker)


def _marked(folder: Path) -> tuple[dict[str, str] | None, bool]:
    """({file: sha256} plate's marker in folder lists, or None), and whether the marker is an older plate's."""
    text = _small_text(folder / MARKER)
    if text is None:
        return None, False
    lines = text.split("\n")
    if lines[0] == OLD_MARKER_HEAD:
        return None, True
    if lines[0] != MARKER_HEAD or lines[-1] != "":
        return None, False
    listed = {}
    for line in lines[1:-1]:
        digest, sep, name = line.partition("  ")
        if not (sep and re.fullmatch("[0-9a-f]{64}", digest) and name and "/" not in name and name != MARKER):
            return None, False  # not a marker plate wrote: every file in the folder counts as someone else's
        listed[name] = digest
    return listed, False


def own_names(out: Path) -> list[str]:
    """The files plate's marker in out lists (the previous site's, before a build replaces it); [] for anything
    else."""
    listed, _ = _marked(Path(os.path.realpath(out)))
    return sorted(listed or {})


def own_file(out: Path, name: str) -> bytes | None:
    """The bytes of a file plate wrote in out: a regular file its marker there lists, with the SHA-256 the marker
    gives; None for anything else (a file of someone else's is never read as plate's)."""
    folder = Path(os.path.realpath(out))
    listed, _ = _marked(folder)
    if not listed or name not in listed:
        return None
    try:
        fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if _sha256(data) == listed[name] else None


def survey(folder: Path) -> Survey:
    """Sort what folder holds into plate's files (each matching its hash in the marker) and everything else."""
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    result = Survey()
    if not entries:
        return result
    listed, result.old_marker = _marked(folder)
    for entry in entries:
        shown = entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
        if listed is not None and entry.name == MARKER:
            result.plates.append(entry.name)
        elif entry.name == STAGING and (_small_text(Path(entry.path)) or "").startswith(STAGING_HEAD + "\n"):
            result.plates.append(entry.name)  # left in a site by a build killed during its swap
        elif listed is None or entry.name not in listed or not entry.is_file(follow_symlinks=False):
            result.foreign.append(shown)  # a link, folder or FIFO in a listed file's place is not plate's either
        elif _file_hash(Path(entry.path)) == listed[entry.name]:
            result.plates.append(entry.name)
        else:
            result.changed.append(shown)
    if result.old_marker:  # nothing an older marker lists can be told from a file of the same name
        result.foreign = [name for name in result.foreign if name != MARKER]
    return result


def foreign_entries(folder: Path) -> list[str]:
    """What in folder a build did not write, or has changed since (sub-folders as `name/`); [] for an empty folder
    or a site."""
    found = survey(folder)
    return sorted(found.foreign + found.changed)


def _read_only(folder: Path) -> tuple[str, str] | None:
    """(why folder must not be replaced because it cannot or should not be written, what to do), or None.

    Mode bits, not os.access: the owner's write bit says what the author meant, even to root."""
    if os.statvfs(folder).f_flag & os.ST_RDONLY:
        return "is on a read-only file system", "choose a folder on a writable one (or remount it read-write)"
    if not os.stat(folder).st_mode & stat.S_IWUSR:
        return "is read-only", "make it writable (chmod -R u+w) or choose another folder"
    locked = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)
              and not e.stat(follow_symlinks=False).st_mode & stat.S_IWUSR]
    if locked:
        return (f"holds read-only files ({', '.join(sorted(locked))})",
                "make it writable (chmod -R u+w) or choose another folder")
    return None


def _why(error: OSError) -> str:
    """An OSError in words, the cases a user can act on made plain."""
    if error.errno == errno.EROFS:
        return "it is on a read-only file system (choose a folder on a writable one)"
    if error.errno == errno.ELOOP:
        return "a symlink loop (a link that leads back to itself)"
    return error.strerror or str(error)


def _names(entries: list[str], most: int = 6) -> str:
    """'notes/, thesis.txt' (at most a few, then how many more)."""
    more = f", and {len(entries) - most:,} more" if len(entries) > most else ""
    return ", ".join(entries[:most]) + more


def check_replaceable(target: Path, shown: Path) -> None:
    """Refuse to replace an existing folder unless it is empty or a site plate wrote (every file's bytes as plate
    wrote them), and writable."""
    try:
        found = survey(target)
        locked = _read_only(target)
    except OSError as error:
        raise OutputError(f"cannot read {shown}: {_why(error)}") from error
    if found.old_marker:
        raise OutputError(f"{shown} was built by an older plate, whose marker .plate-site lists files without "
                          f"their hashes, so plate cannot tell them from files changed since; delete the folder "
                          f"once by hand, or choose another")
    if found.changed and not found.foreign:
        raise OutputError(f"{shown} holds files changed since plate wrote them ({_names(found.changed)}); plate "
                          f"will not overwrite them: move them out of the folder, or choose another --out")
    if found.foreign or found.changed:
        parts = []
        if found.foreign:
            parts.append(f"files plate did not write ({_names(found.foreign)})")
        if found.changed:
            parts.append(f"files changed since plate wrote them ({_names(found.changed)})")
        older = "index.html" in found.foreign and not (target / MARKER).exists()
        hint = (" (if an older plate built it, before sites carried the marker .plate-site, delete it once by "
                "hand)") if older else ""
        raise OutputError(f"{shown} holds {' and '.join(parts)}; choose an empty folder or a previous site{hint}")
    if locked:
        raise OutputError(f"{shown} {locked[0]}; {locked[1]}")


def _target(out: Path) -> tuple[Path, Path]:
    """(out as shown in messages, the folder a build writes): a symlinked out is followed, the link kept."""
    shown = Path(os.path.abspath(out))
    try:
        os.stat(shown)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OutputError(f"{shown} is a symlink loop (a link that leads back to itself, maybe through "
                              f"others); point it at a folder, or choose another --out") from None
        if error.errno == errno.ENAMETOOLONG:
            raise OutputError(f"{str(shown)[:80]}… is too long a name for the file system; choose a shorter "
                              f"--out") from None
    return shown, Path(os.path.realpath(shown))


def check_output(out: Path, content_dir: Path | None = None) -> None:
    """Refuse an output folder that cannot be written or whose replacement would destroy something else."""
    out, target = _target(out)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{out} is a file, not a folder")
    if target == target.parent:
        raise OutputError(f"{out} is the root folder; choose an empty folder or a previous site")
    guarded = [(Path.cwd().resolve(), "the current folder"), (PACKAGE_ROOT, "the generator")]
    inner = [(TEMPLATES.resolve(), "the templates folder"), (Path(__file__).resolve().parents[1], "the generator")]
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
        raise OutputError(f"cannot write {out}: {_why(error)} in {parent}") from error


_FS_IOC_GETFLAGS = 0x80086601  # Linux: a file's inode flags (chattr)
_UNCHANGEABLE = 0x10 | 0x20  # FS_IMMUTABLE_FL, FS_APPEND_FL: such a file cannot be removed, even by root


def _unremovable(folder: Path, names: list[str]) -> list[str]:
    """The files of folder (among names) that cannot be removed: immutable or append-only (chattr +i, +a)."""
    found = []
    for name in names:
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            flags = int.from_bytes(fcntl.ioctl(fd, _FS_IOC_GETFLAGS, bytes(8))[:4], sys.byteorder)
        except OSError:  # a file system without inode flags: nothing makes a file unremovable there
            flags = 0
        finally:
            os.close(fd)
        if flags & _UNCHANGEABLE:
            found.append(name)
    return found


def _remove_site(folder: Path, found: Survey) -> bool:
    """Remove plate's files (found.plates) from folder, then folder itself if nothing else is left in it (a file
    saved there meanwhile stays, and so does the folder; one that cannot be removed too); whether folder is gone."""
    for name in found.plates:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
    try:
        os.rmdir(folder)
    except OSError:
        return False
    return True


def clean_leftovers(target: Path) -> list[Path]:
    """Remove staging folders a killed build left beside target: only ones named as write() names them, whose own
    marker says plate made them beside this target, holding nothing but a build's files (each with its bytes), and
    not locked by a build still running; the folders removed."""
    pattern = re.compile(re.escape(f".{target.name}") + _LEFTOVER)
    mine = staging_text(target)
    removed = []
    for entry in os.scandir(target.parent):
        if not (pattern.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
            continue
        folder = Path(entry.path)
        if _small_text(folder / STAGING) != mine:
            continue  # a backup of the user's that happens to have a staging folder's name, say
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a running build holds it
            found = survey(folder)
            if found.clean and _remove_site(folder, found):
                removed.append(folder)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


# Called, with Ctrl-C held back, the moment a new site is in place: the command says so after a Ctrl-C from then on,
# wherever it lands (after write returns too). The command sets it (cli.run_build).
on_swap = None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while write() ran; swapped tells whether the new site was already in place."""

    def __init__(self, swapped: bool):
        super().__init__()
        self.swapped = swapped


def _renameat2(a: Path, b: Path, flags: int) -> bool:
    """Linux renameat2 with flags; False where unsupported, OSError for any other failure."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded (find_library runs ldconfig)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (RENAME_EXCHANGE); False where unsupported."""
    return _renameat2(a, b, 2)


def _move_back(source: Path, target: Path) -> bool:
    """Move source to target unless target exists (RENAME_NOREPLACE, or a hard link where that is missing)."""
    try:
        if _renameat2(source, target, 1):
            return True
        if source.is_dir() or source.is_symlink() or target.exists() or os.path.lexists(target):
            return False
        os.link(source, target)  # fails if target appeared meanwhile: nothing is replaced
        os.unlink(source)
        return True
    except OSError:
        return False


def _swap(staging: Path, target: Path) -> Path | None:
    """Put staging in target's place; the folder now holding the previous site, if there was one."""
    if target.is_dir() and _exchange(staging, target):
        return staging
    old = None
    if target.exists():
        old = target.parent / f".{target.name}-old-{os.urandom(6).hex()[:8]}"
        os.rename(target, old)  # a fresh name: fails, rather than replacing, if someone took it meanwhile
    try:
        staging.rename(target)
    except BaseException:
        if old is not None:
            old.rename(target)
        raise
    return old


_held: list[int] = []  # the Ctrl-Cs that came while _uninterrupted held them back


@contextlib.contextmanager
def _uninterrupted():
    """Hold Ctrl-C back for a moment, so that whether the swap happened is always known; one that came meanwhile is
    raised as it ends. The handler is replaced: a signal mask holds a signal back from one thread only, and another
    thread of the process (numpy's, vl-convert's) took it, so that Python raised it in the middle of the swap."""
    _held.clear()
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: _held.append(signum))
    except ValueError:  # not the main thread: Python raises a Ctrl-C in the main thread only, never here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
        if _held:
            _held.clear()
            signal.raise_signal(signal.SIGINT)  # to the handler put back, as if it came now


def _write_file(path: Path, text: str | bytes) -> None:
    """Write one file of the site (text as UTF-8 with \\n line ends; PDFs and images as they are), durably."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)  # never through a link
    with open(fd, "wb") as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        handle.flush()
        os.fsync(handle.fileno())
        os.fchmod(handle.fileno(), 0o644)


def _after_swap(old: Path, out: Path, target: Path) -> list[str]:
    """Clear the previous site out of old, checking it again: a file saved into the site after the last check is
    moved back into the site (or, where the new site has a file of that name, kept in old); what to tell the user."""
    try:
        found = survey(old)
    except OSError as error:
        return [f"the previous site is kept in {old} (it could not be read: {_why(error)})"]
    moved, kept = [], list(found.changed)
    if found.old_marker:
        kept += found.foreign
    else:
        for name in found.foreign:
            (moved if _move_back(old / name.rstrip("/"), target / name.rstrip("/")) else kept).append(name)
    if not kept:
        _remove_site(old, found)
    notes = []
    if moved:
        notes.append(f"{_names(moved)} appeared in {out} during the build; moved back into {out}, beside the new "
                     f"site (the next build refuses the folder until they are moved out)")
    if kept:
        for name in found.plates:  # leave only the user's files, and no marker that could let a build remove them
            with contextlib.suppress(OSError):
                os.unlink(old / name)
        notes.append(f"{_names(kept)} changed or appeared in {out} during the build, and the new site has files "
                     f"of those names; yours are kept in {old}")
    return notes


def write(files: dict[str, str | bytes], out: Path, warnings: list[str] | None = None) -> bool:
    """Write files into a fresh folder beside out, then swap it in for out in one step; True once swapped.

    A symlinked out is followed (its target is replaced, the link kept). Ctrl-C raises Interrupted, which says
    whether the new site was already in place. What the check after the swap found is added to warnings."""
    out, target = _target(out)
    marker = marker_text(files)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_leftovers(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-new-", dir=target.parent))
        lock = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(lock, fcntl.LOCK_EX)  # clean_leftovers of a build running beside this one keeps off
    except OSError as error:
        raise OutputError(f"cannot write {out}: {_why(error)}") from error
    swapped, notes = False, []
    try:
        _write_file(staging / STAGING, staging_text(target))  # first: a killed build's staging is recognisable
        _write_file(staging / MARKER, marker)
        for name, text in sorted(files.items()):
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            _write_file(staging / name, text)
        staging.chmod(0o755)
        if target.is_dir():
            check_replaceable(target, out)  # again: the folder may have changed while the site was built
            stuck = _unremovable(target, survey(target).plates)
            if stuck:  # the previous site could be swapped out but never cleared away: refuse while nothing changed
                raise OutputError(f"cannot replace {out}: {_names(stuck)} cannot be removed (immutable or append-only: "
                                  f"chattr -i or -a clears it); {out} was left as it was")
            # The previous site leaves carrying the same marker, so that a build killed after the swap leaves a
            # folder the next build knows as its own.
            _write_file(target / STAGING, staging_text(target))
        with _uninterrupted():
            old = _swap(staging, target)
            swapped, staging = True, None
            if on_swap is not None:
                on_swap()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target / STAGING)
        if old is not None:
            try:
                notes = _after_swap(old, out, target)
            except OSError as error:  # the new site is in place whatever happens to the previous one's folder
                notes = [f"the previous site is kept in {old}: it could not be cleared away ({_why(error)})"]
    except BaseException as error:
        if staging is not None:
            _remove_site(staging, Survey(plates=[STAGING, MARKER, *files]))
            if _small_text(target / STAGING) == staging_text(target):  # the site stays as it was
                with contextlib.suppress(OSError):
                    os.unlink(target / STAGING)
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted(swapped) from None
        if isinstance(error, OSError):
            raise OutputError(f"cannot write {out}: {_why(error)}") from error
        raise
    finally:
        os.close(lock)
    if warnings is not None:
        warnings.extend(notes)
    else:
        for note in notes:
            print(f"plate: warning: {note}", file=sys.stderr)
    return swapped
