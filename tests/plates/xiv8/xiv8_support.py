"""Plate XIV.8's content and plate package, loaded as the engine loads them (generator/source/content.py, generator/plate/plates.py).
A module of its own, not a conftest.py: a second conftest would take the name `conftest` from tests/conftest.py."""
from __future__ import annotations

import dataclasses
import importlib
from functools import cache
from pathlib import Path

from generator.source import content

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "plates" / "xiv-8-pipeline-parallelism"


@cache
def loaded():
    """The plate's checked content (its presets and the series catalogue, as plain data)."""
    return content.load(FOLDER)


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
