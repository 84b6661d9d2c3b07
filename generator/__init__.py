"""Plate XIV.4 generator: content and a scaling model in, one self-contained HTML page out."""
