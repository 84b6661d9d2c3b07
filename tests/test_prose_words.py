"""The prose's length: the counter of tests/prose_words.py, and the shipped plate within the README's budget."""
import re

import prose_words

from conftest import CONTENT, ROOT
from xiv4 import SHIPPED

PAGE = """<header><p class="plate-id">Vol. XIV</p><h1>Title words</h1><p class="deck">One two three.</p>
<ul class="keywords"><li>kw</li></ul></header><main><article class="prose"><p>Four five<sup class="cite">[1]</sup>
six, 2(n−1)/n and 0.642 s.</p><section class="workshop"><div class="readout">not these</div>
<figure><figcaption>nor these</figcaption></figure></section><h2 id="a">Next part</h2><p>Seven eight.</p>
<section class="terms"><h2>Terms</h2><dl><dt>x</dt><dd>y</dd></dl></section>
<aside class="takeaway"><p>Nine ten.</p></aside><section class="sources"><h2>Sources</h2></section></article></main>
<footer><p>foot</p></footer>"""


def readme_words() -> int:
    """The prose budget the README states."""
    found = re.search(r"prose is at most ([\d,]+) words", (ROOT / "README.md").read_text())
    assert found, "the README no longer states the prose's budget"
    return int(found.group(1).replace(",", ""))


def test_the_counter_counts_the_prose_and_nothing_else():
    assert prose_words.sections(PAGE) == [("(opening)", 10), ("Next part", 4), ("(takeaway)", 2)]


def test_the_shipped_prose_is_within_the_readmes_budget(site):
    rows = prose_words.sections((site / "index.html").read_text(encoding="utf-8"))
    headings = re.findall(r"(?m)^## (.+)$", (CONTENT / "plate.md").read_text(encoding="utf-8"))
    assert [title for title, _ in rows[1:-1]] == headings  # every section of the prose is counted, in order
    total = sum(words for _, words in rows)
    slack = 0 if CONTENT == (SHIPPED).resolve() else 500  # an author's content may say more
    assert 0 < total <= readme_words() + slack, rows
