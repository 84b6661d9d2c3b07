"""The Vega runtime bundle: self-contained, exposing what the page script uses, holding what the specs need."""
import copy
import dataclasses
import json
import re

import pytest
import vl_convert as vlc

from conftest import FIXTURE
from generator import build, charts, content, prose, render, runtime
from generator.facts import Atlas


@pytest.fixture(scope="module")
def specs() -> dict[str, dict]:
    """The fixture plate's compiled Vega specs, {figure id: spec}."""
    plate = content.load(FIXTURE, check_prose=prose.check_prose)
    return {f.id: f.vega for f in charts.figures(Atlas(plate.presets), plate.plate.default)}


@pytest.fixture(scope="module")
def code(specs) -> str:
    return build.runtime_js(specs)


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


def test_bundle_exposes_view_parse_and_the_interpreter(code):
    assert "window.vega=" in code.replace(" ", "")
    assert "window.vegaExpressionInterpreter=" in code.replace(" ", "")


def test_bundle_imports_nothing(code):
    assert not re.search(r"^\s*import\s", code, re.M)
    assert "import(" not in code
    assert "cdn.jsdelivr" not in code
    urls = set(re.findall(r"https?://[^\s\"'`)]+", code))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/2000/xmlns/", "http://www.w3.org/1999/xlink"}


def test_the_list_holds_every_transform_the_specs_use(specs):
    used = set().union(*(transform_types(s) for s in specs.values()))
    assert used, "the fixture's specs use no transform: the check below would prove nothing"
    assert used <= set(runtime.needs(specs))
    assert set(runtime.PARSER_OPERATORS) <= set(runtime.needs(specs))


def test_only_the_packages_the_specs_need_are_bundled(specs):
    snippet = runtime.snippet(runtime.needs(specs))
    assert "vega-regression@" not in snippet and "vega-geo@" not in snippet
    needing = dict(specs, extra=with_step(next(iter(specs.values())), {"type": "regression", "x": "a", "y": "b"}))
    assert "regression" in runtime.needs(needing)
    assert "vega-regression@" in runtime.snippet(runtime.needs(needing))
    assert "vega-geo@" not in runtime.snippet(runtime.needs(needing))


