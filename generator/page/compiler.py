"""Python to the page's JavaScript: a plate's page functions, and every module they import, compiled by PScript.

A plate writes its model, facts, figure rows and words once, in Python. The build runs that Python (under numpy
where it broadcasts); the page runs the same functions compiled here to ES modules, which esbuild bundles with the
engine's page modules (templates/page/). The Python a page module may hold is a subset, checked here with file and
line before PScript sees it: docs/plates.md, "Python the page runs", lists it.
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pscript
from pscript import stdlib

from ..plate.plates import PAGE_OPTIONAL
from ..source.schema import ContentError

# What `np.` and `math.` may name in a page module: templates/page/np.js gives the page these, on scalars.
NP_NAMES = frozenset({"where", "maximum", "minimum", "equal", "ceil", "floor", "log2", "log10", "sqrt", "isnan",
                      "isfinite", "abs", "asarray", "nan", "inf", "float64", "exp", "log"})
MATH_NAMES = frozenset({"ceil", "floor", "log2", "log10", "sqrt", "isnan", "isfinite", "inf", "nan", "exp", "log",
                        "pi", "fabs"})
# Built-ins whose Python and JavaScript meanings part: refused, each with the reason a reader is given.
REFUSED_CALLS = {
    "round": "Python rounds half to even and JavaScript half up: write the rounding out, or use the formatter",
    "isinstance": "the page has no Python types",
    "print": "the page has no console worth writing to; return the value",
    "open": "the page reads no files",
    "eval": "nothing is evaluated from text", "exec": "nothing is evaluated from text",
    "sorted": "PScript has no sorted(); sort a copy with a loop or keep the order the data has",
    "set": "the page has no sets; use a dict or a list",
    "tuple": "the page has no tuples; use a list",
    "repr": "the page writes a text's repr otherwise (JSON's quotes); write the text",
    "format": "write numbers with the formatter (num, sig, … from generator.api)",
    "getattr": "the page has no objects with attributes; use a dict",
    "setattr": "the page has no objects with attributes; use a dict",
    "hasattr": "the page has no objects with attributes; use a dict",
    "delattr": "the page has no objects with attributes; use a dict",
}
# Built-ins the page has, each meaning what it means in Python on the page's plain data (PScript's library, or
# JavaScript's own where the compiler writes it); a call of any other name the module does not bind is refused.
BUILTINS = frozenset({"abs", "all", "any", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float", "int",
                      "len", "list", "map", "max", "min", "ord", "pow", "range", "reversed", "str", "sum", "zip"})
# str, list and dict methods the page has (PScript's library: pscript.stdlib.METHODS), less those it runs otherwise
REFUSED_METHODS = {
    "sort": "the page sorts numbers as texts ([1, 10, 100, 9]); keep the order the data has, or sort in a loop",
    "format": "write numbers with the formatter (num, sig, … from generator.api)",
}
METHODS = frozenset(pscript.stdlib.METHODS) - set(REFUSED_METHODS)
# Names the page's JavaScript reserves or reads itself: a module naming one would not compile, or would shadow it
JS_RESERVED = frozenset({
    "arguments", "eval", "this", "super", "undefined", "NaN", "Infinity", "let", "static", "implements",
    "interface", "package", "private", "protected", "public", "enum", "null", "true", "false", "typeof",
    "instanceof", "void", "delete", "switch", "case", "default", "do", "catch", "finally", "throw", "const",
    "debugger", "extends", "export", "new", "var", "function", "await", "yield", "Math", "Object", "Array",
    "String", "Number", "Boolean", "Error", "JSON", "Symbol", "BigInt", "isNaN", "isFinite", "parseInt",
    "parseFloat"})
_INTERNAL = re.compile(r"_py|py_|stub\d+_")  # the names PScript and this compiler give what they write
# Modules the page has in JavaScript, imported whole ({Python module: (the page's module, the object it exports)})
NATIVE = {"math": ("np.js", "math"), "numpy": ("np.js", "np")}
# … and those whose names are imported one by one ({Python module: the page's module of the same names}).
NATIVE_NAMES = {"generator.page.native": "native.js"}
# The engine's own Python the page runs, each module compiled to a page module of its own, which exports its public
# names: the formatter (plates' page code imports it too) and the linker (templates/page/texts.js). A module
# compiled for the page imports their names from that page module rather than holding a second copy.
ENGINE = {"generator.page.notation": "notation.js", "generator.page.references": "references.js"}
API = "generator.api"  # the plates' one door to the engine: a page module's names from it are those modules' names


@functools.cache
def api_origins() -> dict[str, str]:
    """{name: the engine module it comes from} of generator/api.py, read from its source (importing it would load
    the whole engine): a page module's import of API stands for imports from those modules."""
    tree = ast.parse(file_of(API).read_text(encoding="utf-8"))
    return {alias.asname or alias.name: _resolve(API, node, False) for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module != "__future__" for alias in node.names}


class CompileError(ContentError):
    """A page module holds Python the page cannot run: the message names file:line."""

    def __init__(self, message: str):
        super().__init__([message])


@dataclass
class Compiled:
    """The page's compiled module, {file name: ES module text}, and the name each role is exported under."""

    modules: dict[str, str] = field(default_factory=dict)
    entries: dict[str, str] = field(default_factory=dict)


def shown(path: Path) -> str:
    """A module's file as messages show it, never absolute where it can be helped: a plate's from its folder's
    parent (toy/plate/page_code.py, as content files are shown), the engine's and platelib's from the repository
    (generator/page/notation.py, plates/lib/units.py), else from the current folder."""
    path = Path(path).resolve()
    for folder in path.parents:
        if (folder / "plate.md").is_file():
            return str(path.relative_to(folder.parent))
    for root in (Path(__file__).resolve().parents[2], Path.cwd().resolve()):
        if path.is_relative_to(root):
            return str(path.relative_to(root))
    return str(path)


