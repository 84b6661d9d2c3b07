"""Time a built page's work per selection, window.plate.factsOf and each of window.plate.datasets, on several builds
of one page in one Chromium, the pages taking turns round by round (docs/performance.md).

    python tests/selection_timing.py SITE/index.html OTHER/index.html   # ROUNDS, REPASSES, SELECTIONS, COLD

The selections are a walk from the first page's default, one control moved to its next option per step, the
controls in turn ("Custom…" left out), given to every page as it is. Each pass prices the whole walk; a page's
figure per pass is its mean per selection, and the report gives the min and median over the passes. COLD=1 loads
each page anew before each round (one pass each: the walk as a reader's first changes meet it, code not yet hot).
"""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from conftest import CHROMIUM_ARGS, chromium_path

WALK = """(count) => {
  const data = JSON.parse(document.getElementById("plate-data").textContent);
  const keys = [...data.keys, ...(data.cluster_keys || [])];
  const found = [];
  const sel = { ...data.default };
  for (let i = 0; i < count; i++) {
    found.push({ ...sel });
    const k = keys[i % keys.length], options = data.choices[k].filter((c) => c !== "custom");
    sel[k] = options[(options.indexOf(sel[k]) + 1) % options.length];
  }
  return found;
}"""
PASSES = """([sels, passes]) => {
  const plate = window.plate, names = Object.keys(plate.datasets), facts = [], rows = [];
  for (let p = 0; p < passes; p++) {
    let tf = 0, tr = 0;
    for (const s of sels) {
      const a = performance.now(), f = plate.factsOf(s), b = performance.now();
      for (const n of names) plate.datasets[n](f);
      tr += performance.now() - b; tf += b - a;
    }
    facts.push(tf / sels.length); rows.push(tr / sels.length);
  }
  return { facts, rows };
}"""
READY = "() => !!(window.plate && window.plate.factsOf)"


def main() -> None:
    pages = [Path(p).resolve() for p in sys.argv[1:]]
    rounds = int(os.environ.get("ROUNDS", 6))
    cold = bool(os.environ.get("COLD"))
    passes = 1 if cold else int(os.environ.get("REPASSES", 10))
    count = int(os.environ.get("SELECTIONS", 50))
    loads = [os.getloadavg()[0]]
    found = {page: {"facts": [], "rows": []} for page in pages}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        tabs = []
        for page in pages:
            tab = browser.new_page()
            tab.goto(page.as_uri())
            tab.wait_for_function(READY)
            tabs.append(tab)
        sels = tabs[0].evaluate(WALK, count)
        for _ in range(rounds):
            for page, tab in zip(pages, tabs):
                if cold:
                    tab.reload()
                    tab.wait_for_function(READY)
                times = tab.evaluate(PASSES, [sels, passes])
                for key in ("facts", "rows"):
                    found[page][key] += times[key]
            loads.append(os.getloadavg()[0])
        browser.close()
    print(f"{count} selections, {rounds} rounds of {passes} pass(es) per page{' on fresh loads' if cold else ''}; "
          f"load average {min(loads):.1f}-{max(loads):.1f}; ms per selection, min and median over the passes")
    for page in pages:
        facts, rows = found[page]["facts"], found[page]["rows"]
        both = [a + b for a, b in zip(facts, rows)]
        cells = "  ".join(f"{name} {min(v):.3f} / {statistics.median(v):.3f}"
                          for name, v in (("facts", facts), ("rows", rows), ("total", both)))
        print(f"{page}\n  {cells}")


if __name__ == "__main__":
    main()
