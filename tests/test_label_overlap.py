"""No word of a figure touches another, nor a line, a rule, a point or a shading's edge (issues 20 and 32): the
geometry of every live figure of every plate in the series, measured in the page (text boxes as laid out, the marks'
outlines sampled along their paths), compared as shapes, never as pixels; at a desktop's and a phone's width, over
every preset selection of a plate that has few, and over a covering set (conftest.covering: every two choices of any
two controls together, and random selections) of one that has many."""
from __future__ import annotations

import json
import math

import pytest

from conftest import EVERY_SELECTION, SERIES, covering, pairwise, shown_key, wait_until
from generator.source import volume

pytestmark = pytest.mark.browser

# a plate with at most this many selections is walked whole (under EVERY_SELECTION, up to 5,000)
EVERY_MOST = 5_000 if EVERY_SELECTION else 150
PRESETS_MOST = 300  # beyond, every preset selection too, if they are at most this many
WIDTHS = (1280, 390)

# For each figure: every visible text's box and every mark's outline as short segments (a line's, a rule's, a point's,
# a rect's edges: shading and bars), each with half its stroke's width, in the page's pixels; then each text that
# touches another text or comes within a segment's half-width of one. Axis labels and titles count as words; grid
# lines are no obstacle (words may cross them, as in any chart), and the axes' own words are not checked against
# their ticks (Vega sets them clear). A mark's own words are held to it like any other's: "touching" is a collision.
GEOMETRY = """() => [...document.querySelectorAll('figure .chart svg')].map((svg) => {
  const shown = (el) => {
    for (let e = el; e && e !== svg; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
      if (e.getAttribute('opacity') === '0') return false;
    }
    return true;
  };
  const texts = [...svg.querySelectorAll('text')].filter((t) => shown(t) && t.textContent.trim() !== '')
    .map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent, axis: !!t.closest('.role-axis'), l: r.left, t: r.top, r: r.right, b: r.bottom };
    }).filter((b) => b.r - b.l > 1 && b.b - b.t > 1);
  const segments = [];
  const marks = svg.querySelectorAll('.mark-line path, .mark-rule line, .mark-rule path, .mark-rect path, '
    + '.mark-symbol path, .mark-area path');
  for (const el of marks) {
    if (el.closest('.role-axis-grid') || !shown(el)) continue;
    const style = getComputedStyle(el);
    const stroked = style.stroke !== 'none' && Number(style.strokeOpacity) > 0 && parseFloat(style.strokeWidth) > 0;
    const filled = style.fill !== 'none' && Number(style.fillOpacity) > 0;
    if (!stroked && !filled) continue;
    const m = el.getScreenCTM();
    const half = stroked ? parseFloat(style.strokeWidth) * Math.hypot(m.a, m.b) / 2 : 0;
    const at = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
    const name = [...el.closest('.role-mark, .role-axis-domain, .role-axis-tick')?.classList || []].join(' ');
    const axis = !!el.closest('.role-axis');
    if (el.tagName === 'line') {
      const n = (k) => Number(el.getAttribute(k) || 0);
      segments.push([...at(n('x1'), n('y1')), ...at(n('x2'), n('y2')), half, name, axis]);
      continue;
    }
    if (!(el.getAttribute('d') || '').trim()) continue;  // an empty path (a mark with no data) draws nothing
    const length = el.getTotalLength();
    const steps = Math.max(1, Math.ceil(length / 2));
    let last = null;
    for (let i = 0; i <= steps; i++) {
      const p = el.getPointAtLength(length * i / steps);
      const q = at(p.x, p.y);
      if (last) segments.push([...last, ...q, half, name, axis]);
      last = q;
    }
  }
  // a segment within `pad` of a box: the box grown by pad, clipped against the segment (Liang-Barsky)
  const touches = (s, b) => {
    const [x1, y1, x2, y2, pad] = s;
    const l = b.l - pad, t = b.t - pad, r = b.r + pad, bo = b.b + pad;
    let u0 = 0, u1 = 1;
    const dx = x2 - x1, dy = y2 - y1;
    for (const [p, q] of [[-dx, x1 - l], [dx, r - x1], [-dy, y1 - t], [dy, bo - y1]]) {
      if (p === 0) { if (q < 0) return false; continue; }
      const u = q / p;
      if (p < 0) { if (u > u1) return false; if (u > u0) u0 = u; } else { if (u < u0) return false; if (u < u1) u1 = u; }
    }
    return true;
  };
  const hits = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    if (a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b) hits.push([a.text, b.text]);
  }));
  for (const a of texts) {
    if (a.axis) continue;
    const met = new Set();
    for (const s of segments) if (!met.has(s[5]) && touches(s, a)) met.add(s[5]);
    for (const name of met) hits.push([a.text, name || 'a mark']);
  }
  return { figure: svg.closest('figure').id, words: texts.length, marks: segments.length, hits };
})"""


def pages(site) -> list:
    """The series' plate pages (those with plate data), by file name."""
    return sorted(p.name for p in site.glob("*.html") if 'id="plate-data"' in p.read_text(encoding="utf-8"))


