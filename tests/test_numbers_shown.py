"""Every number the page shows follows notation.py's one rule (issue 20): on the built page as it stands without
scripts, and live on the default, on every preset selection and on every option's every value; and in the texts
the page writes for every combination of presets and options."""
from __future__ import annotations

import pytest

from conftest import covering, shown_key, wait_until
from shown_numbers import problems

pytestmark = pytest.mark.browser

# Every text node a reader can see or open (tables in closed details too), and the figures' SVG words; not
# scripts, styles, or the inert runtime.
VISIBLE_TEXT = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const words = [];
  const axis = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("script, style, template, noscript")) continue;
    (parent.closest(".role-axis-label") ? axis : words).push(node.textContent);
  }
  return { words: words.join(" ").replace(/\\s+/g, " "), axis: axis.join(" ") };
}"""

SHOW = """(sel) => { window.plate.show(sel); return true; }"""


def checked(shown: dict, where) -> None:
    """No problem in the words; an axis tick may read 0% (the axis starts at zero) but no caret."""
    assert problems(shown["words"]) == [], where
    assert "^" not in shown["axis"], where


@pytest.fixture(scope="module")
def plate(site, page_pool):
    page = page_pool.take(offline=True)
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    yield page
    page_pool.give(page)


@pytest.fixture(scope="module")
def selections(plate):
    """(default, choices): the page's own default selection and every key's values, custom ones left out."""
    data = plate.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    return data["default"], {k: [v for v in values if v != "custom"] for k, values in data["choices"].items()}


def test_the_static_page_shows_numbers_by_the_rule(site, new_page):
    page = new_page(offline=True, java_script_enabled=False)
    page.goto((site / "index.html").resolve().as_uri())
    shown = page.evaluate(VISIBLE_TEXT)
    assert "replicas" in shown["words"] and len(shown["words"]) > 10_000  # the walker read the page's words
    checked(shown, "static page")


def walk(default: dict, choices: dict) -> list[dict]:
    """The default; every preset selection (the keys whose values the content lists: model, batch, network) with
    the default options; and the default with each option set to each of its values."""
    presets = [k for k in ("model", "batch", "network") if k in choices]
    out = [dict(default)]
    grid = [{}]
    for k in presets:
        grid = [{**g, k: v} for g in grid for v in choices[k]]
    out += [{**default, **g} for g in grid]
    out += [{**default, k: v} for k in choices if k not in presets for v in choices[k]]
    unique = []
    for sel in out:
        if sel not in unique:
            unique.append(sel)
    return unique


def test_the_live_page_shows_numbers_by_the_rule_on_every_selection_and_option(plate, selections):
    default, choices = selections
    walked = walk(default, choices)
    assert len(walked) > sum(len(v) for v in choices.values())  # the walk reached past the default
    for sel in walked:
        plate.evaluate(SHOW, sel)
        data = plate.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
        wait_until(plate, f"document.documentElement.dataset.shown === {shown_key(data, sel)!r}")
        checked(plate.evaluate(VISIBLE_TEXT), sel)


EVERY_TEXT = """(selections) => selections.map((sel) => {
  const t = window.plate.texts(sel);
  return [t.caption, t.readout, ...Object.values(t.describe), ...Object.values(t.tables).flat(2)].join(" | ");
})"""


def selections_custom(plate) -> str:
    """The choices' values of the model, batch and network, joined: where the page offers "custom"."""
    data = plate.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    return " ".join(v for k in ("model", "batch", "network") for v in data["choices"].get(k, []))


def test_a_covering_set_of_presets_and_options_writes_numbers_by_the_rule(plate, selections):
    """The texts the page writes (readout, descriptions, tables) for every two presets or options of any two controls
    together, and random selections besides (conftest.covering)."""
    default, choices = selections
    grid = covering(choices, 300)
    # the MFU slider's ends and a reader's own run (issue 10's acceptance case) on top
    grid += [{**default, "mfu": mfu} for mfu in (0.2, 0.7)]
    own = "custom" in selections_custom(plate).split()
    if own:
        grid += [{**default, "model": "custom", "params": 13_000_000_000, "batch": "custom", "tokens": 2_000_000,
                  "network": "custom", "gbps": 25, "mfu": 0.38}]
    for start in range(0, len(grid), 400):
        batch = grid[start:start + 400]
        for sel, text in zip(batch, plate.evaluate(EVERY_TEXT, batch)):
            assert problems(text) == [], sel
    if own:
        assert text.startswith("custom 13B model · 2,000,000 tokens · 25 GB/s"), text[:80]  # the own run was read
