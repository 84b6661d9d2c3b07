"""Speed and size figures of the plate (prints them; asserts nothing). Run: python tests/benchmark.py"""
from __future__ import annotations

import gzip
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import CHROMIUM_ARGS, CONTENT, chromium_path, wait_until  # noqa: E402

from generator import build, runtime  # noqa: E402


def timed(function, repeat: int = 3) -> tuple[float, object]:
    """Median wall time of function over repeat runs, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    out = Path(tempfile.mkdtemp()) / "site"
    bundle_s, _ = timed(runtime.bundle, repeat=1)
    print(f"runtime bundle (vl-convert, uncached):  {bundle_s:.2f} s")
    build_s, files = timed(lambda: build.build(CONTENT, out))
    page = files["index.html"].encode()
    print(f"build (runtime cached), median of 3:    {build_s:.2f} s")
    print(f"index.html:                             {len(page) / 1024:.1f} KB raw, "
          f"{len(gzip.compress(page, 9)) / 1024:.1f} KB gzip (budget 230 KB)")
    code = runtime.bundle().encode()
    print(f"  of which the Vega runtime:            {len(code) / 1024:.1f} KB raw, "
          f"{len(gzip.compress(code, 9)) / 1024:.1f} KB gzip")
    path = chromium_path()
    if path is None:
        print("Chromium not on PATH: browser figures skipped")
        return
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        loads, changes = [], []
        for _ in range(5):
            context = browser.new_context(offline=True)
            page_ = context.new_page()
            started = time.perf_counter()
            page_.goto((out / "index.html").as_uri())
            wait_until(page_, "document.documentElement.dataset.ready === 'true'")  # CSP-safe (no eval)
            loads.append(time.perf_counter() - started)
            for value in ("llama3-70b", "llama3-405b", "llama3-8b"):
                changes.append(page_.evaluate("""async (value) => {
                    const select = document.getElementById('choose-model');
                    const t0 = performance.now();
                    select.value = value;
                    select.dispatchEvent(new Event('change', {bubbles: true}));
                    while (!document.documentElement.dataset.shown.startsWith(value)) {
                        await new Promise(requestAnimationFrame);
                    }
                    return performance.now() - t0;
                }""", value))
            context.close()
        browser.close()
    print(f"open from disk to live figures:         median {statistics.median(loads) * 1000:.0f} ms "
          f"(max {max(loads) * 1000:.0f} ms, 5 loads)")
    print(f"control change to both figures redrawn: median {statistics.median(changes):.0f} ms "
          f"(max {max(changes):.0f} ms, {len(changes)} changes)")
    shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