# The written plates' pages as the series' volume files name them: each walk split by page, width and half, so that
# no test holds a worker long (test_every_written_plate_is_walked holds this list to the pages the built series holds).
PAGES = sorted(vol.page_of(e) for vol, e in volume.load_series(SERIES).written())


def selections(data: dict) -> tuple[list[dict], bool]:
    """Every selection of a plate's page (the reader's own values aside) when there are at most EVERY_MOST; beyond,
    every preset selection (when at most PRESETS_MOST) and a covering set; and whether it is every selection. Under
    EVERY_SELECTION (docs/testing.md): every preset selection however many, then every pair of choices."""
    import itertools
    choices = {k: [v for v in values if v != "custom"] for k, values in data["choices"].items()}
    count = math.prod(len(v) for v in choices.values())
    if count <= EVERY_MOST:
        keys = list(choices)
        return [dict(zip(keys, combo)) for combo in itertools.product(*choices.values())], True
    walked = [{}]
    # every preset selection: each combination of the presets' controls (models, batches, ...), the options at the
    # default; under EVERY_SELECTION however many (covering() is then every combination: XIV.4's are over a million)
    kinds = [next((c for c in (k, k[:-1], k[:-2]) if c in choices), None) for k in data["presets"]]
    presets = {k: choices[k] for k in kinds if k is not None}
    if EVERY_SELECTION or math.prod(len(v) for v in presets.values()) <= PRESETS_MOST:
        walked += [dict(zip(presets, combo)) for combo in itertools.product(*presets.values())]
    walked += pairwise(choices) if EVERY_SELECTION else covering(choices, extra=20)
    walked = [{**data["default"], **s} for s in walked]
    return [s for i, s in enumerate(walked) if s not in walked[:i]], False


def open_plate(new_page, site, name: str, width: int):
    page = new_page(offline=True, viewport={"width": width, "height": 900})
    page.goto((site / name).resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    # Every view made before the first measure: the default's data-shown holds at once, while figures out of sight
    # may still show their static SVG (exact, but not the live marks this test measures).
    page.evaluate("() => window.plate.live().then(() => true)")
    return page


# In one round trip: show the selection, wait for every figure to show it (data-shown) and a frame, then measure.
SHOW_AND_MEASURE = f"""async ([sel, key]) => {{
  const root = document.documentElement, frame = () => new Promise((done) => requestAnimationFrame(done));
  window.plate.show(sel);
  for (let waited = 0; root.dataset.shown !== key; waited += 1) {{
    if (waited > 900) throw new Error(`the page never showed ${{key}}: data-shown is ${{root.dataset.shown}}`);
    await frame();
  }}
  await frame();  // the views' resize observers answer any change of their width before the measure
  return ({GEOMETRY})();
}}"""


def measure(page, data: dict, sel: dict) -> list[dict]:
    """The figures' geometry once the page shows sel, every figure drawn."""
    full = {**data["default"], **sel}
    return page.evaluate(SHOW_AND_MEASURE, [full, shown_key(data, full)])


def test_every_written_plate_is_walked(series_site):
    """The walks below take every plate page the built series holds, and the series has at least three."""
    assert PAGES == pages(series_site) and len(PAGES) >= 3, (PAGES, pages(series_site))


@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", PAGES)
def test_no_word_of_a_figure_touches_another_or_a_mark(series_site, new_page, name, width, half):
    """Every other selection of the walk (half 0 the first, third, ...; half 1 the second, fourth, ...)."""
    found = {}
    page = open_plate(new_page, series_site, name, width)
    data = page.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    chosen, every = selections(data)
    for sel in chosen[half::2]:
        figures = measure(page, data, sel)
        assert len(figures) == len(data["figures"]) and all(f["words"] > 3 and f["marks"] > 0 for f in figures), \
            (name, figures)  # all live
        for f in figures:
            if f["hits"]:
                found[(name, f["figure"], json.dumps(sel, sort_keys=True))] = f["hits"]
    assert len(chosen) > 1, (name, len(chosen), every)
    assert found == {}, f"{len(found)} figure selections with collisions; the first: {list(found.items())[:8]}"


def test_a_label_moved_onto_a_line_is_found(series_site, new_page):
    """The check can fail: Figure 1's first word of a plot, moved onto the middle of its first line."""
    name = pages(series_site)[0]
    page = open_plate(new_page, series_site, name, WIDTHS[0])
    data = page.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    before = {f["figure"]: f["hits"] for f in measure(page, data, {})}
    moved = page.evaluate("""() => {
      const svg = document.querySelector('figure .chart svg');
      const text = [...svg.querySelectorAll('.role-mark text')].find((t) => t.textContent.trim() !== '');
      const path = svg.querySelector('.mark-line path');
      const p = path.getPointAtLength(path.getTotalLength() / 2).matrixTransform(path.getScreenCTM());
      const local = new DOMPoint(p.x, p.y).matrixTransform(text.parentNode.getScreenCTM().inverse());
      text.setAttribute('transform', `translate(${local.x},${local.y})`);
      return [svg.closest('figure').id, text.textContent];
    }""")
    after = {f["figure"]: f["hits"] for f in page.evaluate(GEOMETRY)}
    figure, word = moved
    assert not any(word in hit for hit in before[figure])
    assert any(hit[0] == word for hit in after[figure]), after[figure]
