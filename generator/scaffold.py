"""`plate new`: start a plate from the template folder templates/new-plate/, and list it in the volume.toml beside
it; refusing, with nothing written, when the folder holds anything or the volume cannot take the plate."""
from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import volume as volumes
from .schema import CONTROL, ID_PATTERN, ContentError, quote
from .theme import TEMPLATES

TEMPLATE = TEMPLATES / "new-plate"
PLACEHOLDER = re.compile(r"@([a-z_]+)@")  # in the template's files: @title@ becomes the title, as a TOML value
MAX_TITLE = 200  # characters: a title is a heading, not a paragraph


class Refused(Exception):
    """Why `plate new` wrote nothing, in one line."""


@dataclass(frozen=True)
class Plan:
    """What `plate new` will write: the folder's files {relative path: text}, and volume.toml's new text (or None
    when no volume.toml is beside the folder) with the text it was made from."""

    folder: Path
    files: dict[str, str]
    volume_file: Path | None = None
    volume_old: bytes = b""
    volume_new: bytes = b""


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(text, ensure_ascii=False)


def plan(folder: Path, volume_id: str, number: int, title: str) -> Plan:
    """Check everything and compute every file `plate new` writes, writing nothing; Refused says why not."""
    folder = Path(folder)
    if not volumes.VOLUME_ID.fullmatch(volume_id):
        raise Refused(f"--volume {quote(volume_id)} must hold only letters and digits (as in XIV)")
    if number < 1:
        raise Refused(f"--number must be a positive whole number, got {number}")
    if not title.strip() or CONTROL.search(title) or re.search(r"[\r\n]", title) or len(title) > MAX_TITLE:
        raise Refused(f"--title must be one line of text of at most {MAX_TITLE} characters, got {quote(title[:60])}")
    _check_folder(folder)
    series = folder.absolute().parent
    values = {"volume": volume_id, "number": number, "title": title, "volume_title": volume_id,
              "plates_in_volume": number}
    volume_file = series / volumes.VOLUME_FILE
    old = new = b""
    if volume_file.is_file():
        try:
            vol = volumes.load(series)
        except ContentError as error:
            raise Refused(f"{volume_file} has mistakes, so the plate cannot be listed in it: "
                          + "; ".join(error.problems)) from None
        if vol.id != volume_id:
            raise Refused(f"--volume {quote(volume_id)} is not the volume of {volume_file} ({quote(vol.id)})")
        if number > len(vol.plates):
            raise Refused(f"{volume_file} lists plates 1 to {len(vol.plates)}: add plate {number}'s [[plates]] "
                          f"entry there first (and raise plates_in_volume in every plate's front matter)")
        entry = vol.plates[number - 1]
        if entry.folder:
            raise Refused(f"plate {volume_id}.{number} is written already, in {series / entry.folder}")
        if not ID_PATTERN.fullmatch(folder.name):
            raise Refused(f"{folder}: a plate's folder beside volume.toml is named with letters, digits, '-' and "
                          f"'_' only (volume.toml names it)")
        values.update(volume_title=vol.title, plates_in_volume=len(vol.plates))
        old = volume_file.read_bytes()
        new = listed(old, number, title, folder.name)
    files = {}
    for source in sorted(p for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        text = source.read_text(encoding="utf-8")
        files[source.relative_to(TEMPLATE).as_posix()] = PLACEHOLDER.sub(lambda m: _value(m, values), text)
    return Plan(folder=folder, files=files, volume_file=volume_file if old else None, volume_old=old,
                volume_new=new)


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


def write(p: Plan) -> list[Path]:
    """Write the plan: the folder's files (each created, never overwritten), then volume.toml swapped in at once;
    on any failure, what it wrote is removed again and nothing else is touched. The paths written."""
    made_folder = not p.folder.exists()
    written: list[Path] = []
    folders: list[Path] = []
    try:
        if made_folder:
            p.folder.mkdir()
        for name, text in p.files.items():
            path = p.folder / name
            for parent in reversed(path.relative_to(p.folder).parents[:-1]):
                if not (p.folder / parent).exists():
                    (p.folder / parent).mkdir()
                    folders.append(p.folder / parent)
            with open(path, "x", encoding="utf-8", newline="") as out:  # "x": never over a file that appeared
                out.write(text)
            written.append(path)
        if p.volume_file is not None:
            _swap(p.volume_file, p.volume_old, p.volume_new)
    except BaseException:
        for path in reversed(written):
            path.unlink(missing_ok=True)
        for path in reversed(folders):
            path.rmdir()
        if made_folder:
            p.folder.rmdir()
        raise
    return written + ([p.volume_file] if p.volume_file is not None else [])


def _swap(path: Path, old: bytes, new: bytes) -> None:
    """Replace path's bytes with new in one rename, refused when they are no longer old (edited meanwhile)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.plate-new-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        if path.read_bytes() != old:
            raise Refused(f"{path} changed while the plate was being started; nothing was written, run it again")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def new(folder: Path, volume_id: str, number: int, title: str) -> list[Path]:
    """Start a plate in folder; the paths written."""
    return write(plan(folder, volume_id, number, title))


# --- the command -------------------------------------------------------------------------------------------------

def add_arguments(command) -> None:
    """`plate new FOLDER --volume XIV --number 6 --title "…"`."""
    command.add_argument("folder", type=Path, help="the new plate's folder (new, or empty)")
    command.add_argument("--volume", required=True, help="the volume's id, as in XIV")
    command.add_argument("--number", required=True, type=int, help="the plate's number in its volume")
    command.add_argument("--title", required=True, help="the plate's title")


def run(args) -> int:
    """Run `plate new`; the exit status (1 when refused, nothing written)."""
    import sys
    try:
        written = new(args.folder, args.volume, args.number, args.title)
    except Refused as why:
        print(f"plate: {why}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"plate: {args.folder}: {error.strerror or error}; nothing was written", file=sys.stderr)
        return 1
    listed_in = "; volume.toml lists it" if any(p.name == volumes.VOLUME_FILE for p in written) else \
        "; no volume.toml beside it: set volume_title and plates_in_volume in its plate.md"
    names = ", ".join(p.relative_to(args.folder).as_posix() for p in written if p.name != volumes.VOLUME_FILE)
    print(f"plate: started plate {args.volume}.{args.number} in {args.folder}/ ({names}){listed_in}")
    return 0