def test_a_spec_needing_a_transform_no_package_has_fails_the_build(specs, monkeypatch, tmp_path):
    figure = next(iter(specs))
    broken = dict(specs, **{figure: with_step(specs[figure], {"type": "sparkle"})})
    with pytest.raises(runtime.MissingFeature, match=rf"figure '{figure}' > data '[^']+' uses transform 'sparkle'"):
        runtime.needs(broken)
    made = charts.figures

    def figures_with_sparkle(*args, **kwargs):
        first, *rest = made(*args, **kwargs)
        return [dataclasses.replace(first, vega=with_step(first.vega, {"type": "sparkle"})), *rest]

    monkeypatch.setattr(charts, "figures", figures_with_sparkle)
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(runtime.MissingFeature, match="sparkle"):
        build.build(FIXTURE, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_a_mark_type_vega_cannot_draw_fails_the_build(specs):
    figure = next(iter(specs))
    spec = copy.deepcopy(specs[figure])
    spec["marks"].append({"type": "blob", "name": "odd"})
    with pytest.raises(runtime.MissingFeature, match=rf"figure '{figure}' > marks 'odd' uses mark type 'blob'"):
        runtime.needs({figure: spec})


def test_a_package_vl_convert_does_not_vendor_fails_with_a_clear_message(specs, monkeypatch):
    monkeypatch.setattr(runtime, "VIEW", "vega-view@0.0.0")
    with pytest.raises(runtime.MissingFeature, match=r"could not bundle the Vega runtime.*vega-view@0\.0\.0"):
        runtime.bundle(specs)


def test_snippet_pins_versions(specs):
    snippet = runtime.snippet(runtime.needs(specs))
    specifiers = re.findall(r'from "([^"]+)"', snippet)
    assert specifiers and all(re.fullmatch(r"https://cdn\.jsdelivr\.net/npm/[a-z-]+@\d+\.\d+\.\d+/\+esm", s)
                              for s in specifiers)
    assert f"vega-interpreter@{runtime.INTERPRETER_VERSION}/" in snippet


def test_cache_name_changes_with_the_transforms_and_vl_convert(specs, monkeypatch):
    before = runtime.cache_name(specs)
    more = dict(specs, extra=with_step(next(iter(specs.values())), {"type": "window"}))
    assert runtime.cache_name(more) != before
    monkeypatch.setattr(vlc, "__version__", vlc.__version__ + ".1")
    assert runtime.cache_name(specs) != before


@pytest.mark.browser
def test_the_runtime_runs_every_spec_and_lacks_what_it_left_out(specs, code, browser):
    """Parsing registers nothing: an unknown transform or operator throws, so each spec running proves the bundle."""
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><body><script type='module'>{code}</script></body>")
        page.wait_for_function("window.vega && window.vegaExpressionInterpreter")
        run = """async (spec) => {
            try {
                const view = new vega.View(vega.parse(spec, null, {ast: true}),
                                           {expr: vegaExpressionInterpreter, renderer: 'svg'});
                await view.runAsync();
                return (await view.toSVG()).startsWith('<svg') ? 'ok' : 'no svg';
            } catch (error) { return String(error); }
        }"""
        for figure, spec in specs.items():
            assert page.evaluate(run, json.loads(json.dumps(spec))) == "ok", figure
        left_out = with_step(next(iter(specs.values())), {"type": "regression", "x": "a", "y": "b"})
        assert "regression" in page.evaluate(run, left_out).lower()
    finally:
        page.close()


WHOLE_VEGA = f"""import * as V from "{runtime.CDN}vega@{runtime.VEGA_VERSION}/+esm";
import {{expressionInterpreter}} from "{runtime.CDN}{runtime.INTERPRETER}/+esm";
window.vega = V;
window.vegaExpressionInterpreter = expressionInterpreter;
"""


@pytest.mark.browser
def test_the_page_draws_the_same_figures_as_with_the_whole_of_vega(mini_site, code, browser, tmp_path):
    html = (mini_site / "index.html").read_text(encoding="utf-8")
    small = render.script_safe(code)
    assert html.count(small) == 1
    whole = render.script_safe(vlc.javascript_bundle(WHOLE_VEGA))
    assert len(whole) > len(small)
    (tmp_path / "index.html").write_text(html.replace(small, whole), encoding="utf-8")
    drawn = []
    for folder in (mini_site, tmp_path):
        # The page's CSP allows its own runtime's hash only; the swapped-in copy needs it lifted.
        context = browser.new_context(offline=True, bypass_csp=True, viewport={"width": 1100, "height": 900})
        page = context.new_page()
        page.goto((folder / "index.html").as_uri())
        page.wait_for_function("document.documentElement.dataset.ready === 'true'", timeout=15000)
        assert page.locator(".chart[data-live='true'] svg").count() == page.locator(".chart").count() > 0
        drawn.append(page.evaluate("[...document.querySelectorAll('.chart')].map(c => c.innerHTML)"))
        context.close()
    assert drawn[0] == drawn[1]


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


SPECS = {"fig": {"data": [], "marks": []}}  # any specs: the stand-in bundler ignores them


# --- the cache is checked on every read: a damaged runtime is bundled anew, never shipped ------------------

@pytest.fixture
def counted(tmp_path, monkeypatch):
    """A private cache and a stand-in bundler that counts its calls: (cached file, calls)."""
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    calls = []

    def bundle(specs):
        calls.append(1)
        return "window.vega={View:1,parse:2};window.vegaExpressionInterpreter=3;/*" + "x" * 4000 + "*/\n"
    monkeypatch.setattr(runtime, "bundle", bundle)
    return tmp_path / "cache" / runtime.cache_name(SPECS), calls


@pytest.mark.parametrize("damage", ["truncated", "empty", "one-byte-changed", "seal-missing", "seal-truncated"])
def test_a_damaged_cached_runtime_is_bundled_anew(damage, counted):
    path, calls = counted
    code = build.runtime_js(SPECS)
    assert build.runtime_js(SPECS) == code and len(calls) == 1  # the second read comes from the cache
    seal = path.with_name(path.name + ".sha256")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "one-byte-changed":
        path.write_bytes(data[:100] + b"y" + data[101:])
    elif damage == "seal-missing":
        seal.unlink()
    else:
        seal.write_text(seal.read_text()[:10])
    assert build.runtime_js(SPECS) == code and len(calls) == 2
    assert path.read_text() == code and build.runtime_js(SPECS) == code and len(calls) == 2  # repaired


def test_an_empty_bundle_fails_the_build_and_keeps_the_site(counted, tmp_path, monkeypatch, capsys):
    from generator import cli

    out = tmp_path / "site"
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for cached in counted[0].parent.glob("vega-runtime-*"):  # the fixture's own specs, not SPECS
        cached.unlink()
    monkeypatch.setattr(runtime, "bundle", lambda specs: "")
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty Vega runtime" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_truncated_cache_gives_the_same_page(tmp_path, monkeypatch):
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    build.build(FIXTURE, tmp_path / "a")
    [cached] = (tmp_path / "cache").glob("vega-runtime-*.js")
    cached.write_bytes(cached.read_bytes()[:1000])  # a build killed while the cache was written
    build.build(FIXTURE, tmp_path / "b")
    assert (tmp_path / "a" / "index.html").read_bytes() == (tmp_path / "b" / "index.html").read_bytes()


def test_the_command_names_a_missing_transform_in_one_line(specs, monkeypatch, tmp_path, capsys):
    from generator import cli
    made = charts.figures

    def figures_with_sparkle(*args, **kwargs):
        first, *rest = made(*args, **kwargs)
        return [dataclasses.replace(first, vega=with_step(first.vega, {"type": "sparkle"})), *rest]

    monkeypatch.setattr(charts, "figures", figures_with_sparkle)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'sparkle'" in err and "unexpectedly" not in err
    assert not (tmp_path / "site").exists()
