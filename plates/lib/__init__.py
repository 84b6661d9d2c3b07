"""The plates' shared formulas (docs/plates.md, "Shared formulas"): one module per subject, each formula written once.

A plate imports what it uses by name, `from platelib.collectives import ring_seconds`; no plate loads another
plate's package. Every module but presets.py keeps to the Python that compiles to the page's JavaScript (plain
functions and constants, positional calls, numpy only through the scalar `np` the page gets)."""
