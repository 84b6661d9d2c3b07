"""The build cache: the costly, deterministic outputs of a build (compiled Vega specs, static SVGs, the CSV), kept
between builds in a folder of its own beside the runtime bundle.

An entry is one file named by the sha256 of all its output depends on: the inputs given, the generator's code, the
code of the packages (and the fonts) named. Its first line seals the rest (length and sha256): a truncated, altered or
half-written entry is made again, never used. Entries are written to a new temporary file, then renamed; the cache
writes only inside its folder, and replaces or deletes only its own files: entries (the least recently used go beyond
LIMIT_BYTES) and unfinished temporary files. A folder that cannot be written only costs the time of making the
entries again."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import re
import tempfile
from pathlib import Path
from stat import S_ISREG
from typing import Callable

FOLDER = "plate-build"  # the cache's own folder, inside runtime.cache_dir() (which $PLATE_CACHE may name)
MAGIC = b"plate-cache 1"  # the seal's first word: a file that does not start so is not an entry
GENERATOR = Path(__file__).resolve().parents[1]  # the generator package, its modules in every stage's folder
# Where Linux font libraries (fontconfig, fontdb in vl-convert) look for fonts, and fontconfig's settings (which
# font 'system-ui' or 'sans-serif' is): text widths in a static SVG depend on them, so the SVGs' key includes
# what these folders hold.
FONT_FOLDERS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.fonts", "~/.local/share/fonts", "/etc/fonts")
LIMIT_BYTES = 64 * 2**20  # beyond it, the least recently used entries go (a state of the plate is about 2.4 MB)
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.[a-z]+(\.[a-z]+)?")  # what put() names an entry, and nothing else
# The packages whose code shapes an entry: the import name and the distribution's name in its .dist-info folder.
PACKAGES = {"altair": "altair", "vl_convert": "vl_convert_python", "numpy": "numpy"}


_made = [0]  # entries made so far in this process (not found in the cache): a build says the steps that made some


def made() -> int:
    """How many entries this process has started to make so far (each one the cache did not hold)."""
    return _made[0]


def key(*parts) -> str:
    """The sha256 naming the entry made of these parts (anything JSON can write)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def code() -> str:
    """The generator's own code: a sha256 of every module's source, so an edit of any module makes entries anew."""
    digest = hashlib.sha256()
    for path in sorted(GENERATOR.glob("**/*.py")):
        if "node" in path.relative_to(GENERATOR).parts:
            continue  # node's packages, not the generator's code
        digest.update(f"{path.relative_to(GENERATOR).as_posix()}\n{path.stat().st_size}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def package(module: str) -> str:
    """What identifies an installed package's code without importing it (importing Altair alone takes a third
    of a second): the sha256 of its wheel's RECORD, which lists every installed file with its own sha256."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return f"{module}: not installed"
    origin = Path(spec.origin)
    site = origin.parent.parent if origin.name == "__init__.py" else origin.parent
    records = sorted(site.glob(f"{PACKAGES.get(module, module)}-*.dist-info/RECORD"))
    if len(records) == 1:
        return f"{records[0].parent.name} {hashlib.sha256(records[0].read_bytes()).hexdigest()}"
    from importlib import metadata  # no RECORD (a source checkout, an odd installer): the version, the file's time
    try:
        version = metadata.version(PACKAGES.get(module, module))
    except metadata.PackageNotFoundError:
        version = "unknown"
    stat = origin.stat()
    return f"{module} {version} {stat.st_size} {stat.st_mtime_ns}"


@functools.cache
def fonts() -> tuple[tuple[str, int, int], ...]:
    """Every file in the font folders, with its size and modification time."""
    found = []
    for folder in FONT_FOLDERS:
        for root, _, names in os.walk(os.path.expanduser(folder)):
            for name in names:
                path = os.path.join(root, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                found.append((path, stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(found))


def seal(data: bytes) -> bytes:
    """An entry's first line: the magic word, then the length and sha256 of the data after it."""
    return MAGIC + f" {len(data)} {hashlib.sha256(data).hexdigest()}\n".encode("ascii")


def unsealed(entry: bytes) -> bytes | None:
    """The data of an entry, or None when its seal does not match what follows (truncated, altered, not ours)."""
    head, newline, data = entry.partition(b"\n")
    return data if newline and head + newline == seal(data) else None


MAX_ENTRY_BYTES = LIMIT_BYTES  # an entry larger than the whole cache is not one put() wrote


def read_regular(path: Path, most: int = MAX_ENTRY_BYTES) -> bytes | None:
    """The bytes of path if it is a regular file of at most `most` bytes, else None: never through a link, and never
    from a FIFO (which would hang) or a device such as /dev/zero (which never ends). FileNotFoundError passes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError:
        return None  # a link (ELOOP under O_NOFOLLOW), or not readable
    try:
        info = os.fstat(fd)
        if not S_ISREG(info.st_mode) or info.st_size > most:
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(most + 1)
        return data if len(data) <= most else None
    except OSError:
        return None
    finally:
        os.close(fd)


def replaceable(path: Path) -> bool:
    """Whether an entry may be written at path: nothing is there, or an empty file, or an entry of ours (sealed or
    damaged); a file that is not (a link, a FIFO, anyone's file), however it came there, is left as it is."""
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return True
    return data is not None and data[:len(MAGIC)] in (b"", MAGIC)


def ours(path: Path) -> bool:
    """Whether path is an entry this cache wrote: named as put() names them, a file (not a link), sealed."""
    if not ENTRY_NAME.fullmatch(path.name):
        return False
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return False
    return data is not None and data[:len(MAGIC)] == MAGIC


def at(root: Path, module=None) -> "Cache":
    """The build cache kept under root (runtime.cache_dir(), where the runtime bundle is kept too); its entries are
    keyed by a plate module's code too, when given (plates.load: CODE)."""
    return Cache(root / FOLDER, getattr(module, "CODE", ""))


class Cache:
    """Entries in one folder; a Cache of no folder keeps nothing, and every entry is made each time."""

    def __init__(self, folder: Path | None, plate_code: str = ""):
        self.folder = folder
        self.plate_code = plate_code  # the plate module's code, beside the generator's (code())
        self.pruned = False

    def get(self, name: str) -> str | None:
        """The text kept under name, or None when there is none or it is damaged."""
        if self.folder is None:
            return None
        path = self.folder / name
        try:
            entry = read_regular(path)  # a FIFO or a link to /dev/zero in the cache is no entry: made anew
            data = None if entry is None else unsealed(entry)
            text = None if data is None else data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if text is not None:
            with contextlib.suppress(OSError):  # marks it used, for prune(); a read-only cache just forgets
                os.utime(path)
        return text

    def put(self, name: str, text: str) -> None:
        """Keep text under name: written whole to a new temporary file, then renamed over the entry."""
        if self.folder is None:
            return
        data = text.encode("utf-8")
        tmp = None
        try:
            if not replaceable(self.folder / name):
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            # a new file of its own (never another's), renamed over the entry once whole
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.folder)
            with os.fdopen(fd, "wb") as file:
                file.write(seal(data) + data)
            os.replace(tmp, self.folder / name)
            tmp = None
            if not self.pruned:  # once a build: it writes a few MB at most
                self.pruned = True
                self.prune()
        except BaseException as error:  # a full disk, a read-only folder, Ctrl-C: no half-written file is left
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            if not isinstance(error, OSError):
                raise

    def prune(self, limit: int = LIMIT_BYTES) -> None:
        """Delete the least recently used entries while the entries hold more than limit bytes; only entries this
        cache wrote (ours()) count and go, whatever else is in the folder stays."""
        entries = []
        for path in self.folder.iterdir():
            if ENTRY_NAME.fullmatch(path.name):
                with contextlib.suppress(OSError):
                    stat = path.lstat()
                    if S_ISREG(stat.st_mode):  # not a link, nor a folder
                        entries.append((stat.st_mtime_ns, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= limit:
                return
            total -= size  # gone if ours; if not, it was never the cache's to count
            if ours(path):
                with contextlib.suppress(OSError):
                    path.unlink()

    def kept(self, kind: str, parts: tuple, make: Callable[[], str], needs: tuple[str, ...] = (),
             of_code: bool = True) -> str:
        """make(), or the text it gave before for the same parts, generator code (unless of_code is False: the
        runtime's products depend on node's side, which their parts name) and needs (package import names, or
        'fonts'); kind ('svg', 'vega.json', 'csv') ends the entry's file name."""
        if self.folder is None:
            _made[0] += 1
            return make()
        if of_code:
            name = f"{key(kind, parts, code() + self.plate_code, [fonts() if n == 'fonts' else package(n) for n in needs])}.{kind}"
        else:
            name = f"{key(kind, parts)}.{kind}"
        text = self.get(name)
        if text is None:
            _made[0] += 1
            text = make()
            self.put(name, text)
        return text

