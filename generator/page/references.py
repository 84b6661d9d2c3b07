"""Where a text names another plate ("plate XIV.5"): the one rule by which the page as built (generator/page/crossrefs.py)
and the live readout (templates/page/texts.js, which runs this module compiled, generator/page/compiler.py) make such a
reference a link.

The rule: the word "plate" or "Plate", not after a letter, digit, _, # or -; one or more spaces; then the id, letters
and digits, a point and digits, which ends where no letter, digit, _ or further ".N" follows: "XIV.5." ends a
sentence, XIV.50 and XIV.5.1 are other plates. Letters, digits and spaces are spelt out here (ASCII letters and
digits, the spaces both Python's and JavaScript's \\s hold), so that the page and the build read a text alike.
"""

_SPACES = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
          "\u202f\u205f\u3000"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_DIGITS = "0123456789"
_BEFORE = _ALNUM + "_#-"  # what may not come before the word


def _is(text, at, chars):
    """Whether text has one of chars at index at."""
    return 0 <= at < len(text) and chars.find(text[at]) >= 0


def _run(text, at, chars):
    """The index after the run of chars from at."""
    while _is(text, at, chars):
        at += 1
    return at


def _spaces(text, at, spellings):
    """The index after the spaces from at (each a space character or one of spellings)."""
    while True:
        if _is(text, at, _SPACES):
            at += 1
            continue
        found = False
        for spelling in spellings:
            if not found and text[at:at + len(spelling)] == spelling:
                at += len(spelling)
                found = True
        if not found:
            return at


def _reference_at(text, at, spellings):
    """The end of a reference starting at index at, and its plate's id; [-1, ''] when none starts there."""
    if _is(text, at - 1, _BEFORE) or not _is(text, at, "Pp") or text[at + 1:at + 5] != "late":
        return [-1, ""]
    start = _spaces(text, at + 5, spellings)
    if start == at + 5:
        return [-1, ""]
    point = _run(text, start, _ALNUM)
    if point == start or not _is(text, point, ".") or not _is(text, point + 1, _DIGITS):
        return [-1, ""]
    end = _run(text, point + 1, _DIGITS)
    if _is(text, end, _ALNUM + "_") or (_is(text, end, ".") and _is(text, end + 1, _DIGITS)):
        return [-1, ""]
    return [end, text[start:end]]


def split_references(text, pages, spellings):
    """text split at its references to plates: [text, [reference, id], text, …, text], the references being those
    whose id is in pages ({id: page}; None: every reference), and spellings the further spellings of a space the
    text may hold (in HTML, the entities of a no-break space). Joined again, the pieces are the text."""
    pieces = []
    last = 0
    at = 0
    while at < len(text):
        found = _reference_at(text, at, spellings)
        end = found[0]
        if end < 0 or (pages is not None and not (found[1] in pages)):
            at = at + 1 if end < 0 else end
            continue
        pieces.append(text[last:at])
        pieces.append([text[at:end], found[1]])
        last = end
        at = end
    pieces.append(text[last:])
    return pieces
