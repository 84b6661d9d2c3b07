"""The page script's ES modules (templates/page/, one concern each) as the one script the page runs. esbuild bundles
them (runtime.bundle_page); without node's packages, concatenate() joins them in import order, each module's import
lines and `export ` keywords removed, which gives the same program as long as no two modules declare the same
top-level name and no import cycle exists: both are refused, on either path, so the two pages never differ."""
from __future__ import annotations

import re
from pathlib import Path

ENTRY = "main.js"
# The only forms the modules use, and all that concatenate() honours: named imports of sibling modules, and
# `export` before a top-level declaration. Any other import or export is refused, never dropped silently.
IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+)";[ \t]*(?:\n|$)', re.M)
EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?(?:function|const|let|var|class)\b)", re.M)
DECLARED = re.compile(r"^(?:export\s+)?(?:async\s+)?(?:function\s*\*?|const|let|var|class)\s*([A-Za-z_$][\w$]*)",
                      re.M)
EXPORTED = re.compile(r"^export\s+(?:async\s+)?(?:function\s*\*?|const|let|var|class)\s*([A-Za-z_$][\w$]*)", re.M)
OTHER = re.compile(r"^(?:import|export)\b", re.M)


class ModuleError(Exception):
    """The page script's modules cannot be joined: the message names file:line."""


def read(folder: Path) -> dict[str, str]:
    """Every module in folder, {file name: text}, by name."""
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.js"))}


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _imports(name: str, text: str, where: str) -> list[tuple[str, list[str], int]]:
    """(module, names, line) for each import of a module, in order; anything else that imports or exports fails."""
    found = [(match[2], [n.strip() for n in match[1].split(",") if n.strip()], _line(text, match.start()))
             for match in IMPORT.finditer(text)]
    rest = EXPORT.sub("", IMPORT.sub(lambda m: "\n" * m[0].count("\n"), text))
    match = OTHER.search(rest)
    if match:
        raise ModuleError(f"{where}/{name}:{_line(rest, match.start())}: only `import {{ names }} from "
                          f"\"./module.js\";` and `export` before a top-level declaration can be joined without "
                          f"esbuild")
    return found


def order(modules: dict[str, str], entry: str = ENTRY, where: str = "templates/page") -> list[str]:
    """The modules entry reaches, each after those it imports (the order ES modules run in); an import cycle or a
    missing module or name fails, naming file:line."""
    done: list[str] = []
    path: list[str] = []
    exports = {name: set(EXPORTED.findall(text)) for name, text in modules.items()}

    def visit(name: str) -> None:
        path.append(name)
        for target, names, line in _imports(name, modules[name], where):
            if target not in modules:
                raise ModuleError(f"{where}/{name}:{line}: imports ./{target}, which is not in {where}")
            if target in path:
                cycle = " -> ".join(path[path.index(target):] + [target])
                raise ModuleError(f"{where}/{name}:{line}: import cycle {cycle}; the modules must import one another "
                                  f"in one direction")
            missing = [n for n in names if n not in exports[target]]
            if missing:
                raise ModuleError(f"{where}/{name}:{line}: ./{target} exports no {', '.join(missing)}")
            if target not in done:
                visit(target)
        path.pop()
        done.append(name)

    if entry not in modules:
        raise ModuleError(f"{where}/{entry}: the page script's entry is missing")
    visit(entry)
    return done


def concatenate(modules: dict[str, str], entry: str = ENTRY, where: str = "templates/page") -> str:
    """The modules as one script: in import order, import lines and `export ` keywords removed. Refused (ModuleError)
    when two modules declare the same top-level name, which the bundler would rename but one scope cannot hold."""
    names = order(modules, entry, where)
    declared: dict[str, str] = {}
    for name in names:
        text = modules[name]
        for match in DECLARED.finditer(text):
            here = f"{where}/{name}:{_line(text, match.start())}"
            if match[1] in declared:
                raise ModuleError(f"{here}: `{match[1]}` is declared at the top level of {declared[match[1]]} too; "
                                  f"the modules share one scope when joined without esbuild: rename one")
            declared[match[1]] = here
    return "\n".join(EXPORT.sub("", IMPORT.sub("", modules[name])) for name in names)
