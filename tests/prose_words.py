"""Words of a built page's prose, section by section: `python tests/prose_words.py site/index.html`.

Counted: the deck, the article's prose and the takeaway. Not counted (issue 20's rule): citation marks, the figures and their
descriptions, the controls and the readout, the terms and the sources, the header's volume line and keywords.
"""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

SKIPPED = {"figure", "section", "script", "style", "nav", "footer", "ul.keywords", "p.plate-id", "h1", "sup.cite"}
VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source"}
WORD = re.compile(r"\S*\w\S*")  # a word: a run without spaces holding a letter or digit ("2(n−1)/n" is one)


class _Sections(HTMLParser):
    """Splits the page's counted text at each h2 of the article."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.skipping = 0
        self.heading = False
        self.sections: list[list] = [["(opening)", []]]

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        names = {tag, *(f"{tag}.{c}" for c in classes)}
        skip = bool(names & SKIPPED) or self.skipping > 0
        self.stack.append((tag, skip))
        if skip:
            self.skipping += 1
        elif tag == "h2":
            self.heading = True
            self.sections.append(["", []])
        elif tag == "aside" and "takeaway" in classes:
            self.sections.append(["(takeaway)", []])

    def handle_endtag(self, tag):
        while self.stack:
            name, skip = self.stack.pop()
            if skip:
                self.skipping -= 1
            if name == "h2":
                self.heading = False
            if name == tag:
                break

    def handle_data(self, data):
        if self.skipping or not self.stack:
            return
        if self.heading:
            self.sections[-1][0] += data
        self.sections[-1][1].append(data)


def sections(page: str) -> list[tuple[str, int]]:
    """(section title, words) in page order; the headings' own words count in their section."""
    start = page.find("<header")
    parser = _Sections()
    parser.feed(page[start if start >= 0 else 0:])
    return [(title.strip(), len(WORD.findall(" ".join(texts)))) for title, texts in parser.sections]


def main(argv: list[str]) -> int:
    """Print each section's words and the total."""
    if len(argv) != 1:
        print("usage: python tests/prose_words.py site/index.html", file=sys.stderr)
        return 2
    rows = sections(Path(argv[0]).read_text(encoding="utf-8"))
    for title, words in rows:
        print(f"{words:6,}  {title}")
    print(f"{sum(w for _, w in rows):6,}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
