"""Plate XIV.5, "Sharded Data Parallelism (ZeRO / FSDP)": the plate module the engine loads from this folder
(docs/plates.md). Each name below is a hook the engine calls; plate/hooks.py holds them."""
from . import page_facts, page_rows, page_words  # the functions the page runs compiled, and the build as they are
from .facts import Facts, Selection, facts_data, words_context  # noqa: F401
from .hooks import (DEFAULT_OPTIONAL, DEFAULT_SCHEMA, FIGURES, PROSE_NAMES, SLOT_CALLS, SLOT_ROOTS,  # noqa: F401
                    SLOT_TABLES, check_content, check_model, csv_text, figures, load_presets, model_of, page,
                    prose_names, scenario_ids, select_choices, unused)

# The page's functions by role (docs/plates.md, "The page"): the build makes the default's words, the figures' rows
# and the CSV with the same functions.
PAGE = {"facts": page_facts.facts, "datasets": page_rows.datasets, "readout": page_words.readout,
        "title": page_words.title,
        "describe": page_words.describe, "table_rows": page_words.table_rows, "csv_rows": page_rows.csv_rows}
