"""`plate new`: start a plate from the template folder templates/new-plate/, and list it in its volume's file beside
it; refusing, with nothing written, when the folder holds anything or the volume cannot take the plate. The folder
and volume.toml end both written or both as before, whatever signal or full disk comes; volume.toml is locked."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import stat
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..source import volume as volumes
from ..source.schema import CONTROL, ID_PATTERN, ContentError, quote
from ..page.theme import TEMPLATES

TEMPLATE = TEMPLATES / "new-plate"
PLACEHOLDER = re.compile(r"@([a-z_]+)@")  # in the template's files: @title@ becomes the title, as a TOML value
MAX_TITLE = 200  # characters: a title is a heading, not a paragraph
ESCAPED = re.compile("[\x7f-\x9f\u2028\u2029]")  # what json.dumps leaves raw but TOML or a line reader cannot take
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")  # each would end the command where it lands; they are held instead
LOCK_WAIT = 5.0  # seconds to wait for another `plate new` on the same volume.toml before refusing


class Refused(Exception):
    """Why `plate new` wrote nothing, in one line."""


class Interrupted(Exception):
    """A signal came before the plate was written: nothing was (or what was is removed again)."""

    def __init__(self, number: int):
        super().__init__(number)
        self.number = number


class Signals:
    """SIGINT, SIGTERM and SIGHUP while `plate new` runs: remembered where they land and acted on only at
    checkpoints, where what is written is known, so the plate ends whole or not at all."""

    def __init__(self):
        self.caught: int | None = None

    def __call__(self, number, frame) -> None:
        self.caught = self.caught or number

    def checkpoint(self) -> None:
        """Stop here, before the commit, if a signal came."""
        if self.caught:
            raise Interrupted(self.caught)

    @contextlib.contextmanager
    def held(self):
        """Catch the signals for the block (only the main thread can: elsewhere they stay as they were)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        numbers = [getattr(signal, name) for name in SIGNALS if hasattr(signal, name)]
        before = {number: signal.signal(number, self) for number in numbers}
        try:
            yield self
        finally:
            for number, handler in before.items():
                signal.signal(number, handler)


