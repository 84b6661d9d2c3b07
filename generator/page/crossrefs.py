"""Cross-references between the plates of one build: the text "plate XIV.5" in HTML made a link to that plate's
page when it is built alongside; any other stays text. Where a reference is, generator/page/references.py says, for the
page as built here and for the live readout (templates/page/texts.js runs it compiled)."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from .references import split_references

# In HTML, a no-break space may be spelt as an entity too: "plate&nbsp;XIV.5" is a reference as "plate XIV.5" is.
HTML_SPACES = ("&nbsp;", "&#160;", "&#xa0;")


@dataclass(frozen=True)
class Links:
    """What a plate's page links to in a series build: the other plates built with it ({"XIV.5": page file}), its
    volume's index page and the series' top page."""

    pages: dict[str, str] = field(default_factory=dict)
    volume_page: str = ""
    series_page: str = ""


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
            pieces[i] = "".join(_linked(part, pages) for part in split_references(piece, pages, HTML_SPACES))
    return "".join(pieces)


def _linked(part, pages: dict[str, str]) -> str:
    """A piece of split_references' as HTML: text as it was, a reference [words, id] as a link to its plate's page."""
    if isinstance(part, str):
        return part
    words, plate = part
    return f'<a href="{html.escape(pages[plate], quote=True)}">{words}</a>'
