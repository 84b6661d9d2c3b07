"""Plate XIV.8's content and plate package, loaded as the engine loads them (generator/source/content.py, generator/plate/plates.py).
A module of its own, not a conftest.py: a second conftest would take the name `conftest` from tests/conftest.py."""
from __future__ import annotations

from pathlib import Path

from plate_package import plate_package

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "plates" / "xiv-8-pipeline-parallelism"

_package = plate_package(FOLDER)
loaded, module, submodule = _package.loaded, _package.module, _package.submodule
presets, default_ids, facts = _package.presets, _package.default_ids, _package.facts