@dataclass(frozen=True)
class Plan:
    """What `plate new` will write: the folder's files {relative path: text}, and volume.toml's new text (or None
    when no volume.toml is beside the folder) with the text it was made from; volume_target is the file written
    (volume_file's target when it is a symbolic link)."""

    folder: Path
    files: dict[str, str]
    volume_file: Path | None = None
    volume_old: bytes = b""
    volume_new: bytes = b""
    volume_target: Path | None = None
    retitled: str = ""  # the title volume.toml gave the plate before (--retitle), else ""


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's; DEL, C1 controls and the line and paragraph separators
    (U+2028, U+2029, which str.splitlines() breaks at) are escaped too, so every line reader sees one line."""
    return ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def plan(folder: Path, volume_id: str, number: int, title: str, retitle: bool = False) -> Plan:
    """Check everything and compute every file `plate new` writes, writing nothing; Refused says why not. A number
    volume.toml already lists with another title keeps it unless retitle; a title another plate of the volume has
    is refused."""
    folder = Path(folder)
    if not volumes.VOLUME_ID.fullmatch(volume_id):
        raise Refused(f"--volume {quote(volume_id)} must hold only letters and digits (as in XIV)")
    if number < 1:
        raise Refused(f"--number must be a positive whole number, got {number}")
    if not title.strip() or CONTROL.search(title) or re.search(r"[\r\n]", title) or len(title) > MAX_TITLE:
        raise Refused(f"--title must be one line of text of at most {MAX_TITLE} characters, got {quote(title[:60])}")
    if re.search("[\ud800-\udfff]", title):  # bytes that are not UTF-8, passed through by the shell
        raise Refused(f"--title must be text in UTF-8, got {ascii(title[:60])}")
    _check_folder(folder)
    series = folder.absolute().parent
    values = {"volume": volume_id, "number": number, "title": title, "volume_title": volume_id,
              "plates_in_volume": number}
    volume_file = volumes.file_for(series, volume_id)
    old = new = b""
    target = None
    retitled = ""
    others = volumes.volume_files(series)
    if others and not os.path.lexists(volume_file):
        raise Refused(f"--volume {quote(volume_id)}: no volume file of the series in {series} holds it; add "
                      f"{volumes.file_name(volume_id)} (its [volume] and [[plates]]) first")
    if os.path.lexists(volume_file):
        target = writable(volume_file, f"plate {volume_id}.{number}")
        try:
            found = [v for v in volumes.load_series(series).volumes if v.file == volume_file.name]
        except ContentError as error:
            raise Refused(f"{series} has mistakes in its volume files, so the plate cannot be listed in "
                          f"{volume_file.name}: " + "; ".join(error.problems)) from None
        vol = found[0]
        if vol.id != volume_id:
            raise Refused(f"--volume {quote(volume_id)} is not the volume of {volume_file} ({quote(vol.id)}); add "
                          f"{volumes.file_name(volume_id)} for it")
        if number > len(vol.plates):
            raise Refused(f"{volume_file} lists plates 1 to {len(vol.plates)}: add plate {number}'s [[plates]] "
                          f"entry there first (and raise plates_in_volume in every plate's front matter)")
        entry = vol.plates[number - 1]
        if entry.folder:
            raise Refused(f"{volume_file}, line {entry.line}: plate {volume_id}.{number} is written already, in "
                          f"{series / entry.folder}; choose a plate to come; nothing was written")
        for other in vol.plates:
            if other.number != number and other.title and volumes.title_key(other.title) == volumes.title_key(title):
                raise Refused(f"{volume_file}, line {other.title_line}: {quote(other.title)} is the title of plate "
                              f"{volume_id}.{other.number}; each plate of a volume has its own title, so plate "
                              f"{volume_id}.{number} cannot take it; nothing was written")
        if entry.title and entry.title != title:
            if not retitle:
                raise Refused(f"{volume_file}, line {entry.title_line}: plate {volume_id}.{number} is titled "
                              f"{quote(entry.title)}; give --title {quote(entry.title)}, or add --retitle to change "
                              f"its title; nothing was written")
            retitled = entry.title
        if not ID_PATTERN.fullmatch(folder.name):
            raise Refused(f"{folder}: a plate's folder beside volume.toml is named with letters, digits, '-' and "
                          f"'_' only (volume.toml names it)")
        values.update(volume_title=vol.title, plates_in_volume=len(vol.plates))
        old = target.read_bytes()
        new = listed(old, number, title, folder.name)
    files = {}
    for source in sorted(p for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        text = source.read_text(encoding="utf-8")
        files[source.relative_to(TEMPLATE).as_posix()] = PLACEHOLDER.sub(lambda m: _value(m, values), text)
    _reads_back(folder, files, values)
    return Plan(folder=folder, files=files, volume_file=volume_file if target else None, volume_old=old,
                volume_new=new, volume_target=target, retitled=retitled)


def writable(volume_file: Path, what: str) -> Path:
    """The regular file volume_file is or links to, which plate new may replace; Refused, in one line naming it,
    when it links to nothing, is no file, has other hard links or is read-only (by its mode: root may write
    anything)."""
    target = Path(os.path.realpath(volume_file))
    try:
        info = target.stat()
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        kind = "a symbolic link to nothing" if volume_file.is_symlink() and info is None else "not a file"
        raise Refused(f"{volume_file}: {kind}, so {what} cannot be listed in it; nothing was written")
    if info.st_nlink > 1:  # a rename would part the names: the others would keep the old text
        raise Refused(f"{volume_file}: has {info.st_nlink} hard links, so {what} cannot be listed in it without "
                      f"parting them; make it a single file (or a symbolic link) and run again; nothing was written")
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise Refused(f"{volume_file}: read-only, so {what} cannot be listed in it; make it writable (chmod u+w) "
                      f"and run again; nothing was written")
    return target


def _reads_back(folder: Path, files: dict[str, str], values: dict) -> None:
    """Refused unless plate.md's front matter, read as `plate check` reads it, gives back the values written."""
    from ..source import content
    from ..source.schema import Problems
    path = folder / "plate.md"
    if "plate.md" not in files:
        return
    problems = Problems(folder)
    parts = content.split_front_matter(problems, path, files["plate.md"])
    try:
        front = tomllib.loads(parts[0]) if parts else {}
    except tomllib.TOMLDecodeError:
        front = {}
    if (front.get("title"), front.get("volume"), front.get("plate")) != (values["title"], values["volume"],
                                                                       values["number"]):
        raise Refused(f"--title {quote(values['title'][:60])} cannot be written so that plate.md reads it back; "
                      f"nothing was written")


