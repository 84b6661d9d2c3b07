"""What the formatter (generator/page/notation.py) cannot say in the Python the page runs: a double's exact decimal digits.
The page has the same two functions in JavaScript, templates/page/native.js, which the compiled formatter imports in
place of this module (generator/page/compiler.py); tests/test_notation.py holds the two to the same text for any double."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext


def fixed(value, digits: int) -> str:
    """value rounded half-up (ties away from zero) on its exact binary value to digits decimal places (a negative
    digits rounds to tens, hundreds, …), written in full with no grouping: JavaScript's toFixed rule. A negative
    value keeps its sign even when it rounds to zero ('-0.00'); NaN is 'NaN'; an infinity raises ValueError."""
    value = float(value)
    exact = Decimal(value)
    if exact.is_nan():
        return "NaN"
    if exact.is_infinite():
        raise ValueError(f"{value} has no decimal digits")
    with localcontext() as context:  # every digit of the largest double, at the places asked for
        context.prec = 330 + max(digits, 0)
        rounded = abs(exact).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
        text = f"{rounded:.{max(digits, 0)}f}"
    return "-" + text if value < 0 else text


def exponent(value, figures: int) -> int:
    """The decimal exponent of value once rounded to figures significant figures: 0.9996, 3 → 0 (it is 1.00);
    ValueError for NaN and the infinities."""
    text = f"{float(value):.{figures - 1}e}"
    if "e" not in text:
        raise ValueError(f"{value} has no decimal exponent")
    return int(text.split("e")[1])
