"""Stage 3, render the page: Python compiled for the page, the formatter, the Vega runtime and the one HTML page."""