def _where(path: Path, node: ast.AST | None = None) -> str:
    return f"{shown(path)}, line {getattr(node, 'lineno', 1)}"


def file_of(module_name: str) -> Path:
    """The source file of an importable module (a plate's package is in sys.modules once the engine loaded it)."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if path is None:
        spec = importlib.util.find_spec(module_name)
        path = spec.origin if spec else None
    if path is None or not path.endswith(".py"):
        raise CompileError(f"{module_name}: no Python source to compile for the page")
    return Path(path)


def _resolve(current: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute name of a `from … import` in module current."""
    if not node.level:
        return node.module or ""
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Checker(ast.NodeVisitor):
    """Refuses what the page cannot run as the build runs it, at the first offending line."""

    def __init__(self, path: Path, aliases: dict[str, str], bound: set[str] = frozenset()):
        self.path, self.aliases = path, aliases
        self.bound = set(bound)  # every name the module binds, anywhere (its imports, functions, locals)

    def visit_Module(self, node: ast.Module) -> None:
        for n in ast.walk(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(n.name)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.bound.add(n.id)
            elif isinstance(n, ast.arg):
                self.bound.add(n.arg)
        self.generic_visit(node)

    def fail(self, node: ast.AST, why: str) -> None:
        raise CompileError(f"{_where(self.path, node)}: {why} (the page runs this module compiled to JavaScript; "
                           f"see docs/plates.md, \"Python the page runs\")")

    def visit_Call(self, node: ast.Call) -> None:
        if node.keywords:
            self.fail(node, "a call with keyword arguments: pass them by position")
        func = node.func
        if isinstance(func, ast.Name) and func.id in REFUSED_CALLS and func.id not in self.bound:
            self.fail(node, f"{func.id}(): {REFUSED_CALLS[func.id]}")
        if isinstance(func, ast.Name) and func.id not in self.bound and func.id not in BUILTINS:
            self.fail(node, f"{func.id}(): the page has no such function (its built-ins: {', '.join(sorted(BUILTINS))}"
                            f"; or define or import it)")
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(func, ast.Attribute) and not (isinstance(root, ast.Name) and root.id in self.aliases):
            if func.attr in REFUSED_METHODS:
                self.fail(node, f".{func.attr}(): {REFUSED_METHODS[func.attr]}")
            if func.attr not in METHODS:
                self.fail(node, f".{func.attr}(): the page's texts, lists and dicts have no such method (they have "
                                f"those of pscript's library: {', '.join(sorted(METHODS))})")
            if func.attr == "split" and not node.args:
                self.fail(node, ".split() with no separator: the page splits at every blank, Python at runs of "
                                "them; name the separator")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in JS_RESERVED or _INTERNAL.match(node.id):
            self.fail(node, f"the name {node.id!r}: JavaScript reserves it, or the page's script uses it; "
                            f"choose another")
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        if node.arg in JS_RESERVED or _INTERNAL.match(node.arg):
            self.fail(node, f"the name {node.arg!r}: JavaScript reserves it, or the page's script uses it; "
                            f"choose another")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bytes):
            self.fail(node, "bytes: the page has texts only")
        if isinstance(node.value, complex):
            self.fail(node, "a complex number")
        if node.value is Ellipsis:
            self.fail(node, "`...`: return a value")

    def visit_Slice(self, node: ast.Slice) -> None:
        if node.step is not None:
            self.fail(node, "a slice with a step: make the list in a loop")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult):
            self.fail(node, "`@`: the page has no matrices")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name):
            native = self.aliases.get(node.value.id)
            names = NP_NAMES if native == "numpy" else MATH_NAMES if native == "math" else None
            if names is not None and node.attr not in names:
                self.fail(node, f"{node.value.id}.{node.attr}: the page's {native} has only "
                                f"{', '.join(sorted(names))}")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        if isinstance(node.target, ast.Tuple) and any(isinstance(e, (ast.Tuple, ast.List)) for e in node.target.elts):
            self.fail(node, "a nested tuple as a loop's target: unpack it in the loop's body")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name in JS_RESERVED or _INTERNAL.match(node.name):
            self.fail(node, f"the name {node.name!r}: JavaScript reserves it, or the page's script uses it; "
                            f"choose another")
        if node.decorator_list:
            self.fail(node, "a decorator")
        if node.args.kwonlyargs or node.args.vararg or node.args.kwarg or node.args.posonlyargs:
            self.fail(node, "a function with *args, **kwargs or keyword-only parameters")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (isinstance(right, ast.Constant) and right.value is None):
                self.fail(node, "`is` with anything but None: compare with ==")
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and (part.format_spec is not None or part.conversion != -1):
                self.fail(node, "a format spec or conversion in an f-string: write the number with the formatter "
                                "(generator.api)")
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        refused = {ast.GeneratorExp: "a generator expression: use a list comprehension",
                   ast.SetComp: "a set comprehension", ast.Set: "a set", ast.Starred: "a starred expression",
                   ast.Try: "try/except", ast.With: "a with block", ast.Global: "global", ast.Nonlocal: "nonlocal",
                   ast.ClassDef: "a class: use functions and dicts", ast.Yield: "yield", ast.YieldFrom: "yield",
                   ast.Await: "await", ast.AsyncFunctionDef: "an async function", ast.Delete: "del",
                   ast.Raise: "raise: return a value the caller tests", ast.Assert: "assert",
                   ast.Match: "match", ast.NamedExpr: "the walrus operator", ast.Import: "an import here",
                   ast.ImportFrom: "an import here", ast.DictComp: "a dict comprehension: fill the dict in a loop",
                   ast.Lambda: "a lambda: define a function"}
        for kind, why in refused.items():
            if type(node) is kind:
                self.fail(node, why)
        if isinstance(node, ast.Dict) and any(k is None for k in node.keys):
            self.fail(node, "a ** in a dict: build the dict key by key")
        super().generic_visit(node)


