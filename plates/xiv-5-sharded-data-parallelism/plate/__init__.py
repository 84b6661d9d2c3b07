"""Plate XIV.5's plate module: its model (model.py), facts for a selection (facts.py) and figures (figures.py)."""
