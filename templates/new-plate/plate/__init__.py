"""This plate's module (docs/plates.md): a starting point, one control and one figure of a line y = rate × n, so
that the plate builds at once. The page's numbers and words are page.py's, written once; this module hands them to
the engine. Replace the model, the controls, the figure and the words with the plate's own."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from generator import charts, texts
from generator.schema import locate, quote

from . import page as made  # the functions the page runs compiled, and the build as they are

# The page's functions by role (docs/plates.md, "The page").
PAGE = {"facts": made.facts, "datasets": made.datasets, "readout": made.readout, "describe": made.describe,
        "table_rows": made.table_rows, "csv_rows": made.csv_rows}

# The model's inputs, by id (they appear in the page's URL): a name for the control and the rate it stands for.
RATES = {"slow": ("one per step", 1.0), "fast": ("two per step", 2.0)}
STEPS = 16  # the figure's n axis runs 1, 2, 4, … STEPS
FIGURES = ("fig-line",)  # the figures the words know
CSV_COLUMNS = ("rate", "n", "y")


@dataclass(frozen=True)
class Selection:
    """One choice of every control, by id."""

    rate: str = "slow"


DEFAULT_SCHEMA = {"rate": "text"}  # [default] in plate.md may set these (schema.py kinds)
DEFAULT_OPTIONAL = {"rate": Selection.rate}


@dataclass(frozen=True)
class Rate:
    """One choice of the rate control."""

    id: str
    name: str
    per_step: float


@dataclass(frozen=True)
class Presets:
    """Everything the reader can choose (here written in this module; a plate may read a presets.toml)."""

    rates: dict[str, Rate]


class Model:
    """The plate's model: its presets as the page has them, and the facts of any selection (page.py's)."""

    def __init__(self, presets: Presets):
        self.presets = presets
        self.data = {"steps": STEPS, "rates": {i: {"id": r.id, "name": r.name, "per_step": r.per_step}
                                               for i, r in presets.rates.items()}}

    def facts(self, sel: Selection) -> dict:
        """The facts of one selection, as the page computes them."""
        return made.facts({"rate": sel.rate}, self.data)


def load_presets(problems, root: Path):
    """(presets, {table: ids declared}); this plate declares its choices in code, so there is nothing to check."""
    rates = {i: Rate(i, name, per_step) for i, (name, per_step) in RATES.items()}
    return Presets(rates), {"rates": list(rates)}


def check_content(problems, root: Path, front: str, plate, presets, ids, sources) -> None:
    """[default]'s rate must be one the control offers."""
    if plate is not None and plate.default.rate not in RATES:
        problems.add(root / "plate.md", locate(front, ("default", "rate"), 1),
                     f"[default]: rate {quote(plate.default.rate)} is not a choice (known: {', '.join(RATES)})")


def model_of(content) -> Model:
    return Model(content.presets)


def check_model(model: Model, root: Path) -> None:
    """Nothing to check: the rates are this module's own."""


PROSE_NAMES = ("default", "rates", "cite", "compare", "scales", "check", "plates")
SLOT_TABLES = {"rates": Rate}
SLOT_ROOTS: dict = {}  # default is page.py's facts, a dict: the prose's reads of it are checked as it renders
SLOT_CALLS: dict = {}


def prose_names(content, model: Model) -> dict:
    """What the prose slots may name besides the engine's: {{ default.last }}, {{ rates.fast.name }}."""
    return {"default": model.facts(content.plate.default), "rates": content.presets.rates}


def scenario_ids(ids: dict) -> dict:
    return {}


def unused(content) -> list[str]:
    return []


def line_chart():
    """y against n, log–log."""
    import altair as alt
    scale = alt.Scale(type="log", base=2)
    return alt.Chart(alt.Data(name="line")).mark_line(
        strokeWidth=2.5, color=charts.ink("--c-compute"),
        point=alt.OverlayMarkDef(filled=True, size=28, color=charts.ink("--c-compute"))).encode(
        x=alt.X("n:Q", title="n", scale=scale), y=alt.Y("y:Q", title="y", scale=scale)).properties(
        width=560, height=280)


def figures(content, model: Model, store) -> list:
    f = model.facts(content.plate.default)
    return [charts.figure("fig-line", "y against n", (line_chart, ()), "y against n, log–log.",
                          made.datasets(f), store)]


def csv_text(model: Model) -> str:
    """Every choice's rows, as the page's download writes the shown one's."""
    rows = [list(CSV_COLUMNS)]
    for rate in model.presets.rates:
        rows += made.csv_rows(model.facts(Selection(rate)))
    return "".join(",".join(str(cell) for cell in row) + "\n" for row in rows)


def facts_data(f: dict) -> dict:
    """The facts the words read: already the page's plain data."""
    return f


def words_context(facts: list, plates: dict | None = None) -> dict:
    """W: what the words need besides the facts."""
    return {"plates": plates or {}}


def page(content, model: Model, figures: list, dataflows, store=None) -> dict:
    """What the page template fills in: the controls, the default's words (page.py's), the script's data."""
    plate = content.plate
    f = model.facts(plate.default)
    said = texts.words(importlib.import_module(__package__), [f], plate.plates, store)[0]
    choices = {"rate": list(content.presets.rates)}
    # What the engine's page modules read (docs/plates.md), and the presets page.py's facts read in the page.
    data = {
        "keys": ["rate"], "default": {"rate": plate.default.rate}, "cluster_keys": [], "choices": choices,
        "presets": model.data, "plates": plate.plates, "words_context": words_context([f], plate.plates),
        "csv_name": plate.data_file, "csv_columns": list(CSV_COLUMNS),
    }
    return dict(
        controls=[("rate", "Rate", {i: r.name for i, r in content.presets.rates.items()})],
        selected={"rate": plate.default.rate}, readout=said["readout"], caption=f["caption"],
        columns={"fig-line": ("n", "y")}, tables={fid: said["tables"][fid] for fid in FIGURES},
        descriptions={fid: said["describe"][fid] for fid in FIGURES}, data=data,
    )


def select_choices(content) -> dict:
    return {"rate": list(content.presets.rates)}
