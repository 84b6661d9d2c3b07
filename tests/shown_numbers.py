"""What a displayed number may not be (issue 20): padded, short of a significant zero, a non-zero value rounded
to zero, a caret power, a fraction in another style. Used on the page's visible text, static and live."""
from __future__ import annotations

import re

# A measure with its unit, as notation.py writes one: a number, a space, a unit (a link speed in GB/s is an input
# and not a measure of the plate's; "80GB" in a GPU's name is a name).
MEASURE = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:\s?)(s|ms|µs|ns|TB|GB|MB|kB|%)(?![\w/])")
CARET = re.compile(r"\d\s*\^\s*[-\d]")
ZERO = re.compile(r"(?<![\w.,])0\.0+\s?(?:s|ms|µs|ns|TB|GB|MB|kB|B|%)(?![\w/])|(?<![\w.,])0\s?(?:%|GB|MB|kB|TB)(?![\w/])")
# A share of a sequence that replicas split evenly is said in words ("half a sequence", "one sequence per 128
# replicas", issue 31); a slash, or a decimal of such a share, is the other style.
FRACTION = re.compile(r"(?<![\w/])\d+/\d+ of\b|(?<![\w.,])0\.(?:500|250|125|0625|0313|0156|00781) of (?:a|one) sequence")
# Model states, which a page holds against a GPU's memory, stated in a sentence to four figures ("128.5 GB", the
# seed's figure readers know, issue 31; "144.5 GB" with FP32 gradients, issue 42; platelib.zero.STATE_FIGURES): the
# one measure the words give past three figures, and only in these sentences (data tables keep three).
STATE = r"\d[\d,]*(?:\.\d+)? [kMGT]?B"
SEED_FIGURE = re.compile("|".join([
    rf"that is {STATE}, which (?:fits|does not fit) in",  # XIV.4's prose
    rf"Model states: {STATE} per GPU", rf"model states per GPU fall from {STATE} on one replica to {STATE} on",
    rf"holds all of them, {STATE} on each", rf"falling as 1/n, from {STATE} on one replica to {STATE} on",
    rf"curve falling from {STATE} on one replica and levelling off at the part each replica keeps whole, {STATE} on",
    rf"every GPU keeps (?:all )?{STATE} of them", rf"stage 0 stays at {STATE},"]))  # XIV.4's and XIV.5's words
# Seconds are written down to 10 ms; below that, ms, µs or ns.
SMALLEST = {"s": 0.01, "ms": 1.0, "µs": 1.0, "ns": 1.0, "TB": 1.0, "GB": 1.0, "MB": 1.0, "kB": 1.0}


def figures(digits: str) -> int:
    """Significant figures a printed decimal shows: '0.0714' → 3, '0.390' → 3, '1,128.9' → 5."""
    return len(digits.replace(",", "").replace(".", "").lstrip("0"))


def problems(text: str) -> list[str]:
    """Every way the numbers of a text break the one rule, each with the text around it."""
    found = []
    around = lambda m: text[max(0, m.start() - 40):m.end() + 20]  # noqa: E731
    for m in CARET.finditer(text):
        found.append(f"a caret power: {around(m)!r}")
    for m in ZERO.finditer(text):
        found.append(f"a value shown as zero: {around(m)!r}")
    for m in FRACTION.finditer(text):
        found.append(f"a fraction in another style: {around(m)!r}")
    seed = [m.span() for m in SEED_FIGURE.finditer(text)]
    for m in MEASURE.finditer(text):
        digits, unit = m[1], m[2]
        if any(start <= m.start() < end for start, end in seed):
            continue
        value = float(digits.replace(",", ""))
        if "." in digits and figures(digits) != 3:
            found.append(f"{figures(digits)} significant figures, not 3: {around(m)!r}")
        elif value and unit in SMALLEST and value < SMALLEST[unit]:
            found.append(f"leading zeros where a smaller unit reads better: {around(m)!r}")
    return found
