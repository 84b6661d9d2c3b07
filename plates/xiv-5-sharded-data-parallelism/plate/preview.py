"""Write Plate XIV.5's two figures for a selection as SVG files into a folder, for a reviewer to look at.

    python plates/xiv-5-sharded-data-parallelism/plate/preview.py OUT [--plate FOLDER] [--stage zero3] [...]

Writes OUT/fig-states.svg and OUT/fig-traffic.svg (and their descriptions in OUT/descriptions.txt); refuses to
replace a file it did not write (one without its mark).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

if __package__:  # imported as part of the plate package, under whatever name its loader gave it
    from . import facts as plate_facts
    from .figures import figures as draw  # the package's own `figures` is the engine's hook
else:  # run as a script: the plate package loaded as the engine loads it (it sets where its page modules are)
    import importlib

    from generator.api import load

    _package = load(Path(__file__).resolve().parent)
    plate_facts = importlib.import_module(f"{_package.__name__}.facts")
    draw = importlib.import_module(f"{_package.__name__}.figures").figures

MARK = "<!-- written by plate/preview.py -->"


def _writable(path: Path) -> None:
    """Refuse to overwrite a file this script did not write."""
    if path.exists() and MARK not in path.read_text(encoding="utf-8", errors="replace"):
        raise SystemExit(f"{path}: exists and was not written by preview.py; not replaced")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the SVGs into (made if missing)")
    parser.add_argument("--plate", type=Path, help="a copy of this plate's folder, whose series catalogue "
                                                   "(series.toml beside it) is read (default: this plate's)")
    for key in plate_facts.CONTROLS:
        parser.add_argument(f"--{key}", help=f"the {key}'s id (default: plate.md's [default])")
    args = parser.parse_args(argv)
    presets = plate_facts.load(args.plate)
    sel = plate_facts.default_selection(plate_facts.FOLDER, presets)
    sel = replace(sel, **{k: getattr(args, k) for k in plate_facts.CONTROLS if getattr(args, k)})
    f = plate_facts.facts(presets, sel)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = []
    for fig in draw(f):
        target = args.out / f"{fig.id}.svg"
        _writable(target)
        target.write_text(f"{fig.svg}\n{MARK}\n", encoding="utf-8")
        lines.append(f"{fig.id}: {fig.title}. {fig.vega.get('description', '')}")
        print(target)
    notes = args.out / "descriptions.txt"
    _writable(notes)
    notes.write_text("\n".join(lines + [MARK]) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
