"""No import cycles: the engine's modules, platelib's and each plate module's, walked by ast (imports inside
functions too, which Python runs later but which still tie the modules in a circle)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def packages(root: Path = ROOT) -> dict[str, Path]:
    """{package name: folder} of every package the walk covers: the engine, platelib, each plate module and the
    scaffold's (a plate's package is named after its folder, as no two plates share one)."""
    found = {"generator": root / "generator", "platelib": root / "plates" / "lib"}
    for init in sorted(root.glob("plates/*/plate/__init__.py")):
        found["plate:" + init.parent.parent.name] = init.parent
    found["plate:new-plate"] = root / "templates" / "new-plate" / "plate"
    return found


def modules(found: dict[str, Path]) -> dict[str, Path]:
    """{module name: file} of every module under the packages, subpackages included."""
    names = {}
    for package, folder in found.items():
        for path in sorted(folder.rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names[".".join([package, *parts])] = path
    return names


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of known that module imports anywhere in its file, with the packages Python runs on the way
    (a package's __init__ runs before its module; never one of module's own packages, already running)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            targets.add(base)
            targets |= {f"{base}.{alias.name}" for alias in node.names}  # `from package import module`
    own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1 + is_package)}
    edges: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in known and name not in own and name != module:
                edges.add(name)
    return edges


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """{module: the modules it imports}, over the engine, platelib and the plate modules."""
    known = modules(packages(root))
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each as a sorted list: one per cycle knot."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def path_round(edges: dict[str, set[str]], group: list[str]) -> str:
    """One circle through a knot, as `a -> b -> a`, for the failure message."""
    start, members = group[0], set(group)
    trail, seen = [start], {start}
    while True:
        nxt = sorted(n for n in edges[trail[-1]] if n in members)
        back = [n for n in nxt if n == start]
        if back and len(trail) > 1:
            return " -> ".join(trail + [start])
        fresh = [n for n in nxt if n not in seen]
        if not fresh:
            return " -> ".join(trail + [nxt[0]])
        trail.append(fresh[0])
        seen.add(fresh[0])


def test_the_walk_sees_every_package():
    found = packages()
    assert {"generator", "platelib", "plate:new-plate"} <= set(found)
    assert len([p for p in found if p.startswith("plate:")]) >= 3
    edges = graph()
    assert "generator.page.native" in edges["generator.page.notation"]  # the formatter's digits
    assert "generator.site.assembly" in edges["generator.site.build"] and "generator.api" in edges["platelib.catalogue"]


def test_no_import_cycles():
    edges = graph()
    knots = cycles(edges)
    assert not knots, "import cycles: " + "; ".join(path_round(edges, group) for group in knots)


def test_a_cycle_is_found(tmp_path):
    """The walk finds a circle closed inside a function, through `from . import`, and through a package."""
    engine = tmp_path / "generator"
    (engine / "stage").mkdir(parents=True)
    (engine / "__init__.py").write_text("")
    (engine / "stage" / "__init__.py").write_text("from .reader import read\n")
    (engine / "stage" / "reader.py").write_text("def read():\n    from generator import build\n")
    (engine / "build.py").write_text("from generator.stage import read\n")
    (tmp_path / "plates" / "lib").mkdir(parents=True)
    (tmp_path / "plates" / "lib" / "__init__.py").write_text("")
    plate = tmp_path / "plates" / "toy" / "plate"
    plate.mkdir(parents=True)
    (plate / "__init__.py").write_text("from . import facts\n")
    (plate / "facts.py").write_text("from .words import say\n")
    (plate / "words.py").write_text("def say():\n    from . import facts\n")
    (tmp_path / "templates" / "new-plate" / "plate").mkdir(parents=True)
    (tmp_path / "templates" / "new-plate" / "plate" / "__init__.py").write_text("")
    edges = graph(tmp_path)
    assert cycles(edges) == [["generator.build", "generator.stage", "generator.stage.reader"],
                             ["plate:toy.facts", "plate:toy.words"]]
    (plate / "words.py").write_text("def say():\n    return 1\n")
    (engine / "stage" / "reader.py").write_text("def read():\n    return 2\n")
    assert cycles(graph(tmp_path)) == []
