"""No two words of a figure overprint each other (issue 20): the text boxes of every live figure, for the default
and a sample of selections that move the labels (NVLink and its hypothetical reach, an early crossing, sharding,
backward-only overlap, the largest model), at 1,280, 390 and 360 px wide, in light and dark."""
from __future__ import annotations

import pytest

from conftest import shown_key, wait_until

pytestmark = pytest.mark.browser

# The visible text boxes of each figure (hidden labels are transparent and cut to a pixel), and each pair that
# intersects.
COLLISIONS = """() => [...document.querySelectorAll('figure .chart svg')].map((svg) => {
  const shown = (t) => {
    for (let e = t; e && e !== svg; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
      if (e.getAttribute('opacity') === '0' || e.getAttribute('fill-opacity') === '0') return false;
    }
    return t.textContent.trim() !== '';
  };
  const boxes = [...svg.querySelectorAll('text')].filter(shown).map((t) => {
    const r = t.getBoundingClientRect();
    return { text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  }).filter((b) => b.right - b.left > 1 && b.bottom - b.top > 1);
  const hits = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) hits.push([a.text, b.text]);
  }));
  return { figure: svg.closest('figure').id, words: boxes.length, hits };
})"""


def sample(default: dict, choices: dict) -> list[dict]:
    """The default and selections that move the figures' labels, each only where the content offers its values."""
    wanted = [{}, {"network": "nvlink"}, {"network": "nvlink", "batch": "1M"}, {"network": "nvlink", "gpu": "b200"},
              {"network": "nvlink", "gpu": "gb200-nvl72"}, {"batch": "1M"}, {"sharding": "zero3"},
              {"sharding": "zero1"}, {"overlap": "backward"}, {"model": "llama3-405b", "batch": "16M"},
              {"precision": "fp32", "topology": "nodes"}]
    out = [{**default, **w} for w in wanted if all(v in choices.get(k, ()) for k, v in w.items())]
    # and, whatever the content, its first and last value of every key
    out += [{**default, k: values[i]} for k, values in choices.items() for i in (0, -1)]
    return [s for i, s in enumerate(out) if s not in out[:i]]


@pytest.mark.parametrize("width", [1280, 390, 360])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_two_words_of_a_figure_overlap(site, browser, width, scheme):
    context = browser.new_context(offline=True, viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    data = page.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    choices = {k: [v for v in values if v != "custom"] for k, values in data["choices"].items()}
    selections = sample(data["default"], choices)
    assert len(selections) > 5
    found = {}
    for sel in selections:
        page.evaluate("(sel) => { window.plate.show(sel); }", sel)
        wait_until(page, f"document.documentElement.dataset.shown === {shown_key(data, sel)!r}")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        figures = page.evaluate(COLLISIONS)
        assert len(figures) == len(data["figures"]) and all(f["words"] > 3 for f in figures), figures  # all live
        for f in figures:
            if f["hits"]:
                found[(f["figure"], tuple(sorted(sel.items())))] = f["hits"]
    context.close()
    assert found == {}
