"""A reader's changes, measured on every plate against Altair's own pages of the same figures (`renderer: "svg"`, the
like-for-like anchor, and its default canvas): trusted keys on a focused control and clicks on a slider's track, the
three pages taking turns change by change in one browser, at 1x and under 4x CPU throttling. tests/benchmark.py runs it (its default); the budgets
are issue 45's, docs/performance.md gives the method."""
from __future__ import annotations

import functools
import http.server
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmark import (LIGHTHOUSE, SELECTION, GzipHandler, Selects, altair_page, build_capturing, lighthouse,
                       page_signals, sizes, walk)
from conftest import CHROMIUM_ARGS, SERIES, chromium_path, wait_until

# In every page from its first script on: each interaction's Event Timing entries (those of at least 16 ms, the
# least the API reports), and at the event each page redraws on whether the frame that follows shows the change: the
# plate's figures in view drawn (data-drawn, which it sets once they show the selection; the plate redraws on
# 'change', which a slider sends when the pointer is released) or Altair's view rendered (window.__rendered, set by
# its renderer once the page has its view; its bindings redraw on 'input', which a slider sends at once).
PROBE = """window.__bench = {events: [], wrote: 0};
// When the page writes its URL (the plate does once the controls rest): a hook, so that waiting for it polls nothing.
const replaceState = history.replaceState;
history.replaceState = function () {
  const out = replaceState.apply(this, arguments);
  window.__bench.wrote = performance.now();
  if (window.__bench.written) window.__bench.written();
  return out;
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.interactionId) window.__bench.events.push([e.interactionId, e.duration]);
}).observe({type: 'event', durationThreshold: 16, buffered: true});
for (const type of ['input', 'change']) addEventListener(type, () => {
  if ((type === 'change') !== (window.__view === undefined)) return;
  const b = window.__bench, root = document.documentElement;
  b.input = performance.now(); b.drawn = root.dataset.drawn; b.next = null;
  requestAnimationFrame(() => {
    b.next = window.__view ? (window.__rendered || 0) > b.input : root.dataset.drawn !== b.drawn;
  });
}, true);"""
# After the page says it is done: two frames, a pause and idle time, so that whatever the change set going (figures
# or words out of sight, say) is in the count, and no sooner than WINDOW_MS after the input on every page, so that
# each gets the same time for the work a change leaves to idle time (the garbage collector's); then the interaction's
# Event Timing duration (null: under 16 ms).
WINDOW_MS = 400
SETTLE = """async function settle() {
  const frame = () => new Promise(requestAnimationFrame);
  await frame(); await frame();
  const left = window.__bench.input + WINDOW_MS - performance.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(120, left)));
  await new Promise((resolve) => requestIdleCallback(resolve, {timeout: 1000}));
  const b = window.__bench, events = b.events.splice(0);
  return {next: b.next, event: events.length ? Math.max(...events.map(([, d]) => d)) : null};
}""".replace("WINDOW_MS", str(WINDOW_MS))
# Done: the plate once its figures in view show the change (data-drawn moved) and it has written the URL, which it
# does once the controls have rested a quarter of a second (work of the change too); Altair's page once its view
# holds the control's value and has run. Nothing polls by frames, which would count the frames' own work: the wait
# is a MutationObserver and the URL's hook (a timer for Altair's signal, which is set by the time this runs).
DONE_PLATE = f"""async () => {{
  {SETTLE}
  const b = window.__bench, root = document.documentElement;
  const done = () => root.dataset.drawn !== b.drawn && b.wrote > b.input;
  const ok = await new Promise((resolve) => {{
    if (done()) {{ resolve(true); return; }}
    const watch = new MutationObserver(() => {{ if (done()) {{ watch.disconnect(); resolve(true); }} }});
    watch.observe(root, {{attributes: true, attributeFilter: ['data-drawn']}});
    b.written = () => {{ if (done()) {{ watch.disconnect(); resolve(true); }} }};
    setTimeout(() => resolve(false), 20000);
  }});
  b.written = null;
  return ok ? settle() : null;
}}"""
DONE_ALTAIR = f"""async ([signal, value]) => {{
  {SETTLE}
  const t0 = performance.now();
  while (String(window.__view.signal(signal)) !== value) {{
    if (performance.now() - t0 > 20000) return null;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }}
  await window.__view.runAsync();
  return settle();
}}"""
# Altair's page hands its view to the probe, and its renderer says when it has drawn.
HAND_OVER = (".then((r) => { window.__view = r.view; const drawer = r.view._renderer, render = drawer.render; "
             "drawer.render = function () { const out = render.apply(this, arguments); "
             "window.__rendered = performance.now(); return out; }; }).catch(console.error);")