_PARSED: dict[tuple, str] = {}  # {(file, the source PScript reads, its options): PScript's JavaScript}
_PLANS: dict[tuple, tuple] = {}  # {(module, path, source): _module_plan's}: a rebuild compiles only what changed


def _module_plan(name: str, path: Path) -> tuple[ast.Module, list[tuple[str, list[str], ast.AST]], dict[str, str]]:
    """A module's tree, its imports of other page modules [(module, names, node)] and its native aliases (kept
    for its source: callers never change them)."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CompileError(f"{shown(path)}, line 1: cannot be read as Python: {error}") from None
    key = (name, str(path), source)
    if key not in _PLANS:
        if len(_PLANS) > 512:
            _PLANS.clear()
        _PLANS[key] = _plan(name, path, source)
    return _PLANS[key]


def _plan(name: str, path: Path, source: str) -> tuple[ast.Module, list, dict[str, str]]:
    """_module_plan's work: the source parsed and checked."""
    try:
        tree = ast.parse(source, str(path))
    except SyntaxError as error:
        raise CompileError(f"{shown(path)}, line {error.lineno or 1}: {error.msg}") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CompileError(f"{shown(path)}, line 1: cannot be read as Python: {error}") from None
    imports: list[tuple[str, list[str], ast.AST]] = []
    aliases: dict[str, str] = {}
    is_package = path.name == "__init__.py"
    body = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in NATIVE:
                    raise CompileError(f"{_where(path, node)}: import {alias.name}: a page module imports only math, "
                                       f"numpy and other page modules (`from … import names`)")
                aliases[alias.asname or alias.name] = alias.name
            continue
        if isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                continue
            target = _resolve(name, node, is_package)
            if target == API:
                imports += _from_api(path, node)
                continue
            if target in NATIVE_NAMES and any(a.asname for a in node.names):
                raise CompileError(f"{_where(path, node)}: the page's {NATIVE_NAMES[target]} is imported by its own "
                                   f"names: drop the `as`")
            if any(a.name == "*" for a in node.names):
                raise CompileError(f"{_where(path, node)}: `import *`: name what is imported")
            imports.append((target, [(a.name, a.asname or a.name) for a in node.names], node))
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        if not isinstance(node, (ast.FunctionDef, ast.Assign, ast.AnnAssign)):
            raise CompileError(f"{_where(path, node)}: a page module holds functions and constants only at its top "
                               f"level")
        body.append(node)
    tree.body = body
    _Checker(path, aliases, {a for _, names, _ in imports for _, a in names} | set(aliases)).visit(tree)
    return tree, imports, aliases


def _from_api(path: Path, node: ast.ImportFrom) -> list[tuple[str, list[tuple[str, str]], ast.AST]]:
    """A page module's `from generator.api import …` as imports from the modules those names come from: the page's
    formatter (notation.js) and its native digits (native.js); any other name of the API is the build's alone."""
    origins = api_origins()
    on_page = sorted(n for n, origin in origins.items() if origin in ENGINE or origin in NATIVE_NAMES)
    by_origin: dict[str, list[tuple[str, str]]] = {}
    for alias in node.names:
        origin = origins.get(alias.name)
        if alias.name == "*":
            raise CompileError(f"{_where(path, node)}: `import *`: name what is imported")
        if origin not in ENGINE and origin not in NATIVE_NAMES:
            what = "is not a name of generator.api" if origin is None else "is the build's, not the page's"
            raise CompileError(f"{_where(path, node)}: {alias.name} {what}: a page module imports from generator.api "
                               f"only {', '.join(on_page)}")
        if origin in NATIVE_NAMES and alias.asname:
            raise CompileError(f"{_where(path, node)}: the page's {NATIVE_NAMES[origin]} is imported by its own "
                               f"names: drop the `as` of {alias.name}")
        by_origin.setdefault(origin, []).append((alias.name, alias.asname or alias.name))
    return [(origin, names, node) for origin, names in by_origin.items()]


def _top_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names.append(node.target.id)
    return list(dict.fromkeys(names))


_DESTRUCTURED = re.compile(r"^(\s*var )(.*);$", re.M)


def _declared(match: re.Match) -> str:
    """PScript declares a loop's tuple target as `var [a, b], c;`, which JavaScript refuses: declare the names."""
    names = re.sub(r"\[([^\]]*)\]", r"\1", match[2])
    return f"{match[1]}{', '.join(dict.fromkeys(n.strip() for n in names.split(',') if n.strip()))};"


def _blanked(source: str, tree: ast.Module) -> str:
    """source with every top-level line outside tree's body blanked (imports): PScript's lines stay the file's."""
    lines = re.split("\r\n|\r|\n", source)  # the lines ast counts: not splitlines(), which also breaks at
    keep = set()                              # U+2028, U+0085, … inside a string
    for node in tree.body:
        keep.update(range(node.lineno - 1 - len(getattr(node, "decorator_list", [])), node.end_lineno))
    return "\n".join(line if i in keep else "" for i, line in enumerate(lines)).rstrip("\n") + "\n"


_LOADED = re.compile(r"^plate_[0-9a-f]{16}\b")  # the name generator/plate/plates.py loads a plate's package under


def _const(module: str) -> str:
    return "py_" + re.sub(r"\W", "_", _LOADED.sub("plate", module))


