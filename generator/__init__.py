"""The plates' engine: a series of plates, each written as Markdown, TOML and one Python module, built into one
static site of self-contained interactive HTML pages. Its stages, one folder each: source/ (read content), plate/ (run
the plate module), page/ (render the page), site/ (write the site), commands/ (the `plate` command); plates import
only api.py."""

__version__ = "0.1.0"  # the one place the version is written; pyproject.toml reads it from here
