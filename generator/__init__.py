"""Plate XIV.4 generator: content and a scaling model in, one self-contained HTML page out."""

__version__ = "0.1.0"  # the one place the version is written; pyproject.toml reads it from here
