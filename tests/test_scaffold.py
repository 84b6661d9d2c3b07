"""`plate new` (generator/commands/scaffold.py): a plate started from templates/new-plate/, listed in its volume's file beside
it by that entry's lines alone; refused, with nothing written, when the folder holds anything or the volume cannot
take it. Everything in tmp_path."""
import errno
import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from generator.source import content, volume
from generator.commands import cli, scaffold
from generator.source.schema import Problems

from conftest import ROOT
from forwarded import forwarded

VOLUME = """# The volume's plates, in order.
[volume]
id = "XIV"
title = "Parallelism"
page = "volume-xiv.html"

[[plates]]
number = 1
title = "Compute"   # the first

[[plates]]
number = 2

[[plates]]
number = 3
"""


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under root with its bytes (None for a folder, the target for a symbolic link)."""
    return {p.relative_to(root).as_posix(): (str(p.readlink()) if p.is_symlink() else None if p.is_dir() else
                                             p.read_bytes()) for p in sorted(root.rglob("*"))}


def front_matter(folder: Path) -> dict:
    problems = Problems(folder)
    text = (folder / "plate.md").read_text(encoding="utf-8")
    front, body, _ = content.split_front_matter(problems, folder / "plate.md", text)
    assert problems.items == [] and "[[figures]]" in body
    return tomllib.loads(front)


@pytest.fixture
def series(tmp_path) -> Path:
    root = tmp_path / "plates"
    root.mkdir()
    (root / "volume.toml").write_text(VOLUME, encoding="utf-8")
    return root


def test_a_plate_is_the_template_with_its_names_filled_in(tmp_path):
    folder = tmp_path / "pipeline"
    written = scaffold.new(folder, "XIV", 6, 'Pipeline "Parallelism" \\ über')
    template = {p.relative_to(scaffold.TEMPLATE).as_posix() for p in scaffold.TEMPLATE.rglob("*") if p.is_file()}
    assert {p.relative_to(folder).as_posix() for p in written} == template >= {"plate.md", "terms.toml",
                                                                                  "sources.toml"}
    front = front_matter(folder)
    assert (front["volume"], front["plate"], front["title"]) == ("XIV", 6, 'Pipeline "Parallelism" \\ über')
    assert (front["volume_title"], front["plates_in_volume"]) == ("XIV", 6)  # no volume.toml: placeholders
    for name in ("terms.toml", "sources.toml"):
        assert (folder / name).read_bytes() == (scaffold.TEMPLATE / name).read_bytes()  # nothing to fill there
    assert "@" not in (folder / "plate.md").read_text().split("---")[1]


def test_the_templates_terms_and_sources_pass_the_content_checks(tmp_path):
    scaffold.new(tmp_path / "p", "XIV", 1, "T")
    problems = Problems(tmp_path / "p")
    terms = content.load_terms(problems, tmp_path / "p" / "terms.toml")
    sources = content.load_sources(problems, tmp_path / "p" / "sources.toml")
    assert problems.items == [] and terms and sources
    body = (tmp_path / "p" / "plate.md").read_text()
    assert all(f'cite("{s}")' in body for s in sources)  # the prose cites what sources.toml lists


def test_in_a_series_the_plate_takes_the_volumes_names_and_is_listed_there(series):
    before = (series / "volume.toml").read_bytes()
    written = scaffold.new(series / "xiv-2-tensor", "XIV", 2, "Tensor Parallelism")
    assert series / "volume.toml" in written
    front = front_matter(series / "xiv-2-tensor")
    assert (front["volume_title"], front["plates_in_volume"]) == ("Parallelism", 3)
    after = (series / "volume.toml").read_bytes()
    old, new = before.decode().splitlines(keepends=True), after.decode().splitlines(keepends=True)
    # only plate 2's entry (lines 11-13) changed: two lines added to it, every other byte as it was
    assert new[:12] == old[:12] and new[14:] == old[12:]
    assert new[12:14] == ['title = "Tensor Parallelism"\n', 'folder = "xiv-2-tensor"\n']
    v = volume.load(series)  # the plate's front matter agrees with the volume
    assert [(e.number, e.title, e.folder) for e in v.written()] == [(2, "Tensor Parallelism", "xiv-2-tensor")]


def test_an_entrys_own_title_line_is_rewritten_in_place(series):
    scaffold.new(series / "one", "XIV", 1, "Compute, measured", retitle=True)
    old, new = VOLUME.splitlines(keepends=True), (series / "volume.toml").read_text().splitlines(keepends=True)
    assert new[8] == 'title = "Compute, measured"\n' and new[9] == 'folder = "one"\n'
    assert new[:8] == old[:8] and new[10:] == old[9:]


@pytest.mark.parametrize("ending, bom", [("\r\n", b""), ("\n", b"\xef\xbb\xbf")])
def test_line_endings_a_byte_order_mark_and_an_unended_last_line_are_kept(series, ending, bom):
    text = VOLUME.rstrip("\n").replace("\n", ending)
    (series / "volume.toml").write_bytes(bom + text.encode())
    scaffold.new(series / "three", "XIV", 3, "Three")
    got = (series / "volume.toml").read_bytes()
    assert got == bom + (text + ending + f'title = "Three"{ending}folder = "three"').encode() + ending.encode()


def test_a_value_over_several_lines_is_refused_not_mangled(series):
    text = VOLUME.replace("number = 2\n", 'number = 2\ntitle = """Two\nlines"""\n')
    (series / "volume.toml").write_text(text)
    before = tree(series)
    with pytest.raises(scaffold.Refused, match="could not be rewritten line by line"):
        scaffold.new(series / "two", "XIV", 2, "Two", retitle=True)
    assert tree(series) == before


@pytest.mark.parametrize("args, why", [
    (("two", "XV", 2, "T"), 'is not the volume of'),
    (("two", "XIV", 4, "T"), "lists plates 1 to 3: add plate 4's [[plates]] entry there first"),
    (("two", "XIV", 0, "T"), "--number must be a positive whole number"),
    (("two", "XIV.1", 2, "T"), "--volume \"XIV.1\" must hold only letters and digits"),
    (("two", "XIV", 2, " "), "--title must be one line of text"),
    (("two", "XIV", 2, "a\x07b"), "--title must be one line of text"),
    (("two", "XIV", 2, "a\rb"), "--title must be one line of text"),
    (("two words", "XIV", 2, "T"), "a plate's folder beside volume.toml is named with letters, digits"),
])
def test_what_the_volume_cannot_take_is_refused_with_nothing_written(series, args, why):
    before = tree(series)
    with pytest.raises(scaffold.Refused, match=why.replace("[", r"\[").replace(".", r"\.")):
        scaffold.new(series / args[0], *args[1:])
    assert tree(series) == before


def test_a_written_plate_and_a_volume_with_mistakes_are_refused(series):
    scaffold.new(series / "one", "XIV", 1, "Compute")
    before = tree(series)
    with pytest.raises(scaffold.Refused, match="plate XIV.1 is written already"):
        scaffold.new(series / "other", "XIV", 1, "Again")
    (series / "volume.toml").write_text(VOLUME.replace("number = 3", "number = 4"))
    before = tree(series)
    with pytest.raises(scaffold.Refused, match="has mistakes.*number 4 is out of order"):
        scaffold.new(series / "two", "XIV", 2, "Two")
    assert tree(series) == before


def test_a_folder_that_holds_anything_is_refused_and_left_as_it_was(tmp_path):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / ".notes").write_text("mine")
    before = tree(tmp_path)
    assert cli.main(["new", str(folder), "--volume", "XIV", "--number", "6", "--title", "T"]) == 1
    assert tree(tmp_path) == before
    (tmp_path / "afile").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    before = tree(tmp_path)
    for name, why in (("afile", "is not a folder"), ("link", "symbolic link"), ("no/such", "does not exist")):
        with pytest.raises(scaffold.Refused, match=why):
            scaffold.new(tmp_path / name, "XIV", 6, "T")
    assert tree(tmp_path) == before


def test_an_empty_folder_is_filled_and_kept(tmp_path):
    (tmp_path / "empty").mkdir()
    scaffold.new(tmp_path / "empty", "XIV", 6, "T")
    assert (tmp_path / "empty" / "plate.md").is_file()


def test_a_file_appearing_meanwhile_is_never_overwritten_and_what_was_written_is_removed(series):
    plan = scaffold.plan(series / "two", "XIV", 2, "Two")
    (series / "two").mkdir()
    last = sorted(plan.files)[-1]
    (series / "two" / last).write_text("the author's")
    before = tree(series)
    with pytest.raises(FileExistsError):
        scaffold.write(plan)
    assert tree(series) == before  # the author's file as it was, the plate's others removed, volume.toml untouched


def test_a_failure_while_listing_the_plate_removes_the_plate_again(series, monkeypatch):
    before = tree(series)

    def fail(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(scaffold.os, "replace", fail)
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    assert tree(series) == before


def test_volume_toml_edited_meanwhile_is_not_overwritten(series):
    plan = scaffold.plan(series / "two", "XIV", 2, "Two")
    (series / "volume.toml").write_text(VOLUME + "\n# an edit\n")
    before = tree(series)
    with pytest.raises(scaffold.Refused, match="changed while"):
        scaffold.write(plan)
    assert tree(series) == before


def test_the_command_says_what_it_wrote(series, capsys):
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"plate: started plate XIV.2 in {series / 'two'}/ (") and "volume.toml lists it" in out
    with pytest.raises(SystemExit) as exited:
        cli.main(["new", str(series / "three"), "--volume", "XIV", "--number", "3"])
    assert exited.value.code == cli.EXIT_USAGE and not (series / "three").exists()


OTHER_VOLUME = """[volume]
id = "XI"
title = "Optimisation at Scale"

