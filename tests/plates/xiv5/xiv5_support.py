"""Plate XIV.5's plate package, loaded by path (plates/ is not a Python package; the engine will load plate
modules from their folders the same way), and XIV.4's presets it reuses. A module of its own, not a conftest.py:
a second conftest would take the name `conftest` from tests/conftest.py, which other tests import from.
Test modules import the fixtures they use from here."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "plates" / "xiv-5-sharded-data-parallelism"
PACKAGE = "xiv5_plate"  # a name of its own: every plate's package is called plate/ in its folder


def load_package():
    """plates/xiv-5-…/plate/ imported as the package xiv5_plate (its relative imports resolve inside it)."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, FOLDER / "plate" / "__init__.py",
                                                      submodule_search_locations=[str(FOLDER / "plate")])
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
    return sys.modules[PACKAGE]


load_package()
from xiv5_plate import facts as plate_facts  # noqa: E402


def presets_file() -> Path:
    """The presets plate.md names; until the engine split moves XIV.4 into plates/, they are in content/."""
    named = plate_facts.presets_path(FOLDER)
    return named if named.is_file() else ROOT / "content" / "presets.toml"


@pytest.fixture(scope="session")
def presets():
    return plate_facts.load(presets_file())


@pytest.fixture(scope="session")
def default(presets):
    """The selection plate.md's [default] names."""
    return plate_facts.default_selection(FOLDER, presets)


def spec_presets(presets, model: str = "llama3-8b", gpu: str = "h100-sxm"):
    """The spec's model and GPU presets (the facts file's claims are about these ids only). Where the presets no
    longer hold them the claim is not asserted: skipped on a desk, failed in CI (CI=true), where a skip would hide it."""
    gpus = plate_facts.gpus_of(presets)
    if model not in presets.models or gpu not in gpus:
        message = f"the facts file's claim is about {model} on {gpu}, which {presets_file()} does not hold"
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(message)
    return presets.models[model], gpus[gpu]
