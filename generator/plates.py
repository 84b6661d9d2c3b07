"""Find and load a plate's module: the `plate/` package beside its content, loaded by path (docs/plates.md)."""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from .schema import Problems

PACKAGE = "plate"  # the plate module's folder in a plate's folder: a Python package
PAGE = "page"  # its page modules (ES modules), bundled with the engine's templates/page/
# The hooks a plate module declares (docs/plates.md says what each is given and returns).
REQUIRED = ("DEFAULT_SCHEMA", "DEFAULT_OPTIONAL", "Selection", "load_presets", "check_content", "model_of",
            "check_model", "PROSE_NAMES", "prose_names", "SLOT_TABLES", "SLOT_ROOTS", "SLOT_CALLS", "scenario_ids",
            "unused", "figures", "csv_text", "page", "select_choices", "FIGURES", "facts_data", "words_context")
_LOADED: dict[str, object] = {}


def code_of(package: Path) -> list[tuple[str, bytes]]:
    """(relative name, bytes) of every Python file of a plate package, in a stable order."""
    return [(p.relative_to(package).as_posix(), p.read_bytes()) for p in sorted(package.rglob("*.py"))
            if "__pycache__" not in p.parts]


def load(package: Path):
    """The plate package at this folder, imported once per distinct code: two copies of the same files (a test's
    copy of a plate) are one module, so their dataclasses compare equal."""
    package = Path(package).resolve()
    digest = hashlib.sha256(repr(code_of(package)).encode()).hexdigest()[:16]
    name = f"plate_{digest}"
    if name not in _LOADED:
        spec = importlib.util.spec_from_file_location(name, package / "__init__.py",
                                                      submodule_search_locations=[str(package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        module.FOLDER = package.parent  # where its page modules are found (PAGE)
        module.CODE = digest  # what the build cache keys the plate's products by, besides the engine's code
        _LOADED[name] = module
    return _LOADED[name]


def module_of(problems: Problems, root: Path):
    """The plate module of the content folder root, or a ContentError naming what is missing."""
    package = Path(root) / PACKAGE
    if not (package / "__init__.py").is_file():
        problems.add(package, None, f"no plate module: a plate's folder holds its content and a Python package "
                                    f"{PACKAGE}/ (an __init__.py declaring the plate; see docs/plates.md)")
        problems.raise_if_any()
    module = load(package)
    missing = [name for name in REQUIRED if not hasattr(module, name)]
    if missing:
        problems.add(package / "__init__.py", None, f"the plate module lacks {', '.join(missing)} (see docs/plates.md)")
        problems.raise_if_any()
    return module


def page_folders(module) -> list[Path]:
    """Where a plate's page modules are: its own page/ folder (bundled after the engine's)."""
    return [module.FOLDER / PAGE]
