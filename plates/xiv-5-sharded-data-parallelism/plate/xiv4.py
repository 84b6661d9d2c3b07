"""Plate XIV.4's plate module, which XIV.5 reuses: its presets (the same models, GPUs and networks on both plates,
read from XIV.4's presets.toml, not a copy) and the formulas of its model. Loaded by path, as the engine loads
every plate module (generator/plates.py), from the folder beside this plate's."""
from __future__ import annotations

import importlib
from pathlib import Path

from generator import plates
from generator.schema import ContentError

FOLDER = Path(__file__).resolve().parent.parent.parent / "xiv-4-data-parallelism"  # XIV.4's folder, beside ours
if not (FOLDER / plates.PACKAGE / "__init__.py").is_file():
    raise ContentError([f"{FOLDER}: no such plate: XIV.5 reads the presets and the model of plate XIV.4 from its "
                        f"folder beside XIV.5's; copy the two folders together"])
package = plates.load(FOLDER / plates.PACKAGE)
model = importlib.import_module(f"{package.__name__}.model")  # generator/model.py before the split
presets = importlib.import_module(f"{package.__name__}.presets")  # its presets.toml's reader and dataclasses
