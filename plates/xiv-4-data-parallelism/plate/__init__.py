"""Plate XIV.4, "Data Parallelism": the plate module the engine loads from this folder (docs/plates.md).

Each name below is a hook the engine calls; the modules beside this one hold the model and what is made of it."""
import sys

from .facts import Atlas, Facts  # noqa: F401 - the model's grid and one selection's facts, for readers of the plate
from .presets import DEFAULT_OPTIONAL, DEFAULT_SCHEMA, Selection, load_presets  # noqa: F401
from .measured import check_content  # noqa: F401 - presets.toml's joins, then measured.toml
from .slots import (PROSE_NAMES, SLOT_CALLS, SLOT_ROOTS, SLOT_TABLES, check_model, model_of,  # noqa: F401
                    prose_names, scenario_ids, unused)
from .words import FIGURES, facts_data, words_context  # noqa: F401
from .page import csv_text, page, select_choices  # noqa: F401
from . import figures as figures_module  # noqa: E402 - the modules whose names hooks take, by other names
from . import page_facts, page_own, page_rows, page_words
page_module = sys.modules[f"{__name__}.page"]

# What the page runs compiled from this Python (generator/page/compiler.py; docs/plates.md): each number and sentence once.
PAGE = {"facts": page_facts.facts, "datasets": page_rows.datasets, "readout": page_words.readout,
        "title": page_words.title,
        "describe": page_words.describe, "table_rows": page_words.table_rows, "csv_rows": page_rows.csv_rows,
        "own": page_own.own}


def figures(content, atlas: Atlas, store=None) -> list:
    """The figures, compiled and drawn for the content's default selection."""
    return figures_module.figures(atlas, content.plate.default, store)
