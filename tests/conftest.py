"""Shared fixtures: built sites (real content and a small fixture) and a Chromium driven by Playwright."""
from __future__ import annotations

import atexit
import fcntl
import os
import pickle
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import pytest

from generator.plate import plates
from generator.site import build
from xiv4 import SHIPPED, Selection

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # the test extra is not installed
    sync_playwright = None

ROOT = Path(__file__).resolve().parent.parent
CONTENT = Path(os.environ.get("PLATE_CONTENT") or SHIPPED).resolve()
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOY = FIXTURES / "toy"  # the engine's own plate: its content and Python, no JavaScript (docs/plates.md)
# the walks of a covering set take every selection instead (covered, covering): before a release (docs/testing.md)
EVERY_SELECTION = os.environ.get("PLATE_EVERY_SELECTION") == "1"


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: one worker per core and one more, since tests also wait on subprocesses, timers and the browser
    (two workers on 2 cores left 7-9% of the CPU idle; three took 273 s instead of 303, docs/testing.md)."""
    return (os.cpu_count() or 1) + 1


def copy_plate(plate: Path, dest: Path, **copytree) -> Path:
    """A plate's folder copied to dest, with its series' catalogue (series.toml beside it, platelib.catalogue) beside
    the copy when it has one and dest's parent none: a plate reads its models, GPUs and networks from there."""
    shutil.copytree(plate, dest, **copytree)
    catalogue = Path(plate).parent / "series.toml"
    if catalogue.is_file() and not (Path(dest).parent / "series.toml").exists():
        shutil.copyfile(catalogue, Path(dest).parent / "series.toml")
    return dest


def _xiv4_mini() -> Path:
    """XIV.4's plate module on small content (tests/fixtures/mini: two models, one batch, two links), joined in a
    temporary folder named mini for this test run: the tests of XIV.4's model, facts and prose slots on content
    small enough to build in seconds. The engine's own tests run on TOY."""
    folder = Path(tempfile.mkdtemp(prefix="plate-xiv4-mini-")) / "mini"
    shutil.copytree(FIXTURES / "mini", folder)
    for part in (plates.PACKAGE, plates.PAGE):
        (folder / part).symlink_to(SHIPPED / part, target_is_directory=True)
    atexit.register(shutil.rmtree, folder.parent, True)
    return folder


XIV4_MINI = _xiv4_mini()
FIXTURE = TOY  # the plate the engine's tests build
SERIES = ROOT / "plates"  # the shipped series: volume.toml and every plate's folder
# The presets spec/MODEL.md names, by the ids content/presets.toml gives them. Its claims (1,024, 0.642 s,
# 128.5 GB, ...) hold for these and are asserted only for them, when the content being tested holds them,
# never for whatever the default is (an author may change it).
SPEC_IDS = {"model": ("llama3-8b", "llama3-70b", "llama3-405b"), "batch": ("1M", "4M"),
            "network": ("ib-400", "nvlink"), "gpu": ("h100-sxm", "a100-sxm", "h200-sxm", "b200")}
SPEC_SELECTION = {"model": "llama3-8b", "batch": "4M", "network": "ib-400", "gpu": "h100-sxm"}  # MODEL.md's default
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps",
    # The tests open only local pages: one renderer process serves them all, and a page left for about:blank is not
    # kept alive for going back. About 13% less of Chromium's CPU in tests/test_label_overlap.py (docs/testing.md).
    "--renderer-process-limit=1", "--disable-site-isolation-trials",
    "--disable-features=site-per-process,IsolateOrigins,BackForwardCache",
]


def plates() -> dict:
    """The plates the built content refers to by subject (plate.md's [plates]): the page's words name them."""
    from generator.source import content
    return content.load(CONTENT).plate.plates


def spec_selection(presets, **choice) -> Selection:
    """MODEL.md's default selection (Llama 3 8B, 4M tokens, 400 Gb/s, on an H100 SXM) with some presets or options
    swapped, spec_selection(presets, network="nvlink", overlap="backward"); the test is skipped when the content
    being tested does not hold every preset it names (MODEL.md's claims are about those presets only)."""
    chosen = {**SPEC_SELECTION, **choice}
    tables = {"model": presets.models, "batch": presets.batches, "network": presets.networks, "gpu": presets.gpus}
    missing = [f"{kind} {chosen[kind]!r}" for kind in tables if chosen[kind] not in tables[kind]]
    if missing:
        pytest.skip(f"MODEL.md's claim is about {', '.join(missing)}, which {CONTENT} does not hold")
    return Selection(**chosen)


def default_caption(c) -> str:
    """How the figures caption the content's default selection, from the content's own names: the model, the batch
    and the network's short name ("Llama 3 8B · 4M tokens · 400 Gb/s" in the shipped content)."""
    d = c.plate.default
    return " · ".join((c.presets.models[d.model].name, c.presets.batches[d.batch].name,
                       c.presets.networks[d.network].short))


