"""One plate's files assembled in memory: its content checked, its figures drawn, its page's Vega runtime made and
its page rendered, with its CSV and preview; each costly step timed and kept in the build cache. build.py writes them.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import cache, publish
from ..source import checks, volume
from ..page import jsmodules, render, runtime, theme


cache_dir = runtime.cache_dir  # where the runtime's products and the build cache are kept between builds

STEP_SAID_S = 0.5  # a step that made what the cache did not hold and took this long is said with its time
STILL_EVERY_S = 10.0  # a step still making something after this long says so, and again as often


def _say(line: str) -> None:
    print(line, flush=True)


say: Callable[[str], None] = _say  # where a long step says it is still at it (`plate` prints it)
_steps: list[str] | None = None  # within a session(): the steps that made something, each with its time


@contextlib.contextmanager
def step(what: str):
    """A step of the build, timed: one that made something the cache did not hold (a first build's figures, the
    page's runtime) and took STEP_SAID_S or more is kept for the build's report with its time, and while it runs it
    says every STILL_EVERY_S that it is still at it."""
    started, made = time.perf_counter(), cache.made()
    done = threading.Event()

    def still() -> None:
        while not done.wait(STILL_EVERY_S):
            if cache.made() > made:
                say(f"plate: {what}: still at it ({time.perf_counter() - started:.0f} s)")
    watcher = threading.Thread(target=still, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
    took = time.perf_counter() - started
    if took >= STEP_SAID_S and cache.made() > made and _steps is not None:
        _steps.append(f"{what} in {took:.1f} s")


_tools: dict | None = None  # within a session(): the toolchain found, or why not, once for every plate of the build


@contextlib.contextmanager
def session():
    """One build of one or many plates: the toolchain is looked for once, and the steps that made something are
    kept, in the list yielded, for the build's report."""
    global _tools, _steps
    _tools, _steps = {}, []
    try:
        yield _steps
    finally:
        _tools = _steps = None


RUNTIME_FOLDER = "plate-runtime"  # the runtime's products, a cache.Cache of their own beside the build cache


def runtime_store() -> cache.Cache:
    """Where the runtime's products are kept (sealed and pruned like the build cache's entries, but apart from it:
    they depend on the specs and node's side, not on the generator's Python code)."""
    return cache.Cache(cache_dir() / RUNTIME_FOLDER)


def _kept_text(store: cache.Cache, kind: str, parts: tuple, make, what: str) -> str:
    """make()'s text, or what it gave before for the same parts (kind ends the entry's name: 'runtime.js'); an
    empty text fails the build and is never kept."""
    def made() -> str:
        text = make()
        if not text.strip():
            raise RuntimeError(f"{what} came out empty; the page's figures could not start")
        return text
    return store.kept(kind, parts, made, of_code=False)


def fallback_js(specs: dict[str, dict]) -> str:
    """vl-convert's bundle of what these specs need, parser included, kept in the cache."""
    return _kept_text(runtime_store(), "fallback.js", (runtime.cache_name(specs),),
                      lambda: runtime.fallback_bundle(specs), "vl-convert's Vega runtime")


def _toolchain() -> Path:
    """runtime.toolchain(), asked once per build (every plate of a series then gets the same answer, and a warning
    about it is said once); raises runtime.Unavailable."""
    if _tools is None:
        return runtime.toolchain(cache_dir())
    if "found" not in _tools:
        try:
            _tools["found"] = runtime.toolchain(cache_dir())
        except runtime.Unavailable as why:
            _tools["found"] = why
    if isinstance(_tools["found"], runtime.Unavailable):
        raise _tools["found"]
    return _tools["found"]


def live_runtime(specs: dict[str, dict], warnings: list[str] | None = None) -> runtime.Runtime:
    """The page's Vega runtime for these specs ({figure id: Vega spec}): their dataflows parsed at build time and a
    script with only the operators those run, each kept in the cache by what it is made of. Without node's packages
    (offline on the first build, say) it is vl-convert's larger bundle, and a warning says so."""
    runtime.needs(specs)  # a transform or mark Vega lacks is named at its figure before anything runs
    key = runtime.node_key()
    home: list[Path] = []

    def tools() -> Path:
        if not home:
            home.append(_toolchain())
        return home[0]

    store = runtime_store()
    try:
        parsed = json.loads(_kept_text(store, "dataflows.json", (key, specs), lambda: runtime.parse(specs, tools()),
                                       "the parsed figures"))
        needs = parsed["needs"]
        code = _kept_text(store, "runtime.js", (key, needs), lambda: runtime.bundle(needs, tools()),
                          "the Vega runtime")
    except runtime.Unavailable as why:
        if warnings is not None:
            warnings.append(f"the page carries vl-convert's larger Vega runtime, with the parser (about 50 KB "
                            f"gzip more), because {why}")
        return runtime.Runtime(fallback_js(specs), None)

    def minify(text: str, loader: str) -> str:
        """The page's script or style minified, kept in the cache by its text; as it is, without node."""
        try:
            return _kept_text(store, f"min.{loader}", (key, text), lambda: runtime.minify(text, loader, tools()),
                              f"the page's minified {loader}")
        except runtime.Unavailable:
            return text

    def bundle(modules: dict[str, str]) -> str:
        """The page's script, esbuild's bundle of its modules, kept in the cache by their texts; without node, their
        concatenation (jsmodules)."""
        try:
            return _kept_text(store, "page.js", (key, modules), lambda: runtime.bundle_page(modules, tools()),
                              "the page's script")
        except runtime.Unavailable:
            return jsmodules.concatenate(modules)
    return runtime.Runtime(code, parsed["dataflows"], minify, bundle)


def _kept(memo: dict | None, name: str, key: str, make):
    """make(), or what it gave last time for the same key when a memo is kept (a running `plate serve`)."""
    if memo is None:
        return make()
    if name not in memo or memo[name][0] != key:
        memo[name] = (key, make())
    return memo[name][1]


def gather(content_dir: Path, warnings: list[str] | None = None, memo: dict | None = None,
           links=None, page: str = publish.HOME, base_url: str | None = None,
           pdfs: dict[str, str] | None = None, drawn: list | None = None) -> dict[str, str]:
    """Every file of the site as {relative path: text}, computed without writing anything; the content's
    warnings (what `plate check` reports) are added to warnings. With a memo (kept by `plate serve` between
    rebuilds), the figures and the CSV are made again only when the presets or the default selection change:
    an edit of the prose rebuilds in a fraction of the time. Between processes, the build cache (cache.py)
    keeps them. A series build (series.py) gives the plate's page name and its volume's base_url, and writes the
    site's robots.txt and sitemap itself; a plate built alone (base_url None) is a site of one page, index.html,
    published at the base_url of the series.toml (or volume.toml) beside its folder, if any. drawn, if given, gets the plate's
    figures (the series' index shows the first)."""
    alone = base_url is None
    if alone:
        base_url = volume.base_url_beside(content_dir, warnings)
    with step(f"{content_dir.name}: the content checked"):
        result = checks.checked(content_dir)  # every mistake surfaces before the figures are drawn
    if warnings is not None:
        warnings.extend(result.warnings)
    plate, model = result.content, result.model
    module = plate.module
    # what the figures and the CSV are made of; the plate module's code is in the cache's keys (cache.py)
    key = repr((module.CODE, plate.presets, plate.plate.default, theme.current().values))
    store = cache.at(cache_dir(), module)  # kept across builds too: with every entry there, a build never loads Altair
    name = content_dir.name
    with step(f"{name}: the figures drawn"):
        figures = _kept(memo, "figures", key, lambda: module.figures(plate, model, store))
    with step(f"{name}: the data written"):
        csv = _kept(memo, "csv", key, lambda: store.kept("csv", (repr(plate.presets),),
                                                         lambda: module.csv_text(model), needs=("numpy",)))
    if drawn is not None:
        drawn.extend(figures)
    with step(f"{name}: the page's Vega runtime made"):
        live = live_runtime({f.id: f.vega for f in figures}, warnings)
    # links: a series build's (generator/site/series.py); pdfs: the page's PDFs in the site, {link text: file name}
    with step(f"{name}: the page made"):
        html = render.page(plate, model, figures, live, store, links, pdfs, page=page, base_url=base_url)
    preview = _kept(memo, "preview", repr((key, base_url, page)), lambda: publish.plate_files(base_url, page, figures))
    files = {page: html, plate.plate.data_file: csv, **preview}
    return {**files, **publish.site_files(base_url, [page])} if alone else files
