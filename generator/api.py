"""The engine's one door for plate modules and platelib: every name they may import from the engine, and no other.

A plate's Python imports this module, platelib, the standard library and numpy (tests/test_api.py holds it to
that). Its page Python (the modules compiled for the page) imports the formatter's names from here too:
generator/page/compiler.py maps them to the page's own notation.js and native.js. Each name is listed in
docs/plates.md, "The engine's API".
"""
from __future__ import annotations

# Numbers: the one formatter, in the build and, compiled, on the page
from .page.notation import num
"""A count or fixed decimals, half-up, thousands separated: 1024 → '1,024'; num(128.48, 1) → '128.5'."""
from .page.notation import sig
"""A measure to three significant figures with its trailing zeros, no whole digit rounded away: 0.39 → '0.390'."""
from .page.notation import given
"""A value an author or reader gives, to at most three significant figures, no zeros added: 12.5 → '12.5'."""
from .page.notation import seconds
"""A time in seconds, three significant figures in the unit that suits it: 0.000483 → '483 µs'."""
from .page.notation import data_size
"""Bytes in the decimal unit that suits them, three significant figures: 7.8e6 → '7.80 MB'."""
from .page.notation import gigabytes
"""A size given in GB (10⁹ B), as data_size writes it: 0.00784 → '7.84 MB'."""
from .page.notation import percent
"""A share as a percentage, whole when it is a whole percent, never 0% when not zero: 0.0047 → '0.470%'."""
from .page.notation import fraction
"""A share as a decimal measure: 0.5 → '0.500', 0.0625 → '0.0625'."""
from .page.native import fixed
"""A double rounded half-up on its exact value to fixed decimals, as JavaScript's toFixed: fixed(2.5, 0) → '3'."""
from .page.native import exponent
"""The decimal exponent of a value once rounded to so many significant figures: exponent(0.9996, 3) → 0."""

# Content: a plate's TOML and front matter checked field by field, every mistake at file, line
from .source.schema import Problems
"""Collects content mistakes (file, line, message) so that a build reports them all at once."""
from .source.schema import ContentError
"""Content mistakes, each `file, line N: …`: what Problems.raise_if_any raises, as a check_model hook may."""
from .source.schema import Range
"""A number kind ('positive' or 'fraction') with bounds, for fields() and rules()."""
from .source.schema import fields
"""Checks a TOML table against a schema {field: kind}, each mistake at its line; the values, or None."""
from .source.schema import keyed
"""Reads a table of tables ([section.id]) into {id: make(id, **fields)}, each checked as fields() does."""
from .source.schema import read_toml
"""Parses TOML, a syntax error recorded at its line; (data or None, text)."""
from .source.schema import unknown_tables
"""Reports each top-level key of a TOML file that the plate does not read."""
from .source.schema import default_choice
"""A [default] choice of plate.md that names no known id: a mistake at its line, with the closest id as a hint."""
from .source.schema import rules
"""A number kind's rules (a kind's name or a Range) as (tests, message) pairs, a Range's bounds last."""
from .source.schema import locate
"""The line (1-based) of a table or key path in TOML text, or None where it is not written."""
from .source.schema import quote
"""A name or id as messages show it: "ib-400"."""
from .source.schema import describe_value
"""A value as the author wrote it, for a message."""
from .source.schema import shown_path
"""A content path as messages show it: from the plate folder's parent (xiv-4-data-parallelism/presets.toml)."""
from .source.schema import grid_rows
"""The product of some axes' lengths: a grid's selections or its CSV's rows."""
from .source.schema import SINGULAR
"""{table name: one entry's name}: 'models' → 'model', for messages."""
from .source.schema import MAX_SELECTIONS
"""The most selections a plate's grid may hold (models × batches × networks × GPUs)."""
from .source.schema import MAX_CSV_ROWS
"""The most rows the site's CSV of one plate may hold."""
from .source.content import split_front_matter
"""(front matter, body, the body's first line) of a Markdown file fenced by ---, or None with a problem."""
from .source.content import belongs
"""{key: 'it belongs in [table]'} for keys written at the wrong level of a catalogue, for messages."""
from .source.content import Content
"""All of a plate's content, checked: its front matter and prose, presets, terms and sources."""
from .source.content import Plate
"""A plate's front matter and prose (Content.plate)."""
from .source.content import Source
"""A work cited by the plate (sources.toml): id, authors, title, venue, url, label, note."""

# Figures, words and the CSV
from .plate.charts import figure
"""A Figure from (chart function, arguments) and its rows: Vega spec and static SVG, kept in the build cache."""
from .plate.charts import Figure
"""One figure: its id, title, compiled Vega spec (no data) and static SVG of the default selection."""
from .plate.charts import ink
"""The colour a theme variable ('--chart-ink') names, as the figures are drawn (the light theme)."""
from .plate.charts import INK
"""The theme variable of the figures' ink ('--chart-ink'), for ink()."""
from .plate.charts import MUTED
"""The theme variable of the figures' muted ink ('--chart-muted'), for ink()."""
from .plate.charts import WIDTH
"""A figure's width in CSS pixels: what the page draws at most, so static and live figures print alike."""
from .plate.charts import HEIGHT
"""A figure's height in CSS pixels."""
from .plate.texts import words
"""Each facts' words (readout, titles, descriptions, tables) made by PAGE's words role compiled, run under node."""
from .plate.texts import plain
"""A value as the page's JSON gives it: lists for tuples and arrays, floats and ints, NaN kept."""
from .page.render import csv_cell
"""A number or id as the CSVs write it: the shortest round-trip text of a float, no '.0'; true/false."""
from .page.render import csv_column
"""csv_cell of every value of a column of one type, at a fraction of the calls."""
from .page.render import csv_table
"""A CSV's text: the header, then one line of csv_cell per row."""
from .page.render import controls_page
"""What the template fills in for a plate whose controls each pick an entry of a presets table."""
from .site.cache import Cache
"""The build cache a plate's hooks are given: costly, deterministic outputs kept between builds."""
from .plate.plates import load
"""A plate's package imported from its folder as the engine imports it (for a plate's own scripts)."""

__all__ = ["num", "sig", "given", "seconds", "data_size", "gigabytes", "percent", "fraction", "fixed",
           "exponent", "Problems", "ContentError", "Range", "fields", "keyed", "read_toml",
           "unknown_tables", "default_choice", "rules", "locate", "quote", "describe_value", "shown_path",
           "grid_rows", "SINGULAR", "MAX_SELECTIONS", "MAX_CSV_ROWS", "split_front_matter", "belongs",
           "Content", "Plate", "Source", "figure", "Figure", "ink", "INK", "MUTED", "WIDTH", "HEIGHT",
           "words", "plain", "csv_cell", "csv_column", "csv_table", "controls_page", "Cache", "load"]