def shared_folder(tmp_path_factory) -> Path:
    """The run's folder that every pytest-xdist worker sees (each worker's own base temp is inside it), or the base
    temp of a run without workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(tmp_path_factory, name: str, make: Callable[[Path], object]):
    """make(folder)'s value, made once for the whole run in a folder of its own (name: letters, digits, '-') and
    shared by every worker: the first process to ask makes it under a file lock, the others wait for it and get its
    value (pickled beside the folder). A make() that fails is tried again by the next process that asks. Only for
    what the tests then only read: a built site, an edited copy of the content, printed PDFs."""
    assert re.fullmatch(r"[A-Za-z0-9-]+", name), name
    root = shared_folder(tmp_path_factory) / "made-once"
    root.mkdir(exist_ok=True)
    folder, value = root / name, root / f"{name}.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if value.exists():
            return pickle.loads(value.read_bytes())
        if folder.exists():  # what a failed make() left
            shutil.rmtree(folder)
        folder.mkdir()
        made = make(folder)
        value.write_bytes(pickle.dumps(made))
        return made


def built_once(tmp_path_factory, name: str, content_dir: Path) -> Path:
    """content_dir built once for the whole run (made_once) into name/site; the site's folder."""
    def make(folder: Path) -> Path:
        build.build(content_dir, folder / "site")
        return folder / "site"
    return made_once(tmp_path_factory, name, make)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The real plate, built once for the run (every worker reads the same site)."""
    return built_once(tmp_path_factory, "real", CONTENT)


@pytest.fixture(scope="session")
def series_site(tmp_path_factory) -> Path:
    """The shipped series (plates/: every written plate's page and the volume's index), built once for the run as
    `plate build` builds it; the tests that take it only read it."""
    return built_once(tmp_path_factory, "series", SERIES)


@pytest.fixture(scope="session")
def mini_site(tmp_path_factory) -> Path:
    """The small fixture plate, built once for the run."""
    return built_once(tmp_path_factory, "mini", FIXTURE)


def chromium_path() -> str | None:
    """The system's Chromium (Debian package `chromium`), never a downloaded browser."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require(missing: str | None) -> None:
    """Skip outside CI when something the test needs is missing; in CI (CI set) fail instead."""
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}, and CI is set: this test must run in CI")
        pytest.skip(missing)


