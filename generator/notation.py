"""Numbers as the plate writes them, in prose, readouts, descriptions and tables: one formatter.

Rounding is half-up on the number's exact binary value, which is what JavaScript's toFixed does, so
templates/model.js (`num`, `sig`, `seconds`, `percent`) prints the same text for the same double.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

FIGURES = 3  # significant figures of a time when no decimals are asked for


def num(value, digits: int = 0) -> str:
    """1024 → '1,024'; num(128.48, 1) → '128.5'; half-up (2.5 → '3'), thousands separated."""
    exact = Decimal(float(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{exact:,.{digits}f}"
    return "0" + text[2:] if text.startswith("-0") and exact == 0 else text


def sig(value, figures: int = FIGURES) -> str:
    """A number to `figures` significant figures without padding: 91797.64 → '91,798', 0.006934 → '0.00693',
    0.5 → '0.5' (whole digits are never rounded away, trailing zeros are dropped)."""
    value = float(value)
    if value == 0:
        return "0"
    exponent = int(f"{value:.{figures - 1}e}".split("e")[1])  # after rounding: 0.9996 counts as 1.00
    text = num(value, max(0, figures - 1 - exponent))
    return text.rstrip("0").rstrip(".") if "." in text else text


def seconds(value, digits: int | None = None) -> str:
    """0.6424 → '0.642 s' (3 significant figures), or with fixed decimals: seconds(0.6424, 2) → '0.64 s'."""
    return f"{sig(value) if digits is None else num(value, digits)} s"


def data_size(value) -> str:
    """Bytes in the decimal unit that suits them, to 3 significant figures: 1.05e9 → '1.05 GB', 3.4e7 → '34 MB'."""
    value = float(value)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{sig(value / scale)} {unit}"
    return f"{sig(value)} B"


def percent(fraction, digits: int = 0) -> str:
    """0.45 → '45%'; half-up like every number here."""
    return f"{num(float(fraction) * 100, digits)}%"


def billions(value, digits: int = 1) -> str:
    """6_979_588_096 → '7.0'."""
    return num(float(value) / 1e9, digits)


def fraction(value) -> str:
    """0.5 → 'half', 0.0625 → '1/16'; other shares to 3 significant figures."""
    words = {1.0: "all", 0.5: "half", 0.25: "a quarter"}
    if value in words:
        return words[value]
    if 0 < value < 1 and (1 / value).is_integer():
        return f"1/{int(1 / value)}"
    return sig(value)


def about(value, figures: int = 2) -> str:
    """A rounded figure for 'about …', to significant figures, ties away from zero: 5934 → '5,900'."""
    exact = Decimal(float(value))
    if exact == 0:
        return "0"
    places = figures - exact.adjusted() - 1
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{rounded:,.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # no padded digits: 25, not 25.0