class _Compiler:
    """Compiles modules in import order, each to a closure over the names it imports."""

    def __init__(self, shared: dict[str, str], wanted: dict[str, set[str]] | None = None):
        self.shared = shared  # {module: page module}: compiled apart, imported by name
        self.wanted = wanted  # {module: its top-level names the page reaches}; None: every name
        self.done: dict[str, str] = {}
        self.exports: dict[str, list[str]] = {}
        self.natives: set[str] = set()
        self.named: dict[str, set[str]] = {}  # {page module: names imported from it}
        self.visiting: list[str] = []

    def compile(self, name: str) -> None:
        if name in self.done:
            return
        if name in self.visiting:
            raise CompileError(f"{shown(file_of(name))}, line 1: imports itself through {' -> '.join(self.visiting + [name])}")
        self.visiting.append(name)
        path = file_of(name)
        tree, imports, aliases = _module_plan(name, path)
        if self.wanted is not None:  # what no role reaches is left out of the page (the build still runs it all)
            tree = ast.Module(body=[node for node in tree.body if set(_names_of(node)) & self.wanted.get(name, set())],
                              type_ignores=[])  # a tree of its own: _module_plan's are kept
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            imports = [(target, [(n, a) for n, a in names if a in used], node) for target, names, node in imports]
            imports = [(target, names, node) for target, names, node in imports if names]
        self.natives |= {NATIVE[m][1] for m in aliases.values()}
        lines = [f"// {_LOADED.sub('plate', name)}: {path.name}"]
        for target, names, node in imports:
            if target in NATIVE_NAMES or target in self.shared:
                if target in self.shared:
                    missing = [n for n, _ in names if n not in public_names(target)]
                    if missing:
                        raise CompileError(f"{_where(path, node)}: {target} has no page-compiled {', '.join(missing)}")
                page_module = NATIVE_NAMES.get(target) or self.shared[target]
                self.named.setdefault(page_module, set()).update(n for n, _ in names)
                continue
            self.compile(target)
            missing = [n for n, _ in names if n not in self.exports[target]]
            if missing:
                raise CompileError(f"{_where(path, node)}: {target} has no page-compiled {', '.join(missing)}")
            pairs = ", ".join(n if n == a else f"{n}: {a}" for n, a in names)
            lines.append(f"const {{ {pairs} }} = {_const(target)};")
        texts = frozenset(a for target, names, _ in imports if target == "generator.page.notation" for _, a in names)
        imported = frozenset(a for _, names, _ in imports for _, a in names)
        blanked = _blanked(path.read_text(encoding="utf-8"), tree)
        key = (str(path), blanked, texts, tuple(sorted(aliases.items())), imported)
        if key not in _PARSED:
            if len(_PARSED) > 256:
                _PARSED.clear()
            parser = _Parser(blanked, pysource=(str(path), 1), inline_stdlib=False, docstrings=False, texts=texts,
                             aliases=aliases, imported=imported)
            _PARSED[key] = parser.dump()
        names = _top_names(tree)
        lines.append(_lean(_KEYS_IF_DICT.sub(r"\1 = _pyseq(\1);", _DESTRUCTURED.sub(_declared, _PARSED[key]))).strip())
        lines.append(f"return {{ {', '.join(names)} }};")
        # indented: a module's own names are the closure's, never the page script's top level (jsmodules' join
        # refuses a name two modules declare there, and a shared library may name what notation.js names)
        body = textwrap.indent("\n".join(lines), "  ")
        self.done[name] = f"const {_const(name)} = (() => {{\n" + body + "\n})();\n"
        self.exports[name] = names
        self.visiting.pop()


def public_names(module: str) -> list[str]:
    """The top-level names of a page module that do not start with an underscore: what its own page module exports."""
    tree, _, _ = _module_plan(module, file_of(module))
    return [n for n in _top_names(tree) if not n.startswith("_")]


# What the page's numpy and math give numbers for, whatever they are given (templates/page/np.js), and what math
# gives floats for (math.floor and math.ceil give ints)
_NUMBER_FUNCTIONS = frozenset({"ceil", "floor", "log2", "log10", "sqrt", "exp", "log", "fabs", "abs", "maximum",
                               "minimum", "float64"})
_FLOAT_FUNCTIONS = frozenset({"log2", "log10", "sqrt", "exp", "log", "fabs"})
_NUMBER_CONSTANTS = frozenset({"pi", "inf", "nan"})


def _children(node):
    """The commonast nodes directly under node."""
    for name in type(node).__slots__:
        value = getattr(node, name, None)
        for child in (value if name.endswith("_nodes") and value else [value] if name.endswith("_node") else []):
            if isinstance(child, pscript.commonast.Node):
                yield child


def _walk(node, into_functions=True):
    """node and every node under it (not under a function or lambda, node itself too, unless into_functions)."""
    yield node
    if into_functions or not isinstance(node, (pscript.commonast.FunctionDef, pscript.commonast.Lambda)):
        for child in _children(node):
            yield from _walk(child, into_functions)


def _meet(*kinds):
    """The kind all of kinds are: "float", "number" (an int or a float) or None (not known to be a number)."""
    return None if None in kinds else "float" if all(k == "float" for k in kinds) else "number"


def _binop_kind(op, left, right):
    """The kind of left op right in Python, given its operands' kinds (_meet's): a number plus anything Python adds
    to it is a number, an int times a list or text is not, text % is formatting, and a float with a number gives a
    float."""
    ops = pscript.commonast.Node.OPS
    if op == ops.Div:
        return "float"
    if op in (ops.LShift, ops.RShift, ops.BitOr, ops.BitXor, ops.BitAnd):
        return "number"
    if op == ops.Mod and left is None:
        return None
    if "float" in (left, right) and op in (ops.Add, ops.Sub, ops.Mult, ops.Mod, ops.FloorDiv, ops.Pow):
        return "float"
    if op in (ops.Sub, ops.FloorDiv, ops.Pow, ops.Mod):
        return "number"
    if op == ops.Add:
        return "number" if left or right else None
    return "number" if op == ops.Mult and left and right else None


