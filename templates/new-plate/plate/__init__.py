"""This plate's module (docs/plates.md, "The contract"): the names the engine calls. The plate's own declarations
are the block below; its numbers and words are page_code.py's, which the page runs compiled to JavaScript and the
build runs as they are. The rest of this file serves any plate with one table of choices per control."""
from __future__ import annotations

from dataclasses import make_dataclass
from pathlib import Path

from generator.api import csv_cell, fields, figure, ink, keyed, read_toml, unknown_tables

from . import page_code

# --- the plate's declarations (docs/plates.md, "From the scaffold to a plate") ------------------------------------
# Each control once: {key, as [default] and the page's URL write it: (its label, the presets.toml table of choices)}.
CONTROLS = {"rate": ("Rate", "rates")}
SETTINGS = {"steps": "count"}  # presets.toml's [settings]: what every selection shares (schema.py kinds)
# Each table of choices once: {table: the fields of each of its choices (schema.py kinds)}; every choice has a name.
CHOICES = {"rates": {"name": "text", "per_step": "positive"}}
CSV_COLUMNS = ["rate", "n", "y"]  # page_code.csv_rows's cells, in order
# Each figure once: (id, title, what it shows in one sentence, its columns' heads in the data table, its drawn key:
# [(colour, what the mark means)], a line with points in that theme colour each).
FIGURES_SHOWN = [("fig-line", "y against n", "y against n, log–log.", ("n", "y"),
                  [("--c-compute", "y at the chosen rate")])]


def chart(figure_id: str):
    """The figure's Altair chart, reading page_code.datasets's rows by their dataset's name."""
    import altair as alt
    scale = alt.Scale(type="log", base=2)
    return alt.Chart(alt.Data(name="line")).mark_line(
        strokeWidth=2.5, color=ink("--c-compute"),
        point=alt.OverlayMarkDef(filled=True, size=28, color=ink("--c-compute"))).encode(
        x=alt.X("n:Q", title="n", scale=scale), y=alt.Y("y:Q", title="y", scale=scale)).properties(
        width=560, height=280)
# --- end of the plate's declarations ------------------------------------------------------------------------------


Selection = make_dataclass("Selection", [(key, str) for key in CONTROLS], frozen=True)  # one id per control


def load_presets(problems, root: Path):
    """presets.toml as the page's plain data ({settings: {…}, <table>: {id: {…}}}) and {table: ids declared}."""
    path = Path(root) / "presets.toml"
    data, text = read_toml(problems, path)
    if data is None:
        return None, None
    tables = tuple(table for _, table in CONTROLS.values())
    unknown_tables(problems, path, text, data, ("settings", *tables))
    presets = {"settings": fields(problems, path, text, ("settings",), data.get("settings", {}), SETTINGS,
                                  label="[settings]")}
    for table in tables:
        presets[table] = keyed(problems, path, text, data, table, CHOICES[table], lambda ident, values: values)
    return presets, {table: list(presets[table]) for table in tables}


class Model:
    """The presets, and the facts of any selection (page_code.facts)."""

    def __init__(self, content):
        self.content, self.presets = content, content.presets

    def facts(self, selection) -> dict:
        """A Selection's facts, made from its ids as the page holds them."""
        return page_code.facts(vars(selection), self.presets)

    def default(self) -> dict:
        return self.facts(self.content.plate.default)


def model_of(content) -> Model:
    return Model(content)


def prose_names(content, model: Model) -> dict:
    """What the prose's slots read: {{ default.… }} (the default's facts), {{ settings.… }} and each table."""
    return {"default": model.default(), **content.presets}


def figures(content, model: Model, store) -> list:
    rows = page_code.datasets(model.default())
    return [figure(fid, title, (chart, (fid,)), alt, rows, store) for fid, title, alt, *_ in FIGURES_SHOWN]


def _selections(model: Model) -> list:
    """Every Selection the controls offer, the first control's choices outermost."""
    found = [{}]
    for key, (_, table) in CONTROLS.items():
        found = [{**sel, key: ident} for sel in found for ident in model.presets[table]]
    return [Selection(**sel) for sel in found]


def csv_text(model: Model) -> str:
    """Every selection's rows, under CSV_COLUMNS."""
    lines = [",".join(CSV_COLUMNS)]
    for sel in _selections(model):
        lines += [",".join(map(csv_cell, row)) for row in page_code.csv_rows(model.facts(sel))]
    return "\n".join(lines) + "\n"


def page(content, model: Model, figures: list, dataflows, store=None) -> dict:
    """The controls, the default's words (page_code's, as the page makes them) and the page script's data."""
    plate, f = content.plate, model.default()
    default = vars(plate.default)
    data = {
        "keys": list(CONTROLS), "default": default, "cluster_keys": [], "presets": content.presets,
        "choices": {key: list(content.presets[table]) for key, (_, table) in CONTROLS.items()},
        "plates": plate.plates, "words_context": {}, "csv_columns": CSV_COLUMNS, "csv_name": plate.data_file,
    }
    return dict(
        controls=[(key, label, {i: c["name"] for i, c in content.presets[table].items()})
                  for key, (label, table) in CONTROLS.items()],
        selected=default, readout=page_code.readout(f, {}), caption=f["caption"],
        columns={fid: heads for fid, _, _, heads, _ in FIGURES_SHOWN},
        keys={fid: key for fid, *_, key in FIGURES_SHOWN},  # each figure's drawn key (page/legend.html.j2)
        tables={fid: page_code.table_rows(f, fid) for fid, *_ in FIGURES_SHOWN},
        descriptions={fid: page_code.describe(f, fid, {}) for fid, *_ in FIGURES_SHOWN}, data=data,
    )


# The page's functions by role (docs/plates.md, "The page"): page_code's, compiled for the page.
PAGE = {"facts": page_code.facts, "datasets": page_code.datasets, "readout": page_code.readout,
        "title": page_code.title,
        "describe": page_code.describe, "table_rows": page_code.table_rows, "csv_rows": page_code.csv_rows}
