"""The Vega runtime: the figures parsed at build time, a bundle holding what their dataflows run and nothing that
needs the parser, the cache checked on every read, and vl-convert's bundle when node's packages cannot be had."""
import copy
import dataclasses
import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import vl_convert as vlc

from conftest import FIXTURE, wait_until
from generator.source import checks, content, prose
from generator.plate import charts, plates, texts
from generator.page import jsmodules, render, runtime
from generator.site import assembly, cache, build

PLATE = plates.load(FIXTURE / plates.PACKAGE)  # the engine's plate, as the build loads it


def page_modules() -> dict[str, str]:
    """{name: text} of the engine's plate's page modules, as the build joins them."""
    return texts.page_modules(PLATE)


@pytest.fixture(scope="module")
def specs() -> dict[str, dict]:
    """The fixture plate's compiled Vega specs, {figure id: spec}."""
    plate = content.load(FIXTURE, check_prose=checks.check_prose)
    module = plate.module
    return {f.id: f.vega for f in module.figures(plate, module.model_of(plate), cache.Cache(None))}


@pytest.fixture(scope="module")
def live(specs) -> runtime.Runtime:
    warnings = []
    made = assembly.live_runtime(specs, warnings)
    assert made.dataflows is not None, f"node's runtime could not be made here: {warnings}"
    return made


@pytest.fixture(scope="module")
def tools() -> "runtime.Path":
    return runtime.toolchain(assembly.cache_dir())


@pytest.fixture(scope="module")
def parsed(specs, tools) -> dict:
    """runtime.parse() of the fixture's specs, read once for the module (node's parse is deterministic: each test
    that only reads it sees what a call of its own would give)."""
    return json.loads(runtime.parse(specs, tools))


_BUNDLES: dict[str, str] = {}


def bundled(needs: dict, tools) -> str:
    """runtime.bundle(needs), made once per module for each needs (esbuild costs about a CPU-second a bundle; the
    tests below ask for some of the same needs, and only read what comes back)."""
    key = json.dumps(needs, sort_keys=True)
    if key not in _BUNDLES:
        _BUNDLES[key] = runtime.bundle(needs, tools)
    return _BUNDLES[key]


def transform_types(node) -> set[str]:
    """Every `type` of every step in every `transform` list anywhere in a spec (a walk independent of runtime.py)."""
    found = set()
    if isinstance(node, dict):
        for step in node.get("transform", []) if isinstance(node.get("transform"), list) else []:
            found.add(step["type"].lower())
        for value in node.values():
            found |= transform_types(value)
    elif isinstance(node, list):
        for value in node:
            found |= transform_types(value)
    return found


def with_step(spec: dict, step: dict) -> dict:
    """A copy of spec whose first data set with a source gets one more transform step."""
    spec = copy.deepcopy(spec)
    data = next(d for d in spec["data"] if "source" in d)
    data.setdefault("transform", []).append(step)
    return spec


# --- what the bundle and the dataflows hold ---------------------------------------------------------------------

def test_bundle_exposes_the_view_and_the_compiled_expressions_but_not_the_parser_or_the_interpreter(live):
    code = live.code.replace(" ", "")
    assert "window.vega={View:" in code and "window.vegaExpressions=" in code
    assert "parse" not in code.split("window.vega=", 1)[1][:60]
    assert "Unrecognized transform type" not in live.code  # vega-parser's own message: the parser is left out
    assert "vegaExpressionInterpreter" not in code and "Prevented interpretation" not in code  # vega-interpreter's


def test_bundle_imports_nothing(live):
    code = live.code
    assert not re.search(r"^\s*import\s", code, re.M)
    assert "import(" not in code
    assert "cdn.jsdelivr" not in code
    urls = set(re.findall(r"https?://[^\s\"'`)]+", code))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/2000/xmlns/", "http://www.w3.org/1999/xlink"}


def test_the_dataflows_run_every_transform_the_specs_use(specs, parsed):
    used = set().union(*(transform_types(s) for s in specs.values()))
    assert used, "the fixture's specs use no transform: the check below would prove nothing"
    assert used <= set(parsed["needs"]["operators"])
    assert sorted(parsed["dataflows"]) == sorted(specs)
    ops = {op["type"].lower() for flow in parsed["dataflows"].values() for op in flow["operators"]}
    assert ops - {"operator"} <= set(parsed["needs"]["operators"])
    assert parsed["needs"]["bindings"] is False  # the plate binds no signal to an input


def test_the_dataflows_name_each_expression_by_a_token_the_bundle_compiled(live, parsed):
    """An expression in a dataflow is only a token ({"code": "#n"}), an encoder too (its channels go); the bundle holds
    one function per token, and no syntax tree is left for an interpreter."""
    text = json.dumps(live.dataflows)
    codes = set(re.findall(r'"code": "([^"]*)"', text))
    assert codes and all(re.fullmatch(r"#\d+", c) for c in codes)
    assert '"ast"' not in text and '"channels"' not in text
    expressions = parsed["needs"]["expressions"]
    table = set(re.findall(r'(?:^\{|,\n)"(#\d+)":function', expressions))
    assert table == codes  # every token has its function, and no function is carried for nothing
    assert all(f'"{c}":function' in live.code.replace(" ", "") for c in codes)


def test_the_bundle_holds_only_the_operators_asked_for(tools):
    small = bundled({"operators": ["collect", "filter"], "bindings": False}, tools)
    more = bundled({"operators": ["collect", "filter", "regression"], "bindings": False}, tools)
    assert len(more) > len(small) + 1000  # regression pulls in its own code, which the smaller one left out
    bound = bundled({"operators": ["collect", "filter"], "bindings": True}, tools)
    assert "bundled without signal bindings" in small and "bundled without signal bindings" not in bound
    assert len(bound) > len(small)