class _Numbers:
    """Which expressions are numbers, and which floats, whenever Python computes them: by their form, and for a name,
    by every binding of it in its scope (a module's constants, a function's locals), each name taken as a float until
    a binding says less (so `total = 0.0; total += x` is a float, and `n = 0; n += 1` a number). A function's
    parameters are not known."""

    def __init__(self, module, aliases: dict[str, str], imported: frozenset):
        ca = pscript.commonast
        self.aliases = aliases
        # a comprehension's target hides a name of the same scope in its element: never taken as a number
        self.hidden = {n.name for c in _walk(module) if isinstance(c, ca.Comprehension)
                       for n in _walk(c.target_node) if isinstance(n, ca.Name)}
        self.stack = []  # per scope: ({name: its kind, the enclosing scopes' too}, every name it binds)
        self._push(list(self._bindings(module.body_nodes)), {}, imported)

    def kind(self, node, env=None):
        """node's kind (_meet's), env: {name: kind} of the scope."""
        ca = pscript.commonast
        env = self.stack[-1][0] if env is None else env
        if isinstance(node, ca.Num):
            return None if isinstance(node.value, bool) else "float" if isinstance(node.value, float) else "number"
        if isinstance(node, ca.Name):
            return env.get(node.name)
        if isinstance(node, ca.UnaryOp):
            return None if node.op == node.OPS.Not else self.kind(node.right_node, env) or "number"
        if isinstance(node, ca.BinOp):
            return _binop_kind(node.op, self.kind(node.left_node, env), self.kind(node.right_node, env))
        if isinstance(node, ca.IfExp):
            return _meet(self.kind(node.body_node, env), self.kind(node.else_node, env))
        if isinstance(node, ca.Attribute):
            known = isinstance(node.value_node, ca.Name) and node.value_node.name in self.aliases
            return "float" if known and node.attr in _NUMBER_CONSTANTS else None
        if isinstance(node, ca.Call) and not node.kwarg_nodes:
            func, args = node.func_node, node.arg_nodes
            if isinstance(func, ca.Name) and all(func.name not in bound for _, bound in self.stack):
                if func.name in ("float", "int", "len"):
                    return "float" if func.name == "float" else "number"
                if func.name == "abs" and len(args) == 1:
                    return self.kind(args[0], env) or "number"
                if func.name in ("min", "max") and len(args) > 1:
                    return _meet(*(self.kind(a, env) for a in args))
            if isinstance(func, ca.Attribute) and isinstance(func.value_node, ca.Name) and \
                    func.value_node.name in self.aliases:
                if self.aliases[func.value_node.name] == "math" and func.attr in _FLOAT_FUNCTIONS:
                    return "float"
                if func.attr in _NUMBER_FUNCTIONS:
                    return "number"
                if func.attr == "where" and len(args) == 3:
                    return _meet(self.kind(args[1], env), self.kind(args[2], env))
        return None

    def _bindings(self, statements):
        """(name, how, value) of each name the statements bind in their scope (not in the functions they define,
        which bind their own): how is "=" (value given), an operator (op=, value its operand), "range" (a loop
        over a range) or None (anything else: a function, a loop over a sequence, an unpacked target)."""
        ca = pscript.commonast
        for n in (m for statement in statements for m in _walk(statement, into_functions=False)):
            if isinstance(n, ca.FunctionDef):
                yield n.name, None, None
            elif isinstance(n, ca.Assign):
                for target in n.target_nodes:
                    if isinstance(target, ca.Name):
                        yield target.name, "=", n.value_node
                    elif not isinstance(target, (ca.Subscript, ca.Attribute)):
                        yield from ((m.name, None, None) for m in _walk(target) if isinstance(m, ca.Name))
            elif isinstance(n, ca.AugAssign) and isinstance(n.target_node, ca.Name):
                yield n.target_node.name, n.op, n.value_node
            elif isinstance(n, ca.For):
                ranged = isinstance(n.iter_node, ca.Call) and isinstance(n.iter_node.func_node, ca.Name) and \
                    n.iter_node.func_node.name == "range"
                if isinstance(n.target_node, ca.Name) and ranged:
                    yield n.target_node.name, "range", None
                else:
                    yield from ((m.name, None, None) for m in _walk(n.target_node) if isinstance(m, ca.Name))

    def _push(self, bindings, outer: dict, also_bound=frozenset()) -> None:
        """A scope's kinds: each name it binds a float at first, lowered to what each binding gives it, until none
        lowers; the names it does not bind as the enclosing scope has them."""
        bound = {name for name, _, _ in bindings}
        env = {**{n: k for n, k in outer.items() if n not in bound}, **{n: "float" for n in bound - self.hidden}}
        self.stack.append((env, bound | also_bound))  # builtins a scope binds are not the builtins
        changed = True
        while changed:
            changed = False
            for name, how, value in bindings:
                if env.get(name) is None:
                    continue
                given = None if how is None else "number" if how == "range" else \
                    self.kind(value, env) if how == "=" else _binop_kind(how, env[name], self.kind(value, env))
                lower = _meet(env[name], given)
                if lower != env[name]:
                    env[name] = lower
                    changed = True
        for name in [n for n, k in env.items() if k is None]:
            del env[name]

    def enter(self, function) -> None:
        """A function's scope: its parameters are not known to be numbers (a caller may give anything)."""
        ca = pscript.commonast
        params = [a.name for a in function.arg_nodes + function.kwarg_nodes] + \
            [a.name for a in (function.args_node, function.kwargs_node) if a is not None]
        body = function.body_nodes if isinstance(function, ca.FunctionDef) else [function.body_node]
        self._push([(name, None, None) for name in params] + list(self._bindings(body)), self.stack[-1][0])

    def leave(self) -> None:
        self.stack.pop()


_TEXT_METHODS = frozenset({"replace", "join", "lower", "upper", "strip", "rstrip", "lstrip"})  # str's, giving str