def _value(match: re.Match, values: dict) -> str:
    """A placeholder's value as TOML writes it; an unknown one stays as written."""
    if match.group(1) not in values:
        return match.group(0)
    value = values[match.group(1)]
    return toml_string(value) if isinstance(value, str) else str(value)


def _check_folder(folder: Path) -> None:
    """The folder must not exist, or be an empty folder; its parent must exist."""
    if folder.is_symlink():
        raise Refused(f"{folder} is a symbolic link; give a new folder")
    if folder.exists():
        if not folder.is_dir():
            raise Refused(f"{folder} exists and is not a folder; give a new folder")
        if any(folder.iterdir()):
            raise Refused(f"{folder} exists and is not empty; plate new writes only into a new or empty folder")
    elif not folder.absolute().parent.is_dir():
        raise Refused(f"{folder.absolute().parent} does not exist; make it first, or give another folder")


def listed(old: bytes, number: int, title: str, folder: str) -> bytes:
    """volume.toml with plate `number`'s entry given its title and folder: only that entry's lines change, every
    other byte stays; Refused when the entry cannot be rewritten so (a value over several lines, say)."""
    bom = b"\xef\xbb\xbf" if old.startswith(b"\xef\xbb\xbf") else b""
    text = old[len(bom):].decode("utf-8")
    spans = volumes.entry_spans(text)
    if len(spans) < number:
        raise Refused(f"volume.toml's plate {number} is not written as a [[plates]] table; add title and folder "
                      f"to it by hand")
    first, last = spans[number - 1]
    lines = text.splitlines(keepends=True)
    ending = "\r\n" if lines[first - 1].endswith("\r\n") else "\n"
    entry = lines[first - 1:last]
    wanted = {"title": f"title = {toml_string(title)}", "folder": f"folder = {toml_string(folder)}"}
    for key, line in wanted.items():
        at = [i for i, row in enumerate(entry) if re.match(rf"\s*{key}\s*=", row)]
        if at:
            indent = re.match(r"\s*", entry[at[0]]).group()
            entry[at[0]] = indent + line + ending
        else:
            keys = [i for i, row in enumerate(entry) if row.strip() and not row.lstrip().startswith("#")]
            where = keys[-1] + 1
            if not entry[where - 1].endswith(("\n", "\r")):  # the entry is the file's last line, unended
                entry[where - 1] += ending
            entry.insert(where, line + ending)
    new = "".join(lines[:first - 1] + entry + lines[last:])
    before, after = tomllib.loads(text), None
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        pass
    expected = {**before, "plates": [dict(p) for p in before["plates"]]}
    expected["plates"][number - 1].update(title=title, folder=folder)
    if after != expected:
        raise Refused(f"volume.toml's entry for plate {number} could not be rewritten line by line (a value "
                      f"over several lines?); add title = {toml_string(title)} and folder = {toml_string(folder)} "
                      f"to it by hand")
    return bom + new.encode("utf-8")


