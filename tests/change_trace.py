"""Where a reader's change spends the main thread, on a plate's page and on Altair's SVG page of the same figures: the
walk of tests/reader_walk.py (trusted keys and clicks, the pages taking turns change by change) under a Chromium
trace, each page's main-thread time split by kind (script, style, layout, pre-paint and layerize, paint, commit,
other) as self time, per change. Prints; asserts nothing. Run: python tests/change_trace.py [--changes 12]
[--speed 1] [--plates DIR …]"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from conftest import CHROMIUM_ARGS, SERIES, chromium_path  # noqa: E402
from reader_walk import one_change, open_page, prepare  # noqa: E402

KINDS = {  # trace event name → kind; an event's self time goes to its nearest named ancestor's kind
    "script": ("FunctionCall", "EvaluateScript", "v8.compile", "v8.run", "TimerFire", "FireAnimationFrame",
               "EventDispatch", "RunMicrotasks", "v8.callFunction", "V8.GCScavenger", "MajorGC", "MinorGC",
               "V8.GC_SCAVENGER", "BlinkGC.AtomicPhase", "ParseHTML"),
    "style": ("UpdateLayoutTree", "RecalculateStyles", "ParseAuthorStyleSheet", "ScheduleStyleRecalculation"),
    "layout": ("Layout", "LayoutShift", "IntersectionObserverController::computeIntersections"),
    "pre-paint, layerize": ("PrePaint", "Layerize", "UpdateLayer", "UpdateLayerTree", "Document::updateLifecycle"),
    "paint": ("Paint", "PaintImage", "Decode Image"),
    "commit": ("Commit", "ProxyMain::BeginMainFrame::commit", "CompositeLayers"),
}
KIND_OF = {name: kind for kind, names in KINDS.items() for name in names}
CATEGORIES = "devtools.timeline,disabled-by-default-devtools.timeline,v8,blink,disabled-by-default-v8.gc"


def main_threads(events: list[dict]) -> set[tuple[int, int]]:
    """The (pid, tid) of every renderer's main thread in the trace."""
    return {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}


def self_times(events: list[dict]) -> dict[str, float]:
    """Main-thread self time (ms) by kind, over every complete event of the renderers' main threads."""
    mains = main_threads(events)
    spans = sorted(((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                    if e.get("ph") == "X" and "dur" in e and (e["pid"], e["tid"]) in mains and e["dur"] > 0),
                   key=lambda s: (s[0], -s[1]))
    totals: dict[str, float] = {}
    stack: list[list] = []  # [end, kind, start, children's time]

    def close(until: float) -> None:
        while stack and stack[-1][0] <= until:
            end, kind, start, child = stack.pop()
            own = (end - start) - child
            totals[kind] = totals.get(kind, 0.0) + own / 1000
            if stack:
                stack[-1][3] += end - start

    for start, end, name in spans:
        close(start)
        if stack and end > stack[-1][0]:
            end = stack[-1][0]  # an event overrunning its parent, as rounding leaves them: clipped
        inherited = stack[-1][1] if stack else "other"
        stack.append([end, KIND_OF.get(name, inherited), start, 0.0])
    close(float("inf"))
    return totals


def traced(browser, page, steps: range, actions: list, speed: int) -> dict[str, float]:
    """Take the steps on the open page under a trace; its main thread's self time by kind, ms."""
    browser.start_tracing(page=page.tab, categories=CATEGORIES.split(","))
    for step in steps:
        one_change(page, step, actions[step], speed)
    data = json.loads(browser.stop_tracing())
    return self_times(data["traceEvents"] if isinstance(data, dict) else data)


def run(args) -> None:
    from playwright.sync_api import sync_playwright
    folders = [Path(p) for p in args.plates] if args.plates else sorted(
        p for p in SERIES.iterdir() if (p / "plate.md").is_file())
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        viewport = {"width": 1100, "height": 900}
        print(f"main-thread self time per change, ms, {args.changes} changes at {args.speed}× "
              f"(load {os.getloadavg()[0]:.1f})")
        for folder in folders:
            plate = prepare(browser, folder, Path(tmp), args.changes)
            found = {}
            for name in ("plate", "svg"):
                page = plate.pages[name]
                if page.slider_values:
                    from reader_walk import calibrate
                    calibrate(browser, page, page.slider_selector, page.slider_values, viewport)
                open_page(browser, page, viewport)
                page.session.send("Emulation.setCPUThrottlingRate", {"rate": args.speed})
                found[name] = traced(browser, page, range(args.changes), plate.actions[name], args.speed)
                page.tab.context.close()
            kinds = [*KINDS, "other"]
            print(f"\n{plate.title}: {'kind':<22}{'plate':>9}{'Altair SVG':>12}{'ratio':>8}")
            for kind in [*kinds, "all"]:
                mine = (sum(found["plate"].values()) if kind == "all" else found["plate"].get(kind, 0.0))
                svg = (sum(found["svg"].values()) if kind == "all" else found["svg"].get(kind, 0.0))
                mine, svg = mine / args.changes, svg / args.changes
                ratio = f"{mine / svg:.2f}" if svg > 0.05 else "–"
                print(f"{'':<{len(plate.title) + 2}}{kind:<22}{mine:>9.2f}{svg:>12.2f}{ratio:>8}")
        browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=12)
    parser.add_argument("--speed", type=int, default=1, help="CPU throttling rate (1, or 4 as Lighthouse's mobile)")
    parser.add_argument("--plates", nargs="+", metavar="DIR")
    run(parser.parse_args())