class _Parser(pscript.Parser):
    """PScript, writing JavaScript's own operator where an operand settles what Python's means (the page's script is
    smaller and faster for it): == with a text or number literal, * with a float literal or of two numbers, + with a
    text or a number, a number's truth as it is (_Numbers: which names hold numbers); `texts` names the functions
    that give text (the formatter's), `aliases` the module's math and numpy, `imported` the names it imports."""

    def __init__(self, *args, texts=frozenset(), aliases=None, imported=frozenset(), **kwargs):
        self._texts = texts
        self._aliases = aliases or {}
        self._imported = imported
        super().__init__(*args, **kwargs)

    def parse_Module(self, node):
        self._numbers = _Numbers(node, self._aliases, self._imported)
        return super().parse_Module(node)

    def parse_FunctionDef(self, node, lambda_=False, asyn=False):
        self._numbers.enter(node)
        try:
            return super().parse_FunctionDef(node, lambda_, asyn)
        finally:
            self._numbers.leave()

    def _wrap_truthy(self, node):
        if self._numbers.kind(node):  # PScript's truthy() gives a number back as it is
            return pscript.parser1.unify(self.parse(node))
        return super()._wrap_truthy(node)

    def parse_AugAssign(self, node):
        ops = node.OPS
        kind = self._numbers.kind
        if node.op in (ops.Add, ops.Mult) and kind(node.target_node) and \
                _binop_kind(node.op, kind(node.target_node), kind(node.value_node)):
            op = " += " if node.op == ops.Add else " *= "
            return [self.lf(), "".join(self.parse(node.target_node)), op, "".join(self.parse(node.value_node)), ";"]
        return super().parse_AugAssign(node)

    def parse_Subscript(self, node):
        """x[-k] as PScript writes it, x[x.length -k], but for an x that is not a name: computed once."""
        ca = pscript.commonast
        negative = isinstance(node.slice_node, ca.UnaryOp) and node.slice_node.op == node.OPS.USub or \
            isinstance(node.slice_node, ca.Num) and node.slice_node.value < 0
        if negative and not isinstance(node.value_node, ca.Name):
            value = pscript.parser1.unify(self.parse(node.value_node))
            return ["((_pylast) => _pylast[_pylast.length + ", "".join(self.parse(node.slice_node)), "])(", value, ")"]
        return super().parse_Subscript(node)

    def _is_text(self, node) -> bool:
        """Whether node is text in Python whatever the values: a text literal, an f-string, str() or a function
        that gives text, a str method that gives text, or a sum with text in it."""
        ca = pscript.commonast
        if isinstance(node, (ca.Str, ca.JoinedStr)):
            return True
        if isinstance(node, ca.Call):
            func = node.func_node
            if isinstance(func, ca.Name):
                return func.name == "str" or func.name in self._texts
            return isinstance(func, ca.Attribute) and func.attr in _TEXT_METHODS and self._is_text(func.value_node)
        if isinstance(node, ca.BinOp) and node.op == node.OPS.Add:
            return self._is_text(node.left_node) or self._is_text(node.right_node)
        return False

    def use_std_method(self, base, name, arg_nodes):
        """A str or list method JavaScript has under another name, called as such where its arguments say it means
        the same (PScript's library function otherwise)."""
        ca = pscript.commonast
        args = [(a if isinstance(a, str) else pscript.parser1.unify(self.parse(a))) for a in arg_nodes]
        renamed = {("append", 1): "push", ("find", 1): "indexOf", ("lower", 0): "toLowerCase",
                   ("upper", 0): "toUpperCase", ("startswith", 1): "startsWith"}.get((name, len(args)))
        if renamed:  # only a list appends; only text has find, lower, upper and startswith
            return f"({base}).{renamed}({', '.join(args)})"
        if name == "join" and len(args) == 1:  # sep.join(texts): the list's join
            return f"({args[0]}).join({base})"
        if name == "replace" and len(args) == 2 and isinstance(arg_nodes[0], ca.Str) and arg_nodes[0].value:
            return f"({base}).split({args[0]}).join({args[1]})"  # every occurrence of a text that is not empty
        return super().use_std_method(base, name, arg_nodes)

    def parse_Compare(self, node):
        ca = pscript.commonast
        literal = (ca.Str, ca.Num)
        if node.op in (node.COMP.Eq, node.COMP.NotEq) and (isinstance(node.left_node, literal) or
                                                           isinstance(node.right_node, literal)):
            # Python's == of a text or number literal and anything else but a bool is JavaScript's ===
            op = " === " if node.op == node.COMP.Eq else " !== "
            return [pscript.parser1.unify(self.parse(node.left_node)), op,
                    pscript.parser1.unify(self.parse(node.right_node))]
        return super().parse_Compare(node)

    def parse_BinOp(self, node):
        ca = pscript.commonast

        def is_float(n):
            return isinstance(n, ca.Num) and isinstance(n.value, float)
        kind = self._numbers.kind
        plain = ((node.op == node.OPS.Mult and (is_float(node.left_node) or is_float(node.right_node))) or
                 # a float times what Python multiplies is a number (a list or text times a float is a TypeError)
                 (node.op == node.OPS.Add and (self._is_text(node.left_node) or self._is_text(node.right_node))) or
                 # text plus what Python adds to it is text
                 (node.op in (node.OPS.Add, node.OPS.Mult) and (kind(node.left_node) or kind(node.right_node)) and
                  _binop_kind(node.op, kind(node.left_node), kind(node.right_node))))
        # a number plus what Python adds to it is a number; a float times anything Python multiplies, or a number
        # times a number
        if plain:
            op = " * " if node.op == node.OPS.Mult else " + "
            return [pscript.parser1.unify(self.parse(node.left_node)), op,
                    pscript.parser1.unify(self.parse(node.right_node))]
        return super().parse_BinOp(node)


