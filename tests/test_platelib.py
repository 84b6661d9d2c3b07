"""platelib (plates/lib/), the formulas plates share: its formula modules keep to the Python docs/plates.md states
(what compiles to the page's JavaScript), and no plate module loads another plate's package by path."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

LIBRARY = ROOT / "plates" / "lib"
FORMULAS = sorted(p for p in LIBRARY.glob("*.py") if p.name not in ("__init__.py", "catalogue.py"))
# docs/plates.md, "Shared formulas: platelib": the numpy names the page's scalar np has
NP_NAMES = {"where", "maximum", "minimum", "equal", "ceil", "floor", "log2", "log10", "sqrt", "isnan", "abs",
            "asarray", "nan", "inf"}
REFUSED = {ast.GeneratorExp: "a generator expression", ast.Try: "try", ast.With: "with", ast.Global: "global",
           ast.ClassDef: "a class", ast.Lambda: "a lambda", ast.Starred: "a starred argument"}


def subset_mistakes(source: str) -> list[str]:
    """What a formula module writes outside the subset, one 'line: what' each."""
    mistakes = []
    for node in ast.walk(ast.parse(source)):
        at = getattr(node, "lineno", 0)
        if type(node) in REFUSED:
            mistakes.append(f"{at}: {REFUSED[type(node)]}")
        elif isinstance(node, ast.Call) and node.keywords:
            mistakes.append(f"{at}: a keyword argument")
        elif isinstance(node, ast.Dict) and None in node.keys:
            mistakes.append(f"{at}: {{**...}}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            mistakes.append(f"{at}: a decorator")
        elif isinstance(node, ast.Import) and any((a.name, a.asname) not in (("math", None), ("numpy", "np"))
                                                  for a in node.names):
            mistakes.append(f"{at}: an import other than math and numpy as np")
        elif isinstance(node, ast.ImportFrom) and not (node.level == 0 and (node.module or "").startswith("platelib.")):
            mistakes.append(f"{at}: from {node.module} (only from platelib.<module>)")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np" \
                and node.attr not in NP_NAMES:
            mistakes.append(f"{at}: np.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in ("isinstance", "round"):
            mistakes.append(f"{at}: {node.id}")
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Tuple) \
                and any(isinstance(e, ast.Tuple) for e in node.target.elts):
            mistakes.append(f"{at}: a nested tuple target")
    return mistakes


def test_the_library_has_formula_modules():
    assert {p.stem for p in FORMULAS} >= {"collectives", "compute", "zero", "buckets"}


@pytest.mark.parametrize("path", FORMULAS, ids=lambda p: p.name)
def test_a_formula_module_keeps_to_the_subset(path):
    assert subset_mistakes(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source, mistake", [
    ("import os\n", "an import other than"), ("from .zero import x\n", "only from platelib"),
    ("def f(x):\n    return g(x, y=1)\n", "a keyword argument"), ("def f(x):\n    return sum(a for a in x)\n",
                                                                "a generator expression"),
    ("def f(x):\n    return np.errstate\n", "np.errstate"), ("def f(x):\n    return round(x, 2)\n", "round"),
    ("def f(x):\n    for i, (a, b) in x:\n        pass\n", "a nested tuple target"),
    ("def f(x):\n    return {**x}\n", "{**...}"), ("def f(x):\n    return g(*x)\n", "a starred argument"),
])
def test_the_check_finds_each_refused_form(source, mistake):
    assert any(mistake in m for m in subset_mistakes(source)), subset_mistakes(source)


def test_no_plate_module_loads_another_plate_by_path():
    """A plate shares code through platelib, not by loading another plate's package (generator.plate.plates.load): no
    module that loads a package by path names another plate's folder (preview.py loads its own)."""
    folders = [p.parent.parent for p in (ROOT / "plates").glob("*/plate/__init__.py")]
    assert len(folders) >= 2
    for folder in folders:
        others = [f.name for f in folders if f != folder]
        for path in sorted((folder / "plate").rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if re.search(r"\bplates\.load\(|spec_from_file_location", text):
                assert not [name for name in others if name in text], path