FOCUS = """async (selector) => {
  document.querySelector(selector).focus({preventScroll: false});
  await new Promise(requestAnimationFrame); await new Promise(requestAnimationFrame);
  return document.querySelector(selector).value;
}"""
# A slider in sight, as a reader reaches for it: its box once scrolled to (nearest), two frames later.
REACH = """async (selector) => {
  const el = document.querySelector(selector);
  el.scrollIntoView({block: 'nearest'});
  await new Promise(requestAnimationFrame); await new Promise(requestAnimationFrame);
  const box = el.getBoundingClientRect();
  return [box.left, box.top + box.height / 2, box.width, el.value];
}"""
# Every selection's rows, as the plate's views hold them: the controls set (sliders too), one change event, and
# everything brought to it (window.plate.current()).
SET_PLATE = """async (values) => {
  for (const [id, value] of values) document.getElementById(id).value = value;
  document.getElementById('controls').dispatchEvent(new Event('change', {bubbles: true}));
  await window.plate.current();
  return true;
}"""
ROWS = """(names) => {
  const out = {};  // each dataset from the first view that has it (views share the selection's rows)
  for (const view of window.plate.views) for (const name of names) { try { out[name] ||= view.data(name); } catch (e) {} }
  return out;
}"""
# Main-thread work: Chromium's performance metrics in thread time (Performance.enable with threadTicks), so a busy
# machine inflates them less than wall time; TaskDuration is every task's: script, style, layout, paint and commit.
METRICS = ("TaskDuration",)
PAGES = ("plate", "svg", "canvas")
SPEEDS = (1, 4)  # CPU throttling: none, and 4x as Lighthouse's mobile run


@dataclass
class Page:
    """One open page of a plate's three: its tab, its DevTools session, and how a step is taken on it."""
    name: str
    path: Path
    tab: object = None
    session: object = None
    selector: callable = None  # step → the CSS selector of the control the step changes
    done: callable = None  # step → (script, argument) that waits for the change to be drawn and settled
    found: dict = field(default_factory=dict)  # speed → {"work": [ms], "event": [ms or None], "next": [bool]}
    slider: tuple | None = None  # the plate's slider, if any: (min, max, step)
    slider_values: list = field(default_factory=list)  # the values the walk moves it to
    slider_selector: str | None = None
    slider_x: dict = field(default_factory=dict)  # a slider's value → where on its track (px from its left) gives it


def next_key(options: list[str], current: str, target: str) -> str:
    """The one key that moves a closed, focused <select> from current to target: the next option, or the first."""
    if options.index(target) == options.index(current) + 1:
        return "ArrowDown"
    if options.index(target) == 0:
        return "Home"
    raise ValueError(f"{current} → {target} is not one key away in {options}")


def metrics(session) -> dict[str, float]:
    """The page's cumulative main-thread metrics, in ms."""
    got = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    return {name: got[name] * 1000 for name in METRICS}


def one_change(page: Page, step: int, action: tuple, speed: int) -> None:
    """Reach the step's control, then change it as a reader does (a key on the focused <select>, or a click on the
    slider's track where it gives the value) and wait for the page to settle; adds the change's main-thread work,
    Event Timing and whether the next frame showed it to page.found[speed]."""
    if action[0] == "key":
        page.tab.evaluate(FOCUS, page.selector(step))
    else:
        left, middle, width, _ = page.tab.evaluate(REACH, page.selector(step))
        x = left + page.slider_x[action[1]]
    before = metrics(page.session)
    if action[0] == "key":
        page.tab.keyboard.press(action[1])
    else:
        page.tab.mouse.click(x, middle)
    script, argument = page.done(step)
    result = page.tab.evaluate(script, argument)
    after = metrics(page.session)
    if result is None:
        raise RuntimeError(f"{page.name} ({page.path}) never drew step {step}")
    found = page.found.setdefault(speed, {"work": [], "event": [], "next": []})
    found["work"].append(after["TaskDuration"] - before["TaskDuration"])
    found["event"].append(result["event"])
    found["next"].append(bool(result["next"]))


