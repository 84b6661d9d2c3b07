"""The output folder: plate replaces only a folder it made, whatever --out names, and says so in one line."""
from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from generator.page import render
from generator.site import build, output
from generator.commands import cli

from conftest import FIXTURE, ROOT
from generator.source import content

FIXTURE_CSV = content.load(FIXTURE).plate.data_file


def tree(folder: Path) -> dict:
    """Every path below folder with its bytes (a folder as None, a link as its target), to compare before/after."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            seen[key] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[key] = ("dir", oct(path.stat().st_mode))
        else:
            seen[key] = (path.read_bytes(), oct(path.stat().st_mode))
    return seen


def plate_build(out, capsys, content=FIXTURE) -> tuple[int, str]:
    status = cli.main(["build", "--content", str(content), "--out", str(out)])
    captured = capsys.readouterr()
    return status, captured.err + captured.out


def assert_refused(status: int, report: str, *fragments: str) -> None:
    assert status == 2, report
    assert report.count("\n") == 1 and report.startswith("plate: ") and "Traceback" not in report, report
    for fragment in fragments:
        assert fragment in report, report


@pytest.fixture
def previous(tmp_path) -> Path:
    """A site a build wrote, under tmp_path/site."""
    out = tmp_path / "site"
    build.build(FIXTURE, out)
    return out


# --- folders plate did not make: refused, every byte kept -------------------------------------------

def test_a_folder_of_notes_is_refused_and_kept_byte_for_byte(tmp_path, capsys):
    notes = tmp_path / "notes"
    (notes / "notes").mkdir(parents=True)
    (notes / "notes" / "monday.md").write_text("ideas")
    (notes / "thesis.txt").write_bytes(b"chapter one\x00\xff")
    (notes / ".git").mkdir()
    (notes / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before = tree(tmp_path)
    status, report = plate_build(notes, capsys)
    assert_refused(status, report, f"plate: {notes} holds files plate did not write (.git/, notes/, thesis.txt); "
                                   f"choose an empty folder or a previous site")
    assert tree(tmp_path) == before


def test_a_home_folder_is_refused(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home" / "someone"
    for name, text in {".bashrc": "alias ll='ls -l'\n", ".ssh/id_ed25519": "secret", "Documents/cv.odt": "cv",
                       ".cache/plate/keep": "x", "site/index.html": "a site from elsewhere"}.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    before = tree(tmp_path)
    for out in (Path("~").expanduser(), home.parent, home / "site", home / "Documents"):
        status, report = plate_build(out, capsys)
        assert_refused(status, report, "holds files plate did not write")
    monkeypatch.chdir(home)  # `plate build --out ~` from inside the home folder
    status, report = plate_build(Path("."), capsys)
    assert_refused(status, report)
    assert tree(tmp_path) == before


def test_the_current_folder_is_refused_even_when_empty(tmp_path, capsys, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for out in (".", str(tmp_path)):
        status, report = plate_build(Path(out), capsys)
        assert_refused(status, report, "the current folder")
    assert here.is_dir() and list(here.iterdir()) == []


@pytest.mark.parametrize("inside", ["content", "templates", "generator"])
def test_out_inside_the_content_templates_or_generator_is_refused(inside, tmp_path, capsys):
    content = tmp_path / "content"
    shutil.copytree(FIXTURE, content)
    out = {"content": content / "site", "templates": render.TEMPLATES / "plate-test-site",
           "generator": ROOT / "generator" / "plate-test-site"}[inside]
    before = tree(content), tree(render.TEMPLATES)
    status, report = plate_build(out, capsys, content)
    assert_refused(status, report, "is inside the")
    assert not out.exists() and (tree(content), tree(render.TEMPLATES)) == before


def test_a_site_without_the_marker_is_refused(tmp_path, capsys, previous):
    (previous / output.MARKER).unlink()
    before = tree(tmp_path)
    status, report = plate_build(previous, capsys)
    written = ", ".join(sorted(p.name for p in previous.iterdir()))  # the files the build wrote, marker gone
    assert_refused(status, report, f"holds files plate did not write ({written}); choose an "
                                   "empty folder or a previous site (if an older plate built it")
    assert tree(tmp_path) == before


def test_a_previous_site_with_a_file_added_is_refused(tmp_path, capsys, previous):
    (previous / "draft.html").write_text("mine")
    (previous / "images").mkdir()
    before = tree(tmp_path)
    status, report = plate_build(previous, capsys)
    assert_refused(status, report, "(draft.html, images/)")
    assert tree(tmp_path) == before


def test_a_marker_does_not_cover_a_folder_in_place_of_a_listed_file(tmp_path, capsys, previous):
    (previous / "index.html").unlink()
    (previous / "index.html").mkdir()
    (previous / "index.html" / "keep.txt").write_text("keep")
    before = tree(tmp_path)
    status, report = plate_build(previous, capsys)
    assert_refused(status, report, "(index.html/)")
    assert tree(tmp_path) == before


def test_many_foreign_files_are_counted_not_all_listed(tmp_path, capsys):
    out = tmp_path / "full"
    out.mkdir()
    for i in range(40):
        (out / f"f{i:02}.txt").write_text(str(i))
    status, report = plate_build(out, capsys)
    assert_refused(status, report, "f05.txt, and 34 more)")


# --- what plate made: empty folders, previous sites, through links --------------------------------

def test_an_empty_folder_and_a_previous_site_are_replaced(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    assert plate_build(out, capsys)[0] == 0
    marker = (out / output.MARKER).read_text()
    written = {name: (out / name).read_bytes() for name in ("index.html", FIXTURE_CSV, "robots.txt")}
    assert marker == output.marker_text(written)
    assert marker.splitlines()[0] == output.MARKER_HEAD
    for line in marker.splitlines()[1:]:  # sha256sum's lines: the hash of each file as written
        digest, name = line.split("  ")
        assert digest == hashlib.sha256(written[name]).hexdigest()
    output.write({"index.html": "<p>old</p>", "removed.txt": "a file an earlier build wrote"}, out)
    assert plate_build(out, capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([output.MARKER, "index.html", FIXTURE_CSV, "robots.txt"])
    assert (out / output.MARKER).read_text() == marker  # the same bytes every build
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_symlinked_site_is_followed_and_the_link_kept(tmp_path, capsys, previous):
    link = tmp_path / "published"
    link.symlink_to(previous, target_is_directory=True)
    output.write({"index.html": "<p>stale</p>"}, previous)  # a site an earlier build wrote
    status, report = plate_build(link, capsys)
    assert status == 0, report
    assert link.is_symlink() and os.readlink(link) == str(previous)
    assert "A Small Plate" in (previous / "index.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["published", "site"]


def test_a_symlink_to_a_folder_of_notes_is_refused(tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.txt").write_text("keep")
    link = tmp_path / "site"
    link.symlink_to(notes, target_is_directory=True)
    before = tree(tmp_path)
    status, report = plate_build(link, capsys)
    assert_refused(status, report, "(thesis.txt)")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_read_only_site_is_an_error(what, tmp_path, capsys, previous):
    # The owner's write bit is what plate reads (not os.access), so this holds when the tests run as root.
    locked = previous if what == "folder" else previous / "index.html"
    locked.chmod(0o555 if what == "folder" else 0o444)
    try:
        before = tree(tmp_path)
        status, report = plate_build(previous, capsys)
        assert_refused(status, report, "read-only")
        assert tree(tmp_path) == before
    finally:
        previous.chmod(0o755)


# --- what a killed build leaves behind ------------------------------------------------------------

def test_a_killed_build_leaves_a_staging_folder_the_next_build_removes(tmp_path, capsys):
    out = tmp_path / "site"
    killer = ("import os, signal, sys\n"
              "from generator.site import build\n"
              "calls = []\n"
              "def fsync(fd):\n"
              "    calls.append(fd)\n"
              "    if len(calls) == 2: os.kill(os.getpid(), signal.SIGKILL)\n"
              "build.os.fsync = fsync\n"
              f"build.build({str(FIXTURE)!r}, {str(out)!r})\n")
    killed = subprocess.run([sys.executable, "-c", killer], cwd=ROOT, capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".site-new-")
    assert plate_build(out, capsys)[0] == 0
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_only_staging_folders_plate_made_are_removed(tmp_path, capsys, previous):
    def folder(name, files, staging=output.staging_text(previous)):
        (tmp_path / name).mkdir()
        if staging is not None:
            (tmp_path / name / output.STAGING).write_text(staging)
        for file, text in files.items():
            (tmp_path / name / file).write_text(text)
    half, before = {"index.html": "<p>half"}, {"index.html": "<p>the site before"}
    folder(".site-new-abcd1234", {output.MARKER: output.marker_text(half), **half})  # killed while writing
    folder(".site-old-zz_99xyz", {output.MARKER: output.marker_text(before), **before})  # killed after the swap
    folder(".site-new-q1w2e3r4", {})  # killed just after writing its own marker
    folder(".site-new-mine1234", {"thesis.txt": "not plate's"})  # plate's marker, someone else's file
    folder(".site-new-edit1234", {output.MARKER: output.marker_text(half), "index.html": "<p>edited"})
    folder(".site-new-short", {output.MARKER: output.marker_text({})})  # not a name plate makes
    folder(".other-new-abcd1234", {output.MARKER: output.marker_text({})})  # staging of another --out
    folder(".site-new-locked00", {output.MARKER: output.marker_text({})})  # a build still running beside this one
    folder(".site-new-elsewhere", {output.MARKER: output.marker_text({})},
           staging=output.staging_text(tmp_path / "another" / "site"))  # made beside another folder named site
    # The user's own backups, with names as plate's staging folders have: the first one is a copy of a site.
    folder(".site-old-backup_1", {output.MARKER: output.marker_text(before), **before}, staging=None)
    folder(".site-new-empty_00", {}, staging=None)
    (tmp_path / ".site-new-aaaaaaaa").write_text("a file, not a folder")
    keep = {name: tree(tmp_path / name) for name in (".site-new-mine1234", ".site-new-edit1234", ".site-new-short",
                                                      ".other-new-abcd1234", ".site-new-locked00",
                                                      ".site-new-elsewhere", ".site-old-backup_1",
                                                      ".site-new-empty_00")}
    fd = os.open(tmp_path / ".site-new-locked00", os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert plate_build(previous, capsys)[0] == 0
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*keep, ".site-new-aaaaaaaa", "site"])
    assert {name: tree(tmp_path / name) for name in keep} == keep


def test_the_write_reports_that_it_swapped(tmp_path):
    assert output.write({"index.html": "<p>one</p>"}, tmp_path / "site") is True
    assert (tmp_path / "site" / "index.html").read_text() == "<p>one</p>"


# --- every command: nothing plate did not write is removed or changed -----------------------------

def test_no_out_changes_a_file_plate_did_not_write(tmp_path, capsys, monkeypatch):
    world = tmp_path / "world"
    content = world / "content"
    shutil.copytree(FIXTURE, content)
    (world / "file.txt").write_text("keep")
    (world / "empty-but-mine").mkdir()
    (world / "empty-but-mine" / ".hidden").write_text("")
    (world / "link-to-file").symlink_to(world / "file.txt")
    (world / "a" / "b").mkdir(parents=True)
    (world / "a" / "b" / "deep.txt").write_text("deep")
    cwd = world / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = tree(tmp_path)
    for out in (world, world / "file.txt", world / "file.txt" / "site", world / "empty-but-mine",
                world / "link-to-file", world / "a", content, content / "site", world / "cwd", Path("/"),
                Path("/proc/plate-site"), Path(".."), ROOT, ROOT / "generator"):
        status, report = plate_build(out, capsys, content)
        assert_refused(status, report)
        assert tree(tmp_path) == before, out


def test_a_file_added_to_the_site_during_the_build_is_kept(tmp_path, monkeypatch, previous):
    real = output._swap

    def swap(staging, target):  # someone saves a file into the site after the last check, just before the swap
        (target / "notes.txt").write_text("mine")
        return real(staging, target)
    monkeypatch.setattr(output, "_swap", swap)
    warnings = []
    assert output.write({"index.html": "<p>new</p>"}, previous, warnings) is True
    assert (previous / "notes.txt").read_text() == "mine"  # where it was saved, beside the new site
    assert (previous / "index.html").read_text() == "<p>new</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert len(warnings) == 1 and f"notes.txt appeared in {previous} during the build; moved back" in warnings[0]


def test_a_page_edited_during_the_build_is_kept_and_the_user_told_where(tmp_path, monkeypatch, previous):
    real = output._swap

    def swap(staging, target):
        (target / "index.html").write_text("<p>my edit</p>")
        return real(staging, target)
    monkeypatch.setattr(output, "_swap", swap)
    warnings = []
    output.write({"index.html": "<p>new</p>"}, previous, warnings)
    kept = list(tmp_path.glob(".site-*/index.html"))
    assert len(kept) == 1 and kept[0].read_text() == "<p>my edit</p>"
    assert sorted(p.name for p in kept[0].parent.iterdir()) == ["index.html"]  # no marker left to let a build in
    assert len(warnings) == 1 and f"yours are kept in {kept[0].parent}" in warnings[0]
    output.write({"index.html": "<p>newer</p>"}, previous)  # the next build leaves the kept folder alone
    assert kept[0].read_text() == "<p>my edit</p>"


# --- the marker carries each file's hash: a forged or copied marker covers nothing else -------------

def test_a_forged_marker_does_not_let_a_build_delete_a_thesis(tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.txt").write_text("chapter one")
    (notes / output.MARKER).write_text(output.marker_text({"thesis.txt": "something else"}))
    before = tree(tmp_path)
    status, report = plate_build(notes, capsys)
    assert_refused(status, report, f"{notes} holds files changed since plate wrote them (thesis.txt)")
    assert tree(tmp_path) == before


def test_a_marker_copied_with_a_site_covers_only_the_bytes_it_names(tmp_path, capsys, previous):
    copy = tmp_path / "copy"
    shutil.copytree(previous, copy)
    (copy / FIXTURE_CSV).write_text("my own numbers\n")  # same name as plate's file, not plate's bytes
    before = tree(tmp_path)
    status, report = plate_build(copy, capsys)
    assert_refused(status, report, f"files changed since plate wrote them ({FIXTURE_CSV}); plate will not "
                                   f"overwrite them")
    assert tree(tmp_path) == before


def test_a_hand_edited_page_in_a_previous_site_is_refused(tmp_path, capsys, previous):
    (previous / "index.html").write_text("<p>my edit</p>")
    before = tree(tmp_path)
    status, report = plate_build(previous, capsys)
    assert_refused(status, report, "files changed since plate wrote them (index.html)")
    assert tree(tmp_path) == before


def test_an_older_plates_marker_without_hashes_is_refused(tmp_path, capsys, previous):
    names = sorted(p.name for p in previous.iterdir() if p.name != output.MARKER)
    (previous / output.MARKER).write_text("".join(f"{line}\n" for line in
                                                  (output.OLD_MARKER_HEAD, output.MARKER, *names)))
    before = tree(tmp_path)
    status, report = plate_build(previous, capsys)
    assert_refused(status, report, "was built by an older plate", "delete the folder once by hand")
    assert tree(tmp_path) == before


# --- messages -------------------------------------------------------------------------------------

def test_a_symlink_loop_as_out_is_named_as_one(tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    before = tree(tmp_path)
    for out in (tmp_path / "a", tmp_path / "a" / "site"):
        status, report = plate_build(out, capsys)
        assert_refused(status, report, "is a symlink loop")
    assert tree(tmp_path) == before


def test_a_read_only_file_system_is_named_and_not_chmod(tmp_path, capsys, monkeypatch, previous):
    real = os.statvfs

    class ReadOnly:
        def __init__(self, result):
            self.result = result

        def __getattr__(self, name):
            value = getattr(self.result, name)
            return value | os.ST_RDONLY if name == "f_flag" else value
    monkeypatch.setattr(output.os, "statvfs", lambda path: ReadOnly(real(path)))
    status, report = plate_build(previous, capsys)
    assert_refused(status, report, "is on a read-only file system")
    assert "chmod" not in report
    monkeypatch.setattr(output.os, "statvfs", real)

    def mkdtemp(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(output.tempfile, "mkdtemp", mkdtemp)
    status, report = plate_build(tmp_path / "new", capsys)
    assert_refused(status, report, "read-only file system (choose a folder on a writable one)")
    assert "chmod" not in report


def test_a_site_holding_a_file_that_cannot_be_removed_is_left_whole_with_no_staging_folder(tmp_path):
    """A previous site one of whose files is immutable (chattr +i) could be swapped out but never cleared away: the
    build refuses in one line before the swap, the site stays byte for byte and no .site-* folder is left."""
    import shutil as sh
    out = tmp_path / "site"
    output.write({"index.html": "<p>before</p>", "data.csv": "a\n"}, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    chattr = sh.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(out / "data.csv")], capture_output=True).returncode:
        pytest.skip("chattr cannot make a file immutable here (not root, or a file system without the flag)")
    try:
        with pytest.raises(output.OutputError, match=r"data\.csv cannot be removed \(immutable"):
            output.write({"index.html": "<p>after</p>"}, out)
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        assert [p.name for p in tmp_path.iterdir()] == ["site"]
    finally:
        subprocess.run([chattr, "-i", str(out / "data.csv")], capture_output=True)
