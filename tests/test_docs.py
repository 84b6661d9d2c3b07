"""The docs describe the code as it is: every file path and module name README.md and docs/ mention exists, and
docs/ stays about 12,000 words."""
from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
WORDS_AT_MOST = 12_000  # "about 12,000 words" (issue 44), counted as `wc -w docs/*.md` counts them
# A path from the repository's top: its first folder one of these, then names; <placeholders>, globs and "…" stop it.
PATH = re.compile(r"(?<![\w./-])((?:generator|plates|templates|tests|docs|\.ci)/[\w.-]+(?:/[\w.-]+)*/?)")
# What the docs name that a clean checkout does not hold: the folders their examples of `plate new` start, a test
# file's name as a pattern, and the folder `npm install --prefix tests/.node` makes for the tests' own tools.
EXAMPLES = {"plates/xiv-9-expert-parallelism", "plates/xiv-8-pipeline", "tests/test_x.py", "tests/.node"}
MODULE = re.compile(r"(?<![\w./-])((?:generator|platelib)(?:\.[A-Za-z_]\w*)+)")


def _path_exists(text: str, root: Path) -> bool:
    path = text.rstrip("/.")
    return (root / path).exists() or any(root.glob(path))


def _module_exists(name: str) -> bool:
    """A module, or a name in one (generator.api.num): importable, or an attribute of what is."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            continue
        value = importlib.import_module(module)
        for attr in parts[i:]:
            if not hasattr(value, attr):
                return False
            value = getattr(value, attr)
        return True
    return False


def stale(text: str, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, name) of each path or module name in text that does not exist."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in PATH.finditer(line):
            if match.end() < len(line) and line[match.end()] in "<*…{":
                continue  # a pattern: plates/<folder>/plate.md, docs/plate-*.md
            if match.group(1).rstrip("/.") not in EXAMPLES and not _path_exists(match.group(1), root):
                found.append((number, match.group(1)))
        for match in MODULE.finditer(line):
            name = match.group(1).rstrip(".")
            if name.endswith((".py", ".md", ".js", ".toml")):
                continue
            if not _module_exists(name):
                found.append((number, name))
    return found


def test_the_docs_name_only_what_exists():
    wrong = [f"{doc.relative_to(ROOT)}, line {line}: {name}" for doc in DOCS
             for line, name in stale(doc.read_text(encoding="utf-8"))]
    assert not wrong, "stale names in the docs:\n" + "\n".join(wrong)


def test_a_stale_name_is_found():
    text = ("The formatter is generator/page/notation.py (`generator.api.num`).\n"
            "It was generator/notation.py, and `generator.notation.num`; plates/<folder>/plate.md is a pattern.\n"
            "generator.api.no_such_name and tests/test_nothing_here.py are gone.\n")
    assert stale(text) == [(2, "generator/notation.py"), (2, "generator.notation.num"),
                           (3, "tests/test_nothing_here.py"), (3, "generator.api.no_such_name")]


def test_the_docs_are_about_twelve_thousand_words():
    words = sum(len(doc.read_text(encoding="utf-8").split()) for doc in DOCS if doc.parent.name == "docs")
    assert words <= WORDS_AT_MOST, f"docs/ holds {words} words; about 12,000 is the budget (issue 44)"
