"""Reproducible builds: the same inputs give the same bytes, whatever the process, hash seed, path or clock."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from generator.source import content
from generator.site import assembly, build

from conftest import CONTENT, FIXTURE, ROOT


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build_in_process_of_its_own(out: Path, content: Path = CONTENT, **env) -> None:
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(content), "--out", str(out)],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr


def test_two_builds_in_separate_processes_are_byte_identical(tmp_path):
    # Different hash seeds (dict and set order), a fresh runtime cache for one (the bundle is made anew),
    # different clocks: none of it may show in the output.
    build_in_process_of_its_own(tmp_path / "a" / "site", PYTHONHASHSEED="1", SOURCE_DATE_EPOCH="0")
    build_in_process_of_its_own(tmp_path / "b" / "site", PYTHONHASHSEED="4242", PLATE_CACHE=str(tmp_path / "cache"),
                                SOURCE_DATE_EPOCH="2000000000")
    a, b = files_of(tmp_path / "a" / "site"), files_of(tmp_path / "b" / "site")
    assert sorted(a) == sorted([build.MARKER, content.load(CONTENT).plate.data_file, "index.html", "robots.txt"])
    assert a == b


def test_consecutive_builds_into_the_same_folder_are_identical(tmp_path):
    out = tmp_path / "site"
    build.build(CONTENT, out)
    first = files_of(out)
    build.build(CONTENT, out)
    assert files_of(out) == first
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging or old folder left behind


def test_where_the_content_lives_does_not_show(tmp_path):
    moved = tmp_path / "elsewhere" / "my-content"
    shutil.copytree(FIXTURE, moved)
    assert assembly.gather(moved) == assembly.gather(FIXTURE)
    page = assembly.gather(moved)["index.html"]
    assert str(tmp_path) not in page and str(ROOT) not in page


def test_files_have_fixed_permissions(tmp_path):
    old = os.umask(0o077)
    try:
        build.build(FIXTURE, tmp_path / "site")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "site").stat().st_mode) == 0o755
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "site").iterdir()} == {0o644}