def test_the_parser_names_the_schemes_geo_functions_and_formats_the_figures_use(specs, parsed, tools):
    """What the bundle may leave out, said by the parser: the plate's figures name no colour scheme, call no geo
    function and load no data from a URL (whose format the page would read); a spec that does each is seen doing it."""
    plain = parsed["needs"]
    assert (plain["schemes"], plain["geo"], plain["formats"]) == ([], False, False)
    spec = next(iter(specs.values()))
    extra = copy.deepcopy(spec)
    extra["scales"] = [*extra.get("scales", []), {"name": "hb_colour", "type": "linear", "range": {"scheme": "Viridis"},
                                                  "domain": [0, 1]}]
    extra["signals"] = [*extra.get("signals", []), {"name": "hb_geo", "update": "geoArea(null, {})"}]
    extra["data"] = [*extra.get("data", []), {"name": "hb_csv", "values": "a\n1", "format": {"type": "csv"}}]
    found = json.loads(runtime.parse({"f": extra}, tools))["needs"]
    assert (found["schemes"], found["geo"], found["formats"]) == (["viridis"], True, False)  # values: read in node
    loaded = copy.deepcopy(spec)
    loaded["data"] = [*loaded.get("data", []), {"name": "hb_url", "url": "d.csv", "format": {"type": "csv"}}]
    assert json.loads(runtime.parse({"f": loaded}, tools))["needs"]["formats"] is True
    chosen = copy.deepcopy(spec)
    chosen["signals"] = [*chosen.get("signals", []), {"name": "hb_s", "value": "viridis"}]
    chosen["scales"] = [*chosen.get("scales", []), {"name": "hb_c", "type": "linear", "domain": [0, 1],
                                                    "range": {"scheme": {"signal": "hb_s"}}}]
    assert json.loads(runtime.parse({"f": chosen}, tools))["needs"]["schemes"] is True


def test_the_bundle_holds_only_the_schemes_geo_and_formats_asked_for(tools):
    # a scale: what reads the schemes; every function, mark, curve and scale type, as when the keys are left out (the
    # bundle without these schemes is also the one the functions' test below holds its smaller ones against)
    base = {"operators": ["collect", "scale"], "bindings": False, "functions": True, "marks": True, "curves": True,
            "scales": True}
    small = bundled({**base, "schemes": [], "geo": False, "formats": False}, tools)
    named = bundled({**base, "schemes": ["viridis"], "geo": False, "formats": False}, tools)
    every = bundled({**base, "schemes": True, "geo": True, "formats": True}, tools)
    viridis, tableau = "440154470e61481a6c482575472f7d", "4c78a8f58518e4575672b7b254a24beeca3bb279a2ff9da69d755dbab0ac"
    assert viridis not in small and tableau not in small
    assert viridis in named and tableau not in named
    assert viridis in every and tableau in every
    assert "bundled without geo functions" in small and "bundled without geo functions" not in every
    assert "topojson:" not in small and "topojson:" in every  # the table of formats beside JSON
    assert len(every) > len(small) + 15_000


def called_marked_curved(node, found=None) -> dict[str, set]:
    """The functions a dataflow's expressions call (without the parser's "_"), the mark types it draws and the
    interpolate literals it names (a walk independent of parse.mjs)."""
    found = found if found is not None else {"functions": set(), "marks": set(), "curves": set()}
    if isinstance(node, dict):
        if node.get("type") == "CallExpression":
            found["functions"].add(node["callee"]["name"].lstrip("_"))
        if isinstance(node.get("marktype"), str):
            found["marks"].add(node["marktype"])
        if isinstance(node.get("channels"), dict) and "interpolate" in node["channels"]:
            found["curves"].add(node["channels"]["interpolate"]["ast"]["value"])
        for value in node.values():
            called_marked_curved(value, found)
    elif isinstance(node, list):
        for value in node:
            called_marked_curved(value, found)
    return found


# vega-parser's dataflows with their syntax trees, as node makes them without parse.mjs (which keeps only tokens).
WITH_ASTS = """import {readFileSync} from "node:fs";
import {transforms} from "vega-dataflow";
import {parse} from "vega-parser";
import {TRANSFORMS} from "./transforms.mjs";
for (const [name, [, value]] of Object.entries(TRANSFORMS)) transforms[name] = value;
const specs = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(Object.values(specs).map((spec) => parse(spec, null, {ast: true}))));"""


def parsed_with_asts(specs: dict, tools) -> list:
    done = runtime._run("node", ["--input-type=module", "-e", WITH_ASTS], tools, stdin=json.dumps(specs))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_parser_names_the_functions_marks_and_curves_the_figures_use(specs, parsed, tools):
    """The functions, mark types and curves the bundle keeps are those in the dataflows (and the functions the
    compiled code calls on Vega's table, the scales' __bandwidth among them); an interpolate a signal chooses asks
    for every curve."""
    plain = parsed["needs"]
    found = called_marked_curved(parsed_with_asts(specs, tools))
    assert found["functions"] and found["marks"]
    called = set(re.findall(r"\bthis\.(\w+)", plain["expressions"]))
    assert "__bandwidth" in called  # the figures have band scales: the one function the code generator adds
    assert set(plain["functions"]) == found["functions"] | called
    assert {key: set(plain[key]) for key in ("marks", "curves")} == {k: found[k] for k in ("marks", "curves")}
    spec = next(iter(specs.values()))
    source = next(d["name"] for d in spec["data"] if "source" in d)
    line = {"type": "line", "from": {"data": source},
            "encode": {"enter": {"interpolate": {"value": "monotone"}, "x": {"signal": "cumulativeNormal(0.5)"}}}}
    extra = copy.deepcopy(spec)
    extra["marks"] = [*extra.get("marks", []), line]
    named = json.loads(runtime.parse({"f": extra}, tools))["needs"]
    assert set(named["curves"]) == found["curves"] | {"monotone"}
    assert set(named["functions"]) >= found["functions"] | {"cumulativeNormal"}
    assert set(named["marks"]) == found["marks"] | {"line"}
    chosen = copy.deepcopy(extra)
    chosen["signals"] = [*chosen.get("signals", []), {"name": "hb_curve", "value": "step"}]
    chosen["marks"][-1]["encode"]["enter"]["interpolate"] = {"signal": "hb_curve"}
    assert json.loads(runtime.parse({"f": chosen}, tools))["needs"]["curves"] is True


