"""The shipped Plate XIV.4's plate module for the tests: its package (plates/xiv-4-data-parallelism/plate/) and
its modules by name, loaded as the engine loads it."""
from pathlib import Path
from types import SimpleNamespace

from generator.plate import plates

SHIPPED = Path(__file__).resolve().parent.parent / "plates" / "xiv-4-data-parallelism"
PLATE = plates.load(SHIPPED / plates.PACKAGE)
model, facts, custom, xpresets, slots = PLATE.model, PLATE.facts, PLATE.custom, PLATE.presets, PLATE.slots
xfigures, xpage = PLATE.figures_module, PLATE  # the hooks that fill the page are the package's own (__init__.py)
Selection = xpresets.Selection
PAGE = SHIPPED / plates.PAGE  # its page modules


def rows_of(f) -> dict:
    """{dataset: rows} the figures draw for one selection's facts: page_rows.datasets (the page's own) of its facts as
    the page holds them."""
    from generator.plate import texts
    return PLATE.page_rows.datasets(texts.plain(PLATE.facts.facts_data(f)))


def selection_rows(f) -> list[dict]:
    """A selection's CSV as the page writes it (page_rows.csv_rows under SELECTION_COLUMNS): one row per replica
    count."""
    from generator.plate import texts
    names = [c[0] for c in PLATE.page_rows.SELECTION_COLUMNS]
    return [dict(zip(names, row)) for row in PLATE.page_rows.csv_rows(texts.plain(PLATE.facts.facts_data(f)))]


def site_rows(atlas) -> list[dict]:
    """The site's CSV as dicts (PLATE.CSV_COLUMNS): one row per model, batch, network and replica count."""
    out = []
    for m in atlas.presets.models:
        cols = PLATE.csv_columns(atlas, m)
        out += [dict(zip(cols, values)) for values in zip(*cols.values())]
    return out


def _of(f, plates_: dict[str, str] | None = None) -> dict:
    """One facts' words ({readout, describe, tables}), PAGE's in Python, as the page writes them."""
    return PLATE.words_of([PLATE.facts.facts_data(f)], plates_)[0]


# The words as the tests read them: the plate's (PLATE.words_of, W, the figures' ids and tables' columns) on facts.Facts,
# each made the page's facts by facts.facts_data first, and views of one facts' words.
xwords = SimpleNamespace(
    FIGURES=PLATE.FIGURES, TABLE_COLUMNS=PLATE.TABLE_COLUMNS, context=PLATE.context,
    words_context=lambda fs, plates_=None: PLATE.words_context([PLATE.facts.facts_data(f) for f in fs], plates_),
    words_of=lambda fs, plates_=None, store=None: PLATE.words_of([PLATE.facts.facts_data(f) for f in fs], plates_,
                                                                 store),
    facts_data=PLATE.facts.facts_data, of=_of,
    readout_paragraphs=lambda f, plates_=None: _of(f, plates_)["readout"],
    readout=lambda f, plates_=None: " ".join(_of(f, plates_)["readout"]),
    describe=lambda f, figure_id, plates_=None: _of(f, plates_)["describe"][figure_id],
    table_rows=lambda f, figure_id: _of(f)["tables"][figure_id])


def page_modules() -> dict[str, str]:
    """{name: text} of the page's modules: the engine's templates/page/ and the plate's page/, as the build joins them."""
    from generator.plate import texts
    return texts.page_modules(PLATE)
