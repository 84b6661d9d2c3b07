"""The plates against Altair's own `save(inline=True)` pages of the same figures, measured in one run (prints; asserts
nothing). Run: python tests/benchmark.py [--changes 24] [--lighthouse-runs 3] [--plates DIR …]: a reader's changes
on every plate (tests/reader_walk.py; docs/performance.md says what it measures); or the earlier benchmark of one
plate: --redraw [--loads 5] [--selections 96] [--runs 3] [--no-builds]; or only `plate check` with a large
glossary: --terms 1000 [--spellings 40]; or only builds of K times the presets: --presets 1 10 100; or only
`plate serve`: --serve-idle, --live-reload, --serve-stalled N"""
from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import itertools
import json
import os
import re
import resource
import shutil
import socket
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import altair as alt
import vl_convert as vlc

# This checkout's generator, not one installed elsewhere; then the tests' helpers.
sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]
from conftest import CHROMIUM_ARGS, CONTENT, ROOT, chromium_path, wait_until  # noqa: E402

from generator.site import assembly, build, cache  # noqa: E402

try:
    import brotli
except ImportError:  # the test extra is not installed
    brotli = None

# Lighthouse as tests/.node holds it, or wherever LIGHTHOUSE names it.
LIGHTHOUSE = Path(os.environ.get("LIGHTHOUSE") or ROOT / "tests" / ".node" / "node_modules" / ".bin" / "lighthouse")
# Recorded from the first frame on: when a figure (an SVG or canvas at least 200 px wide) is laid out, when the
# browser first paints content (a frame can run before paint is allowed, so a figure is painted at the later of
# the two), and when the figures follow the controls (the plate says so on <html>; Altair's page once vega-embed
# hands over its view, after its first render).
PROBE = """window.__bench = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.name === 'first-contentful-paint') window.__bench.fcp = e.startTime;
}).observe({type: 'paint', buffered: true});
const tick = () => {
  const t = performance.now(), b = window.__bench;
  if (!b.laid && [...document.querySelectorAll('svg, canvas')].some(e => e.getBoundingClientRect().width >= 200))
    b.laid = t;
  if (!b.live && (document.documentElement.dataset.ready === 'true' || window.__view)) b.live = t;
  if (!(b.laid && b.live)) requestAnimationFrame(tick);
};
requestAnimationFrame(tick);"""
# One change of selection, from setting the <select>s to the first frame after the figures in view have redrawn
# (the plate marks that on <html> as data-drawn, seen at once by a MutationObserver, as Altair's is by awaiting
# its view's runAsync), and to the first frame after every figure has (data-shown, seen alike; the figures out of
# sight wait for the reader, so they are brought at once, as for print, once those in view are drawn): [in view,
# every figure, in view as first measured: data-drawn polled once a frame,
# which counts one frame more than the redraw takes to show whenever it is done before the next frame]; both changes
# start after `delay` ms, not timed (walk_pages).
FRAME_MS = 1000 / 60  # a 60 Hz display's frame
CHANGE_PLATE = """async ([values, delay]) => {
  await new Promise((resolve) => { setTimeout(resolve, delay); });
  const root = document.documentElement, drawn = root.dataset.drawn, shown = root.dataset.shown;
  const t0 = performance.now();
  let last = null;
  for (const [id, value] of values) {
    const select = document.getElementById(id);
    if (select.value !== value) { select.value = value; last = select; }
  }
  if (last === null) return null;
  const frameAfter = (key, before) => new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      if (root.dataset[key] === before) return;
      watch.disconnect();
      requestAnimationFrame(() => resolve(performance.now() - t0));
    });
    watch.observe(root, {attributes: true, attributeFilter: [`data-${key}`]});
  });
  const seen = frameAfter('drawn', drawn), every = frameAfter('shown', shown);
  seen.then(() => window.plate.current());
  const polled = (async () => {
    while (root.dataset.drawn === drawn) await new Promise(requestAnimationFrame);
    await new Promise(requestAnimationFrame);
    return performance.now() - t0;
  })();
  last.dispatchEvent(new Event('change', {bubbles: true}));
  return [await seen, await every, await polled];
}"""
# The plate makes a figure's view as it nears the screen: from scrolling to the first figure to its view drawn; and
# every figure's, made at once as the first touch of a control makes them.
SCROLLED = """async () => {
  const figure = document.querySelector('figure.figure'), t0 = performance.now();
  figure.scrollIntoView();
  while (figure.querySelector('.chart').dataset.live !== 'true') await new Promise(requestAnimationFrame);
  return performance.now() - t0;
}"""
EVERY = "async () => { const t0 = performance.now(); await window.plate.live(); return performance.now() - t0; }"
CHANGE_ALTAIR = """async ([values, delay]) => {
  await new Promise((resolve) => { setTimeout(resolve, delay); });
  const t0 = performance.now();
  let changed = false;
  for (const [signal, value] of values) {
    const select = document.querySelector(`select[name="${signal}"]`);
    if (select.value === value) continue;
    select.value = value;
    select.dispatchEvent(new Event('change', {bubbles: true}));
    changed = true;
  }
  if (!changed) return null;
  while (values.some(([signal, value]) => window.__view.signal(signal) !== value))
    await new Promise(requestAnimationFrame);
  await window.__view.runAsync();
  await new Promise(requestAnimationFrame);
  return performance.now() - t0;
}"""


class Selects(HTMLParser):
    """The page's <select>s: [(id, name, [(value, label)])], in document order, and {id: its selected value}."""

    def __init__(self):
        super().__init__()
        self.found, self.chosen, self._option, self._in = [], {}, None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "select":
            self.found.append((a.get("id"), a.get("name"), []))
        elif tag == "option" and self.found:
            self._option, self._in = [a.get("value"), ""], True
            if "selected" in a:
                self.chosen[self.found[-1][0]] = a.get("value")

    def handle_data(self, data):
        if self._in:
            self._option[1] += data

    def handle_endtag(self, tag):
        if tag == "option" and self._in:
            value, label = self._option
            self.found[-1][2].append((value if value is not None else label.strip(), label.strip()))
            self._in = False


