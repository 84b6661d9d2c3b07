"""generator/api.py, the plates' one door to the engine: a plate module, the scaffold's and platelib import from the
engine only it; each of its names has a one-line docstring and a line in docs/plates.md; page modules import the
formatter through it, compiled to the page's own notation.js and native.js."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from generator import api
from generator.page import compiler

ROOT = Path(__file__).resolve().parent.parent
API = "generator.api"


def plate_code(root: Path = ROOT) -> list[Path]:
    """Every Python file of a plate module, the scaffold's and platelib."""
    return sorted([*root.glob("plates/*/plate/**/*.py"), *root.glob("plates/lib/**/*.py"),
                   *root.glob("templates/new-plate/plate/**/*.py")])


def engine_imports(path: Path) -> list[str]:
    """Each import of the engine in a file other than from generator.api (anywhere in it: in functions too), as
    `file, line N: the import`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            modules = [node.module or ""]
        else:
            continue
        for module in modules:
            if (module == "generator" or module.startswith("generator.")) and module != API:
                found.append(f"{path}, line {node.lineno}: {ast.unparse(node)}")
    return found


def test_plates_and_platelib_import_only_the_public_module():
    files = plate_code()
    assert len([f for f in files if "plates/lib" in f.as_posix()]) > 3 and len(files) > 25
    wrong = [line for path in files for line in engine_imports(path)]
    assert not wrong, "import generator.api, not the engine's internals:\n" + "\n".join(wrong)
    # and what they import from it, it has
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == API:
                missing = [a.name for a in node.names if a.name not in api.__all__]
                assert not missing, f"{path}, line {node.lineno}: generator.api has no {', '.join(missing)}"


@pytest.mark.parametrize("planted", ["from generator.source.schema import Problems",
                                     "def late():\n    from generator import charts\n    return charts",
                                     "import generator.page.notation"])
def test_the_rule_catches_an_engine_import(tmp_path, planted):
    plate = tmp_path / "plates" / "toy" / "plate"
    plate.mkdir(parents=True)
    (plate / "__init__.py").write_text("from generator.api import num\n", encoding="utf-8")
    (plate / "facts.py").write_text(f"import numpy\n{planted}\n", encoding="utf-8")
    files = plate_code(tmp_path)
    assert [line for path in files for line in engine_imports(path)] == \
        [f"{plate / 'facts.py'}, line {2 if not planted.startswith('def') else 3}: "
         f"{planted.split(chr(10))[-2].strip() if planted.startswith('def') else planted}"]


def api_bindings() -> list[tuple[str, ast.AST, ast.AST | None]]:
    """(name, the statement binding it, the statement after it) for each name generator/api.py binds."""
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    body = tree.body
    found = []
    for i, node in enumerate(body):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            found += [(a.asname or a.name, node, body[i + 1] if i + 1 < len(body) else None) for a in node.names]
    return found


def test_every_public_name_has_a_one_line_docstring():
    bindings = api_bindings()
    assert [name for name, _, _ in bindings] == api.__all__  # every name bound is public, in the file's order
    for name, node, after in bindings:
        assert len(node.names) == 1, f"generator/api.py, line {node.lineno}: one name per import, then its docstring"
        doc = after.value.value if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) else None
        assert isinstance(doc, str) and doc.strip() and "\n" not in doc, \
            f"generator/api.py, line {node.lineno}: {name} has no one-line docstring after it"
        assert getattr(api, name) is not None


def test_docs_plates_lists_every_public_name():
    text = (ROOT / "docs" / "plates.md").read_text(encoding="utf-8")
    section = text.split("## The engine's API", 1)
    assert len(section) == 2, "docs/plates.md has no section \"The engine's API\""
    listed = set(re.findall(r"`(\w+)`", section[1].split("\n## ", 1)[0])) - {"platelib"}
    assert listed == set(api.__all__), (sorted(set(api.__all__) - listed), sorted(listed - set(api.__all__)))


PAGE_WORDS = '''
from generator.api import fixed, num, percent


def readout(facts, W):
    return [num(facts["n"]) + " GPUs, " + percent(facts["share"]) + " busy, " + fixed(facts["share"], 2)]
'''


def _compiled(tmp_path: Path, name: str, source: str):
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "words.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(f"{name}.words", fromlist=["readout"])
        return compiler.compile_page({"readout": module.readout})
    finally:
        sys.path.remove(str(tmp_path))


def test_page_code_imports_the_formatter_through_the_public_module(tmp_path):
    page_js = _compiled(tmp_path, "api_worded", PAGE_WORDS).modules[compiler.FILE]
    assert re.search(r'import \{[^}]*\bnum\b[^}]*\bpercent\b[^}]*\} from "\./notation\.js";', page_js), page_js
    assert re.search(r'import \{[^}]*\bfixed\b[^}]*\} from "\./native\.js";', page_js), page_js


@pytest.mark.parametrize("name", ["Cache", "Problems", "figure"])
def test_a_build_only_name_in_page_code_is_refused_at_its_line(tmp_path, name):
    (tmp_path / "plate.md").write_text("", encoding="utf-8")
    source = f"from generator.api import num, {name}\n\n\ndef readout(facts, W):\n    return [num(1)]\n"
    with pytest.raises(compiler.CompileError) as error:
        _compiled(tmp_path, f"api_refused_{name.lower()}", source)
    assert str(error.value).startswith(f"{tmp_path.name}/api_refused_{name.lower()}/words.py, line 1: {name} ")