def test_the_parser_names_the_scale_types_the_figures_use(specs, parsed, live, tools):
    """The scale types in the dataflows, a scale without a type being linear, vega-encode's default."""
    plain = parsed["needs"]["scales"]
    types = {(op.get("params") or {}).get("type", "linear") for flow in live.dataflows.values()
             for op in flow["operators"] if op["type"] == "scale"}
    assert types and set(plain) == types
    spec = next(iter(specs.values()))
    extra = copy.deepcopy(spec)
    extra["scales"] = [*extra.get("scales", []), {"name": "hb_t", "type": "time", "domain": [0, 1], "range": [0, 1]},
                       {"name": "hb_q", "type": "quantize", "domain": [0, 1], "range": [0, 1]}]
    assert set(json.loads(runtime.parse({"f": extra}, tools))["needs"]["scales"]) == types | {"time", "quantize"}


def test_the_bundle_holds_only_the_functions_marks_and_curves_asked_for(tools):
    # every scale type, as when the key is left out: `every` is the schemes' test's bundle without schemes, `small`
    # the scale types' test's bundle with every scale type (each made once, bundled())
    base = {"operators": ["collect", "scale"], "bindings": False, "schemes": [], "geo": False, "formats": False,
            "scales": True}
    small = bundled({**base, "functions": [], "marks": ["line"], "curves": []}, tools)
    named = bundled({**base, "functions": ["vlSelectionTest"], "marks": ["arc", "line"],
                     "curves": ["catmull-rom"]}, tools)
    every = bundled({**base, "functions": True, "marks": True, "curves": True}, tools)
    # (names the minified bundle keeps: the tables' keys)
    assert "vlSelectionTest" not in small and "vlSelectionTest" in named and "vlSelectionTest" in every
    assert "cumulativeLogNormal" not in named and "cumulativeLogNormal" in every
    assert "arc:" not in small and "arc:" in named and "trail:" not in named and "trail:" in every
    assert "line:" in small  # asked for, as is the linear curve every line may take
    assert "linear:{curve" in small
    assert '"catmull-rom"' not in small and '"catmull-rom"' in named and '"step-after"' not in named
    assert '"step-after"' in every
    assert len(every) > len(small) + 50_000


def test_the_bundle_holds_only_the_scale_types_asked_for(tools):
    base = {"operators": ["collect", "scale"], "bindings": False, "schemes": [], "geo": False, "formats": False,
            "functions": [], "marks": ["line"], "curves": []}
    small = bundled({**base, "scales": ["linear"]}, tools)
    timed = bundled({**base, "scales": ["time"]}, tools)
    every = bundled({**base, "scales": True}, tools)
    # (what the minified bundle keeps: the time scale's tick format for years, the discretizing scales' inverse)
    assert small.count('"%Y"') < timed.count('"%Y"') and timed.count("invertExtent") < every.count("invertExtent")
    assert len(small) + 1000 < len(timed) < len(every) - 5000


