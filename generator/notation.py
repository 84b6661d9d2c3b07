"""Numbers as the plate writes them, in prose, readouts, descriptions, tables and figures: one formatter.

The rule: a count is exact (1,024 devices, 8,030,261,248 parameters); a measure has three significant figures
with their trailing zeros (0.390 s, 0.0714 s, 7.80 MB), no whole digit rounded away (91,798 s), in the unit that
suits it (s from 10 ms up, then ms, µs; TB, GB, MB, kB); a percentage is a measure too, written whole when it is
a whole percent (45%, 100%) and never rounded to 0% when it is not zero (0.470%); a share below one is a decimal
(0.125 of a sequence); powers of ten are superscripts (10⁹ B). Rounding is half-up on the number's exact binary
value, which is what JavaScript's toFixed does, so templates/page/notation.js (`num`, `sig`, `seconds`, `percent`,
`data_size`, `fraction`, `about`) prints the same text for the same double.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

FIGURES = 3  # significant figures of every measure
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
# Seconds down to 10 ms (0.0714 s reads best in s), then each unit from one of it.
TIME_UNITS = (("s", 1e-2, 1.0), ("ms", 1e-3, 1e-3), ("µs", 1e-6, 1e-6), ("ns", 0.0, 1e-9))
SIZE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 0.0))


def num(value, digits: int = 0) -> str:
    """1024 → '1,024'; num(128.48, 1) → '128.5'; half-up (2.5 → '3'), thousands separated: counts and fixed decimals."""
    exact = Decimal(float(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{exact:,.{digits}f}"
    return "0" + text[2:] if text.startswith("-0") and exact == 0 else text


def sig(value, figures: int = FIGURES) -> str:
    """A measure to `figures` significant figures with their trailing zeros: 0.39 → '0.390', 0.006934 → '0.00693',
    91797.64 → '91,798' (whole digits are never rounded away), 0 → '0'."""
    value = float(value)
    if value == 0:
        return "0"
    exponent = int(f"{value:.{figures - 1}e}".split("e")[1])  # after rounding: 0.9996 counts as 1.00
    return num(value, max(0, figures - 1 - exponent))


def _rounded(value: float) -> float:
    """|value| at three significant figures, which picks its unit: 999.6 µs is written 1.00 ms, not 1,000 µs."""
    return float(f"{abs(value):.{FIGURES - 1}e}")


def given(value, figures: int = FIGURES) -> str:
    """A value an author or reader gives (a link's GB/s, a model's size in its name), as given, to at most
    `figures` significant figures and no zeros added: 25 → '25', 12.5 → '12.5', 8.030261248 → '8.03'."""
    text = sig(value, figures)
    return text.rstrip("0").rstrip(".") if "." in text else text


def seconds(value, digits: int | None = None) -> str:
    """0.6424 → '0.642 s', 0.0714 → '0.0714 s', 0.000483 → '483 µs'. `digits` is accepted for prose written
    before the one rule (seconds(3)) and ignored: every time has three significant figures."""
    value = float(value)
    if value == 0:
        return "0 s"
    for unit, floor, scale in TIME_UNITS:
        if _rounded(value) >= floor:
            return f"{sig(value / scale)} {unit}"
    raise AssertionError("unreachable: the last unit has no floor")


def data_size(value) -> str:
    """Bytes in the decimal unit that suits them, to 3 significant figures: 1.05e9 → '1.05 GB', 7.8e6 → '7.80 MB'."""
    value = float(value)
    if value == 0:
        return "0 B"
    for unit, scale in SIZE_UNITS:
        if _rounded(value) >= scale:
            return f"{sig(value / scale if scale else value)} {unit}"
    raise AssertionError("unreachable: the last unit has no floor")


def gigabytes(value) -> str:
    """A size given in GB (10⁹ B), as data_size writes it: 128.48 → '128 GB', 0.00784 → '7.84 MB'."""
    return data_size(float(value) * 1e9)


def percent(fraction, digits: int | None = None) -> str:
    """0.685 → '68.5%', 0.0047 → '0.470%', 0.45 → '45%' (a whole percent is written whole), 0.99996 → '100%'.
    `digits` is accepted for prose written before the one rule and ignored."""
    value = float(fraction) * 100
    whole = round(value)
    if value == 0 or abs(value - whole) <= 1e-9 * max(1.0, abs(value)):
        return f"{num(whole)}%"
    return f"{sig(value)}%"


def billions(value, digits: int = 1) -> str:
    """A parameter count in billions: 8_030_261_248 → '8.03', billions(x, 0) → '8' (a model's round name)."""
    return num(float(value) / 1e9) if digits == 0 else sig(float(value) / 1e9)


def fraction(value) -> str:
    """A share as a decimal measure, one style for all: 0.5 → '0.500', 0.0625 → '0.0625', 0.238 → '0.238'."""
    return sig(value)


def power(base: int, exponent: int) -> str:
    """10, 9 → '10⁹': a power of ten as it is printed, never with a caret."""
    return f"{base}{str(exponent).translate(SUPERSCRIPTS)}"


def about(value, figures: int = 2) -> str:
    """A rounded figure for 'about …', to significant figures, ties away from zero: 5934 → '5,900'."""
    exact = Decimal(float(value))
    if exact == 0:
        return "0"
    places = figures - exact.adjusted() - 1
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{rounded:,.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # an approximation, not a measure: about 25