def browser_missing() -> str | None:
    """Why Chromium cannot be driven here, or None."""
    return "Chromium is not on PATH (Debian package 'chromium')" if chromium_path() is None else \
        "Playwright is not installed (pip install -e '.[test]')" if sync_playwright is None else None


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, one for the session (its sync API allows one at a time); skipped only outside CI."""
    require(browser_missing())
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    """A headless Chromium for the session."""
    chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


class PagePool:
    """Playwright pages kept open from test to test, one context each, by context options: making a page costs
    Chromium about 1 CPU-second (its window, a renderer, cold caches), loading a plate into a page it has about a
    quarter of that. A page comes back as a new one would be: about:blank, the options' offline, viewport and media,
    no listener, route or cookie of the last test; a page a test changed in a way that cannot be undone (an init
    script, an exposed function, a default timeout, its context closed) is closed instead."""

    UNDOABLE = ("add_init_script", "expose_binding", "expose_function", "set_default_timeout",
                "set_default_navigation_timeout", "route_from_har")

    def __init__(self, browser):
        self.browser = browser
        self.idle: dict[str, list] = {}

    def take(self, **options):
        """A page of a context made with these options (Browser.new_context's), fresh or reused."""
        import json
        key = json.dumps(options, sort_keys=True, default=str)
        page = self.idle.get(key, []).pop() if self.idle.get(key) else None
        if page is None:
            page = self.browser.new_context(**options).new_page()
        page._pool = {"key": key, "options": options, "listeners": [], "spoilt": False}

        def listen(how):
            def add(event, handler):
                page._pool["listeners"].append((event, handler))
                getattr(type(page), how)(page, event, handler)
            return add

        def spoiling(name):
            def call(*args, **kwargs):
                page._pool["spoilt"] = True
                return getattr(type(page), name)(page, *args, **kwargs)
            return call

        page.on, page.once = listen("on"), listen("once")
        for name in self.UNDOABLE:
            setattr(page, name, spoiling(name))
        return page

    def give(self, page) -> None:
        """Take a page back: kept for the next test, reset, or closed if it cannot be."""
        state, context = page._pool, page.context
        for name in ("on", "once", *self.UNDOABLE):
            page.__dict__.pop(name, None)
        try:
            if state["spoilt"] or page.is_closed() or len(context.pages) != 1:
                raise ValueError("not reusable")
            for event, handler in state["listeners"]:
                page.remove_listener(event, handler)
            page.goto("about:blank")
            page.unroute_all(behavior="ignoreErrors")
            context.unroute_all(behavior="ignoreErrors")
            context.clear_cookies()
            context.set_offline(bool(state["options"].get("offline")))
            page.set_viewport_size(state["options"].get("viewport") or {"width": 1280, "height": 720})
            page.emulate_media(media="null", color_scheme=state["options"].get("color_scheme", "light"),
                               reduced_motion=state["options"].get("reduced_motion", "no-preference"),
                               forced_colors=state["options"].get("forced_colors", "none"))
            page.mouse.move(0, 0)
        except Exception:  # noqa: BLE001 - whatever went wrong, the page is not handed out again
            try:
                context.close()
            except Exception:  # noqa: BLE001 - already closed with its browser
                pass
            return
        self.idle.setdefault(state["key"], []).append(page)


@pytest.fixture(scope="session")
def page_pool(browser) -> PagePool:
    """The worker's pool of reused pages (PagePool)."""
    return PagePool(browser)


@pytest.fixture
def new_page(page_pool):
    """new_page(**context_options): a page as browser.new_context(**options).new_page() gives, from the pool and
    given back after the test; its context is page.context (do not close it)."""
    taken = []

    def take(**options):
        page = page_pool.take(**options)
        taken.append(page)
        return page

    yield take
    for page in taken:
        page_pool.give(page)


# A page count depends on the reader's fonts. Debian's Chromium comes with fonts-liberation (metric clones of
# Arial and Times) when installed with its recommended packages, and without it otherwise; the two lay the plate
# out differently (the sans text takes Liberation Sans or DejaVu Sans). The print tests run under both and hold
# each to the README's ceiling.
LIBERATION = Path("/usr/share/fonts/truetype/liberation")
FONT_SETS = ("without-liberation", "with-liberation")
_REJECT_LIBERATION = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont><glob>*/liberation*/*</glob><glob>*/Liberation*</glob></rejectfont></selectfont>
</fontconfig>
"""


def font_env(font_set: str, folder: Path) -> dict[str, str]:
    """The environment that gives Chromium one font set: the system's fonts, with or without Liberation."""
    if font_set == "with-liberation":
        require(None if any(LIBERATION.glob("Liberation*.ttf")) else
                "fonts-liberation is not installed (Debian package fonts-liberation; .ci/run installs it)")
        return {}
    conf = folder / "no-liberation.conf"
    conf.write_text(_REJECT_LIBERATION, encoding="utf-8")
    return {"FONTCONFIG_FILE": str(conf)}


@pytest.fixture(scope="session", params=FONT_SETS)
def print_browser(request, playwright, tmp_path_factory):
    """A headless Chromium seeing one of the two common Debian font sets, for tests whose result is a page count; with
    the system's own fonts (no environment to add), the session's browser, which sees them already."""
    env = font_env(request.param, tmp_path_factory.mktemp("fonts"))
    if not env:
        yield request.getfixturevalue("browser")
        return
    chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                          env={**os.environ, **env})
    yield chromium
    chromium.close()


class Watched:
    """A page with everything it logged and every request it made recorded."""

    def __init__(self, page):
        self.page = page
        self.console: list[tuple[str, str]] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: self.console.append(("pageerror", str(e))))
        page.on("request", lambda r: self.requests.append(r.url))

    def outside_requests(self, site_dir: Path) -> list[str]:
        """Requests for anything but the page's own file."""
        own = (site_dir / "index.html").resolve().as_uri()
        return [u for u in self.requests if u.split("#")[0] != own]

    def problems(self) -> list[tuple[str, str]]:
        """Console errors and warnings, and uncaught exceptions."""
        return [(t, m) for t, m in self.console if t in ("error", "warning", "pageerror")]


def current(page) -> None:
    """Bring every figure and word of a page to the selection it shows, as printing does (a change updates only what
    is in sight; the rest waits for the reader): then data-shown says the selection."""
    page.evaluate("() => window.plate.current().then(() => true)")