def test_a_spec_needing_a_transform_no_package_has_fails_the_build(specs, monkeypatch, tmp_path):
    figure = next(iter(specs))
    broken = dict(specs, **{figure: with_step(specs[figure], {"type": "sparkle"})})
    with pytest.raises(runtime.MissingFeature, match=rf"figure '{figure}' > data '[^']+' uses transform 'sparkle'"):
        runtime.needs(broken)
    made = PLATE.figures

    def figures_with_sparkle(*args, **kwargs):
        first, *rest = made(*args, **kwargs)
        return [dataclasses.replace(first, vega=with_step(first.vega, {"type": "sparkle"})), *rest]

    monkeypatch.setattr(PLATE, "figures", figures_with_sparkle)
    with pytest.raises(runtime.MissingFeature, match="sparkle"):
        build.build(FIXTURE, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_the_parser_names_the_figure_it_cannot_parse(specs, tools):
    figure = next(iter(specs))
    broken = copy.deepcopy(specs[figure])
    broken["marks"][0]["from"] = {"data": "no-such-data"}
    with pytest.raises(runtime.MissingFeature, match=rf"figure '{figure}': .*no-such-data"):
        runtime.parse({figure: broken}, tools)


def test_a_mark_type_vega_cannot_draw_fails_the_build(specs):
    figure = next(iter(specs))
    spec = copy.deepcopy(specs[figure])
    spec["marks"].append({"type": "blob", "name": "odd"})
    with pytest.raises(runtime.MissingFeature, match=rf"figure '{figure}' > marks 'odd' uses mark type 'blob'"):
        runtime.needs({figure: spec})


def test_the_page_carries_dataflows_a_minified_script_and_no_specs(mini_site, live):
    html = (mini_site / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', html, re.S)[1])
    assert [f["id"] for f in data["figures"]] == sorted(live.dataflows, key=[f["id"] for f in data["figures"]].index)
    for figure in data["figures"]:
        assert "vega" not in figure and "dataflow" not in figure and figure["datasets"]
        # each dataflow carried apart, parsed only when its view is made
        found = re.search(rf'<script type="application/json" id="dataflow-{figure["id"]}">(.*?)</script>', html, re.S)
        assert found and json.loads(found[1]) == live.dataflows[figure["id"]]
    assert html.count(render.script_safe(live.code)) == 1
    views_js = (render.TEMPLATES / "page" / "views.js").read_text(encoding="utf-8")
    assert "async function liveView(" in views_js and "async function liveView(" not in html  # minified
    assert "function liveView" not in html


def test_the_page_script_is_esbuild_s_bundle_of_the_page_modules(mini_site, tools):
    """templates/page/main.js and what it imports, bundled by page.mjs: the page's module script, allowed by its CSP."""
    html = (mini_site / "index.html").read_text(encoding="utf-8")
    script = re.findall(r'<script type="module">(.*?)</script>', html, re.S)[-1]
    modules = page_modules()
    assert script == render.script_safe(runtime.bundle_page(modules, tools))
    assert script != render.script_safe(jsmodules.concatenate(modules))  # minified, not merely joined
    assert render.csp_hash(script) in re.search(r"script-src ([^;]*);", html)[1]


def test_the_page_script_is_joined_when_node_cannot_bundle_it(live, monkeypatch):
    def unavailable(modules, home):
        raise runtime.Unavailable("offline, in this test")
    monkeypatch.setattr(runtime, "bundle_page", unavailable)
    modules = page_modules()
    modules["main.js"] += f"// {time.time_ns()}\n"  # texts no cache entry holds: the bundler is asked
    assert live.bundle(modules) == jsmodules.concatenate(modules)


# --- in the browser ----------------------------------------------------------------------------------------------

# The view's expression maker given tokens the page's dataflows name, and one the bundle does not hold.
EXPRESSIONS = """([token, encoder, plain, reads]) => {
  const E = window.vegaExpressions;
  const ctx = {functions: {}};
  let missing = null;
  try { E.parameter(ctx, {code: '#999999'}); } catch (e) { missing = e.message; }
  const made = [E.operator(ctx, {code: token}), E.parameter(ctx, {code: token}), E.encode(ctx, {code: encoder})];
  // one function that reads neither signals, datum nor the table, made by each maker: the same value from each
  const value = (f, ...args) => JSON.stringify(f(...args));
  const values = [value(E.operator(ctx, {code: plain}), {}), value(E.parameter(ctx, {code: plain}), {}, {}),
                  value(E.event(ctx, {code: plain}), {vega: {}}), value(E.handler(ctx, {code: plain}), {}, {item: null})];
  // one that reads the datum (any field 7, any table function handing back its first argument): a parameter is
  // given it, a handler reads it off the event's item
  const table = {functions: new Proxy({}, {get: () => (...args) => args[0]})};
  const datum = new Proxy({}, {get: () => 7});
  const read = [value(E.parameter(table, {code: reads}), datum, {}),
                value(E.handler(table, {code: reads}), {}, {item: {datum}})];
  return {kinds: made.map((f) => typeof f), missing, values, read};
}"""


@pytest.mark.browser
def test_the_expression_maker_hands_vega_the_compiled_functions_and_names_a_missing_one(live, parsed, browser):
    """vega-view takes window.vegaExpressions as its expression maker: a function for each token, whichever kind of
    expression asks (the figures have no event streams, so the event and handler makers run only here), and for a
    token the bundle lacks, an error that says so. (Drawing what the whole of Vega draws, below, holds what they
    compute.)"""
    expressions = parsed["needs"]["expressions"]
    written = re.findall(r'"(#\d+)":function\(_,datum,event\)\{return\((.*?)\);\}(?=,\n|\}$)', expressions)
    plain = next(t for t, code in written if not re.search(r"_\[|datum|event|this\.", code))
    reads = next(t for t, code in written if "datum[" in code and not re.search(r"_\[|event", code))
    text = json.dumps(live.dataflows)
    token = re.search(r'"update": \{"code": "(#\d+)"', text)[1]  # an operator's update
    encoder = re.search(r'"\$encode": \{"\w+": \{"\$expr": \{"code": "(#\d+)"', text)[1]
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><body><script type='module'>{live.code}</script></body>")
        wait_until(page, "typeof window.vegaRuntime === 'function'")
        page.evaluate("window.vegaRuntime()")
        found = page.evaluate(EXPRESSIONS, [token, encoder, plain, reads])
        assert found["kinds"] == ["function"] * 3
        assert len(set(found["values"])) == 1 and found["values"][0] is not None
        assert found["read"][0] == found["read"][1] == "7"
        assert "#999999" in found["missing"] and "bundled for other dataflows" in found["missing"]
    finally:
        page.close()


@pytest.mark.browser
def test_the_runtime_runs_every_dataflow_and_registers_only_what_they_name(specs, live, tools, browser):
    """vega-runtime makes an inert operator for a name the registry lacks, so the registry itself is checked: it
    holds every operator the dataflows name (read from them here, not from runtime.py), and not the ones left out."""
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><body><script type='module'>{live.code}</script></body>")
        wait_until(page, "typeof window.vegaRuntime === 'function'")
        assert page.evaluate("typeof window.vega") == "undefined"  # nothing runs until the first view needs it
        page.evaluate("window.vegaRuntime()")
        wait_until(page, "window.vega && window.vegaExpressions")
        assert page.evaluate("typeof window.vega.parse") == "undefined"
        registered = set(page.evaluate("Object.keys(window.vega.transforms)"))
        named = {op["type"].lower() for flow in live.dataflows.values() for op in flow["operators"]}
        assert named - {"operator"} <= registered
        assert not {"regression", "geojson", "force", "wordcloud", "voronoi"} & registered
        run = """async (flow) => {
            try {
                const holder = document.createElement('div');
                document.body.append(holder);
                const view = new vega.View(flow, {expr: vegaExpressions, renderer: 'svg'});
                view.initialize(holder);
                await view.runAsync();
                return holder.querySelector('svg') ? 'ok' : 'no svg';
            } catch (error) { return String(error); }
        }"""
        for figure, flow in live.dataflows.items():
            assert page.evaluate(run, flow) == "ok", figure
    finally:
        page.close()


WHOLE_VEGA = f"""import * as V from "{runtime.CDN}vega@{runtime.VEGA_VERSION}/+esm";
import {{expressionInterpreter}} from "{runtime.CDN}{runtime.INTERPRETER}/+esm";
window.vega = V;
window.vegaExpressionInterpreter = expressionInterpreter;
"""


@functools.cache
def whole_vega_bundle() -> str:
    """vl-convert's bundle of WHOLE_VEGA, made once for the module (about a CPU-second; the same text each time)."""
    return vlc.javascript_bundle(WHOLE_VEGA)


def with_whole_vega(html: str, live, specs: dict) -> str:
    """The page with vl-convert's whole Vega run at load in place of the bundle, each figure given its spec as the
    fallback page gives it: the whole Vega parses the specs and interprets their expressions itself, so what it
    draws owes nothing to parse.mjs or bundle.mjs."""
    inert = f'<script type="text/plain" id="vega-runtime">{render.script_safe(live.code)}</script>'
    assert html.count(inert) == 1  # carried inert: the page runs it when the first view is made
    whole = render.script_safe(whole_vega_bundle())
    assert len(whole) > len(live.code)
    html = html.replace(inert, f'<script type="module">{whole}</script>')
    block = re.search(r'(<script type="application/json" id="plate-data">)(.*?)(</script>)', html, re.S)
    data = json.loads(block[2])
    assert sorted(f["id"] for f in data["figures"]) == sorted(specs)
    data["figures"] = [{"id": f["id"], "vega": specs[f["id"]]} for f in data["figures"]]
    return html[:block.start(2)] + str(render.script_json(data)) + html[block.end(2):]


def open_live(new_page, folder: Path):
    """The page in folder, every figure live (those below the fold too); the page's CSP lifted, since a copy with
    the whole of Vega swapped in carries a script its CSP does not list."""
    page = new_page(offline=True, bypass_csp=True, viewport={"width": 1100, "height": 900})
    page.goto((folder / "index.html").as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    page.evaluate("() => window.plate.live().then(() => true)")
    return page


@pytest.mark.browser
def test_the_page_draws_the_same_figures_as_with_the_whole_of_vega(mini_site, live, specs, new_page, tmp_path):
    """vl-convert's whole Vega, swapped in for the bundle and given the specs, draws the same SVGs as the bundle's
    dataflows and compiled expressions."""
    html = (mini_site / "index.html").read_text(encoding="utf-8")
    (tmp_path / "index.html").write_text(with_whole_vega(html, live, specs), encoding="utf-8")
    drawn = []
    for folder in (mini_site, tmp_path):
        page = open_live(new_page, folder)
        assert page.locator(".chart[data-live='true'] svg").count() == page.locator(".chart").count() > 0
        drawn.append(page.evaluate("[...document.querySelectorAll('.chart')].map(c => c.innerHTML)"))
    assert drawn[0] == drawn[1]


# Each control in turn set to each of its other presets (the choices add up), as [select id, value] steps.
STEPS = """() => [...document.querySelectorAll('#controls select')].flatMap((select) =>
  [...select.options].map((o) => o.value).filter((v) => v !== select.value && v !== 'custom')
    .map((v) => [select.id, v]))"""
# One step: set the control, then every figure's SVG once the page says every figure shows the change.
STEP = """async ([id, value]) => {
  const root = document.documentElement, before = root.dataset.shown, select = document.getElementById(id);
  select.value = value;
  select.dispatchEvent(new Event('change', {bubbles: true}));
  window.plate.current(); // what waits out of sight too
  while (root.dataset.shown === before) await new Promise(requestAnimationFrame);
  return [...document.querySelectorAll('.chart')].map((c) => c.innerHTML);
}"""


@pytest.mark.browser
def test_the_page_redraws_the_same_figures_as_with_the_whole_of_vega(mini_site, live, specs, new_page, tmp_path):
    """bundle.mjs's patches change how a redraw runs (fold keeps its folded tuples when its rows only change values,
    so Figure 1's marks stay), and parse.mjs compiles the expressions, never what is drawn: after every change of
    every control, each figure's SVG is the one vl-convert's whole Vega draws from the specs."""
    html = (mini_site / "index.html").read_text(encoding="utf-8")
    (tmp_path / "index.html").write_text(with_whole_vega(html, live, specs), encoding="utf-8")
    pages = [open_live(new_page, folder) for folder in (mini_site, tmp_path)]
    steps = pages[0].evaluate(STEPS)
    assert len(steps) >= 4, steps  # the fixture offers other presets and options to change to
    for step in steps:
        bundled, whole_vega = (page.evaluate(STEP, step) for page in pages)
        assert len(bundled) == len(whole_vega) > 0
        assert bundled == whole_vega, step


# --- the fallback: vl-convert's bundle, with the parser --------------------------------------------------------

@pytest.mark.browser
def test_each_package_exports_exactly_the_transforms_listed_for_it(browser):
    """runtime.TRANSFORMS is read off the packages: a name they lack would register `undefined` in the page."""
    packages = list(runtime.TRANSFORMS)
    snippet = "".join(f'import * as P{i} from "{runtime.CDN}{p}/+esm";\n' for i, p in enumerate(packages))
    snippet += "window.exported = {" + ", ".join(
        f'"{p}": Object.keys(P{i}).filter((k) => typeof P{i}[k] === "function")' for i, p in enumerate(packages))
    snippet += "};\n"
    code = render.script_safe(vlc.javascript_bundle(snippet))
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><body><script type='module'>{code}</script></body>")
        exported = page.wait_for_function("window.exported").json_value()
    finally:
        page.close()
    assert {p: sorted(names) for p, names in exported.items()} == \
        {p: sorted(names) for p, names in runtime.TRANSFORMS.items()}


def test_the_fallback_lists_the_transforms_the_specs_use(specs):
    used = set().union(*(transform_types(s) for s in specs.values()))
    assert used <= set(runtime.needs(specs))
    assert set(runtime.PARSER_OPERATORS) <= set(runtime.needs(specs))
    snippet = runtime.snippet(runtime.needs(specs))
    assert "vega-regression@" not in snippet and "vega-geo@" not in snippet
    needing = dict(specs, extra=with_step(next(iter(specs.values())), {"type": "regression", "x": "a", "y": "b"}))
    assert "vega-regression@" in runtime.snippet(runtime.needs(needing))


def test_a_package_vl_convert_does_not_vendor_fails_with_a_clear_message(specs, monkeypatch):
    monkeypatch.setattr(runtime, "VIEW", "vega-view@0.0.0")
    with pytest.raises(runtime.MissingFeature, match=r"could not bundle the Vega runtime.*vega-view@0\.0\.0"):
        runtime.fallback_bundle(specs)


def test_the_fallback_cache_name_changes_with_the_transforms_and_vl_convert(specs, monkeypatch):
    before = runtime.cache_name(specs)
    more = dict(specs, extra=with_step(next(iter(specs.values())), {"type": "window"}))
    assert runtime.cache_name(more) != before
    monkeypatch.setattr(runtime, "vl_convert_version", lambda: "0.0.1")
    assert runtime.cache_name(specs) != before


def no_node(monkeypatch, tmp_path):
    """A private cache and a toolchain that cannot be had (as offline on a first build)."""
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))

    def toolchain(cache, say=None):
        raise runtime.Unavailable("npm could not install Vega's packages (offline, in this test)")
    monkeypatch.setattr(runtime, "toolchain", toolchain)


def test_without_node_the_build_warns_and_carries_vl_convert_s_bundle(monkeypatch, tmp_path, capsys):
    from generator.commands import cli

    no_node(monkeypatch, tmp_path)
    out = tmp_path / "site"
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: the page carries vl-convert's larger Vega runtime" in err and "offline, in this test" in err
    html = (out / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', html, re.S)[1])
    assert all("vega" in f and "dataflow" not in f for f in data["figures"])
    assert 'id="dataflow-' not in html
    assert "async function liveView(" in html  # not minified either: that needs node too
    # the page's modules joined without esbuild, allowed by the page's CSP
    joined = render.script_safe(jsmodules.concatenate(page_modules()))
    assert re.findall(r'<script type="module">(.*?)</script>', html, re.S)[-1] == joined
    assert render.csp_hash(joined) in re.search(r"script-src ([^;]*);", html)[1]


@pytest.mark.browser
def test_the_fallback_page_goes_live(monkeypatch, tmp_path, open_page):
    no_node(monkeypatch, tmp_path)
    build.build(FIXTURE, tmp_path / "site")
    watched = open_page(tmp_path / "site")
    assert watched.page.evaluate("typeof window.vega.parse") == "function"
    assert watched.page.locator(".chart[data-live='true'] svg").count() == watched.page.locator(".chart").count() > 0
    assert not watched.problems()


# --- the toolchain and the cache ----------------------------------------------------------------------------------

@pytest.fixture
def unpackaged(monkeypatch, tmp_path):
    """No npm install beside the scripts (a checkout run without `pip install`): toolchain() installs into the cache."""
    monkeypatch.setattr(runtime, "PACKAGED", tmp_path / "no-install")


@pytest.mark.usefixtures("unpackaged")
def test_npm_out_of_reach_is_unavailable_and_leaves_the_cache_clean(monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "mine.txt").write_text("not plate's")
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # nothing listens there: refused at once
    said = []
    with pytest.raises(runtime.Unavailable, match="npm could not install Vega's packages"):
        runtime.toolchain(cache, said.append)
    assert said and "installing" in said[0]
    # No half install; npm's own cache, and the note of when npm failed (so the next builds do not wait for it).
    assert sorted(p.name for p in cache.iterdir()) == ["mine.txt", f"node-{runtime.install_key()}.failed", "npm"]
    assert (cache / "mine.txt").read_text() == "not plate's"


@pytest.mark.usefixtures("unpackaged")
def test_a_folder_in_the_install_s_place_is_reported_not_removed(tmp_path):
    cache = tmp_path / "cache"
    home = cache / f"node-{runtime.install_key()}"
    home.mkdir(parents=True)
    (home / "keep.txt").write_text("someone's")
    with pytest.raises(runtime.Unavailable, match="not a complete install"):
        runtime.toolchain(cache)
    assert (home / "keep.txt").read_text() == "someone's" and sorted(p.name for p in home.iterdir()) == ["keep.txt"]


@pytest.mark.usefixtures("unpackaged")
def test_an_unwritable_cache_is_unavailable_not_a_crash(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(runtime.Unavailable, match="not writable"):
        runtime.toolchain(blocker / "cache")


@pytest.fixture
def counted(tmp_path, monkeypatch):
    """A private cache and stand-ins for node's steps that count their calls: (the runtime's store, calls)."""
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    calls = []
    monkeypatch.setattr(runtime, "toolchain", lambda cache, say=None: calls.append("toolchain") or tmp_path)
    monkeypatch.setattr(runtime, "parse", lambda specs, home: calls.append("parse") or json.dumps(
        {"dataflows": {k: {"operators": []} for k in specs}, "needs": {"operators": ["collect"], "bindings": False}}))
    monkeypatch.setattr(runtime, "bundle", lambda needs, home: calls.append("bundle") or
                        "window.vega={View:1};window.vegaExpressions=3;/*" + "x" * 4000 + "*/\n")
    return tmp_path / "cache" / assembly.RUNTIME_FOLDER, calls


SPECS = {"fig": {"data": [], "marks": []}}  # any specs: the stand-ins ignore them


@pytest.mark.parametrize("damage", ["truncated", "empty", "one-byte-changed", "seal-changed", "seal-gone"])
@pytest.mark.parametrize("kept", ["*.runtime.js", "*.dataflows.json"])
def test_a_damaged_cache_entry_is_made_anew(damage, kept, counted):
    folder, calls = counted
    made = assembly.live_runtime(SPECS)
    assert assembly.live_runtime(SPECS) == made and calls == ["toolchain", "parse", "bundle"]  # then from the cache
    [path] = folder.glob(kept)
    data = path.read_bytes()
    head, _, body = data.partition(b"\n")
    if damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "one-byte-changed":
        path.write_bytes(head + b"\n" + body[:10] + (b"y" if body[10:11] != b"y" else b"z") + body[11:])
    elif damage == "seal-changed":
        path.write_bytes(head[:-3] + b"000\n" + body)
    else:
        path.write_bytes(body)
    assert assembly.live_runtime(SPECS) == made and len(calls) == 5  # the toolchain again, then the damaged step
    if damage == "seal-gone":  # no longer marked as the cache's own: left as it is, and made anew each time
        assert path.read_bytes() == body and assembly.live_runtime(SPECS) == made and len(calls) == 7
    else:
        assert path.read_bytes() == data and assembly.live_runtime(SPECS) == made and len(calls) == 5  # repaired


def test_the_runtime_s_products_are_kept_apart_from_the_build_cache(counted):
    folder, calls = counted
    assembly.live_runtime(SPECS)
    assert sorted(p.name.split(".", 1)[1] for p in folder.iterdir()) == ["dataflows.json", "runtime.js"]
    assert not (folder.parent / "plate-build").exists()


def test_an_empty_bundle_fails_the_build_and_keeps_the_site(counted, tmp_path, monkeypatch, capsys):
    from generator.commands import cli

    def offline(cache, say=None):
        raise runtime.Unavailable("offline")
    out = tmp_path / "site"
    monkeypatch.setattr(runtime, "toolchain", offline)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 0  # vl-convert's fallback
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setattr(runtime, "toolchain", lambda cache, say=None: tmp_path)
    monkeypatch.setattr(runtime, "bundle", lambda needs, home: "")
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("plate: ") and "came out empty" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_truncated_cache_gives_the_same_page(mini_site, tmp_path, monkeypatch):
    page = (mini_site / "index.html").read_bytes()  # the run's build of the fixture, with the usual cache
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    build.build(FIXTURE, tmp_path / "b")  # a cache of its own, made from nothing (the install too)
    entries = list((tmp_path / "cache" / assembly.RUNTIME_FOLDER).iterdir())
    assert len(entries) >= 4  # dataflows, runtime, bundled script, minified style
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:1000])  # a build killed while the cache was written
    build.build(FIXTURE, tmp_path / "c")
    assert (tmp_path / "b" / "index.html").read_bytes() == page == (tmp_path / "c" / "index.html").read_bytes()


def test_the_command_names_a_missing_transform_in_one_line(specs, monkeypatch, tmp_path, capsys):
    from generator.commands import cli
    made = PLATE.figures

    def figures_with_sparkle(*args, **kwargs):
        first, *rest = made(*args, **kwargs)
        return [dataclasses.replace(first, vega=with_step(first.vega, {"type": "sparkle"})), *rest]

    monkeypatch.setattr(PLATE, "figures", figures_with_sparkle)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'sparkle'" in err and "unexpectedly" not in err
    assert not (tmp_path / "site").exists()


# --- the npm install in the cache: checked on use, remembered when it fails, bounded, never left running --------

def fake_npm(calls: list, fail_from: int | None = None):
    """A stand-in for `npm ci` that writes the same small tree each time (as npm ci does: reproducible), or raises
    Unavailable from call number fail_from on (offline)."""
    def npm_ci(staging, cache, say):
        calls.append(staging)
        if fail_from is not None and len(calls) >= fail_from:
            raise runtime.Unavailable("npm could not install Vega's packages (offline, in this test)")
        for rel, text in {"vega-parser/build/vega-parser.js": "export const parse = 1;\n" * 100,
                          "esbuild/bin/esbuild": "#!/bin/sh\n", "vega-view/index.js": "export {};\n"}.items():
            (staging / "node_modules" / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / "node_modules" / rel).write_text(text)
        (staging / "node_modules" / ".bin").mkdir()
        (staging / "node_modules" / ".bin" / "esbuild").symlink_to("../esbuild/bin/esbuild")
    return npm_ci


@pytest.mark.parametrize("damage", ["truncated", "removed", "link-changed", "file-added"])
@pytest.mark.usefixtures("unpackaged")
def test_a_damaged_install_is_found_and_installed_again(damage, tmp_path, monkeypatch):
    calls, said = [], []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls))
    cache = tmp_path / "cache"
    home = runtime.toolchain(cache, said.append)
    assert runtime.toolchain(cache, said.append) == home and len(calls) == 1  # checked, and found whole
    parser = home / "node_modules" / "vega-parser" / "build" / "vega-parser.js"
    good = parser.read_bytes()
    if damage == "truncated":
        parser.write_bytes(good[:100])
    elif damage == "removed":
        (home / "node_modules" / "esbuild" / "bin" / "esbuild").unlink()
    elif damage == "link-changed":
        (home / "node_modules" / ".bin" / "esbuild").unlink()
        (home / "node_modules" / ".bin" / "esbuild").symlink_to("/bin/sh")
    else:
        (home / "node_modules" / "vega-parser" / "node_modules" / "d3-array").mkdir(parents=True)
    said.clear()
    if damage == "file-added":  # a file npm did not write: reported, and the folder left as it is
        (home / "node_modules" / "vega-parser" / "node_modules" / "d3-array" / "index.js").write_text("mine")
        with pytest.raises(runtime.Unavailable, match="holds files npm did not write"):
            runtime.toolchain(cache, said.append)
        assert (home / "node_modules" / "vega-parser" / "node_modules" / "d3-array" / "index.js").read_text() == "mine"
        return
    assert runtime.toolchain(cache, said.append) == home and len(calls) == 2
    assert len(said) == 1 and f"the npm install in {home} is damaged" in said[0] and "installing it again" in said[0]
    assert parser.read_bytes() == good and runtime._verify(home, runtime.install_key()) == (None, [])
    assert sorted(p.name for p in cache.iterdir()) == [home.name]