def write(p: Plan, signals: Signals | None = None) -> list[Path]:
    """Write the plan: the folder's files (each created, never overwritten), then volume.toml swapped in at once,
    the commit; on any failure or a signal before the commit, what it wrote is removed again and nothing else is
    touched (an exception's `left` lists what could not be removed). The paths written."""
    signals = signals or Signals()
    made_folder = False
    written: list[Path] = []
    folders: list[Path] = []
    try:
        if not p.folder.exists():
            p.folder.mkdir()
            made_folder = True  # only now: a folder another run made meanwhile is never removed
        for name, text in p.files.items():
            path = p.folder / name
            for parent in reversed(path.relative_to(p.folder).parents[:-1]):
                if not (p.folder / parent).exists():
                    (p.folder / parent).mkdir()
                    folders.append(p.folder / parent)
            _create(path, text, written)
        signals.checkpoint()
        if p.volume_target is not None:
            _swap(p.volume_target, p.volume_old, p.volume_new, signals, p.volume_file)
    except BaseException as error:
        error.left = _undo(written, folders, p.folder if made_folder else None)
        raise
    return written + ([p.volume_file] if p.volume_file is not None else [])


def _create(path: Path, text: str, written: list[Path]) -> None:
    """Write a new file durably, listed in written from the moment it exists; an OSError names it."""
    try:
        with open(path, "x", encoding="utf-8", newline="") as out:  # "x": never over a file that appeared
            written.append(path)
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        error.filename = error.filename or str(path)
        raise


def _undo(written: list[Path], folders: list[Path], folder: Path | None) -> list[Path]:
    """Remove what write made, newest first; what could not be removed (a folder given a file meanwhile)."""
    left = []
    for path in reversed(written):
        try:
            path.unlink(missing_ok=True)
        except OSError:
            left.append(path)
    for path in reversed(([folder] if folder else []) + folders):
        try:
            path.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            left.append(path)
    return left


def _swap(path: Path, old: bytes, new: bytes, signals: Signals, named: Path | None = None) -> None:
    """Replace path's bytes with new in one rename, keeping its mode and owner; refused when they are no longer old
    (edited meanwhile), interrupted when a signal came before the rename. From the rename on nothing can fail."""
    named = named or path
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.plate-new-", dir=path.parent)
    except OSError as error:  # a folder it may not write in, say: name the folder, not a made-up file in it
        error.filename = f"{path.parent}/"
        raise
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new)
            out.flush()
            os.fsync(out.fileno())
        info = path.stat()
        os.chmod(temporary, stat.S_IMODE(info.st_mode))  # mkstemp made it 0600
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            with contextlib.suppress(PermissionError):
                os.chown(temporary, info.st_uid, info.st_gid)
        if path.read_bytes() != old:
            raise Refused(f"{named} changed while the plate was being started; nothing was written, run it again")
        signals.checkpoint()
        os.replace(temporary, path)  # the commit
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError) and error.filename in (None, temporary):
            error.filename = str(named)
        raise
    with contextlib.suppress(OSError):  # the rename made durable; it happened whatever this says
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


@contextlib.contextmanager
def locked(volume_file: Path, signals: Signals):
    """Hold volume_file's target locked (flock, beside every other `plate new`) for the block; nothing to lock
    when there is no such regular file. Refused after LOCK_WAIT seconds, Interrupted on a signal meanwhile."""
    target = Path(os.path.realpath(volume_file))
    if not target.is_file():
        yield
        return
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        fd = os.open(target, os.O_RDONLY)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    signals.checkpoint()
                    if time.monotonic() > deadline:
                        raise Refused(f"{volume_file}: locked by another plate new for {LOCK_WAIT:.0f} s; "
                                      f"nothing was written, run it again once that one is done") from None
                    time.sleep(0.05)
            mine, now = os.fstat(fd), os.stat(target)
            if (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino):
                yield
                return
        finally:
            os.close(fd)  # the lock goes with it
        # the other run swapped a new volume.toml in while this one waited: lock that one