def timed(function, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU time (all threads) of function over repeat runs, and its last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


class no_build_cache:
    """Within it, builds keep nothing between them: no build cache (the runtime bundle stays cached)."""

    def __enter__(self):
        self.at, cache.at = cache.at, lambda root, module=None: cache.Cache(None)

    def __exit__(self, *exc):
        cache.at = self.at


def build_capturing(out: Path, content: Path = CONTENT) -> tuple[dict[str, str], list[dict], list[dict]]:
    """Build the plate, keeping every Vega-Lite spec compiled on the way and its Vega."""
    compiled, original = [], vlc.vegalite_to_vega

    def capture(spec, *args, **kwargs):
        vega = original(spec, *args, **kwargs)
        compiled.append((json.loads(json.dumps(spec)), vega))
        return vega

    vlc.vegalite_to_vega = capture
    try:
        with no_build_cache():  # every figure compiled, so that each spec is seen
            files = build.build(content, out)
    finally:
        vlc.vegalite_to_vega = original
    return files, [vl for vl, _ in compiled], [vega for _, vega in compiled]


def page_signals(html: str, controls: list) -> dict[str, str]:
    """Which Vega signal each control drives: the page's data block says so, else sel_<name>."""
    match = re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', html, re.S)
    named = json.loads(match.group(1)).get("signals", {}) if match else {}
    return {name: named.get(name, f"sel_{name}") for _, name, _ in controls}


SELECTION = "bench_selection"  # the Altair page's row field and signal naming a row's selection


def selection_key(selection) -> str:
    """One selection as text: its values in the controls' order (as the Altair page's SELECTION signal makes it)."""
    return "|".join(selection)


def live_rows(browser, page_path: Path, vega_specs: list[dict], selections: list, controls: list) -> dict:
    """Every row the live page gives its views, for each selection, each row tagged with its selection's key
    (the Altair page gets the same rows and shows only those of the selection its controls name)."""
    roots = {d["name"] for spec in vega_specs for d in spec.get("data", [])
             if "source" not in d and "values" not in d and "url" not in d}
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto(page_path.as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    page.evaluate("() => window.plate.live().then(() => true)")  # every view, the default's too
    rows: dict[str, list[dict]] = {name: [] for name in roots}
    for selection in dict.fromkeys(selections):  # each shown, and every view brought to it (window.plate.show)
        page.evaluate("(s) => window.plate.show(s).then(() => true)", {c[1]: v for c, v in zip(controls, selection)})
        got = page.evaluate("""(names) => {
            const out = {};  // each dataset from the first view that has it (views share the selection's rows)
            for (const item of window.plate.views) {
              const view = item.view || item;
              for (const name of names) { try { out[name] ||= view.data(name); } catch (e) {} }
            }
            return out;
        }""", sorted(roots))
        for name, values in got.items():
            rows[name].extend({**row, SELECTION: selection_key(selection)} for row in values)
    context.close()
    return rows


def filtered(spec: dict) -> dict:
    """A spec whose every named data source keeps only the rows of the selection the controls name, so that a
    change of control redraws each figure as the plate's does (its rows for that selection)."""
    spec = dict(spec)
    if "name" in spec.get("data", {}):
        spec["transform"] = [{"filter": f"datum.{SELECTION} === {SELECTION}"}, *spec.get("transform", [])]
    for key in ("layer", "vconcat", "hconcat", "concat"):
        if key in spec:
            spec[key] = [filtered(part) for part in spec[key]]
    return spec


def walk(controls: list, start: tuple, steps: int) -> list[tuple[int, str, tuple]]:
    """A reader's walk from the selection start: each step moves one control to its next option (the controls in
    turn, each cycling through its options), as (the control's index, its new value, the selection then)."""
    movable = [i for i, (_, _, options) in enumerate(controls) if len(options) > 1]
    selection, found = list(start), []
    for step in range(steps):
        i = movable[step % len(movable)]
        values = [v for v, _ in controls[i][2]]
        selection[i] = values[(values.index(selection[i]) + 1) % len(values)] if selection[i] in values else values[0]
        found.append((i, selection[i], tuple(selection)))
    return found


def step_values(controls: list, signals: dict, steps: list) -> tuple[list, list]:
    """What each step sets on each page: one [the control's id, its value] on the plate's, one [its signal, the
    value] on Altair's (CHANGE_PLATE and CHANGE_ALTAIR send one change event per pair)."""
    return ([[[controls[i][0], v]] for i, v, _ in steps],
            [[[signals[controls[i][1]], v]] for i, v, _ in steps])


def altair_page(vl_specs: list[dict], datasets: dict, controls: list, signals: dict, start: tuple,
                out: Path, renderer: str | None = None, folder: str = "altair", ranges: dict | None = None) -> Path:
    """Altair's own inline page of the same figures: the data inline, the controls as bound Vega params (at the
    selection start; a slider for each name in ranges, {name: (min, max, step)}), each figure filtered on them;
    drawn by vega-embed's renderer (None: its default, canvas)."""
    ranges = ranges or {}
    names = set(signals.values())
    charts = []
    for spec in vl_specs:
        spec = {k: v for k, v in spec.items() if k not in ("$schema", "config", "datasets")}
        spec["params"] = [p for p in spec.get("params", []) if p.get("name") not in names]
        if not spec["params"]:
            del spec["params"]
        charts.append(filtered(spec))
    params = [{"name": signals[name], "value": float(value),
               "bind": {"input": "range", "min": ranges[name][0], "max": ranges[name][1], "step": ranges[name][2],
                        "name": name}} if name in ranges else
              {"name": signals[name], "value": value,
               "bind": {"input": "select", "options": [v for v, _ in options], "labels": [lab for _, lab in options],
                        "name": name}}
              for (_, name, options), value in zip(controls, start)]
    params.append({"name": SELECTION, "expr": " + '|' + ".join(signals[name] for _, name, _ in controls)})
    # Altair's schema has no null background (the plate's transparent one); its default white stands in.
    config = {k: v for k, v in vl_specs[0].get("config", {}).items() if v is not None}
    top = {"vconcat": charts, "params": params, "datasets": datasets, "config": config}
    path = out / folder / "index.html"
    path.parent.mkdir(parents=True)
    (path.parent / "spec.json").write_text(json.dumps(top), encoding="utf-8")  # for altair_builds()
    options = {"embed_options": {"renderer": renderer}} if renderer else {}
    alt.VConcatChart.from_dict(top, validate=False).save(str(path), inline=True, **options)
    return path


ALTAIR_SAVE = ("import json, sys, altair as alt; alt.VConcatChart.from_dict(json.load(open(sys.argv[1])), "
               "validate=False).save(sys.argv[2], inline=True)")


def altair_builds(anchor: Path) -> dict[str, list[tuple[float, float]]]:
    """Altair's page made again from its spec, as the builds' anchor: `save(inline=True)` in a new process (cold:
    Altair imported, vl-convert's engine started), and again in this process (warm), as (wall, CPU) times."""
    spec, out = anchor.parent / "spec.json", anchor.parent / "again.html"
    cold = [process_time([sys.executable, "-c", ALTAIR_SAVE, str(spec), str(out)]) for _ in range(3)]
    top = json.loads(spec.read_text(encoding="utf-8"))
    warm_s, warm_cpu, _ = timed(lambda: alt.VConcatChart.from_dict(top, validate=False).save(str(out), inline=True),
                                repeat=5)
    return {"cold": cold, "warm": [(warm_s, warm_cpu)]}


def sizes(path: Path) -> dict[str, float]:
    """Raw, gzip (level 6, as static hosts compress and the budget counts) and brotli (quality 11) bytes of a file,
    in kB (1 kB = 1,000 B)."""
    data = path.read_bytes()
    found = {"raw": len(data) / 1000, "gzip": len(gzip.compress(data, 6)) / 1000}
    if brotli is not None:
        found["brotli"] = len(brotli.compress(data, quality=11)) / 1000
    return found


def open_probed(browser, path: Path):
    """A fresh offline context on path, once its first figure is painted and its figures are live."""
    context = browser.new_context(offline=True, viewport={"width": 1100, "height": 900})
    context.add_init_script(PROBE)
    page = context.new_page()
    page.goto(path.as_uri())
    wait_until(page, "window.__bench.laid && window.__bench.live && window.__bench.fcp", timeout=30)
    return context, page


def measure(browser, pages: dict[str, tuple[Path, str, list]], loads: int, runs: int) -> dict[str, dict[str, list]]:
    """First figure and live over fresh loads, then runs walks of one redraw per step, for {name: (path, change
    script, steps)}; the pages take turns, load by load and change by change, so a busy machine slows both alike."""
    found = {name: {"figure": [], "live": [], "scrolled": [], "every": [], "changes": [], "changed": [], "polled": [],
                    "first": [], "runs": []} for name in pages}
    for _ in range(loads):
        for name, (path, _, _) in pages.items():
            context, page = open_probed(browser, path)
            bench = page.evaluate("window.__bench")
            found[name]["figure"].append(max(bench["laid"], bench["fcp"]))
            found[name]["live"].append(bench["live"])
            if name == "plate":  # every figure made at once, as the first touch of a control does
                found[name]["every"].append(page.evaluate(EVERY))
            context.close()
            if name == "plate":  # and in a fresh load, the first figure as the reader scrolls to it
                context, page = open_probed(browser, path)
                found[name]["scrolled"].append(page.evaluate(SCROLLED))
                context.close()
                # and a change at once after scrolling to the controls, while the views near them are being made
                context, page = open_probed(browser, path)
                page.evaluate("document.getElementById('controls').scrollIntoView()")
                took = page.evaluate(pages[name][1], [pages[name][2][0], 0])
                if took is not None:
                    found[name]["first"].append(took[0])
                context.close()
    for run in range(runs):
        walk_pages(browser, pages, found, run)
    return found


def walk_pages(browser, pages: dict[str, tuple[Path, str, list]], found: dict, seed: int = 0) -> None:
    """One walk through the steps on a fresh load of each page, the pages taking turns change by change, each change
    after the same random wait on both (seeded); adds each change's times to found, and the walk's medians and load
    average to found[name]["runs"]."""
    load = os.getloadavg()[0]
    times = {name: {"changes": [], "changed": []} for name in pages}
    opened = {name: open_probed(browser, path) for name, (path, _, _) in pages.items()}
    # The plate's controls in view, as a reader has them when changing one: the first figure below them.
    opened["plate"][1].evaluate("document.getElementById('controls').scrollIntoView()")
    # A reader changes a control some time after reaching it: the walk starts once every view is made, as the first
    # touch of a control makes them (timed above as "every figure live, made at once"; a change right after the
    # scroll, which waits for them, as "first change at once after scrolling").
    opened["plate"][1].evaluate("window.plate.live()")
    # Each change starts at a random moment of the frame, the same moments on both pages: started as the change
    # before ended (in a frame's callback), every change would wait the same part of a frame for the next one.
    steps = max(len(values) for _, _, values in pages.values())
    delays = [random.Random(f"{seed}-{step}").uniform(0, FRAME_MS) for step in range(steps)]
    for step in range(steps):
        for name, (_, change, values) in pages.items():
            if step < len(values):
                took = opened[name][1].evaluate(change, [values[step], delays[step]])
                if took is not None:
                    seen, every, polled = took if isinstance(took, list) else (took, took, took)  # Altair: one view
                    found[name]["changes"].append(seen)
                    found[name]["changed"].append(every)
                    found[name]["polled"].append(polled)
                    times[name]["changes"].append(seen)
                    times[name]["changed"].append(every)
    for context, _ in opened.values():
        context.close()
    load = max(load, os.getloadavg()[0])
    for name in pages:
        found[name]["runs"].append({"changes": statistics.median(times[name]["changes"]),
                                    "changed": statistics.median(times[name]["changed"]), "load": load})


def report_pages(both: dict, args, changes: int) -> None:
    """The loads' and the walks' figures of both pages, against the budgets."""
    a, b = both["plate"], both["altair"]
    med = statistics.median
    row("first figure painted (median)", med(a["figure"]), med(b["figure"]), "ms")
    row("live from opening the file", med(a["live"]), med(b["live"]), "ms", "<= 300 ms", med(a["live"]) <= 300)
    print("  (plate: controls answer and the figures in view are live; those further down are made as they")
    print("  near the screen, or all at the first touch of a control; Altair's page: its views drawn)")
    row("  first figure live, once scrolled to", med(a["scrolled"]), None, "ms")
    row("  every figure live, made at once", med(a["every"]), None, "ms")
    if a["first"]:
        row("  first change at once after scrolling (views being made)", med(a["first"]), None, "ms")
    seen = med(r["changes"] for r in a["runs"])
    every = med(r["changed"] for r in a["runs"])
    theirs = med(r["changes"] for r in b["runs"])  # Altair's page redraws every figure in its one view
    row("redraw, figures in view, median", seen, theirs, "ms", "<= 20 ms, <= 0.6x", seen <= 20 and seen <= 0.6 * theirs)
    row("redraw, every figure, median", every, theirs, "ms", "<= 1.0x", every <= theirs)
    row("  figures in view, max", max(a["changes"]), max(b["changes"]), "ms", "<= 35 ms", max(a["changes"]) <= 35)
    row("  as polled once a frame, median", med(a["polled"]), med(b["changes"]), "ms")
    for i, (mine, other) in enumerate(zip(a["runs"], b["runs"])):
        print(f"  walk {i + 1}: in view {mine['changes']:.1f} ms, every figure {mine['changed']:.1f} ms, Altair "
              f"{other['changes']:.1f} ms: {mine['changes'] / other['changes']:.2f}x, "
              f"{mine['changed'] / other['changed']:.2f}x (load average up to {mine['load']:.1f})")
    print("  (each change sets one <select> and sends one change event on both pages; to the frame after the")
    print("  figures in view have redrawn (the plate's data-drawn), and after every figure has (data-shown); the")
    print("  plate scrolled to its controls, the first figure in view below them, every view made before the first")
    print("  change; Altair's page redraws all its figures, each filtered on the bound controls, in one view)")
    print(f"  ({args.loads} loads each; {len(a['runs'])} walks of {changes} changes each, interleaved; medians of the "
          f"walks' medians)")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files gzip-compressed, as a static host does; quiet."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            self.send_error(404)
            return None
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


def lighthouse(url: str, runs: int) -> dict[str, float] | None:
    """Median of runs Lighthouse mobile performance runs: score, FCP, LCP, TBT (ms) and CLS."""
    keys = {"fcp": "first-contentful-paint", "lcp": "largest-contentful-paint", "tbt": "total-blocking-time",
            "cls": "cumulative-layout-shift"}
    found: dict[str, list[float]] = {k: [] for k in ["score", *keys]}
    env = dict(os.environ, CHROME_PATH=chromium_path() or "/usr/bin/chromium")
    for _ in range(runs):
        done = subprocess.run(
            [str(LIGHTHOUSE), url, "--only-categories=performance", "--output=json", "--output-path=stdout",
             "--quiet", "--chrome-flags=--headless --no-sandbox --disable-gpu"],
            capture_output=True, text=True, env=env, timeout=180)
        if done.returncode != 0:
            print(f"  lighthouse failed: {done.stderr.strip()[-300:]}")
            return None
        report = json.loads(done.stdout)
        found["score"].append(report["categories"]["performance"]["score"])
        for key, audit in keys.items():
            found[key].append(report["audits"][audit]["numericValue"])
    return {k: statistics.median(v) for k, v in found.items()}


def runtime_only(cache_root: Path, into: Path) -> Path:
    """A cache folder holding what cache_root holds but its build cache (links): the runtime without the figures."""
    into.mkdir()
    for item in cache_root.iterdir():
        if item.name != cache.FOLDER:
            (into / item.name).symlink_to(item)
    return into


def copy_content(into: Path) -> Path:
    """A copy of the content's plate folder in the folder into, with the other plates of its series beside it (XIV.5
    reads XIV.4's presets and model from the folder next to its own); returns the copy of the content."""
    into.mkdir(parents=True)
    for plate in [CONTENT, *(p for p in sorted(CONTENT.parent.iterdir()) if p != CONTENT and (p / "plate.md").is_file())]:
        shutil.copytree(plate, into / plate.name)
    return into / CONTENT.name


def presets_of(content: Path) -> Path:
    """The presets.toml a plate reads: its own, else the one of the plate beside it whose presets it reuses."""
    own = content / "presets.toml"
    return own if own.is_file() else next(iter(sorted(content.parent.glob("*/presets.toml"))))


def edited_content(into: Path, step: int) -> Path:
    """A copy of the content with one preset number changed (the last model's parameter count, up by step): an
    author's edit of the presets, after which a build makes the CSV anew."""
    into = copy_content(into)
    presets = presets_of(into)
    text = presets.read_text(encoding="utf-8")
    last = list(re.finditer(r"^params\s*=\s*([\d_]+)", text, flags=re.M))[-1]
    changed = int(last.group(1).replace("_", "")) + step
    presets.write_text(text[:last.start(1)] + str(changed) + text[last.end(1):], encoding="utf-8")
    return into


def process_time(args: list[str], **options) -> tuple[float, float]:
    """Wall and CPU time of a command run to its end in a new process (options as subprocess.run takes them)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, **options)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_build(out: Path, cache_root: Path, content: Path = CONTENT) -> tuple[float, float]:
    """Wall and CPU time of `python -m generator build` in a new process with this cache folder."""
    return process_time([sys.executable, "-m", "generator", "build", "--content", str(content), "--out", str(out)],
                        cwd=ROOT, env=dict(os.environ, PLATE_CACHE=str(cache_root)))


def row(name: str, plate: float, anchor: float | None, unit: str, budget: str = "", ok: bool | None = None,
        digits: int = 1) -> None:
    """One printed line: the plate's figure, Altair's, their ratio, and the budget with its verdict."""
    ratio = f"{plate / anchor:5.2f}x" if anchor else "      "
    other = f"{anchor:9.{digits}f} {unit:<3}" if anchor is not None else " " * 13
    verdict = "" if ok is None else ("  ok" if ok else "  OVER")
    print(f"  {name:<34} {plate:9.{digits}f} {unit:<3} {other} {ratio}  {budget}{verdict}")


def serve_idle_cpu(work: Path, files: int = 50_000, seconds: float = 10.0, poll: bool = False) -> float:
    """The CPU `plate serve` uses while nothing changes, in % of one core, with `files` more files in content/
    (poll: with watchfiles hidden, so that it falls back to reading every file's time)."""
    content = copy_content(work / f"serve-content-{'poll' if poll else 'watch'}")
    for i in range(files):
        folder = content / "notes" / f"{i // 500:03}"
        if i % 500 == 0:
            folder.mkdir(parents=True)
        (folder / f"note-{i}.md").write_text("x")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hide = "import sys; sys.modules['watchfiles'] = None; " if poll else ""
    code = (f"{hide}import sys; from generator.commands import cli; sys.exit(cli.main(['serve', '--content', "
            f"{str(content)!r}, '--out', {str(work / 'serve-idle-site')!r}, '--port', '{port}']))")
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        for line in process.stdout:
            if "serving" in line:
                break
        else:
            raise RuntimeError("plate serve stopped before serving")
        time.sleep(2)  # the watch set up, the first build's threads gone

        def cpu() -> float:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        before, started = cpu(), time.monotonic()
        time.sleep(seconds)
        return 100 * (cpu() - before) / (time.monotonic() - started)
    finally:
        process.terminate()
        process.wait(timeout=20)
        shutil.rmtree(content, ignore_errors=True)


def glossary_content(into: Path, total: int, spellings: int) -> Path:
    """A copy of the content with terms added up to total (a plate may have 1,000), each of that many spellings
    and used once in the prose (by its last spelling, the others looked for in vain before it)."""
    into = copy_content(into)
    added = max(total - len(tomllib.loads((into / "terms.toml").read_text(encoding="utf-8"))["terms"]), 0)

    def spelling(i: int, j: int) -> str:
        return f"glossa{i} form{j}" if j else f"glossa{i}"
    with open(into / "terms.toml", "a", encoding="utf-8") as toml:
        for i in range(added):
            matches = ", ".join(f'"{spelling(i, j)}"' for j in range(1, spellings))
            toml.write(f'\n[terms.glossa{i}]\nname = "{spelling(i, 0)}"\ndefinition = "Entry {i}."\n'
                       f"matches = [{matches}]\n")
    uses = [f"Here {spelling(i, spellings - 1)} is used." for i in range(added)]
    paragraphs = "\n\n".join(" ".join(uses[k:k + 100]) for k in range(0, added, 100))
    plate = into / "plate.md"
    plate.write_text(plate.read_text(encoding="utf-8").replace("[[figures]]", f"{paragraphs}\n\n[[figures]]", 1),
                     encoding="utf-8")
    return into


def glossary_check(work: Path, total: int, spellings: int) -> None:
    """`plate check` of the content with a large glossary, in a new process: the time it reports (after start-up),
    and the whole process's wall and CPU time."""
    content_dir = glossary_content(work / f"glossary-{total}", total, spellings)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "generator", "check", "--content", str(content_dir)], cwd=ROOT,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    checked = re.search(r"checked in ([\d.]+) s", done.stdout)
    if done.returncode != 0 or checked is None:
        print(f"  plate check with {total:,} terms failed:\n{done.stderr}")
        return
    print(f"  {total:,} terms, those added with {spellings} spellings each, every one used in the prose:")
    row("plate check (as it reports)", float(checked.group(1)), None, "s", "< 1 s", float(checked.group(1)) < 1)
    row("  the whole process, start-up too", wall, None, "s")
    row("  its CPU time, start-up too", cpu, None, "s")  # on a busy machine, what the wall times stand for


def toml_value(value) -> str:
    """A TOML scalar of presets.toml: text, whole number, float or boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (str, float)) else str(value)


def factors(k: int) -> list[int]:
    """k as its prime factors, largest first."""
    found, d = [], 2
    while d * d <= k:
        while k % d == 0:
            found.append(d)
            k //= d
        d += 1
    return sorted(found + ([k] if k > 1 else []), reverse=True)


def scaled_shape(k: int) -> dict[str, int]:
    """How many models, batches and networks make k times the content's selections: k's factors spread over the
    three tables, each to the one that is smallest so far."""
    data = tomllib.loads((CONTENT / "presets.toml").read_text(encoding="utf-8"))
    counts = {t: len(data[t]) for t in ("models", "batches", "networks")}
    for f in factors(k):
        table = min(counts, key=lambda t: (counts[t], list(counts).index(t)))
        counts[table] *= f
    return counts


def scaled_content(into: Path, shape: dict[str, int]) -> tuple[Path, dict[str, int]]:
    """A copy of the content with shape's numbers of models, batches and networks: the content's own, then copies
    of them (each copy's numbers a little larger, its ids and names its own) up to that number."""
    into = copy_content(into)
    path = presets_of(into)
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    grown = {"models": "params", "batches": "tokens", "networks": "link_gbytes_per_s"}
    added = []
    for table, wanted in shape.items():
        own = list(data[table].items())
        for n in range(len(own), wanted):
            ident, entry = own[n % len(own)]
            i = n // len(own)
            entry = dict(entry, name=f"{entry['name']} ({i})")
            if "short" in entry:
                entry["short"] = f"{entry['short']} ({i})"
            if grown[table] in entry:
                value = entry[grown[table]]
                entry[grown[table]] = value + i if isinstance(value, int) else value * (1 + i / 1000)
            added.append(f"[{table}.{ident}-{i}]\n" + "".join(f"{key} = {toml_value(v)}\n" for key, v in entry.items()))
    path.write_text(text + "\n" + "\n".join(added), encoding="utf-8")
    return into, {**{t: max(len(data[t]), shape[t]) for t in shape}, "gpus": len(data["gpus"])}


BUILD_PROCESS = """import resource, sys, time
from generator.commands import cli
started, cpu = time.perf_counter(), time.process_time()
status = cli.main(["build", "--content", sys.argv[1], "--out", sys.argv[2]])
print("BENCH", time.perf_counter() - started, time.process_time() - cpu,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, status)"""


def measured_build(content_dir: Path, out: Path, cache_root: Path) -> dict:
    """`plate build` in a new process: its own time (as it reports it, start-up aside), the whole process's wall
    time, its peak memory (RSS)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", BUILD_PROCESS, str(content_dir), str(out)], cwd=ROOT,
                          env=dict(os.environ, PLATE_CACHE=str(cache_root)), capture_output=True, text=True)
    wall = time.perf_counter() - started
    found = re.search(r"^BENCH (\S+) (\S+) (\d+) (\d+)$", done.stdout, re.M)
    if done.returncode != 0 or found is None or found.group(4) != "0":
        raise RuntimeError(f"the build of {content_dir} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {"build": float(found.group(1)), "cpu": float(found.group(2)), "wall": wall, "memory": int(found.group(3))}


def presets_scaling(work: Path, ks: list[int]) -> None:
    """Builds of k times the presets' selections, and of issue 23's 1,000 selections (20 models × 10 batches ×
    5 networks): build time, peak memory, page and data bytes, against its budgets."""
    cache_root = work / "cache"
    measured_build(CONTENT, work / "warm-up", cache_root)  # npm's packages and the runtime, once
    print(f"  {'content':<34} {'selections':>10} {'build':>8} {'cpu':>7} {'rebuild':>8} {'process':>8} {'memory':>8} "
          f"{'page gz6':>9} {'data':>9}  budget")
    runs = [(f"{k}x", scaled_shape(k)) for k in ks] + [("1,000 selections", {"models": 20, "batches": 10,
                                                                              "networks": 5})]
    for i, (name, shape) in enumerate(runs):
        content_dir, counts = scaled_content(work / f"content-{i}", shape)
        selections = counts["models"] * counts["batches"] * counts["networks"]
        site = work / f"site-{i}"
        first = measured_build(content_dir, site, cache_root)  # figures drawn anew: a preset edit's build
        again = measured_build(content_dir, site, cache_root)  # everything cached
        c = __import__("generator.source.content", fromlist=["load"]).load(content_dir)
        gz = len(gzip.compress((site / "index.html").read_bytes(), 6)) / 1000
        data = (site / c.plate.data_file).stat().st_size / 1000
        if selections == 18 and name == "1x":
            budget, ok = "<= 1 s, <= 150 kB, <= 300 kB", again["build"] <= 1 and gz <= 150 and data <= 300
        elif selections <= 1000:
            budget, ok = "<= 5 s, <= 500 MB, <= 155 kB, <= 3 MB", (first["build"] <= 5 and first["memory"] <= 500e6
                                                                  and gz <= 155 and data <= 3000)
        else:
            budget, ok = "(more than 1,000 selections)", None
        shape_text = f"{name}: {counts['models']}x{counts['batches']}x{counts['networks']}, {counts['gpus']} GPUs"
        verdict = "" if ok is None else ("  ok" if ok else "  OVER")
        print(f"  {shape_text:<34} {selections:>10,} {first['build']:>6.2f} s {first['cpu']:>5.2f} s {again['build']:>6.2f} s "
              f"{first['wall']:>6.2f} s {first['memory'] / 1e6:>5.0f} MB {gz:>6.1f} kB {data:>6.0f} kB  {budget}{verdict}")
    print("  (build: `plate build` in a new process as it times itself, the figures drawn anew as after a preset edit,")
    print("  and its CPU time, which a busy machine inflates less; the shipped content's budget is held by the")
    print("  rebuild); rebuild: the same content again, every figure")
    print("  cached; process: the first build's whole process, start-up and imports too; memory: its peak RSS; page:")
    print("  index.html at gzip level 6, as static hosts compress; data: the CSV beside it.")
    print(f"  Load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: wall times on a busy machine overstate)")


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--changes", type=int, default=24,
                      help="a reader's changes per plate and CPU speed (the default run: tests/reader_walk.py)")
    args.add_argument("--redraw", action="store_true",
                      help="instead, the earlier benchmark of one plate: builds, live from open, time to the frame")
    args.add_argument("--loads", type=int, default=5, help="page loads per page for first figure and live")
    args.add_argument("--lighthouse-runs", type=int, default=3)
    args.add_argument("--selections", type=int, default=96, help="how many changes of one control each to walk")
    args.add_argument("--no-builds", action="store_true", help="leave out the builds (and serve idle): pages only")
    args.add_argument("--runs", type=int, default=3, help="walks of both pages, interleaved (medians reported)")
    args.add_argument("--plates", nargs="+", default=[], metavar="DIR",
                      help="the plate folders to measure (default: every plate of the series; with --redraw, each "
                           "in a new process, as PLATE_CONTENT)")
    args.add_argument("--serve-idle", action="store_true", help="only measure `plate serve` idle with 50,000 files")
    args.add_argument("--no-serve-idle", action="store_true", help="leave out `plate serve` idle (50,000 files)")
    args.add_argument("--terms", type=int, default=0, help="only time `plate check` with this many more terms")
    args.add_argument("--spellings", type=int, default=40, help="spellings of each of those terms")
    args.add_argument("--presets", type=int, nargs="+", default=[], metavar="K",
                      help="only build content with K times the selections (models × batches × networks)")
    args.add_argument("--live-reload", type=int, nargs="*", default=None, metavar="PLATES",
                      help="only time a prose edit under `plate serve` until the open page shows it, with the "
                           "shipped series and with it scaffolded to each count of plates (default: 3 12)")
    args.add_argument("--serve-stalled", type=int, default=0, metavar="CLIENTS",
                      help="only time a normal request to `plate serve` while this many clients stall")
    args = args.parse_args()
    if args.redraw and args.plates:
        each_plate(args.plates)
        return
    work = Path(tempfile.mkdtemp(prefix="plate-bench-"))
    try:
        if args.live_reload is not None:
            live_reload(work, args.live_reload or [3, 12])
        elif args.serve_stalled:
            serve_stalled(work, args.serve_stalled)
        elif args.serve_idle:
            report_serve_idle(work)
        elif args.terms:
            glossary_check(work, args.terms, args.spellings)
        elif args.presets:
            presets_scaling(work, args.presets)
        elif args.redraw:
            run(work, args)
        else:
            import reader_walk
            reader_walk.run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def each_plate(plates: list[str]) -> None:
    """This benchmark, with the other options given, once per plate folder in a new process (CONTENT is read at
    import), one after the other."""
    argv, skip = [], False
    for arg in sys.argv[1:]:  # the options but --plates and its folders
        if arg == "--plates" or arg.startswith("--plates="):
            skip = arg == "--plates"
            continue
        if skip and not arg.startswith("--"):
            continue
        skip = False
        argv.append(arg)
    for folder in plates:
        print(f"== {folder}", flush=True)
        content = str(Path(folder).resolve())
        subprocess.run([sys.executable, __file__, *argv], env=dict(os.environ, PLATE_CONTENT=content))


# --- the live loop: a save under `plate serve` until the open page shows it (issue 43) --------------------------

LIVE_BUDGET_S = 1.5  # a prose edit shows in the open page within this, on a quiet 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scaffolded_series(into: Path, plates: int) -> Path:
    """A copy of the shipped series with plates to come started by `plate new` (their own titles) until it holds
    `plates` written plates."""
    from generator.source import volume
    from generator.commands import scaffold
    root = into / "plates"
    shutil.copytree(ROOT / "plates", root, ignore=shutil.ignore_patterns("__pycache__"))
    shelf = volume.load_series(root)
    missing = plates - len(shelf.written())
    for vol in shelf.volumes:
        for entry in vol.plates:
            if missing <= 0:
                return root
            if not entry.folder:
                title = entry.title or f"Plate {vol.id}.{entry.number}"
                name = f"{vol.id.lower()}-{entry.number}"
                scaffold.new(root / f"{name}-scaffold-{name}", vol.id, entry.number, title)
                missing -= 1
    if missing > 0:
        raise SystemExit(f"the series lists too few plates to come for {plates} plates")
    return root


class Served:
    """`plate serve` of a series in a process of its own, its output gathered."""

    def __init__(self, content: Path, out: Path, port: int):
        self.lines: list[str] = []
        self.process = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--content", str(content),
                                         "--out", str(out), "--port", str(port)], cwd=ROOT, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.serving = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            if "serving" in line:
                self.serving.set()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def shows(page, text: str) -> bool:
    """Whether the open page's body holds text (False while it reloads)."""
    try:
        return bool(page.evaluate("(t) => !!document.body && document.body.textContent.includes(t)", text))
    except Exception:  # noqa: BLE001 - the page is between two documents
        return False


def live_reload(work: Path, counts: list[int], edits: int = 7) -> None:
    """For each count of plates: `plate serve` of the series (scaffolded up to that count), a plate's page open in
    Chromium, then `edits` prose edits of that plate, each timed from the save to the open page showing the new
    sentence (the watcher, the rebuild, the page's poll and its reload); median, min and max."""
    from playwright.sync_api import sync_playwright
    from generator.source import volume
    print(f"live reload: a prose edit under plate serve until the open page shows it; load {os.getloadavg()[0]:.1f}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            for count in counts:
                root = scaffolded_series(work / f"live-{count}", count)
                shelf = volume.load_series(root)
                vol, entry = next((v, e) for v, e in shelf.written() if v.page_of(e) != "index.html")
                port = free_port()
                served = Served(root, work / f"live-{count}" / "site", port)
                try:
                    if not served.serving.wait(900):
                        raise SystemExit("plate serve did not start: " + "".join(served.lines[-5:]))
                    page = browser.new_page()
                    page.goto(f"http://127.0.0.1:{port}/{vol.page_of(entry)}")
                    wait_until(page, "() => document.documentElement.dataset.ready === 'true'")
                    plate_md = vol.folder(entry) / volume.PLATE_FILE
                    times = []
                    for i in range(edits):
                        sentence = f"A sentence saved while served, number {i}."
                        text = plate_md.read_text(encoding="utf-8")
                        started = time.monotonic()
                        plate_md.write_text(text + f"\n{sentence}\n", encoding="utf-8")
                        while not shows(page, sentence):
                            if time.monotonic() - started > 120:
                                raise SystemExit("the page never showed the edit: " + "".join(served.lines[-5:]))
                            time.sleep(0.01)
                        times.append(time.monotonic() - started)
                        wait_until(page, "() => document.documentElement.dataset.ready === 'true'")
                        time.sleep(1)
                    page.close()
                finally:
                    served.stop()
                median = statistics.median(times)
                row(f"live reload, {len(shelf.written())} plates (median of {edits}; min {min(times):.2f}, max "
                    f"{max(times):.2f} s)", median, None, "s", f"≤ {LIVE_BUDGET_S} s quiet", median <= LIVE_BUDGET_S, digits=2)
        finally:
            browser.close()
    print(f"load after: {os.getloadavg()[0]:.1f}")


def serve_stalled(work: Path, clients: int, requests: int = 10) -> None:
    """`plate serve` of the shipped series with `clients` connections that each send part of a request line and
    stall: the time of a normal GET of a page meanwhile (loopback only; the clients are closed at the end)."""
    import http.client
    port = free_port()
    served = Served(ROOT / "plates", work / "stalled-site", port)
    stalled = []
    try:
        if not served.serving.wait(900):
            raise SystemExit("plate serve did not start")
        for _ in range(clients):
            stalled.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            stalled[-1].sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")
        time.sleep(0.5)
        times = []
        for _ in range(requests):
            started = time.monotonic()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/")
            response = connection.getresponse()
            response.read()
            connection.close()
            times.append(time.monotonic() - started)
        worst = max(times)
        row(f"serve: a GET while {clients} clients stall (worst of {requests}; median {statistics.median(times):.3f})",
            worst, None, "s", "≤ 1 s", worst <= 1, digits=3)
    finally:
        for client in stalled:
            client.close()
        served.stop()
    print(f"load: {os.getloadavg()[0]:.1f}")


def report_serve_idle(work: Path) -> None:
    """`plate serve` idle with 50,000 files in content/: watched by inotify, and by the polling fallback."""
    watched = serve_idle_cpu(work)
    row("serve idle, 50,000 files in content/", watched, None, "%", "near 0% of a core", watched <= 2)
    polled = serve_idle_cpu(work, poll=True)
    row("  the same, polling (no watchfiles)", polled, None, "%", "(the fallback)")


def builds(work: Path) -> tuple:
    """Builds: cold in a new process (empty cache; the runtime cached but not the figures; everything cached), warm
    in-process as `serve` rebuilds."""
    cold = [cli_build(work / f"cold{i}", work / f"cache-empty-{i}") for i in range(3)]
    compiled = [cli_build(work / f"compiled{i}", runtime_only(work / "cache-empty-0", work / f"cache-runtime-{i}"))
                for i in range(3)]
    cached = [cli_build(work / f"cached{i}", work / "cache-empty-0") for i in range(3)]
    edited = [cli_build(work / f"edited{i}", work / "cache-empty-0", edited_content(work / f"content-{i}", i + 1))
              for i in range(3)]
    memo: dict = {}  # what a running `serve` keeps between rebuilds (figures and CSV, while the presets stay)
    assembly.gather(CONTENT, memo=memo)  # a running `serve` has built once already
    gather_s, gather_cpu, _ = timed(lambda: assembly.gather(CONTENT, memo=memo), repeat=5)
    rebuild_s, rebuild_cpu, _ = timed(lambda: build.build(CONTENT, work / "serve-site", memo=memo), repeat=5)
    with no_build_cache():
        cold_gather_s, cold_gather_cpu, _ = timed(lambda: assembly.gather(CONTENT), repeat=3)
    return (cold, compiled, cached, edited, gather_s, gather_cpu, rebuild_s, rebuild_cpu, cold_gather_s,
            cold_gather_cpu)


def run(work: Path, args) -> None:
    """Everything, printed as it is measured."""
    print(f"vl-convert {vlc.__version__}, altair {alt.__version__}; ratios are plate / Altair page")
    print(f"  {'':<34} {'plate':>13} {'Altair page':>13} {'ratio':>6}  budget")

    measured = None if args.no_builds else builds(work)
    files, vl_specs, vega_specs = build_capturing(work / "plate")
    plate = work / "plate" / "index.html"
    html = files["index.html"]
    parser = Selects()
    parser.feed(html)
    # The presets each control offers ("Custom…" needs typed values, so it is left out of the walk).
    controls = [(i, n, [(v, lab) for v, lab in options if v != "custom"]) for i, n, options in parser.found
                if i and options]
    signals = page_signals(html, controls)
    every = len(list(itertools.product(*[[v for v, _ in options] for _, _, options in controls])))
    # The walk: from the page's default, one control changed per step, the controls in turn (the Altair page embeds
    # the rows of every selection it offers, so it offers the walk's).
    start = tuple(parser.chosen.get(i, options[0][0]) for i, _, options in controls)
    steps = walk(controls, start, args.selections)
    selections = [start, *(selection for _, _, selection in steps)]
    print(f"  ({len(vega_specs)} figures, {len(controls)} controls: {', '.join(n for _, n, _ in controls)}; "
          f"a walk of {len(steps)} changes of one control each, through {len(set(selections))} of {every} "
          f"selections)")

    path = chromium_path()
    browser_cm = None
    anchor_builds = None  # Altair's page made again, once the browser has given its rows
    if path is not None:
        from playwright.sync_api import sync_playwright
        browser_cm = sync_playwright().start()
        browser = browser_cm.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
    try:
        if path is None:
            print("Chromium not on PATH: the Altair page needs the live page's rows; browser figures skipped")
            datasets = None
        else:
            datasets = live_rows(browser, plate, vega_specs, selections, controls)
        anchor = altair_page(vl_specs, datasets, controls, signals, start, work) if datasets else None
        anchor_builds = altair_builds(anchor) if anchor and not args.no_builds else None

        mine, theirs = sizes(plate), sizes(anchor) if anchor else {}
        for kind in ("raw", "gzip", "brotli"):
            if kind in mine:
                budget = "<= 150 kB" if kind == "gzip" else ""
                row(f"page bytes, {'gzip-6' if kind == 'gzip' else kind}", mine[kind], theirs.get(kind), "kB", budget,
                    mine[kind] <= 150 if kind == "gzip" else None)
        if brotli is None:
            print("  (brotli not installed: pip install brotli for its figure)")
        code = assembly.live_runtime({f"figure-{i}": spec for i, spec in enumerate(vega_specs)}).code.encode()
        whole = vlc.javascript_bundle(
            'import * as V from "https://cdn.jsdelivr.net/npm/vega@6.2.0/+esm";\nwindow.vega = V;\n').encode()
        row("  of which the Vega runtime, gzip-6", len(gzip.compress(code, 6)) / 1000, None, "kB",
            f"(the whole vega entry: {len(gzip.compress(whole, 6)) / 1000:.1f} kB)")

        if path is not None:
            values, altair_values = step_values(controls, signals, steps)
            probed = work / "altair" / "probed.html"
            probed.write_text(anchor.read_text().replace(
                ".catch(console.error);", ".then((r) => { window.__view = r.view; }).catch(console.error);", 1))
            both = measure(browser, {"plate": (plate, CHANGE_PLATE, values),
                                     "altair": (probed, CHANGE_ALTAIR, altair_values)}, args.loads, args.runs)
            report_pages(both, args, len(values))
    finally:
        if browser_cm is not None:
            browser.close()
            browser_cm.stop()

    if measured is not None:
        report_builds(*measured, anchor_builds)
    if not args.no_serve_idle and not args.no_builds:
        report_serve_idle(work)
    lighthouse_both(work, args, anchor)


def report_builds(cold, compiled, cached, edited, gather_s, gather_cpu, rebuild_s, rebuild_cpu, cold_gather_s,
                  cold_gather_cpu, anchor_builds) -> None:
    """The builds' times against Altair's save and the budgets."""
    med = statistics.median
    cold_s, cold_cpu = med(w for w, _ in cold), med(c for _, c in cold)
    compiled_s, compiled_cpu = med(w for w, _ in compiled), med(c for _, c in compiled)
    cached_s, cached_cpu = med(w for w, _ in cached), med(c for _, c in cached)
    edited_s, edited_cpu = med(w for w, _ in edited), med(c for _, c in edited)
    altair_cold = med(w for w, _ in anchor_builds["cold"]) if anchor_builds else None
    altair_warm = anchor_builds["warm"][0][0] if anchor_builds else None
    row("cold build, new process", cached_s, altair_cold, "s", f"<= 2.5 s (CPU {cached_cpu:.1f} s)",
        cached_s <= 2.5)
    row("  after a preset edit", edited_s, None, "s", f"<= 2.5 s (CPU {edited_cpu:.1f} s)", edited_s <= 2.5)
    row("  after a generator change", compiled_s, None, "s", f"(CPU {compiled_cpu:.1f} s)")
    row("  first build, nothing cached", cold_s, None, "s", f"(CPU {cold_cpu:.1f} s)")
    row("warm build in serve (assembly.gather)", gather_s, altair_warm, "s", f"<= 0.6 s (CPU {gather_cpu:.1f} s)",
        gather_s <= 0.6)
    row("in-process build, nothing kept", cold_gather_s, None, "s", f"(CPU {cold_gather_cpu:.1f} s)")
    row("serve rebuild (build.build)", rebuild_s, altair_warm, "s", f"(CPU {rebuild_cpu:.1f} s)")
    print("  (cold: caches from an earlier build, as an author's next `plate build`; after a preset edit the CSV is")
    print("  made anew; after a change of the generator's code or packages the figures are compiled and drawn anew")
    print("  with vl-convert, whose engine takes about 0.6 s to start; the first build fetches Vega's npm packages;")
    print("  Altair page: its save(inline=True) from the spec, in a new process and again in this one;")
    print(f"  medians of 3 cold and 5 warm builds; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs: wall times on a busy machine overstate, CPU times less so)")


def lighthouse_both(work: Path, args, anchor: Path | None) -> None:
    """Lighthouse mobile on both pages, served gzip-compressed."""
    if not LIGHTHOUSE.exists():
        print("Lighthouse skipped: not installed (npm install --prefix tests/.node lighthouse)")
        return
    if anchor is None:
        print("Lighthouse skipped: no Altair page to compare with")
        return
    handler = functools.partial(GzipHandler, directory=str(work))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        a = lighthouse(f"{base}/plate/index.html", args.lighthouse_runs)
        b = lighthouse(f"{base}/altair/index.html", args.lighthouse_runs)
    finally:
        server.shutdown()
        server.server_close()
    if a is None or b is None:
        return
    print(f"  Lighthouse mobile over gzip on 127.0.0.1, median of {args.lighthouse_runs}:")
    row("performance score", a["score"], b["score"], "", ">= 0.98", a["score"] >= 0.98, digits=2)
    row("FCP", a["fcp"], b["fcp"], "ms")
    row("LCP", a["lcp"], b["lcp"], "ms")
    row("TBT", a["tbt"], b["tbt"], "ms", "<= 150 ms", a["tbt"] <= 150)
    row("CLS", a["cls"], b["cls"], "", "= 0", a["cls"] == 0, digits=3)


if __name__ == "__main__":
    main()
