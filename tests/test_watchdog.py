"""generator/plate/watchdog.py: a plate hook that ends the process (os._exit, a crash in C code, a signal it sends itself)
is still one line naming the plate's file, line and hook, with exit status 1 and the site left as it was. Each case
runs `python -m generator build` on a copy of the engine's plate (tests/fixtures/toy) in a temporary folder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from generator.site import output

from conftest import ROOT, TOY

HOOK = '''def csv_text(model: Model) -> str:
    """Every link's rows."""'''
ENDS = {
    "os._exit(0)": ("import os\n    os._exit(0)", "ended the process with exit status 0"),
    "os._exit(3)": ("import os\n    os._exit(3)", "ended the process with exit status 3"),
    "segfault": ("import ctypes\n    ctypes.string_at(0)", "was killed by SIGSEGV"),
    "SIGKILL": ("import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)", "was killed by SIGKILL"),
}


@pytest.mark.parametrize("case", list(ENDS))
def test_a_hook_that_ends_the_process_is_one_line_naming_it_and_status_1(tmp_path, case):
    code, how = ENDS[case]
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    init = root / "plate" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    assert text.count(HOOK) == 1
    init.write_text(text.replace(HOOK, HOOK + "\n    " + code), encoding="utf-8")
    line = next(i for i, l in enumerate(init.read_text().splitlines(), 1) if l.startswith("def csv_text("))
    out = tmp_path / "site"
    output.write({"index.html": "<p>the site before</p>"}, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", "toy", "--out", "site"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.startswith("plate: ")]
    assert lines == [l for l in result.stderr.splitlines() if l.strip()] and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"plate: toy/plate/__init__.py, line {line}: the plate module's hook csv_text {how}")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site-")] == []


def test_the_command_s_own_status_passes_through_the_watchdog(tmp_path):
    """A content mistake is still exit 1 with its own lines, a usage mistake 2, a good build 0."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    good = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(TOY), "--out",
                           str(tmp_path / "site")], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert good.returncode == 0 and "plate: built" in good.stdout
    usage = subprocess.run([sys.executable, "-m", "generator", "build", "--nope"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, env=env)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1