@pytest.mark.usefixtures("unpackaged")
def test_a_damaged_install_offline_falls_back_in_one_line(tmp_path, monkeypatch, capsys):
    from generator.commands import cli

    calls = []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls, fail_from=2))
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    home = runtime.toolchain(tmp_path / "cache", lambda line: None)
    (home / "node_modules" / "vega-parser" / "build" / "vega-parser.js").write_text("export con")
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "vl-convert's larger Vega runtime" in warnings[0], warnings
    assert "node_modules/vega-parser/build/vega-parser.js has changed" in warnings[0]
    assert "offline, in this test" in warnings[0]


@pytest.mark.usefixtures("unpackaged")
def test_a_failed_npm_is_remembered_for_a_while(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls, fail_from=1))
    cache = tmp_path / "cache"
    with pytest.raises(runtime.Unavailable, match="offline, in this test"):
        runtime.toolchain(cache, lambda line: None)
    said = []
    with pytest.raises(runtime.Unavailable, match=r"offline, in this test\), 0 min ago; plate tries npm again 10 min"):
        runtime.toolchain(cache, said.append)
    assert len(calls) == 1 and said == []  # not tried again, and nothing said but the reason
    note = cache / f"node-{runtime.install_key()}.failed"
    note.write_text(f"{time.time() - runtime.FAILED_FOR_S - 1}\nlong ago\n")
    with pytest.raises(runtime.Unavailable):
        runtime.toolchain(cache, lambda line: None)
    assert len(calls) == 2  # a while later, npm is tried again
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls))
    note.unlink()
    runtime.toolchain(cache, lambda line: None)
    assert not note.exists()


