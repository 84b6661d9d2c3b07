"""`plate check` catches every page-module mistake `plate build` fails on (docs/checks.md): the plate's PAGE compiled
for the page and its promises checked at the default selection, each at the page module's file and line, exit 1.
Tested on copies of the engine's plate (tests/fixtures/toy) in temporary folders."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TOY


def plate(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=240)


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def broken(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the toy plate whose page_code.py has old replaced by new (once)."""
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    code = root / "plate" / "page_code.py"
    text = code.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    code.write_text(text.replace(old, new), encoding="utf-8")
    return root


READOUT = 'return ["With the " + f["link"]["name"]'
# (old, new, the text of the line the mistake is at, words of the message): each a mistake the build fails on
MISTAKES = {
    "encode": (READOUT, 'text = f["link"]["name"].encode("utf-8")\n    ' + READOUT, "encode(", ".encode()"),
    "class": (READOUT, "class Words:\n        pass\n    " + READOUT, "class Words", "a class"),
    "yield": (READOUT, "yield 1\n    " + READOUT, "yield 1", "yield"),
    "format spec": (READOUT, 'text = f"{f[\'best_seconds\']:.2f}"\n    ' + READOUT, ":.2f", "format spec"),
    "conversion": (READOUT, 'text = f"{f[\'best_seconds\']!r}"\n    ' + READOUT, "!r", "conversion"),
    "dict comprehension": (READOUT, "names = {k: 1 for k in f}\n    " + READOUT, "for k in f}", "dict comprehension"),
    "arguments": (READOUT, "arguments = 1\n    " + READOUT, "arguments = 1", "the name 'arguments'"),
    "eval": (READOUT, "eval = 1\n    " + READOUT, "eval = 1", "the name 'eval'"),
    "sorted": (READOUT, "order = sorted(f['seconds'])\n    " + READOUT, "sorted(", "sorted()"),
    "readout text": (READOUT, "return 'one paragraph, not a list'\n    " + READOUT, "def page(",
                     "hook page returned dict, not a dict with 'data' (a dict) and 'readout' (a list)"),
}


@pytest.mark.parametrize("kind", list(MISTAKES))
def test_check_fails_at_the_page_module_s_line_wherever_build_does(tmp_path, kind):
    old, new, at, words = MISTAKES[kind]
    root = broken(tmp_path, old, new)
    file = "__init__.py" if kind == "readout text" else "page_code.py"  # the page hook returns the readout
    line = line_of(root / "plate" / file, at)
    checked = plate("check", "--content", "toy", cwd=tmp_path)
    built = plate("build", "--content", "toy", "--out", "site", cwd=tmp_path)
    for result in (checked, built):
        assert result.returncode == 1, result.stderr
        assert f"toy/plate/{file}, line {line}: " in result.stderr and words in result.stderr, result.stderr
        assert str(tmp_path) not in result.stderr and "Traceback" not in result.stderr  # relative, one line
    assert not (tmp_path / "site").exists()


def test_a_page_function_that_loops_is_named_at_the_line_that_loops(tmp_path):
    root = broken(tmp_path, "    best = 0\n", "    best = 0\n    while best >= 0:\n        best = best + 1 - 1\n")
    line = line_of(root / "plate" / "page_code.py", "best = best + 1 - 1")
    result = plate("check", "--content", root, "--hook-timeout", "2", cwd=tmp_path)
    assert result.returncode == 1
    assert (f"toy/plate/page_code.py, line {line}: " in result.stderr or
            f"toy/plate/page_code.py, line {line - 1}: " in result.stderr), result.stderr
    assert "ran past its time limit of 2 s" in result.stderr


def test_a_page_readout_that_is_a_text_not_a_list_fails_at_readout(tmp_path):
    """PAGE's readout giving one text (the live page would show one paragraph per character), while the page hook's
    readout is a list: check and build fail at the function's def."""
    root = broken(tmp_path, "def title(", "def readout_text(f, W):\n    return readout(f, W)[0]\n\n\ndef title(")
    init = root / "plate" / "__init__.py"
    init.write_text(init.read_text().replace('"readout": page_code.readout,', '"readout": page_code.readout_text,'))
    line = line_of(root / "plate" / "page_code.py", "def readout_text(")
    for command in (["check"], ["build", "--out", "site"]):
        result = plate(*command, "--content", "toy", cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert (f"toy/plate/page_code.py, line {line}: readout_text gives str at the default selection, not a list "
                f"of paragraphs (texts): the page would show one paragraph per character") in result.stderr