[[plates]]
number = 1

[[plates]]
number = 2
title = "The Critical Batch Size"
"""


def test_a_plate_of_another_volume_is_listed_in_that_volumes_file_alone(series, capsys):
    (series / "volume-xi.toml").write_text(OTHER_VOLUME, encoding="utf-8")
    before = (series / "volume.toml").read_bytes()
    assert cli.main(["new", str(series / "xi-2-batch"), "--volume", "XI", "--number", "2", "--title",
                     "The Critical Batch Size"]) == 0
    assert f"{series / 'volume-xi.toml'} lists it" in capsys.readouterr().out
    assert (series / "volume.toml").read_bytes() == before
    front = front_matter(series / "xi-2-batch")
    assert (front["volume"], front["plate"], front["volume_title"], front["plates_in_volume"]) == \
        ("XI", 2, "Optimisation at Scale", 2)
    shelf = volume.load_series(series)  # the new plate agrees with its volume, the series checks as a whole
    assert [(v.id, e.number, e.folder) for v, e in shelf.written()] == [("XI", 2, "xi-2-batch")]
    assert (series / "volume-xi.toml").read_text() == OTHER_VOLUME.replace(
        'title = "The Critical Batch Size"\n', 'title = "The Critical Batch Size"\nfolder = "xi-2-batch"\n')


def test_a_volume_no_file_of_the_series_holds_is_refused_naming_the_file_to_add(series):
    (series / "volume-xi.toml").write_text(OTHER_VOLUME, encoding="utf-8")
    before = tree(series)
    with pytest.raises(scaffold.Refused, match=r"is not the volume of .*volume\.toml .*add volume-xv\.toml"):
        scaffold.new(series / "xv-1", "XV", 1, "T")
    (series / "volume.toml").unlink()
    with pytest.raises(scaffold.Refused, match=r"no volume file of the series .* holds it; add volume-xiv\.toml"):
        scaffold.new(series / "xiv-1", "XIV", 1, "T")
    assert tree(series) == {k: v for k, v in before.items() if k != "volume.toml"}


def test_a_mistake_in_another_volumes_file_refuses_the_listing(series):
    (series / "volume-xi.toml").write_text(OTHER_VOLUME.replace('id = "XI"', 'id = "XIV"'), encoding="utf-8")
    before = tree(series)
    with pytest.raises(scaffold.Refused, match=r"mistakes in its volume files.*volume-xi\.toml, line 2: \[volume\]: "
                                               r"id \"XIV\" is not the volume this file is named for"):
        scaffold.new(series / "two", "XIV", 2, "Two")
    assert tree(series) == before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.one_of(st.sampled_from("\"\\'#=[]{}\t@ \u2028\u2029"),
                         st.characters(exclude_categories=("Cc", "Cs"))), min_size=1, max_size=40).filter(str.strip))
def test_any_title_is_written_as_toml_that_reads_back_the_same(tmp_path_factory, title):
    root = tmp_path_factory.mktemp("series")
    (root / "volume.toml").write_text(VOLUME)
    scaffold.new(root / "p", "XIV", 2, title)
    assert front_matter(root / "p")["title"] == title
    assert tomllib.loads((root / "volume.toml").read_text())["plates"][1] == {"number": 2, "title": title,
                                                                                "folder": "p"}


def test_a_new_plate_builds_at_once_alone_and_in_its_series(series):
    from generator.plate import plates
    from generator.page import notation
    from generator.site import build
    folder = series / "xiv-2-tensor"
    scaffold.new(folder, "XIV", 2, "Tensor\u2028<Parallelism>")  # a line separator, as written, in the page
    alone = build.build(folder, series.parent / "alone")
    page = alone["index.html"]
    assert "<h1>Tensor\u2028&lt;Parallelism&gt;</h1>" in page
    assert "<title>Tensor\u2028&lt;Parallelism&gt; · " in page
    module = plates.load(folder / plates.PACKAGE)
    c = content.load(folder)
    f = module.model_of(c).facts(c.plate.default)
    assert notation.sig(f["last"]) in page.split('id="readout"')[1].split("</div>")[0]  # the default's words, built
    made = build.build(series, series.parent / "site")  # the series: the new plate and the volume's index
    v = volume.load(series)
    page_name = v.page_of(v.written()[0])
    assert {page_name, v.page} <= set(made)
    assert f'<a href="{page_name}">Tensor\u2028&lt;Parallelism&gt;</a>' in made[v.page]


# --- atomic and truthful: titles that read back, the volume.toml's link, mode and lock, signals, a full disk ------

SEPARATORS = "\u2028\u2029"  # what Python's str.splitlines() breaks a line at, and a title may hold


@pytest.mark.parametrize("title", ["Tensor\u2028Parallelism", "a\u2029b", "\u2028 edge \u2029"])
def test_a_title_with_a_line_or_paragraph_separator_reads_back_after_a_check(series, title):
    scaffold.new(series / "two", "XIV", 2, title)
    raw = (series / "two" / "plate.md").read_bytes() + (series / "volume.toml").read_bytes()
    assert not any(s.encode() in raw for s in SEPARATORS)  # written escaped: no line reader breaks there
    assert content.load(series / "two").plate.title == title
    assert [e.title for e in volume.load(series).written()] == [title]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.one_of(st.sampled_from("\"\\'#=[]{}\t@ \u2028\u2029"), st.characters(
    exclude_categories=("Cc", "Cs"))), min_size=1, max_size=20).filter(lambda t: t.strip()))
def test_any_title_accepted_loads_back_the_same_through_the_content_checks(tmp_path_factory, title):
    root = tmp_path_factory.mktemp("series")
    (root / "volume.toml").write_text(VOLUME)
    scaffold.new(root / "p", "XIV", 2, title)
    assert content.load(root / "p").plate.title == title
    assert [e.title for e in volume.load(root).written()] == [title]


def test_a_title_that_plate_md_would_not_read_back_is_refused_with_nothing_written(series, monkeypatch):
    monkeypatch.setattr(scaffold, "toml_string", lambda text: json.dumps(text, ensure_ascii=False))  # U+2028 raw
    before = tree(series)
    with pytest.raises(scaffold.Refused, match="cannot be written so that plate.md reads it back"):
        scaffold.new(series / "two", "XIV", 2, "Tensor\u2028Parallelism")
    assert tree(series) == before


def test_a_symlinked_volume_toml_is_written_through_to_its_target_and_stays_a_link(series, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (series / "volume.toml").rename(shared / "volume.toml")
    (series / "volume.toml").symlink_to("../shared/volume.toml")
    os.chmod(shared / "volume.toml", 0o640)
    scaffold.new(series / "two", "XIV", 2, "Two")
    assert (series / "volume.toml").is_symlink() and os.readlink(series / "volume.toml") == "../shared/volume.toml"
    assert tomllib.loads((shared / "volume.toml").read_text())["plates"][1]["folder"] == "two"
    assert stat.S_IMODE((shared / "volume.toml").stat().st_mode) == 0o640
    assert sorted(p.name for p in shared.iterdir()) == ["volume.toml"]  # no temporary file left beside it


def test_a_volume_toml_link_to_nothing_is_refused_in_one_line(series, capsys):
    (series / "volume.toml").unlink()
    (series / "volume.toml").symlink_to("elsewhere.toml")
    before = tree(series)
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"plate: {series / 'volume.toml'}: ") and "link" in err, err
    assert tree(series) == before


def test_a_volume_toml_that_is_no_file_is_refused_not_ignored(tmp_path, capsys):
    (tmp_path / "volume.toml").mkdir()  # the plate would be left unlisted, the volume's mistake unsaid
    before = tree(tmp_path)
    assert cli.main(["new", str(tmp_path / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    err = capsys.readouterr().err
    assert err == f"plate: {tmp_path / 'volume.toml'}: not a file, so plate XIV.2 cannot be listed in it; nothing " \
                  f"was written\n"
    assert tree(tmp_path) == before


def test_a_read_only_volume_toml_is_refused_in_one_line(series, capsys):
    os.chmod(series / "volume.toml", 0o444)  # tests run as root: write access is refused by the mode, not the OS
    before = tree(series)
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"plate: {series / 'volume.toml'}: read-only"), err
    assert "nothing was written" in err and tree(series) == before
    assert stat.S_IMODE((series / "volume.toml").stat().st_mode) == 0o444


def test_a_hard_linked_volume_toml_is_refused_in_one_line(series, tmp_path, capsys):
    os.link(series / "volume.toml", tmp_path / "other-name.toml")  # a rename would leave this name the old text
    before = tree(series)
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"plate: {series / 'volume.toml'}: has 2 hard links"), err
    assert tree(series) == before and (tmp_path / "other-name.toml").read_text() == VOLUME


def test_volume_toml_keeps_its_mode(series):
    os.chmod(series / "volume.toml", 0o640)  # not mkstemp's 0600, nor a umask's 0644
    scaffold.new(series / "two", "XIV", 2, "Two")
    assert stat.S_IMODE((series / "volume.toml").stat().st_mode) == 0o640
    assert "folder" in tomllib.loads((series / "volume.toml").read_text())["plates"][1]


class Full:
    """A file whose every write fails as a full disk's does."""

    def __init__(self, handle):
        self.handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()

    def fileno(self):
        return self.handle.fileno()

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    flush = write