def calibrate(browser, page: Page, selector: str, values: list[str], viewport: dict) -> None:
    """Where on the slider's track a click gives each value, found on a fresh load of the page (a click, the value
    read, the point moved by the difference) and kept in page.slider_x."""
    open_page(browser, page, viewport)
    try:
        for value in values:
            left, middle, width, _ = page.tab.evaluate(REACH, selector)
            low, high, _ = page.slider
            x = 8 + (float(value) - low) / (high - low) * (width - 16)  # about a thumb's half from each end
            for _ in range(12):
                page.tab.mouse.click(left + x, middle)
                got = float(page.tab.evaluate("(s) => document.querySelector(s).value", selector))
                if got == float(value):
                    break
                x += (float(value) - got) * (width - 16) / (high - low) * 0.8
            else:
                raise RuntimeError(f"no click on {selector} of {page.path} gives {value}")
            page.slider_x[value] = x
    finally:
        page.tab.context.close()


def open_page(browser, page: Page, viewport: dict) -> None:
    """A fresh context on the page, its probe in place, its DevTools session measuring in thread time."""
    context = browser.new_context(offline=True, viewport=viewport)
    context.add_init_script(PROBE)
    page.tab = context.new_page()
    page.tab.goto(page.path.as_uri())
    if page.name == "plate":
        wait_until(page.tab, "document.documentElement.dataset.ready === 'true'", timeout=30)
        # The controls in view as a reader has them to change one: the disclosure of the others open, and every
        # view made (as the first touch of a control makes them).
        page.tab.evaluate("document.getElementById('more-toggle')?.click()")
        page.tab.evaluate("document.getElementById('controls').scrollIntoView()")
        page.tab.evaluate("() => window.plate.live().then(() => true)")
    else:
        wait_until(page.tab, "window.__view !== undefined", timeout=30)
    page.tab.wait_for_timeout(300)
    page.session = context.new_cdp_session(page.tab)
    page.session.send("Performance.enable", {"timeDomain": "threadTicks"})


@dataclass
class Plate:
    """One plate's pages and walk."""
    folder: Path
    title: str
    pages: dict
    actions: dict  # page name → [("key", key) or ("click", value) per step]
    gzip: dict  # page name → kB at gzip level 6
    load: list = field(default_factory=list)