@pytest.fixture
def silent_registry():
    """A registry on 127.0.0.1 that accepts connections and never answers: its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(512)  # the kernel completes each handshake; nothing ever reads or writes
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"


def processes_in(folder: Path) -> list[int]:
    """The processes whose working folder is folder or below it (npm runs in the install's working folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd.startswith(str(folder)):
                found.append(int(entry.name))
    return found


@pytest.mark.usefixtures("unpackaged")
def test_a_registry_that_never_answers_gives_up_and_says_so(tmp_path, monkeypatch, silent_registry):
    monkeypatch.setattr(runtime, "NPM_TIMEOUT_S", 4)
    monkeypatch.setattr(runtime, "PROGRESS_S", 1)
    monkeypatch.setenv("npm_config_registry", silent_registry)
    cache, said = tmp_path / "cache", []
    with pytest.raises(runtime.Unavailable, match=rf"after 4 s \(the registry {silent_registry} does not answer"):
        runtime.toolchain(cache, said.append)
    assert "installing" in said[0] and "gives up after 4 s" in said[0]
    assert any("npm is still installing" in line and "packages in place" in line for line in said[1:]), said
    assert not list(cache.glob("node-*.tmp")) and processes_in(cache) == []


def left_running(cache: Path) -> list[int]:
    """The processes still working in the cache after a moment for the signals to land (killed, if any)."""
    left = []
    for _ in range(100):
        left = processes_in(cache)
        if not left:
            break
        time.sleep(0.1)
    for pid in left:  # the test's own clean-up, should npm have been left behind
        os.kill(pid, signal.SIGKILL)
    return left


def start_install(tmp_path: Path, registry: str) -> tuple[subprocess.Popen, Path]:
    """A build's toolchain() in a process of its own, against registry, once npm runs: (the process, the cache)."""
    cache = tmp_path / "cache"
    code = (f"from generator.page import runtime\nruntime.PACKAGED = runtime.Path({str(tmp_path / 'no-install')!r})\n"
            f"runtime.toolchain(runtime.Path({str(cache)!r}))\n")
    env = {**os.environ, "npm_config_registry": registry, "PYTHONPATH": str(Path(runtime.__file__).parent.parent)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE)
    for _ in range(300):  # npm is running once a process works in the install's folder
        staging = list(cache.glob("node-*.tmp"))
        if staging and processes_in(staging[0]):
            return process, cache
        time.sleep(0.1)
    process.kill()
    raise AssertionError("npm never started")


def test_sigterm_during_npm_ci_stops_npm_and_removes_the_working_folder(tmp_path, silent_registry):
    process, cache = start_install(tmp_path, silent_registry)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert "Traceback" not in process.stderr.read().decode()
    assert left_running(cache) == [] and not list(cache.glob("node-*.tmp"))


def test_sigkill_during_npm_ci_takes_npm_with_it_and_the_next_build_cleans_up(tmp_path, silent_registry):
    process, cache = start_install(tmp_path, silent_registry)
    process.kill()
    process.wait(timeout=30)
    assert left_running(cache) == []
    [staging] = cache.glob("node-*.tmp")
    (cache / "node-0123456789abcdef.1.tmp.keep").mkdir()  # not a name the install gives: stays
    assert runtime.clean_stale(cache) == [staging]
    # npm's own download cache (cache/npm, kept between builds) exists if npm got that far before the kill
    assert sorted(p.name for p in cache.iterdir() if p.name != "npm") == ["node-0123456789abcdef.1.tmp.keep"]


@pytest.mark.usefixtures("unpackaged")
def test_an_older_plates_install_is_adopted_when_npm_ci_writes_the_same_bytes(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls))
    cache = tmp_path / "cache"
    home = runtime.toolchain(cache, lambda line: None)
    key = runtime.install_key()
    (home / runtime.STAMP).write_text(f"{key}\n")  # the stamp an older plate wrote: no record of the files
    inode = home.stat().st_ino
    assert runtime.toolchain(cache, lambda line: None) == home and len(calls) == 2
    assert home.stat().st_ino == inode and runtime._verify(home, key) == (None, [])  # kept, and now recorded
    (home / runtime.STAMP).write_text(f"{key}\n")
    (home / "node_modules" / "vega-view" / "mine.js").write_text("someone's")
    with pytest.raises(runtime.Unavailable, match="holds files npm did not write"):
        runtime.toolchain(cache, lambda line: None)
    assert (home / "node_modules" / "vega-view" / "mine.js").read_text() == "someone's"


@pytest.mark.usefixtures("unpackaged")
def test_an_install_whose_record_is_unreadable_is_left_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm([]))
    cache = tmp_path / "cache"
    home = runtime.toolchain(cache, lambda line: None)
    (home / runtime.STAMP).unlink()
    os.mkfifo(home / runtime.STAMP)  # read, it would hang the build
    (home / "node_modules" / "mine.txt").write_text("someone's")
    with pytest.raises(runtime.Unavailable, match="not a complete install"):
        runtime.toolchain(cache, lambda line: None)
    assert (home / "node_modules" / "mine.txt").read_text() == "someone's"
