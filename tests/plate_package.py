"""A plate's checked content and package, loaded as the engine loads them (generator/source/content.py,
generator/plate/plates.py): what each plate's test support (tests/plates/*/*_support.py) builds on."""
from __future__ import annotations

import dataclasses
import importlib
from functools import cache
from pathlib import Path
from types import SimpleNamespace

from generator.source import content


def plate_package(folder: Path) -> SimpleNamespace:
    """loaded(), module(), submodule(name), presets(), default_ids() and facts(**choice) of the plate in folder."""
    @cache
    def loaded():
        """The plate's checked content (its presets and the series catalogue, as plain data)."""
        return content.load(folder)

    def module():
        return loaded().module

    def submodule(name: str):
        """A module of the plate package by its file's name."""
        return importlib.import_module(f"{module().__name__}.{name}")

    def presets() -> dict:
        return loaded().presets

    def default_ids() -> dict:
        return dataclasses.asdict(loaded().plate.default)

    def facts(**choice) -> dict:
        """The facts of the default with some controls chosen otherwise, as the page computes them."""
        return submodule("page_facts").facts({**default_ids(), **choice}, presets())

    return SimpleNamespace(loaded=loaded, module=module, submodule=submodule, presets=presets,
                           default_ids=default_ids, facts=facts)
