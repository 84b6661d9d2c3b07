"""Plate XIV.5's plate package, loaded by path as the engine loads plate modules from their folders (plates/ is not
a Python package), and XIV.4's presets it reuses. A module of its own, not a conftest.py:
a second conftest would take the name `conftest` from tests/conftest.py, which other tests import from.
Test modules import the fixtures they use from here."""
from __future__ import annotations

import importlib
import math
import re
import sys
from pathlib import Path

import pytest

from generator.plate import plates

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "plates" / "xiv-5-sharded-data-parallelism"
PACKAGE = "xiv5_plate"  # a name of its own: every plate's package is called plate/ in its folder


def load_package():
    """plates/xiv-5-…/plate/ loaded as the engine loads it (generator/plate/plates.py), also named xiv5_plate here, so that
    the tests and a build share one module (and its dataclasses)."""
    if PACKAGE not in sys.modules:
        sys.modules[PACKAGE] = plates.load(FOLDER / "plate")
    return sys.modules[PACKAGE]


def submodule(name: str):
    """A module of the plate package by its file's name (the package's own `figures` is the engine's hook)."""
    return importlib.import_module(f"{load_package().__name__}.{name}")


plate_facts, plate_figures, plate_words, preview, model, page_facts, page_words, page_rows = (
    submodule(n) for n in ("facts", "figures", "words", "preview", "model", "page_facts", "page_words", "page_rows"))


def data(f) -> dict:
    """A selection's facts as the page has them (plain JSON): what page_words and page_rows are given."""
    from generator.plate import texts
    return texts.plain(plate_facts.facts_data(f))


def presets_file() -> Path:
    """The series catalogue, which the plate reads."""
    return plate_facts.presets_path(FOLDER)


@pytest.fixture(scope="session")
def presets():
    return plate_facts.load(FOLDER)


@pytest.fixture(scope="session")
def default(presets):
    """The selection plate.md's [default] names."""
    return plate_facts.default_selection(FOLDER, presets)


SPEC_MODEL, SPEC_GPU = "llama3-8b", "h100-sxm"  # the facts file's claims are about these preset ids only
K = 12  # the facts file's optimiser bytes per parameter: FP32 master weights and Adam's two moments


def kept(stage: int, b: int = 2) -> int:
    """Bytes per parameter each stage keeps whole (the facts file's formulas), b-byte gradients kept as reduced."""
    return {0: 2 + b + K, 1: 2 + b, 2: 2, 3: 0}[stage]


def has_spec(presets) -> bool:
    """Whether the presets hold the facts file's model and GPU (its claims are asserted only then)."""
    return SPEC_MODEL in presets.models and SPEC_GPU in plate_facts.gpus_of(presets)


def pairs(presets):
    """Every (model id, GPU id) of the presets: what a test derives its expectations from when the spec's are absent."""
    return [(m, g) for m in presets.models for g in plate_facts.gpus_of(presets)]


def states_per_gpu(params: float, stage: int, n: int, b: int = 2) -> float:
    """The facts file's formulas written out: (2+b+K)Ψ, (2+b+K/n)Ψ, (2+(b+K)/n)Ψ, (2+b+K)Ψ/n."""
    return (kept(stage, b) + (2 + b + K - kept(stage, b)) / n) * params


def fits_from(params: float, stage: int, memory_bytes: float, b: int = 2) -> float:
    """The smallest whole n whose states_per_gpu fit in memory_bytes, by bisection on the formula (not the model's
    closed form); NaN when even 2⁶⁰ replicas do not fit."""
    hi = 1
    while states_per_gpu(params, stage, hi, b) > memory_bytes:
        hi *= 2
        if hi > 2**60:
            return float("nan")
    lo = hi // 2  # states(lo) > memory (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if states_per_gpu(params, stage, mid, b) <= memory_bytes else (mid, hi)
    return float(hi)


def inked(dash: list[float], offset: float, t: float) -> bool:
    """Whether a line stroked with this dash array and offset (SVG's rules) is inked at distance t along its path."""
    if not dash or sum(dash) == 0:
        return True  # no dash, or one of zeros, is a solid line
    pattern = dash if len(dash) % 2 == 0 else dash * 2
    at = (t + offset) % sum(pattern)
    for i, length in enumerate(pattern):
        if at < length:
            return i % 2 == 0
        at -= length
    return False


def shown_runs(strokes: list[tuple[object, list[float], float]]) -> dict:
    """Of lines drawn in this order along one path, (name, dash, offset) each: {name: the longest run, px, along
    which it shows}, a line showing where it is inked and no line drawn after it is (0: it is hidden)."""
    periods = [round(100 * sum(d if len(d) % 2 == 0 else d * 2)) or 1 for _, d, _ in strokes]
    whole = math.lcm(*periods) / 100  # a length (to 0.01 px) after which every pattern repeats
    step = 1 / 400  # finer than any dash the figures draw
    runs = {}
    for i, (name, dash, offset) in enumerate(strokes):
        run = longest = 0
        for j in range(round(2 * whole / step)):  # two lengths: a run across the repeat counts whole
            t = (j + 0.5) * step
            shows = inked(dash, offset, t) and not any(inked(d, o, t) for _, d, o in strokes[i + 1:])
            run = run + 1 if shows else 0
            longest = max(longest, run)
        runs[name] = min(longest * step, whole)
    return runs


def hidden(strokes: list[tuple[object, list[float], float]]) -> list:
    """Of lines drawn in this order along one path, those no point of which shows."""
    return [name for name, run in shown_runs(strokes).items() if run == 0]


def stage_strokes(paths: list[dict], ink: dict[str, int]) -> list[tuple[int, list[float], float]]:
    """The stages' lines in drawing order as (stage, dash, offset), from the paths' attributes (stroke,
    stroke-dasharray, stroke-dashoffset as SVG writes them) and ink, {stroke colour: stage}."""
    return [(ink[p["stroke"]], [float(v) for v in re.split(r"[ ,]+", p.get("dash") or "") if v],
             float(p.get("offset") or 0)) for p in paths]


def braid_problems(paths: list[dict], ink: dict[str, int], groups: list[list[int]], shortest: float) -> list[list[int]]:
    """For each group of stages that send the same bytes (one shared path in the figure), the stages whose colour
    shows along it, drawn as these paths are, in no run as long as shortest px (hidden, or in specks); [] for every
    group when each stage's colour shows."""
    strokes = stage_strokes(paths, ink)
    return [[k for k, run in shown_runs([s for s in strokes if s[0] in group]).items() if run < shortest]
            for group in groups]