@pytest.mark.parametrize("where", ["write", "flush"])
def test_a_full_disk_midway_leaves_nothing_written_and_says_so(series, monkeypatch, capsys, where):
    before = tree(series)
    real = open

    def full(path, mode="r", *args, **kwargs):
        if not str(path).endswith("page_code.py"):
            return real(path, mode, *args, **kwargs)
        made = real(path, mode, *args, **kwargs)  # the file is made, its bytes do not fit
        if where == "write":
            return Full(made)
        made.close()
        return real("/dev/full", mode.replace("x", "w"), *args, **kwargs)  # the kernel's ENOSPC, once flushed
    monkeypatch.setattr(scaffold, "open", full, raising=False)
    assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "page_code.py" in err and "nothing was written" in err, err
    assert tree(series) == before


def test_a_volume_held_by_another_run_is_waited_for_then_refused_in_one_line(series, monkeypatch, capsys):
    monkeypatch.setattr(scaffold, "LOCK_WAIT", 0.3)
    before = tree(series)
    with open(series / "volume.toml", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", "T"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"plate: {series / 'volume.toml'}: ") and "lock" in err, err
    assert tree(series) == before


# `python -m generator new …` with calls of a module announced on stdout ("os.replace before"); in "hold" mode the
# call then waits for a line on stdin, so a test signals the process at exactly that moment.
HOOKED = """import fcntl, os, runpy, sys, tempfile
def hook(module, name, when, mode, only):
    real = getattr(sys.modules[module], name)
    def hooked(*args, **kwargs):
        if only and os.path.basename(str(args[0])) != only:
            return real(*args, **kwargs)
        if when == "before":
            say()
        result = real(*args, **kwargs)
        if when == "after":
            say()
        return result
    def say():
        print(f"{module}.{name} {when}", flush=True)
        if mode == "hold":
            sys.stdin.readline()
    setattr(sys.modules[module], name, hooked)
for one in os.environ["PLATE_TEST_HOOK"].split(","):
    hook(*one.split(":"))
sys.argv = ["plate", *sys.argv[1:]]
runpy.run_module("generator", run_name="__main__", alter_sys=True)
"""


def hooked(series: Path, folder: str, number: int, hook: str) -> subprocess.Popen:
    """`plate new series/folder` for plate `number`, run with the hooks "module:name:before|after:hold|say:only,…"
    (only: the call's first argument's file name, or empty for every call)."""
    return subprocess.Popen([sys.executable, "-c", HOOKED, "new", str(series / folder), "--volume", "XIV",
                             "--number", str(number), "--title", folder.title(), "--retitle"], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PLATE_TEST_HOOK": hook})


def reached(process: subprocess.Popen, moment: str) -> bool:
    """Whether the process announced the moment (False: it ended without)."""
    return any(line == moment + "\n" for line in process.stdout)


def whole_or_untouched(series: Path, before: dict) -> bool:
    """True when the plate is written whole and listed; False when the series is byte for byte as before."""
    if tree(series) == before:
        return False
    entry = volume.load(series).plates[1]
    template = {p.relative_to(scaffold.TEMPLATE).as_posix() for p in scaffold.TEMPLATE.rglob("*") if p.is_file()}
    assert entry.folder == "two" and {k for k, v in tree(series / "two").items() if v is not None} == template
    assert {k for k in tree(series) if not k.startswith("two/")} == {"volume.toml", "two"}
    return True


@pytest.mark.parametrize("hook, signal_name, written", [
    ("os:mkdir:before:hold:plate", "SIGINT", False),  # the plate's files half written
    ("os:mkdir:before:hold:plate", "SIGTERM", False),
    ("tempfile:mkstemp:after:hold:", "SIGTERM", False),  # volume.toml's new bytes being written beside it
    ("os:replace:before:hold:", "SIGINT", True),  # volume.toml about to be swapped: the swap is the commit
    ("os:replace:after:hold:", "SIGINT", True),
    ("os:replace:after:hold:", "SIGTERM", True),
    ("os:replace:after:hold:", "SIGHUP", True),
])
def test_a_signal_at_any_moment_leaves_the_plate_whole_or_not_at_all_and_says_which(series, hook, signal_name,
                                                                                       written):
    before = tree(series)
    process = hooked(series, "two", 2, hook)
    module, name, when = hook.split(":")[:3]
    assert reached(process, f"{module}.{name} {when}"), process.communicate()
    number = getattr(signal, signal_name)
    process.send_signal(number)
    forwarded(process)  # to the child that runs the command, before it is let go on
    out, err = process.communicate("\n", timeout=60)  # a bound only: it ends at once
    assert process.returncode == 128 + number, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert whole_or_untouched(series, before) is written
    if written:
        assert err.startswith(f"plate: interrupted after plate XIV.2 was written whole: {series / 'two'}/")
        assert f"{series / 'volume.toml'} lists it" in err, err
    else:
        assert err == f"plate: interrupted; nothing was written ({series / 'two'}/ and {series / 'volume.toml'} " \
                      f"as they were)\n"


def test_a_signal_with_no_volume_toml_leaves_nothing_written(tmp_path):
    process = hooked(tmp_path, "two", 2, "os:mkdir:before:hold:plate")
    assert reached(process, "os.mkdir before"), process.communicate()
    process.send_signal(signal.SIGINT)
    forwarded(process)
    out, err = process.communicate("\n", timeout=60)
    assert process.returncode == 130 and err == f"plate: interrupted; nothing was written ({tmp_path / 'two'}/ as " \
                                                 f"it was)\n", err
    assert tree(tmp_path) == {}


def test_a_signal_while_waiting_for_the_lock_stops_with_nothing_written(series):
    before = tree(series)
    with open(series / "volume.toml", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run's lock
        process = hooked(series, "two", 2, "fcntl:flock:before:say:")
        assert reached(process, "fcntl.flock before"), process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.startswith("plate: interrupted; nothing was written"), err
    assert err.count("\n") == 1 and tree(series) == before


def test_two_runs_at_once_both_list_their_plates(series):
    first = hooked(series, "two", 2, "os:replace:before:hold:")  # holds the volume just before its swap
    assert reached(first, "os.replace before")
    second = hooked(series, "three", 3, "fcntl:flock:before:say:")  # announces that it waits on the lock
    reached(second, "fcntl.flock before")  # without a lock it runs to its end instead
    out, err = first.communicate("\n", timeout=60)
    assert first.returncode == 0, err
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    v = volume.load(series)
    assert [(e.number, e.folder) for e in v.written()] == [(2, "two"), (3, "three")]


def test_a_run_that_waited_on_a_volume_toml_swapped_meanwhile_locks_the_new_one(series):
    first = hooked(series, "two", 2, "os:replace:before:hold:")
    assert reached(first, "os.replace before")
    second = hooked(series, "three", 3, "fcntl:flock:before:say:,os:replace:before:hold:")
    assert reached(second, "fcntl.flock before")  # waiting on the volume.toml the first run is replacing
    out, err = first.communicate("\n", timeout=60)
    assert first.returncode == 0, err
    assert reached(second, "os.replace before")  # the second now holds the volume at its own swap
    third = hooked(series, "one", 1, "fcntl:flock:before:say:,fcntl:flock:after:hold:")
    assert reached(third, "fcntl.flock before")
    assert third.stdout.readline() == "fcntl.flock before\n"  # still waiting: never two locks on one volume
    out, err = second.communicate("\n", timeout=60)
    assert second.returncode == 0, err
    out, err = third.communicate("\n", timeout=60)
    assert third.returncode == 0, err
    v = volume.load(series)
    assert [(e.number, e.folder) for e in v.written()] == [(1, "one"), (2, "two"), (3, "three")]


# --- a number or a title taken (issue 43) -------------------------------------------------------------------------

def test_a_number_that_has_another_title_is_refused_at_its_line_unless_retitled(series, capsys):
    before = tree(series)
    assert cli.main(["new", str(series / "one"), "--volume", "XIV", "--number", "1", "--title", "Pipelines"]) == 1
    err = capsys.readouterr().err
    assert (f'{series / "volume.toml"}, line 9: plate XIV.1 is titled "Compute"; give --title "Compute", or add '
            f'--retitle to change its title; nothing was written') in err
    assert tree(series) == before
    assert cli.main(["new", str(series / "one"), "--volume", "XIV", "--number", "1", "--title", "Pipelines",
                     "--retitle"]) == 0
    assert 'retitled from "Compute" to "Pipelines" (--retitle)' in capsys.readouterr().out
    assert volume.load(series).plates[0].title == "Pipelines"


def test_a_title_another_plate_has_is_refused_at_that_plate_s_line(series, capsys):
    before = tree(series)
    for flags in ([], ["--retitle"]):
        assert cli.main(["new", str(series / "two"), "--volume", "XIV", "--number", "2", "--title", " compute ",
                         *flags]) == 1
        assert (f'{series / "volume.toml"}, line 9: "Compute" is the title of plate XIV.1; each plate of a volume '
                f'has its own title, so plate XIV.2 cannot take it; nothing was written') in capsys.readouterr().err
        assert tree(series) == before


def test_a_plate_written_already_is_refused_at_its_line(series, capsys):
    scaffold.new(series / "two", "XIV", 2, "Two")
    before = tree(series)
    assert cli.main(["new", str(series / "again"), "--volume", "XIV", "--number", "2", "--title", "Two"]) == 1
    assert f'{series / "volume.toml"}, line 11: plate XIV.2 is written already' in capsys.readouterr().err
    assert tree(series) == before


def test_the_readme_s_example_runs_on_the_shipped_series_and_changes_no_other_plate_s_line(tmp_path):
    """README.md's `plate new` example, on a copy of the shipped volume files: it succeeds, and volume.toml differs
    only by the lines of that plate's entry, whose title stays the one the volume gives it."""
    import re
    import shutil
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^plate new (plates/\S+) --volume (\w+) --number (\d+) --title \"([^\"]+)\"$", readme, re.M)
    assert command, "README.md gives no `plate new` example"
    folder, vol, number, title = command[1], command[2], int(command[3]), command[4]
    series = tmp_path / "plates"
    shutil.copytree(ROOT / "plates", series, ignore=shutil.ignore_patterns("__pycache__"))
    file = volume.file_for(series, vol)
    old = file.read_text(encoding="utf-8").splitlines()
    entry = volume.load(series, file.name).plates[number - 1]
    result = subprocess.run([sys.executable, "-m", "generator", "new", folder, "--volume", vol, "--number",
                             str(number), "--title", title], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    new = file.read_text(encoding="utf-8").splitlines()
    span = volume.entry_spans("\n".join(old))[number - 1]
    assert new[:span[0] - 1] == old[:span[0] - 1] and new[len(new) - (len(old) - span[1]):] == old[span[1]:]
    listed = volume.load(series, file.name).plates[number - 1]
    assert listed.title == entry.title == title and listed.folder == Path(folder).name
    assert [e.title for e in volume.load(series, file.name).plates] == \
        [e.title for e in volume.load(ROOT / "plates", file.name).plates]


def test_check_reports_two_plates_of_a_volume_sharing_a_title(series, tmp_path):
    text = VOLUME.replace("number = 2\n", 'number = 2\ntitle = "COMPUTE"\n')
    (series / "volume.toml").write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "generator", "check", "--content", str(series)], cwd=tmp_path,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 1
    assert ('plates/volume.toml, line 13: [[plates]] #2: title "COMPUTE" is also the title of the plate at line 9; '
            'each plate has its own') in result.stderr


def test_check_reports_a_written_plate_titled_as_another_plate_of_its_volume(series, tmp_path):
    scaffold.new(series / "two", "XIV", 2, "Two")
    plate_md = series / "two" / "plate.md"
    plate_md.write_text(plate_md.read_text(encoding="utf-8").replace('title = "Two"', 'title = "Compute"'),
                        encoding="utf-8")
    line = next(i for i, l in enumerate(plate_md.read_text().splitlines(), 1) if l.startswith("title = "))
    result = subprocess.run([sys.executable, "-m", "generator", "check", "--content", str(series)], cwd=tmp_path,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 1
    assert (f'plates/two/plate.md, line {line}: front matter: title "Compute" is also the title of plate XIV.1 '
            f'(volume.toml, line 9); each plate of a volume has its own') in result.stderr
