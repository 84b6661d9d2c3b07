"""Numbers as the plate writes them, in prose, readouts, descriptions, tables and figures: one formatter.

The rule: a count is exact (1,024 devices, 8,030,261,248 parameters); a measure has three significant figures
(a plate may give one more where it says why: model states in a sentence, platelib.zero.STATE_FIGURES)
with their trailing zeros (0.390 s, 0.0714 s, 7.80 MB), no whole digit rounded away (91,798 s), in the unit that
suits it (s from 10 ms up, then ms, µs; TB, GB, MB, kB); a percentage is a measure too, written whole when it is
a whole percent (45%, 100%) and never rounded to 0% when it is not zero (0.470%); a share below one is a decimal
(0.750 of a sequence; a plate may say an even split in words, "half a sequence"); powers of ten are superscripts (10⁹ B). Rounding is half-up on the number's exact binary
value, which is what JavaScript's toFixed does.

Written once, in the Python the page runs (generator/page/compiler.py): the build calls it here, and the page runs it
compiled, as its notation.js (generator/plate/texts.py). Only a double's exact digits differ by language, in
generator/page/native.py and templates/page/native.js. NaN is written 'NaN' by num and about; any other function given
NaN or an infinity fails in the build (ValueError or ArithmeticError), where the page writes 'NaN' or the like.
"""
from __future__ import annotations

import math

from .native import exponent, fixed

GB = 1e9  # bytes in a gigabyte, the unit sizes are given in
FIGURES = 3  # significant figures of every measure
_PLAIN, _RAISED = "0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"  # each character of an exponent and its superscript
# Each unit with the decimal exponent a value has from it up, once rounded to FIGURES (so that 999.6 µs is written
# 1.00 ms, not 1,000 µs), and its size: seconds down to 10 ms (0.0714 s reads best in s), then each unit from one.
# The last unit takes what is left.
_TIME_UNITS = (("s", -2, 1.0), ("ms", -3, 1e-3), ("µs", -6, 1e-6), ("ns", None, 1e-9))
_SIZE_UNITS = (("TB", 12, 1e12), ("GB", 9, 1e9), ("MB", 6, 1e6), ("kB", 3, 1e3), ("B", None, 1.0))


def num(value, digits=0):
    """1024 → '1,024'; num(128.48, 1) → '128.5'; half-up (2.5 → '3'), thousands separated: counts and fixed decimals."""
    text = fixed(value, digits)
    if not math.isfinite(float(value)):
        return text
    sign = ""
    if text.startswith("-"):
        text = text[1:]
        sign = "" if text.rstrip("0.") == "" else "-"  # rounded to zero: no sign
    point = text.find(".")
    whole = text if point < 0 else text[:point]
    grouped = whole[max(len(whole) - 3, 0):]
    end = len(whole) - 3
    while end > 0:
        grouped = whole[max(end - 3, 0):end] + "," + grouped
        end -= 3
    return sign + grouped + ("" if point < 0 else text[point:])


def sig(value, figures=FIGURES):
    """A measure to `figures` significant figures with their trailing zeros: 0.39 → '0.390', 0.006934 → '0.00693',
    91797.64 → '91,798' (whole digits are never rounded away), 0 → '0'."""
    value = float(value)
    if value == 0:
        return "0"
    return num(value, max(0, figures - 1 - exponent(value, figures)))  # after rounding: 0.9996 counts as 1.00


def given(value, figures=FIGURES):
    """A value an author or reader gives (a link's GB/s, a model's size in its name), as given, to at most
    `figures` significant figures and no zeros added: 25 → '25', 12.5 → '12.5', 8.030261248 → '8.03'."""
    text = sig(value, figures)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _in_unit(value, units, figures=FIGURES):
    """value to `figures` in the first of units (name, lowest exponent, size) it reaches, once rounded."""
    power = exponent(value, figures)
    for unit, lowest, size in units:
        if lowest is None or power >= lowest:
            return sig(value / size, figures) + " " + unit
    return ""  # never: the last unit takes what is left


def seconds(value, digits=None):
    """0.6424 → '0.642 s', 0.0714 → '0.0714 s', 0.000483 → '483 µs'. `digits` is accepted for prose written
    before the one rule (seconds(3)) and ignored: every time has three significant figures."""
    value = float(value)
    if value == 0:
        return "0 s"
    return _in_unit(value, _TIME_UNITS)


def data_size(value, figures=FIGURES):
    """Bytes in the decimal unit that suits them, to 3 significant figures (or `figures`, where a plate says why):
    1.05e9 → '1.05 GB', 7.8e6 → '7.80 MB'."""
    value = float(value)
    if value == 0:
        return "0 B"
    return _in_unit(value, _SIZE_UNITS, figures)


def gigabytes(value, figures=FIGURES):
    """A size given in GB (10⁹ B), as data_size writes it: 128.48 → '128 GB', 0.00784 → '7.84 MB'."""
    return data_size(float(value) * 1e9, figures)


def _nearest(value):
    """The whole number nearest value, a tie to the even one (Python's round, which the page has not)."""
    below = math.floor(value)
    gap = value - below
    if gap > 0.5 or (gap == 0.5 and below - 2 * math.floor(below / 2) != 0):
        return below + 1
    return below


def percent(fraction, digits=None):
    """0.685 → '68.5%', 0.0047 → '0.470%', 0.45 → '45%' (a whole percent is written whole), 0.99996 → '100%'.
    `digits` is accepted for prose written before the one rule and ignored."""
    value = float(fraction) * 100
    whole = _nearest(value)
    if value == 0 or abs(value - whole) <= 1e-9 * max(1.0, abs(value)):
        return num(whole) + "%"
    return sig(value) + "%"


def billions(value, digits=1):
    """A parameter count in billions: 8_030_261_248 → '8.03', billions(x, 0) → '8' (a model's round name)."""
    return num(float(value) / 1e9) if digits == 0 else sig(float(value) / 1e9)


def fraction(value):
    """A share as a decimal measure, one style for all: 0.5 → '0.500', 0.0625 → '0.0625', 0.238 → '0.238'."""
    return sig(value)


def power(base, exponent):
    """10, 9 → '10⁹': a power of ten as it is printed, never with a caret (base and exponent whole numbers)."""
    digits = str(exponent)
    raised = ""
    for i in range(len(digits)):
        at = _PLAIN.find(digits[i])
        raised += digits[i] if at < 0 else _RAISED[at]
    return str(base) + raised


def about(value, figures=2):
    """A rounded figure for 'about …', to significant figures, ties away from zero: 5934 → '5,900'. No zero is
    kept after the point: an approximation, not a measure (about 25)."""
    value = float(value)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return num(value)
    # The exponent after rounding: where rounding carries (9.96 → 10), one place fewer rounds to the same number.
    text = num(value, figures - 1 - exponent(value, figures))
    return text.rstrip("0").rstrip(".") if "." in text else text