def prepare(browser, folder: Path, work: Path, changes: int) -> Plate:
    """The plate built alone, Altair's two pages of its figures with the rows its views show at each selection of
    the walk, and the keys each page's walk presses."""
    out = work / folder.name
    files, vl_specs, vega_specs = build_capturing(out / "plate", folder)
    html = files["index.html"]
    parser = Selects()
    parser.feed(html)
    full = {i: [v for v, _ in options] for i, _, options in parser.found if i}
    controls = [(i, n, [(v, lab) for v, lab in options if v != "custom"]) for i, n, options in parser.found
                if i and options]
    # A slider (XIV.4's MFU): three values a pointer moves it between, the page's own first.
    sliders = {}
    for found in re.finditer(r'<input id="([^"]+)" name="([^"]+)" type="range" min="([\d.]+)" max="([\d.]+)" '
                             r'step="([\d.]+)" value="([\d.]+)"', html):
        ident, name, low, high, step, value = found.groups()
        low, high, step, value = float(low), float(high), float(step), float(value)
        span = round((high - low) / 4 / step) * step
        picks = [value, min(high, value + span), max(low, value - span)]
        options = [(f"{v:g}", f"{v:g}") for v in picks]
        controls.append((ident, name, options))
        sliders[name] = (low, high, step)
        full[ident] = [v for v, _ in options]
    signals = page_signals(html, controls)
    start = tuple(parser.chosen.get(i, options[0][0]) for i, _, options in controls)
    steps = walk(controls, start, changes)
    selections = [start, *(selection for _, _, selection in steps)]
    datasets = plate_rows(browser, out / "plate" / "index.html", vega_specs, selections, controls)
    paths = {"plate": out / "plate" / "index.html"}
    for renderer in ("svg", "canvas"):
        anchor = altair_page(vl_specs, datasets, controls, signals, start, out, renderer, folder=f"altair-{renderer}",
                             ranges=sliders)
        probed = anchor.parent / "probed.html"
        text = anchor.read_text(encoding="utf-8")
        assert ".catch(console.error);" in text, "vega-embed's call is no longer where the probe hands its view over"
        probed.write_text(text.replace(".catch(console.error);", HAND_OVER, 1), encoding="utf-8")
        paths[renderer] = probed
    actions = {name: [] for name in PAGES}
    current = list(start)
    for i, value, _ in steps:
        if controls[i][1] in sliders:
            for name in PAGES:
                actions[name].append(("click", value))
        else:
            actions["plate"].append(("key", next_key(full[controls[i][0]], current[i], value)))
            altair = [v for v, _ in controls[i][2]]
            actions["svg"].append(("key", next_key(altair, current[i], value)))
            actions["canvas"].append(actions["svg"][-1])
        current[i] = value
    pages = {name: Page(name, path) for name, path in paths.items()}
    pages["plate"].selector = lambda k: f"#{controls[steps[k][0]][0]}"
    pages["plate"].done = lambda k: (DONE_PLATE, None)
    for name in ("svg", "canvas"):
        pages[name].selector = lambda k: (f'input[name="{signals[controls[steps[k][0]][1]]}"]'
                                          if controls[steps[k][0]][1] in sliders else
                                          f'select[name="{signals[controls[steps[k][0]][1]]}"]')
        pages[name].done = lambda k: (DONE_ALTAIR, [signals[controls[steps[k][0]][1]], steps[k][1]])
    for page in pages.values():
        page.slider = next(iter(sliders.values()), None)
        page.slider_values = sorted({v for i, v, _ in steps if controls[i][1] in sliders})
        page.slider_selector = (None if not sliders else f"#{next(c[0] for c in controls if c[1] in sliders)}"
                                if page.name == "plate" else
                                f'input[name="{signals[next(iter(sliders))]}"]')
    title = next((line.split("=", 1)[1].strip().strip('"') for line in (folder / "plate.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("title")), folder.name)
    return Plate(folder, title, pages, actions, {name: sizes(path)["gzip"] for name, path in paths.items()})


def plate_rows(browser, page_path: Path, vega_specs: list[dict], selections: list, controls: list) -> dict:
    """Every row the plate's views hold for each selection (sliders included), each row tagged with its selection's
    key: what Altair's pages show, filtered on their bound controls."""
    roots = {d["name"] for spec in vega_specs for d in spec.get("data", [])
             if "source" not in d and "values" not in d and "url" not in d}
    context = browser.new_context(offline=True)
    tab = context.new_page()
    tab.goto(page_path.as_uri())
    wait_until(tab, "document.documentElement.dataset.ready === 'true'")
    tab.evaluate("() => window.plate.live().then(() => true)")
    rows: dict[str, list[dict]] = {name: [] for name in roots}
    for selection in dict.fromkeys(selections):
        tab.evaluate(SET_PLATE, [[c[0], v] for c, v in zip(controls, selection)])
        for name, values in tab.evaluate(ROWS, sorted(roots)).items():
            rows[name].extend({**row, SELECTION: "|".join(selection)} for row in values)
    context.close()
    return rows


def walk_plate(browser, plate: Plate, changes: int) -> None:
    """The walk at each speed on fresh loads of the three pages, taking turns change by change."""
    viewport = {"width": 1100, "height": 900}
    for page in plate.pages.values():
        if page.slider_values:
            calibrate(browser, page, page.slider_selector, page.slider_values, viewport)
    for speed in SPEEDS:
        for page in plate.pages.values():
            open_page(browser, page, viewport)
            page.session.send("Emulation.setCPUThrottlingRate", {"rate": speed})
        plate.load.append(os.getloadavg()[0])
        for step in range(changes):
            for name in PAGES:
                page = plate.pages[name]
                one_change(page, step, plate.actions[name][step], speed)
        plate.load.append(os.getloadavg()[0])
        for page in plate.pages.values():
            page.tab.context.close()


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between the nearest ranks."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    low = int(k)
    return ordered[low] + (ordered[min(low + 1, len(ordered) - 1)] - ordered[low]) * (k - low)


def event_pct(values: list, q: float) -> tuple[float, bool]:
    """The q-th percentile of Event Timing durations, those under 16 ms (not reported) counted as 16: (value,
    whether it is only that bound)."""
    value = pct([16.0 if v is None else v for v in values], q)
    return value, all(v is None or v <= 16 for v in values if v is not None and v <= value) and value <= 16


def report(plate: Plate, changes: int) -> dict:
    """One plate's lines against the budgets; returns its figures for the summary."""
    p, s, c = (plate.pages[n].found for n in PAGES)
    print(f"== {plate.title} ({plate.folder.name}): {changes} changes per speed, each page in turn; load average "
          f"{min(plate.load):.1f}-{max(plate.load):.1f} on {os.cpu_count()} CPUs")
    print(f"  {'':<44} {'plate':>9} {'Altair SVG':>11} {'canvas':>9} {'/SVG':>6} {'/canvas':>8}  budget")

    def line(name, mine, svg, canvas, unit, budget="", ok=None, text=None):
        verdict = "" if ok is None else ("  ok" if ok else "  OVER")
        shown = text or (lambda v: f"{v:7.1f}")
        print(f"  {name:<44} {shown(mine):>7} {unit:<2}{shown(svg):>9} {unit:<2}{shown(canvas):>7} {unit:<2}"
              f"{mine / svg:5.2f}x {mine / canvas:6.2f}x  {budget}{verdict}")
    summary = {"gzip": plate.gzip["plate"]}
    line("page, gzip-6", plate.gzip["plate"], plate.gzip["svg"], plate.gzip["canvas"], "kB", "<= 150 kB",
         plate.gzip["plate"] <= 150)
    for speed in SPEEDS:
        for q in (50, 95):
            mine, svg, canvas = (pct(f[speed]["work"], q) for f in (p, s, c))
            budget, ok = ("<= 0.8x SVG", mine <= 0.8 * svg) if q == 50 else ("", None)
            line(f"main-thread work per change, p{q}, {speed}x", mine, svg, canvas, "ms", budget, ok)
            summary[f"work p{q} {speed}x"] = (mine, svg, canvas)
    for speed in SPEEDS:
        for q in (50, 95):
            (mine, low), (svg, _), (canvas, _) = (event_pct(f[speed]["event"], q) for f in (p, s, c))
            budget, ok = "", None
            if q == 95 and speed == 4:
                budget, ok = "<= 200 ms, <= SVG's", mine <= 200 and mine <= svg
            line(f"Event Timing, p{q}, {speed}x", mine, svg, canvas, "ms", budget, ok,
                 text=lambda v: "<16" if v <= 16 else f"{v:.0f}")
            summary[f"event p{q} {speed}x"] = (mine, svg, canvas)
    shares = [100 * sum(f[1]["next"]) / len(f[1]["next"]) for f in (p, s, c)]
    print(f"  {'figures in view painted in the next frame, 1x':<44} {shares[0]:6.0f} % {shares[1]:8.0f} % "
          f"{shares[2]:6.0f} %                 >= 95%{'  ok' if shares[0] >= 95 else '  OVER'}")
    summary["next 1x"] = tuple(shares)
    share4 = [100 * sum(f[4]["next"]) / len(f[4]["next"]) for f in (p, s, c)]
    print(f"  {'  the same, 4x':<44} {share4[0]:6.0f} % {share4[1]:8.0f} % {share4[2]:6.0f} %")
    summary["load"] = (min(plate.load), max(plate.load))
    return summary


def lighthouse_plate(plate: Plate, runs: int) -> None:
    """Lighthouse mobile on the plate's page and Altair's SVG page, served gzip-compressed, if installed."""
    if runs <= 0:
        return
    if not LIGHTHOUSE.exists():
        print("  Lighthouse skipped: not installed (npm install --prefix tests/.node lighthouse)")
        return
    root = plate.pages["plate"].path.parent.parent
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        mine = lighthouse(f"{base}/plate/index.html", runs)
        svg = lighthouse(f"{base}/altair-svg/index.html", runs)
    finally:
        server.shutdown()
        server.server_close()
    if mine and svg:
        print(f"  {'Lighthouse mobile, median of ' + str(runs):<44} {mine['score']:7.2f}    {svg['score']:9.2f}"
              f"{'':>21}>= 0.98{'  ok' if mine['score'] >= 0.98 else '  OVER'}")
        print(f"  {'  total blocking time':<44} {mine['tbt']:7.0f} ms {svg['tbt']:7.0f} ms")


def run(work: Path, args) -> None:
    """Every plate of the series (or those args.plates names), one after the other, in one browser."""
    started = time.perf_counter()
    from generator.source import volume
    folders = ([Path(p).resolve() for p in args.plates] if args.plates else
               [vol.folder(entry) for vol, entry in volume.load_series(SERIES).written()])
    path = chromium_path()
    if path is None:
        raise SystemExit("the reader benchmark needs the system's Chromium")
    from playwright.sync_api import sync_playwright
    from generator.site import assembly
    assembly.say = lambda line: None  # the builds' steps: not what is measured here
    print(f"A reader's changes: keys on a focused control, the plate and Altair's SVG and canvas pages of its figures "
          f"taking turns change by change; main-thread work in thread time (Chromium's performance metrics), "
          f"Event Timing durations (entries under 16 ms are not reported: '<16'); {args.changes} changes per speed")
    summaries = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            for folder in folders:
                plate = prepare(browser, folder, work, args.changes)
                walk_plate(browser, plate, args.changes)
                summaries[folder.name] = report(plate, args.changes)
                lighthouse_plate(plate, args.lighthouse_runs)
        finally:
            browser.close()
    summary_table(summaries)
    print(f"(the run took {time.perf_counter() - started:.0f} s)")


def summary_table(summaries: dict) -> None:
    """The plates side by side, as docs/performance.md gives them: plate (Altair SVG; canvas)."""
    names = list(summaries)
    print("\n| | " + " | ".join(names) + " | budget |")
    print("| --- |" + " --- |" * (len(names) + 1))

    def cells(key, unit, digits=1):
        out = []
        for name in names:
            mine, svg, canvas = summaries[name][key]
            out.append(f"{mine:.{digits}f} {unit} ({svg:.{digits}f}; {canvas:.{digits}f}), {mine / svg:.2f}x")
        return out
    rows = [("page, gzip-6", [f"{summaries[n]['gzip']:.1f} kB" for n in names], "<= 150 kB")]
    for speed in SPEEDS:
        rows.append((f"work per change p50, {speed}x", cells(f"work p50 {speed}x", "ms"), "<= 0.8x SVG"))
        rows.append((f"work per change p95, {speed}x", cells(f"work p95 {speed}x", "ms"), ""))
    for speed in SPEEDS:
        for q in (50, 95):
            rows.append((f"Event Timing p{q}, {speed}x", [
                " ".join(("<16" if v <= 16 else f"{v:.0f}") + (" ms" if i == 0 else "") for i, v in
                         enumerate(summaries[n][f"event p{q} {speed}x"][:1])) +
                " (" + "; ".join("<16" if v <= 16 else f"{v:.0f}" for v in summaries[n][f"event p{q} {speed}x"][1:])
                + ")" for n in names], "<= 200 ms and <= SVG's" if (speed, q) == (4, 95) else ""))
    rows.append(("next frame, 1x", [f"{summaries[n]['next 1x'][0]:.0f}% ({summaries[n]['next 1x'][1]:.0f}%; "
                                    f"{summaries[n]['next 1x'][2]:.0f}%)" for n in names], ">= 95%"))
    rows.append(("load average", [f"{summaries[n]['load'][0]:.1f}-{summaries[n]['load'][1]:.1f}" for n in names], ""))
    for name, values, budget in rows:
        print(f"| {name} | " + " | ".join(values) + f" | {budget} |")


__all__ = ["run", "SELECTION"]