def wait_until(page, expression: str, timeout: float = 15.0):
    """Poll a page until a JavaScript expression is truthy. Unlike page.wait_for_function, which polls by
    evaluating a string inside the page, this works under the plate's CSP (no 'unsafe-eval'), however long
    the page takes (its live views start after the first paint, in idle time)."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{expression!r} still false after {timeout} s")
        page.wait_for_timeout(20)


def open_disclosure(page) -> None:
    """Open the page's "Assumptions and more controls" by its button, if it has one and it is closed; the button's
    click() leaves the focus where it was (a test's first Tab still reaches the skip link)."""
    if page.evaluate("document.getElementById('more-toggle')?.getAttribute('aria-expanded') === 'false'"):
        page.evaluate("document.getElementById('more-toggle').click()")


@pytest.fixture
def open_page(new_page):
    """Open a built page from disk with the network off; yields a function returning a Watched page."""

    def opener(site_dir: Path, hash: str = "", wait_ready: bool = True, all_live: bool = True,
               open_more: bool = True, **context_options) -> Watched:
        """all_live: make every figure live once ready, as the first touch of a control does (at load the page makes
        only the figures near the viewport; test_browser checks that); with it, open_more opens the disclosure of the
        other controls, as a reader reaching for one does (test_first_screen checks it closed at load)."""
        options = {"offline": True, "viewport": {"width": 1100, "height": 900}}
        options.update(context_options)
        watched = Watched(new_page(**options))
        watched.page.goto((site_dir / "index.html").resolve().as_uri() + hash)
        if wait_ready:
            wait_until(watched.page, "document.documentElement.dataset.ready")
            ready = watched.page.evaluate("() => document.documentElement.dataset.ready")
            assert ready == "true", f"the page's live figures did not start (ready={ready!r}): {watched.problems()}"
            if all_live:
                watched.page.evaluate("() => window.plate.live().then(() => true)")
                if open_more:
                    open_disclosure(watched.page)
        return watched

    return opener


def readme_pages() -> dict[str, int]:
    """The print budget the README states, a ceiling on each paper: {"A4": n, "Letter": m}."""
    found = re.search(r"prints on at most (\d+) A4 pages and (\d+) US Letter pages", (ROOT / "README.md").read_text())
    assert found, "the README no longer states the plate's print budget"
    return {"A4": int(found.group(1)), "Letter": int(found.group(2))}


def within_print_budget(count: int, paper: str) -> bool:
    """At least one page and at most the README's ceiling for the shipped content; an author's edited content
    (PLATE_CONTENT) may add a page or two of terms, sources and prose."""
    slack = 0 if CONTENT == SHIPPED.resolve() else 2
    return 1 <= count <= readme_pages()[paper] + slack


def shown_key(data: dict, sel: dict) -> str:
    """The page's data-shown for a selection (xpage.selection_key): the keys' ids, then the real cluster's choices
    that are not the default's ("&bucket=500"); data is the page's plate-data."""
    extra = [f"{k}={sel[k]}" for k in data.get("cluster_keys", []) if sel.get(k, data["default"][k]) != data["default"][k]]
    return "&".join(["|".join(sel[k] for k in data["keys"]), *extra])


def pairwise(choices: dict[str, list]) -> list[dict]:
    """Selections in which every two choices of any two controls meet at least once (a greedy covering array):
    every preset is taken with every choice of every other control, in far fewer selections than all of them."""
    keys = list(choices)
    order = {k: i for i, k in enumerate(keys)}
    pair = lambda k, x, q, y: (k, x, q, y) if order[k] < order[q] else (q, y, k, x)  # noqa: E731
    uncovered = {(k, x, q, y) for i, k in enumerate(keys) for q in keys[i + 1:] for x in choices[k] for y in choices[q]}
    found = []
    while uncovered:
        k, x, q, y = min(uncovered, key=repr)
        row = {k: x, q: y}
        for key in keys:
            if key not in row:
                row[key] = max(choices[key], key=lambda c: sum(pair(key, c, o, row[o]) in uncovered for o in row))
        found.append(row)
        uncovered -= {pair(k, row[k], q, row[q]) for i, k in enumerate(keys) for q in keys[i + 1:]}
    return found if len(keys) > 1 else [{k: c} for k in keys for c in choices[k]]


def covering(choices: dict[str, list], extra: int = 100, seed: int = 29) -> list[dict]:
    """pairwise(choices), then extra selections drawn at random (seeded): what a test walks instead of every
    combination (XIV.4 has 86,400), with every pair of choices met and more besides; every one under EVERY_SELECTION."""
    import itertools
    import random
    if EVERY_SELECTION:
        return [dict(zip(choices, combo)) for combo in itertools.product(*choices.values())]
    rng = random.Random(seed)
    return pairwise(choices) + [{k: rng.choice(v) for k, v in choices.items()} for _ in range(extra)]


def covered(atlas, extra: int = 100, seed: int = 29) -> list[Selection]:
    """covering() over an atlas's controls (presets and options), as its Selections: what a test of every selection
    walks instead of atlas.selections (2,880 in the shipped XIV.4), which it is under EVERY_SELECTION."""
    if EVERY_SELECTION:
        return list(atlas.selections)
    return [Selection(*[row[k] for k in atlas.axes]) for row in covering(atlas.axes, extra, seed)]
