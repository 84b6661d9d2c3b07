"""The plate in its own words: no run of 8 or more words shared with the spec's text (shared/tools/spec_overlap.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TOOL = Path("shared") / "tools" / "spec_overlap.py"


def overlap_tool() -> Path:
    """The checker beside the clone (../shared in CI and in the main checkout; further up from a worktree)."""
    for folder in (ROOT, *ROOT.parents):
        if (folder / TOOL).is_file():
            return folder / TOOL
    message = f"{TOOL} not found beside {ROOT} or above it"
    if os.environ.get("CI"):
        pytest.fail(f"{message}, and CI is set: the overlap check must run in CI")
    pytest.skip(message)


def run(tool: Path, page: Path, *spec: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(tool), str(page), *map(str, spec)], capture_output=True, text=True,
                          timeout=120)


def test_the_plate_shares_no_run_of_words_with_the_spec(site):
    result = run(overlap_tool(), site / "index.html")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 run(s)" in result.stdout


def test_the_check_finds_a_copied_sentence(tmp_path):
    """The checker is live: a page that carries a sentence of the spec is caught."""
    tool = overlap_tool()
    spec = tool.parent.parent / "spec" / "plate-xiv-4-data-parallelism.txt"
    sentence = max(spec.read_text(encoding="utf-8").split(". "), key=len)
    page = tmp_path / "index.html"
    page.write_text(f"<!doctype html><title>x</title><p>{sentence}.</p>", encoding="utf-8")
    result = run(tool, page)
    assert result.returncode == 1 and "shared with the spec" in result.stdout


def test_the_volumes_index_shares_no_run_of_words_with_the_outline_or_the_spec(series_site):
    """Each index and the top page copy the outline's titles, never its one-line subjects; intros in own words."""
    from generator.source import volume
    tool = overlap_tool()
    shelf = volume.load_series(ROOT / "plates")
    for name in [v.page for v in shelf.volumes] + [shelf.page]:  # every volume's index and the top page
        for spec in ((), (tool.parent.parent / "spec" / "volume-outline.md",)):
            result = run(tool, series_site / name, *spec)
            assert result.returncode == 0 and "0 run(s)" in result.stdout, name + result.stdout + result.stderr