# PScript's loop over a sequence, which iterates a dict's keys (_pyseq) and the sequence by index: one for…of says
# the same (a list grown in the loop is walked to its new end either way; a text walks by characters, as Python's).
_SEQ_LOOP = re.compile(r"^(?P<indent>[ \t]*)(?P<seq>stub\d+_seq) = (?P<expr>[^\n]*);\n[ \t]*(?P=seq) = _pyseq\((?P=seq)\);\n"
                       r"[ \t]*for \((?P<itr>stub\d+_itr) = 0; (?P=itr) < (?P=seq)\.length; (?P=itr) \+= 1\) \{\n"
                       r"[ \t]*(?P<target>\w+) = (?P=seq)\[(?P=itr)\];\n", re.M)


# … and a loop over zip(a, b) of two names (or their items), unpacked at once, as a walk by index (no pair made per step)
_ZIP_LOOP = re.compile(r'^(?P<indent>[ \t]*)for \((?P<t>stub\d+_tgt) of _pyseq\(_pyfunc_zip\((?P<a>[\w.\[\]"]+), (?P<b>[\w.\[\]"]+)\)\)\) '
                       r"\{\n(?P<inner>[ \t]*)(?P<x>\w+) = (?P=t)\[0\]; (?P<y>\w+) = (?P=t)\[1\];\n", re.M)


def _zip_walk(m: re.Match) -> str:
    t = m["t"]
    return (f"{m['indent']}for (let {t} = 0, {t}a = _pyseq({m['a']}), {t}b = _pyseq({m['b']}); "
            f"{t} < {t}a.length && {t} < {t}b.length; {t} += 1) {{\n"
            f"{m['inner']}{m['x']} = {t}a[{t}]; {m['y']} = {t}b[{t}];\n")


def _lean(code: str) -> str:
    """PScript's output with its loops over sequences as for…of, and over zip(a, b) by index, where written the one
    way PScript writes them (anything else is left as it is)."""
    code = _SEQ_LOOP.sub(lambda m: f"{m['indent']}for ({m['target']} of _pyseq({m['expr']})) {{\n", code)
    return _ZIP_LOOP.sub(_zip_walk, code)


_HANDS_OFF = re.compile(r"^[ \t]*if \(this\.constructor !== (?:String|Object)\) return this\.\w+\.apply\(this, arguments\);\n",
                        re.M)
# Shorter or faster equivalents of PScript's functions, each doing what the one it replaces does
_LEAN = {
    "op_equals": """function e(a, b) {
    if (a == null || b == null || typeof a !== "object") return a == b;
    if (Array.isArray(a) && Array.isArray(b)) return a.length == b.length && a.every((x, i) => e(x, b[i]));
    if (a.constructor !== Object || b.constructor !== Object) return a == b;
    var k = Object.keys(a).sort();
    return e(k, Object.keys(b).sort()) && k.every((x) => e(a[x], b[x]));
}""",
    "op_contains": """function (a, b) {
    if (Array.isArray(b)) return b.some((x) => _pyfunc_op_equals(a, x));
    if (b != null && b.constructor === Object) return Object.keys(b).some((k) => a == k);
    if (b != null && b.constructor == String) return b.indexOf(a) >= 0;
    var e = Error("Not a container: " + b); e.name = "TypeError"; throw e;
}""",
    # a list repeated in one pass (PScript's copies the list made so far at each repeat: quadratic in the count; a
    # model's 126 layers were a fifth of XIV.4's facts)
    "op_mult": """function (a, b) {
    if ((typeof a === "number") + (typeof b === "number") === 1) {
        if (a.constructor === String) return _pymeth_repeat.call(a, b);
        if (b.constructor === String) return _pymeth_repeat.call(b, a);
        if (Array.isArray(b)) {var t=a; a=b; b=t;}
        if (Array.isArray(a)) {
            var res = []; for (var i=0; i<b; i++) for (var j=0; j<a.length; j++) res.push(a[j]);
            return res;
        }
    } return a * b;
}""",
}
_LEAN_LIBRARY = re.compile(r"^(var _pyfunc_(" + "|".join(_LEAN) + r") = )function[^\n]*\n(?:(?!var _py)[^\n]*\n)*?\};\n", re.M)


LIBRARY = "pscript.js"  # the part of PScript's library the page's compiled modules use, one copy for them all
_LIBRARY_NAME = re.compile(r"\b_py(func|meth)_(\w+)")


def library(modules: dict[str, str]) -> str:
    """LIBRARY's text: each function of PScript's library that a module of modules (compiled ones) names, and those
    they call, exported."""
    found: dict[str, set[str]] = {"func": set(), "meth": set()}
    texts = [text for name, text in modules.items() if name != LIBRARY]
    while True:
        for text in texts:
            for kind, name in _LIBRARY_NAME.findall(text):
                found[kind].add(name)
        code = stdlib.get_partial_std_lib(sorted(found["func"]), sorted(found["meth"]), 0)
        if all(name in found[kind] for kind, name in _LIBRARY_NAME.findall(code)):
            break
        texts = [code]
    # sum([]) is 0 in Python; PScript's reduce without a start throws on an empty list
    code = code.replace("return x.reduce(function(a, b) {return a + b;});",
                        "return x.reduce(function(a, b) {return a + b;}, 0);")
    # the page's Python has no classes: a str or dict method never hands off to an object's own method of its name
    code = _HANDS_OFF.sub("", code)
    code = _LEAN_LIBRARY.sub(lambda m: m[1] + _LEAN[m[2]] + ";\n", code)
    head = "// PScript's library, the part the page's compiled Python uses (generator/page/compiler.py)."
    return head + "\n" + re.sub(r"^var (?=_py)", "export var ", code, flags=re.M) + "\n"


