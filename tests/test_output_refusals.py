"""The output folder's guards at their edges: a marker plate did not write, a link in place of a listed file, and a
folder that changes while the new site is written. Each is refused, and every byte of the folder is kept."""
from __future__ import annotations

import os

import pytest

from generator.site import output


def tree(folder) -> dict:
    """Every path below folder with its bytes (a link as its target), to compare before/after."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        seen[key] = ("link", os.readlink(path)) if path.is_symlink() else \
            ("dir",) if path.is_dir() else path.read_bytes()
    return seen


@pytest.fixture
def site(tmp_path):
    """A folder plate wrote (by output.write, with its own marker), under tmp_path/site."""
    out = tmp_path / "site"
    output.write({"index.html": "<p>old</p>", "data.csv": "a,b\n"}, out)
    assert output.foreign_entries(out) == []  # plate's own folder, replaceable as it stands
    return out


def refused(out, tmp_path, *fragments):
    """Both the check and the write refuse out, and leave everything under tmp_path as it was."""
    before = tree(tmp_path)
    with pytest.raises(output.OutputError) as checked:
        output.check_output(out)
    with pytest.raises(output.OutputError) as written:
        output.write({"index.html": "<p>new</p>"}, out)
    for fragment in fragments:
        assert fragment in str(checked.value) and fragment in str(written.value), (checked.value, written.value)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("head", ["# Written by something else, which may replace this folder:", "", None])
def test_a_marker_whose_first_line_is_not_plate_s_header_is_refused(site, tmp_path, head):
    marker = site / output.MARKER
    lines = marker.read_text().splitlines()
    assert lines[0] == output.MARKER_HEAD and len(lines) > 2  # the header, then what the build wrote
    lines = lines[1:] if head is None else [head, *lines[1:]]  # the same list under another first line
    marker.write_text("".join(f"{line}\n" for line in lines))
    refused(site, tmp_path, "holds files plate did not write", "index.html")


def test_a_symlink_named_like_a_listed_file_is_refused(site, tmp_path):
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_text("someone's own page")
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(elsewhere)
    assert (site / "index.html").is_file()  # followed, it looks like the file the marker lists
    refused(site, tmp_path, "holds files plate did not write (index.html)")
    assert elsewhere.read_text() == "someone's own page" and (site / "index.html").is_symlink()


def test_a_file_saved_into_the_folder_while_the_site_is_written_stops_the_swap(site, tmp_path, monkeypatch):
    real, calls = os.fsync, []

    def fsync(fd):  # the new site is being written beside the folder: someone saves a file into it
        calls.append(fd)
        if len(calls) == 1:
            (site / "notes.txt").write_text("mine")
        return real(fd)
    monkeypatch.setattr(output.os, "fsync", fsync)
    before = {**tree(site), "notes.txt": b"mine"}
    with pytest.raises(output.OutputError) as caught:
        output.write({"index.html": "<p>new</p>"}, site)
    assert calls and "notes.txt" in str(caught.value)
    assert tree(site) == before  # the old site and the new file, in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging folder left
