"""The shipped Plate XIV.4's plate module for the tests: its package (plates/xiv-4-data-parallelism/plate/) and
its modules by name, loaded as the engine loads it."""
from pathlib import Path

from generator.plate import plates

SHIPPED = Path(__file__).resolve().parent.parent / "plates" / "xiv-4-data-parallelism"
PLATE = plates.load(SHIPPED / plates.PACKAGE)
model, facts, custom, xpresets, slots = PLATE.model, PLATE.facts, PLATE.custom, PLATE.presets, PLATE.slots
xfigures, xpage, xwords = PLATE.figures_module, PLATE.page_module, PLATE.words
Selection = xpresets.Selection
PAGE = SHIPPED / plates.PAGE  # its page modules


def page_modules() -> dict[str, str]:
    """{name: text} of the page's modules: the engine's templates/page/ and the plate's page/, as the build joins them."""
    from generator.plate import texts
    return texts.page_modules(PLATE)
