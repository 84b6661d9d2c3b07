"""The Vega runtime for the page: only the Vega packages its specs need, bundled by vl-convert, cached outside git."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping

import vl_convert as vlc

VEGA_VERSION = "6.2.0"
INTERPRETER_VERSION = "2.0.0"

# vl-convert resolves exactly these specifiers (package@version/+esm, the versions its vendored Vega 6.2.0 is made
# of) to its own copies: nothing is fetched at build time, and any other version makes its bundler panic. Each
# package is one prebuilt module and the bundler keeps whole modules, so a package is the unit of what we can leave
# out: the runtime skips geo, force, hierarchy, label, regression, voronoi, wordcloud and crossfilter unless a
# spec uses one of their transforms.
CDN = "https://cdn.jsdelivr.net/npm/"
VIEW, PARSER, DATAFLOW = "vega-view@6.1.0", "vega-parser@7.1.0", "vega-dataflow@6.1.0"
INTERPRETER = f"vega-interpreter@{INTERPRETER_VERSION}"

# Every Vega 6.2 transform, by the package that exports it (the lower-case names Vega registers them under).
TRANSFORMS: dict[str, tuple[str, ...]] = {
    "vega-transforms@5.1.0": (
        "aggregate", "bin", "collect", "compare", "countpattern", "cross", "density", "dotbin", "expression",
        "extent", "facet", "field", "filter", "flatten", "fold", "formula", "generate", "impute", "joinaggregate",
        "kde", "key", "load", "lookup", "multiextent", "multivalues", "params", "pivot", "prefacet", "project",
        "proxy", "quantile", "relay", "sample", "sequence", "sieve", "subflow", "timeunit", "tupleindex", "values",
        "window"),
    "vega-view-transforms@5.1.0": ("bound", "identifier", "mark", "overlap", "render", "viewlayout"),
    "vega-encode@5.1.0": (
        "axisticks", "datajoin", "encode", "legendentries", "linkpath", "pie", "scale", "sortitems", "stack"),
    "vega-geo@5.1.0": (
        "contour", "geojson", "geopath", "geopoint", "geoshape", "graticule", "heatmap", "isocontour", "kde2d",
        "projection"),
    "vega-force@5.1.0": ("force",),
    "vega-hierarchy@5.1.0": ("nest", "pack", "partition", "stratify", "tree", "treelinks", "treemap"),
    "vega-label@2.1.0": ("label",),
    "vega-regression@2.1.0": ("loess", "regression"),
    "vega-voronoi@5.1.0": ("voronoi",),
    "vega-wordcloud@5.1.0": ("wordcloud",),
    "vega-crossfilter@5.1.0": ("crossfilter", "resolvefilter"),
}
PACKAGE_OF = {name: package for package, names in TRANSFORMS.items() for name in names}

# The operators vega-parser 7.1 puts into the dataflow it builds from any spec (its transforms.js and the scope's
# extent/lookup references), besides a spec's own transforms. All are registered: which of them a spec triggers
# depends on the parser's internals, and a wrong guess would only fail in the reader's browser.
PARSER_OPERATORS = (
    "aggregate", "axisticks", "bound", "collect", "compare", "datajoin", "encode", "expression", "extent", "facet",
    "field", "key", "legendentries", "load", "mark", "multiextent", "multivalues", "overlap", "params", "prefacet",
    "proxy", "relay", "render", "scale", "sieve", "sortitems", "tupleindex", "values", "viewlayout")

# vega-scenegraph draws these (all of them: the package is always bundled, with its SVG renderer the page uses).
# Scale types and expression functions need no list: vega-scale and vega-functions come whole with the parser.
MARKS = frozenset({"arc", "area", "group", "image", "line", "path", "rect", "rule", "shape", "symbol", "text",
                   "trail"})


class MissingFeature(Exception):
    """A figure needs something the bundled Vega runtime cannot provide; the message names the figure."""


def _walk(node: dict, where: str, found: dict[str, str], marks: dict[str, str]) -> None:
    """Collect the transform and mark types of a spec or group mark, each with the first place that uses it."""
    for key in ("data", "marks"):
        for item in node.get(key) or ():
            if not isinstance(item, dict):
                continue
            here = f"{where} > {key} '{item.get('name', '?')}'"
            for step in item.get("transform") or ():
                if isinstance(step, dict) and isinstance(step.get("type"), str):
                    found.setdefault(step["type"].lower(), here)
            if key == "marks":
                marks.setdefault(str(item.get("type")), here)
                _walk(item, here, found, marks)
    if node.get("projections"):
        found.setdefault("projection", f"{where} > projections")


def needs(specs: Mapping[str, dict]) -> tuple[str, ...]:
    """The transforms the runtime must register for these Vega specs ({figure id: spec}); raises MissingFeature."""
    found: dict[str, str] = {}
    problems = []
    for figure, spec in specs.items():
        marks: dict[str, str] = {}
        _walk(spec, f"figure '{figure}'", found, marks)
        problems += [f"{where} uses mark type '{mark}', which Vega's scenegraph does not draw"
                     for mark, where in marks.items() if mark not in MARKS]
    problems += [f"{where} uses transform '{name}', which no Vega package that vl-convert {vlc.__version__} "
                 f"vendors provides" for name, where in found.items() if name not in PACKAGE_OF]
    if problems:
        raise MissingFeature("; ".join(problems))
    return tuple(sorted(set(PARSER_OPERATORS) | set(found)))


def snippet(transforms: tuple[str, ...]) -> str:
    """The module vl-convert bundles: View, parse and the interpreter, registering only these transforms."""
    by_package: dict[str, list[str]] = {}
    for name in sorted(transforms):
        by_package.setdefault(PACKAGE_OF[name], []).append(name)
    lines = [f'import {{View}} from "{CDN}{VIEW}/+esm";',
             f'import {{parse}} from "{CDN}{PARSER}/+esm";',
             f'import {{transforms}} from "{CDN}{DATAFLOW}/+esm";',
             f'import {{expressionInterpreter}} from "{CDN}{INTERPRETER}/+esm";']
    # Namespace imports, read by name below: the bundler keeps whole modules anyway, and a named import of
    # something a package lacks would bundle silently into a ReferenceError in the page.
    aliases = {package: f"P{i}" for i, package in enumerate(TRANSFORMS) if package in by_package}
    lines += [f'import * as {alias} from "{CDN}{package}/+esm";' for package, alias in aliases.items()]
    entries = ", ".join(f"{name}: {aliases[package]}.{name}" for package, names in by_package.items()
                        for name in names)
    lines += [f"Object.assign(transforms, {{{entries}}});",
              "window.vega = {View, parse};",
              "window.vegaExpressionInterpreter = expressionInterpreter;"]
    return "\n".join(lines) + "\n"


def cache_name(specs: Mapping[str, dict]) -> str:
    """The runtime's file name in the build cache; changes with vl-convert's version or the transform list."""
    digest = hashlib.sha256(f"{vlc.__version__}\n{snippet(needs(specs))}".encode()).hexdigest()[:16]
    return f"vega-runtime-{digest}.js"


def bundle(specs: Mapping[str, dict]) -> str:
    """Bundle the runtime these specs need now (about a second; build.py caches the result)."""
    code = snippet(needs(specs))
    try:
        return vlc.javascript_bundle(code)
    except BaseException as error:  # a specifier vl-convert does not vendor panics in its Rust bundler
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        detail = " ".join(str(error).split())[:200]
        raise MissingFeature(f"vl-convert {vlc.__version__} could not bundle the Vega runtime ({detail}); "
                             f"generator/runtime.py names the packages of Vega {VEGA_VERSION}") from None