# PScript writes, before every loop, "iterating a dict iterates its keys" out in full; one helper says it once (the
# page's script was over its gzip budget with it written out a hundred times).
_KEYS_IF_DICT = re.compile(r'if \(\(typeof (\w+) === "object"\) && \(!Array\.isArray\(\1\)\)\) ?\{ ?\1 = Object\.keys\(\1\);\}')
_SEQ = 'const _pyseq = (x) => (typeof x === "object" && !Array.isArray(x) ? Object.keys(x) : x);'


def _file(compiler: _Compiler, file: str, source: str, exports: dict[str, str]) -> str:
    """One ES module of the compiled modules, in one closure (so that no name of theirs meets another page module's
    in the scope jsmodules.concatenate joins them in), with exports ({name: the expression it is in the closure});
    it imports PScript's library from LIBRARY."""
    holder = "py_" + re.sub(r"\W", "_", file)  # py_notation_js: the one top-level name besides the exports
    inside = "\n".join([*([_SEQ] if any("_pyseq(" in t for t in compiler.done.values()) else []),
                         *compiler.done.values(),
                         f"return {{ {', '.join(f'{name}: {value}' for name, value in exports.items())} }};"])
    head = [f"// {source}, compiled for the page by generator/page/compiler.py with PScript: edit the Python."]
    if compiler.natives:
        head.append(f"import {{ {', '.join(sorted(compiler.natives))} }} from \"./np.js\";")
    head += [f"import {{ {', '.join(sorted(names))} }} from \"./{js}\";"
             for js, names in sorted(compiler.named.items())]
    used = sorted({f"_py{kind}_{name}" for kind, name in _LIBRARY_NAME.findall(inside)})
    if used:
        head.append(f"import {{ {', '.join(used)} }} from \"./{LIBRARY}\";")
    # indented: jsmodules reads a declaration at a line's start as the joined scope's
    body = [f"const {holder} = (() => {{", re.sub(r"^(?=.)", "  ", inside, flags=re.M), "})();"]
    tail = [f"export const {name} = {holder}.{name};" for name in exports]
    return "\n".join(head + body + tail) + "\n"


FILE = "py.page.js"  # the one module the compiled Python makes in the page's bundle


def _names_of(node: ast.AST) -> list[str]:
    """The top-level names a statement of a page module defines."""
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):  # a, b = 1, 2 defines both
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def reachable(roots: list[tuple[str, str]], shared: dict[str, str]) -> dict[str, set[str]]:
    """{module: its top-level names} that the (module, name) roots reach through the names their code reads, in
    their own modules and through imports: what the page runs (the rest would be dead weight in its script)."""
    wanted: dict[str, set[str]] = {}
    plans: dict[str, tuple] = {}
    stack = list(roots)
    while stack:
        module, name = stack.pop()
        if module in NATIVE_NAMES or module in shared or name in wanted.get(module, set()):
            continue
        if module not in plans:
            plans[module] = _module_plan(module, file_of(module))
        tree, imports, _ = plans[module]
        imported = {alias: (target, orig) for target, names, _ in imports for orig, alias in names}
        defined = {n: node for node in tree.body for n in _names_of(node)}
        if name not in defined:
            if name in imported:
                stack.append(imported[name])
            continue
        wanted.setdefault(module, set()).add(name)
        for ref in {n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name)}:
            if ref in defined:
                stack.append((module, ref))
            elif ref in imported:
                stack.append(imported[ref])
    return wanted


def compile_page(entries: dict[str, object]) -> Compiled:
    """One ES module, FILE, that exports page_<role> for each of entries ({role: a Python function}), with what
    they reach of the modules they import (but the engine's, which it imports from their page modules) and the part
    of PScript's library they use, and page_<role> = null for each optional role (plates.PAGE_OPTIONAL) entries lacks (the engine's page
    modules test for it); CompileError at file:line for Python the page cannot run."""
    compiler = _Compiler(ENGINE, reachable([(f.__module__, f.__name__) for f in entries.values()], ENGINE))
    exported = {}
    for role, function in entries.items():
        module = function.__module__
        compiler.compile(module)
        if function.__name__ not in compiler.exports[module]:
            raise CompileError(f"{shown(file_of(module))}, line 1: {function.__name__} is not a top-level function of "
                               f"the module")
        exported[f"page_{role}"] = f"{_const(module)}.{function.__name__}"
    exported.update({f"page_{role}": "null" for role in PAGE_OPTIONAL if role not in entries})
    modules = {FILE: _file(compiler, FILE, "The plate's Python", exported)}
    return Compiled({**modules, LIBRARY: library(modules)}, {role: f"page_{role}" for role in entries})


_ENGINE_MADE: dict[tuple, dict[str, str]] = {}  # {the sources and names asked for: the page modules}


def compile_engine(used: dict[str, set[str]] | None = None) -> dict[str, str]:
    """{page module: ES module} of the engine's Python the page runs (ENGINE), as the page's notation.js and
    references.js: each exporting its module's public names, or, given used ({page module: names its importers
    take}), those names and carrying only what they reach (a page needs few of the formatter's functions)."""
    key = (tuple((name, file_of(name).read_text(encoding="utf-8")) for name in ENGINE),
           None if used is None else tuple(sorted((m, tuple(sorted(n))) for m, n in used.items())))
    if key not in _ENGINE_MADE:
        made = {}
        for name, page_module in ENGINE.items():
            names = public_names(name) if used is None else \
                [n for n in public_names(name) if n in used.get(page_module, set())]
            shared = {n: m for n, m in ENGINE.items() if n != name}
            compiler = _Compiler(shared, None if used is None else reachable([(name, n) for n in names], shared))
            compiler.compile(name)
            exports = {n: f"{_const(name)}.{n}" for n in names}
            made[page_module] = _file(compiler, page_module, shown(file_of(name)), exports)
        made[LIBRARY] = library(made)
        if len(_ENGINE_MADE) > 8:
            _ENGINE_MADE.clear()
        _ENGINE_MADE[key] = made
    return dict(_ENGINE_MADE[key])
