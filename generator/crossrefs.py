"""Cross-references between the plates of one build: the text "plate XIV.5" in HTML made a link to that plate's
page when it is built alongside; any other stays text."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

# "plate XIV.5" / "Plate XIV.5": the word, a space (or a no-break one, as a character or an entity), a plate id. The
# id ends where no letter, digit or further ".N" follows: "XIV.5." ends a sentence, XIV.50 and XIV.5.1 are others.
# Letters, digits and spaces are spelt out, not \w, \d, \s: Python's and JavaScript's differ, and the page's
# texts.js links the live readout by the same rule (tests/test_crossrefs_live.py holds the two to it).
SPACE = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"  # in both languages' \s
REFERENCE = re.compile(r"(?<![A-Za-z0-9_#-])([Pp]late(?:" + SPACE + r"|&nbsp;|&#160;|&#xa0;)+)([A-Za-z0-9]+\.[0-9]+)"
                       r"(?![A-Za-z0-9_]|\.[0-9])")


@dataclass(frozen=True)
class Links:
    """What a plate's page links to in a series build: the other plates built with it ({"XIV.5": page file}) and
    the volume's index page."""

    pages: dict[str, str] = field(default_factory=dict)
    volume_page: str = ""


_TAG = re.compile(r"(<!--.*?-->|<[^>]*>)", re.S)
# Inside these a reference is not made a link: a link already, code, or text that is not the page's prose.
_KEEP = {"a", "code", "pre", "kbd", "samp", "script", "style", "textarea", "title", "button", "select", "option"}


def link_plates(text: str, pages: dict[str, str]) -> str:
    """HTML with each "plate <id>" outside links, code and attributes made a link to pages[id] ({"XIV.5":
    "subject.html"}); ids not in pages stay text, and nothing else changes."""
    if not pages:
        return text
    pieces = _TAG.split(text)
    open_: dict[str, int] = {}
    for i, piece in enumerate(pieces):
        if i % 2:  # a tag or a comment
            tag = re.match(r"<(/?)([A-Za-z][A-Za-z0-9-]*)", piece)
            if tag and tag.group(2).lower() in _KEEP and not piece.endswith("/>"):
                name = tag.group(2).lower()
                open_[name] = max(open_.get(name, 0) + (-1 if tag.group(1) else 1), 0)
                if name == "option":  # options do not nest: one's start ends the one open (its end tag may be left out)
                    open_[name] = min(open_[name], 1)
                elif name == "select" and tag.group(1):  # and the select's end ends the last
                    open_["option"] = 0
            continue
        if piece and not any(open_.values()):
            pieces[i] = REFERENCE.sub(lambda m: _link(m, pages), piece)
    return "".join(pieces)


def _link(match: re.Match, pages: dict[str, str]) -> str:
    """The reference as a link, or as it was when its plate is not in the build."""
    page = pages.get(match.group(2))
    if page is None:
        return match.group(0)
    return f'<a href="{html.escape(page, quote=True)}">{match.group(0)}</a>'
