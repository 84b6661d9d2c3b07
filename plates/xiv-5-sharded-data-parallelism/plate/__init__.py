"""Plate XIV.5, "Sharded Data Parallelism (ZeRO / FSDP)": the plate module the engine loads from this folder
(docs/plates.md). Each name below is a hook the engine calls; plate/hooks.py holds them."""
from .facts import Facts, Selection, facts_data, words_context  # noqa: F401
from .hooks import (DEFAULT_OPTIONAL, DEFAULT_SCHEMA, FIGURES, PROSE_NAMES, SLOT_CALLS, SLOT_ROOTS,  # noqa: F401
                    SLOT_TABLES, check_content, check_model, csv_text, figures, load_presets, model_of, page,
                    prose_names, scenario_ids, select_choices, unused)