def new(folder: Path, volume_id: str, number: int, title: str, signals: Signals | None = None,
        retitle: bool = False, retitled: list[str] | None = None) -> list[Path]:
    """Start a plate in folder, volume.toml locked from its reading to its swap; the paths written (retitled gets
    the title volume.toml gave the plate before, when --retitle changed it)."""
    signals = signals or Signals()
    with locked(volumes.file_for(Path(folder).absolute().parent, volume_id), signals):
        made = plan(folder, volume_id, number, title, retitle)
        if made.retitled and retitled is not None:
            retitled.append(made.retitled)
        return write(made, signals)


# --- the command -------------------------------------------------------------------------------------------------

def add_arguments(command) -> None:
    """`plate new FOLDER --volume XIV --number 6 --title "…"`."""
    command.add_argument("folder", type=Path, help="the new plate's folder (new, or empty)")
    command.add_argument("--volume", required=True, help="the volume's id, as in XIV")
    command.add_argument("--number", required=True, type=int, help="the plate's number in its volume")
    command.add_argument("--title", required=True, help="the plate's title (as its volume's file gives it, unless "
                                                         "--retitle)")
    command.add_argument("--retitle", action="store_true",
                         help="change the title the volume's file gives the plate to --title (else refused)")


def run(args, finished=lambda line: None) -> int:
    """Run `plate new`; the exit status (1 when refused, nothing written; 128 + the signal's number when a signal
    came, the last line saying whether the plate was written whole or not at all). finished(line) is told, once the
    plate is written whole, the line a Ctrl-C from then on ends with (the command's, cli.finished)."""
    import sys
    signals = Signals()
    volume_file = volumes.file_for(args.folder.absolute().parent, args.volume)
    with signals.held():
        try:
            retitled: list[str] = []
            written = new(args.folder, args.volume, args.number, args.title, signals, args.retitle, retitled)
        except Interrupted as stop:
            kept = f"{args.folder}/ and {volume_file} as they were" if os.path.lexists(volume_file) else \
                f"{args.folder}/ as it was"
            print(f"plate: interrupted; {_nothing(stop, kept)}", file=sys.stderr)
            return 128 + stop.number
        except Refused as why:
            print(f"plate: {_truthful(str(why), why)}", file=sys.stderr)
            return 1
        except OSError as error:
            print(f"plate: {error.filename or args.folder}: {error.strerror or error}; {_nothing(error)}",
                  file=sys.stderr)
            return 1
        where = f"{args.folder}/"
        listed_in = f"; {volume_file} lists it" if volume_file in written else \
            "; no volume.toml beside it: set volume_title and plates_in_volume in its plate.md"
        after = f"plate: interrupted after plate {args.volume}.{args.number} was written whole: {where} holds it" \
                + (f" and {volume_file} lists it" if volume_file in written else "")
        finished(after)  # a Ctrl-C from now on says the plate is written
        if signals.caught:
            print(after, file=sys.stderr)
            return 128 + signals.caught
        names = ", ".join(p.relative_to(args.folder).as_posix() for p in written if p != volume_file)
        if retitled:
            listed_in += f", retitled from {quote(retitled[0])} to {quote(args.title)} (--retitle)"
        print(f"plate: started plate {args.volume}.{args.number} in {where} ({names}){listed_in}")
        return 0


def _nothing(error: BaseException, more: str = "") -> str:
    """'nothing was written' (with more), or, when the clean-up could not remove something, what is left."""
    left = getattr(error, "left", [])
    if left:
        return f"what was written is removed but for {', '.join(str(p) for p in left)} (holding files of yours?)"
    return f"nothing was written ({more})" if more else "nothing was written"


def _truthful(message: str, error: BaseException) -> str:
    """A refusal's line, its 'nothing was written' corrected when the clean-up left something."""
    return message.replace("nothing was written", _nothing(error)) if getattr(error, "left", []) else message
