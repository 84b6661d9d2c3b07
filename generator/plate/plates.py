"""Find and load a plate's module: the `plate/` package beside its content, loaded by path, and call its hooks
under a time limit, each failure one line naming the file, line and hook (docs/plates.md)."""
from __future__ import annotations

import ast
import ctypes
import dataclasses
import functools
import hashlib
import importlib.util
import math
import os
import re
import signal
import sys
import threading
from pathlib import Path

from . import watchdog
from ..source.schema import Problems, shown_path

PACKAGE = "plate"  # the plate module's folder in a plate's folder: a Python package
PAGE = "page"  # its page modules (ES modules), bundled with the engine's templates/page/
LIBRARY = "platelib"  # the plates' shared formulas (plates/lib/, installed with the engine), which plate modules import
# The names a plate module must declare (docs/plates.md, "The contract", says what each is given and returns).
REQUIRED = ("Selection", "load_presets", "model_of", "prose_names", "figures", "csv_text", "page")
# What each hook is: the names the engine calls, with what a call returns, and the names it reads, with their type.
RETURNS = {"Selection": None, "load_presets": (tuple, "a (presets, {table: ids} or None) pair"), "check_content": None,
           "model_of": None, "check_model": None, "prose_names": (dict, "a dict"), "scenario_ids": (dict, "a dict"),
           "unused": (list, "a list"), "figures": (list, "a list"), "csv_text": (str, "a str"),
           "page": (dict, "a dict with 'data' (a dict) and 'readout' (a list)"), "select_choices": (dict, "a dict"),
           "facts_data": None, "words_context": None}
VALUES = {"DEFAULT_SCHEMA": (dict, "a dict"), "DEFAULT_OPTIONAL": (dict, "a dict"),
          "PROSE_NAMES": ((tuple, list, set, frozenset), "a tuple of names"), "SLOT_TABLES": (dict, "a dict"),
          "SLOT_ROOTS": (dict, "a dict"), "SLOT_CALLS": (dict, "a dict"), "FIGURES": ((tuple, list), "a tuple of ids"),
          "PAGE": (dict, "a dict of functions by role"), "LINK_KEYS": (dict, "a dict of key lists by subject")}
PAGE_ROLES = ("facts", "datasets", "readout", "title", "describe", "table_rows", "csv_rows")  # PAGE's functions, every one
# PAGE's optional functions, each with what the page has without it (docs/plates.md): `own`, the reader's own values
PAGE_OPTIONAL = {"own": "no free inputs: the page reads the controls alone"}
TIME_LIMIT_S = 60.0  # of one hook call: the shipped plates' slowest, cold, takes a few seconds (docs/plates.md)
TIME_LIMIT_VARIABLE = "PLATE_HOOK_TIMEOUT"  # changes it, as `--hook-timeout SECONDS` does
AGAIN_S = 0.5  # past the limit, how often a hook that caught the timeout is told again
_LOADED: dict[str, object] = {}
_LIBRARY_SEEN: list = []  # the library's code at the last load(): edited since (plate serve), it is imported afresh
_limit: list[float] = []  # set from the command line (--hook-timeout), over the environment's


class ModuleError(Exception):
    """The plate module failed (raised, exited, ran past its time limit, returned something malformed): the one
    line says where (`FILE, line N: …`)."""


class HookTimeout(BaseException):
    """Raised inside a hook past its time limit: a BaseException, so a hook's `except Exception` lets it through."""


def seconds(text: str) -> float:
    """A time limit in seconds, from the command line or the environment: a positive number, else ValueError."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{text!r} is not a positive number of seconds")
    return value


def set_time_limit(limit: float | None) -> None:
    """Every later hook call's time limit (None: the environment's, else TIME_LIMIT_S)."""
    _limit[:] = [] if limit is None else [limit]


def time_limit() -> float:
    """The time limit of one hook call: set_time_limit's, else $PLATE_HOOK_TIMEOUT, else TIME_LIMIT_S."""
    if _limit:
        return _limit[0]
    text = os.environ.get(TIME_LIMIT_VARIABLE, "").strip()
    return seconds(text) if text else TIME_LIMIT_S


# --- the watchdog ------------------------------------------------------------------------------------------

_fired: set = set()  # the Watches whose call ran past its limit and has not returned yet
_before: list = [None]  # the SIGALRM handler _alarm replaced (prose's own time limit), called for its signals


def _raise_in(thread: int, exception: type | None) -> None:
    """Raise exception in the thread at its next Python instruction (None: take back one not raised yet)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                               ctypes.py_object(exception) if exception else None)


def _alarm(signum, frame) -> None:
    """SIGALRM, sent by a watchdog to the main thread: a hook past its limit stops there, even one waiting in a
    system call (sleep, read); a signal that comes just after the call returned does nothing, and any other goes
    to the handler it replaced (prose's own time limit, when a hook runs while the prose is filled)."""
    watches = [watch for watch in list(_fired) if watch.armed and watch.thread == threading.get_ident()]
    if watches:
        for watch in watches:
            if watch.frame is None:  # where the call was when its time ran out: the line a loop is on
                watch.frame = frame
        raise HookTimeout
    if callable(_before[0]):
        _before[0](signum, frame)


class Watch:
    """A watchdog over one hook call on this thread: past the limit it raises HookTimeout in the thread, again every
    AGAIN_S until the call returns. On the main thread it sends SIGALRM, whose handler raises it (a signal also
    wakes a system call); on another thread it raises it asynchronously, at the thread's next Python instruction."""

    def __init__(self, limit: float):
        self.limit, self.thread, self.fired, self.armed = limit, threading.get_ident(), False, True
        self.frame = None  # the frame running when the limit first passed (on the main thread: the signal's)
        self.lock, self.done = threading.Lock(), threading.Event()
        self.main = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill")
        self.before = None
        if self.main and signal.getsignal(signal.SIGALRM) is not _alarm:
            self.before = _before[0] = signal.signal(signal.SIGALRM, _alarm)
        threading.Thread(target=self._run, daemon=True, name="plate hook watchdog").start()

    def _run(self) -> None:
        wait = self.limit
        while not self.done.wait(wait):
            with self.lock:
                if self.done.is_set():
                    return
                self.fired = True
                _fired.add(self)
                if self.main:
                    signal.pthread_kill(self.thread, signal.SIGALRM)
                else:
                    _raise_in(self.thread, HookTimeout)
            wait = AGAIN_S

    def stop(self) -> None:
        """The call returned (or raised): nothing is raised in the thread after this."""
        with self.lock:
            self.done.set()
            _fired.discard(self)
            if self.fired and not self.main:
                _raise_in(self.thread, None)
        if callable(self.before):  # a handler of plate's own (prose's time limit): its again. Not SIGALRM's default,
            signal.signal(signal.SIGALRM, self.before)  # which would end the process for a signal sent as it returned


# --- where a failure is ---------------------------------------------------------------------------------

def _inside(filename: str, package: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(package)
    except (OSError, ValueError):
        return False


def _defined_at(package: Path, hook: str, value) -> tuple[Path, int]:
    """Where a hook is defined: its def line, else the line of __init__.py assigning it, else the first naming it."""
    code = getattr(value, "__code__", None) or getattr(getattr(value, "__init__", None), "__code__", None)
    if code is not None and (not isinstance(value, type) or _inside(code.co_filename, package)):
        return Path(code.co_filename), code.co_firstlineno
    init = package / "__init__.py"
    try:
        text = init.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return init, 1
    found = re.search(rf"^{re.escape(hook)}\s*(?::[^=\n]*)?=", text, re.M) or re.search(rf"\b{re.escape(hook)}\b", text)
    return init, text.count("\n", 0, found.start()) + 1 if found else 1


def _where(package: Path, error: BaseException, hook: str | None, value) -> tuple[Path, int]:
    """The innermost line of the plate package the error came through; else the hook's definition."""
    if isinstance(error, SyntaxError) and error.filename and _inside(error.filename, package):
        return Path(error.filename), error.lineno or 1
    found = None
    tb = error.__traceback__
    while tb is not None:
        if _inside(tb.tb_frame.f_code.co_filename, package):
            found = (Path(tb.tb_frame.f_code.co_filename), tb.tb_lineno)
        tb = tb.tb_next
    if found is None and hook is None:
        return package / "__init__.py", 1
    return found or _defined_at(package, hook or "", value)


def _at(package: Path, path: Path, line: int) -> str:
    """FILE, line N as messages show a plate module's file (from the plate's folder's parent, like content's)."""
    return f"{shown_path(Path(path).resolve(), package.parent)}, line {line}"


def defined_at(module, function) -> str:
    """FILE, line N of a function of a plate module's package, as its one-line failures name it."""
    package = Path(module.FOLDER).resolve() / PACKAGE
    return _at(package, *_defined_at(package, getattr(function, "__name__", ""), function))


def declared_line(module, text: str) -> str | None:
    """FILE, line N of the first string constant `text` in the plate package (its __init__.py first), where a
    control's key is declared; None if no file of the package writes it."""
    package = Path(module.FOLDER).resolve() / PACKAGE
    files = sorted(package.rglob("*.py"), key=lambda p: (p.name != "__init__.py", p.relative_to(package).parts))
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value == text
                 and isinstance(node.value, str)]
        if lines:
            return _at(package, path, min(lines))
    return None


def _detail(error: BaseException) -> str:
    """The error's type and message, on one line, the package's internal name as its folder's (plate.model)."""
    text = re.sub(r"\bplate_[0-9a-f]{16}\b", PACKAGE, " ".join(str(error).split()))
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def _what(hook: str | None) -> str:
    return f"the plate module's hook {hook}" if hook else "the plate module's import"


def _running(package: Path, frame) -> tuple[Path, int] | None:
    """The innermost line of the plate package in a frame's stack (where a call was when its time ran out)."""
    while frame is not None:
        if _inside(frame.f_code.co_filename, package):
            return Path(frame.f_code.co_filename), frame.f_lineno
        frame = frame.f_back
    return None


def _failed(package: Path, hook: str | None, value, error: BaseException, limit: float,
            frame=None) -> ModuleError:
    """The one-line ModuleError for an error out of a hook call (or the module's import, hook None); frame, for a
    timeout, is where the call was running when its limit passed (a HookTimeout raised again as the call unwinds
    would name its caller)."""
    where = _at(package, *(_running(package, frame) or _where(package, error, hook, value)))
    if isinstance(error, HookTimeout):
        return ModuleError(f"{where}: {_what(hook)} ran past its time limit of {limit:g} s (a loop that never "
                           f"ends? --hook-timeout or ${TIME_LIMIT_VARIABLE} sets the limit; see docs/plates.md)")
    if isinstance(error, SystemExit):
        return ModuleError(f"{where}: {_what(hook)} called sys.exit({error.code!r}): a plate module must return "
                           f"or raise, never exit")
    return ModuleError(f"{where}: {_what(hook)} raised {_detail(error)}")


def _engine_error(error: BaseException) -> bool:
    """An error of the engine's own (a ContentError a hook raises or the engine raised under it): it passes on."""
    return type(error).__module__.split(".")[0] == __name__.split(".")[0]


def guarded(package: Path, hook: str | None, value, *args, **kwargs):
    """value(*args, **kwargs), a hook of the plate package (None: its import), under the time limit: whatever
    else it raises (SystemExit included) or a timeout becomes a one-line ModuleError. A Ctrl-C and the engine's
    own errors pass on as they are."""
    limit = time_limit()
    token = watchdog.enter(lambda: f"{_at(package, *_defined_at(package, hook or '', value))}: {_what(hook)}"
                           if hook else f"{_at(package, package / '__init__.py', 1)}: {_what(hook)}")
    watch = Watch(limit)
    try:
        try:
            return value(*args, **kwargs)
        finally:
            watch.armed = False  # first, with no call before it: from here on the signal handler raises nothing
            try:
                watch.stop()
            except HookTimeout:  # raised in this thread just as the call ended: the call is over all the same
                watch.stop()
            watchdog.leave(token)
    except HookTimeout as error:
        if not watch.fired:
            raise  # an outer hook's limit: that hook is the one to name
        raise _failed(package, hook, value, error, limit, watch.frame) from error
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - a plate module's code may raise anything, SystemExit too
        if _engine_error(error):
            raise
        raise _failed(package, hook, value, error, limit) from error


def _malformed(package: Path, hook: str, value, got, expected: str) -> ModuleError:
    """The one line for a hook that returned (or is) something of the wrong kind, at the hook's definition."""
    what = f"returned {type(got).__name__}" if callable(value) else f"is {type(got).__name__}"
    where = _at(package, *_defined_at(package, hook, value))
    return ModuleError(f"{where}: the plate module's hook {hook} {what}, not {expected} (see docs/plates.md)")


def _well_formed(hook: str, got) -> bool:
    """Whether a hook's return is of the kind the engine goes on with (RETURNS; a look at the outside only)."""
    kind = RETURNS[hook]
    if kind is None:
        return True
    if not isinstance(got, kind[0]):
        return False
    if hook == "load_presets":
        return len(got) == 2 and isinstance(got[1], (dict, type(None)))  # None, None: presets.toml unreadable
    if hook == "page":
        return isinstance(got.get("data"), dict) and isinstance(got.get("readout"), list)
    return True


# --- what a plate gets for a name it does not declare (docs/plates.md, "Optional names and their defaults") -------

def _nothing(*args, **kwargs) -> None:
    """check_content's and check_model's default: no check of the plate's own."""
    return None


def _selection_fields(plate) -> tuple:
    """The fields of the plate's Selection, from which [default]'s fields are read when the plate declares none."""
    selection = getattr(plate, "_module", plate).Selection  # the class, not the Plate's guarded call of it
    if not dataclasses.is_dataclass(selection):
        package = Path(plate.FOLDER) / PACKAGE
        raise ModuleError(f"{_at(package, *_defined_at(package, 'Selection', selection))}: the plate module's "
                          f"Selection is not a dataclass, so the fields of [default] cannot be read off it: declare "
                          f"DEFAULT_SCHEMA and DEFAULT_OPTIONAL (see docs/plates.md)")
    return dataclasses.fields(selection)


def _choices_of_page(plate):
    """select_choices's default: {control: ids} as the page data's `choices` gives them."""
    def select_choices(content) -> dict:
        from ..site.cache import Cache
        model, store = plate.model_of(content), Cache(None)  # a cache of no folder: every figure made afresh
        data = plate.page(content, model, plate.figures(content, model, store), None, store)["data"]
        return {key: list(ids) for key, ids in dict(data.get("choices") or {}).items()}
    return select_choices


# {name: what a plate module lacking it gets, made from the plate (a Plate, or the module as loaded)}
DEFAULTS = {
    "DEFAULT_SCHEMA": lambda plate: {f.name: "text" for f in _selection_fields(plate)},
    "DEFAULT_OPTIONAL": lambda plate: {f.name: f.default for f in _selection_fields(plate)
                                       if f.default is not dataclasses.MISSING},
    "check_content": lambda plate: _nothing,
    "check_model": lambda plate: _nothing,
    "PROSE_NAMES": lambda plate: None,  # None: a slot's mistake lists the names prose_names gives (prose.py)
    "SLOT_TABLES": lambda plate: {},
    "SLOT_ROOTS": lambda plate: {},
    "SLOT_CALLS": lambda plate: {},
    "scenario_ids": lambda plate: lambda ids: {},
    "unused": lambda plate: lambda content: [],
    "select_choices": _choices_of_page,
    "FIGURES": lambda plate: (),
    "facts_data": lambda plate: lambda facts: facts,
    "words_context": lambda plate: lambda facts, plates=None: {},
    "LINK_KEYS": lambda plate: {},
}


def declared(module, name: str):
    """A name of a plate module (a Plate, or the module as plates.load gives it), else its default (DEFAULTS)."""
    try:
        return getattr(module, name)
    except AttributeError:
        if name not in DEFAULTS:
            raise
        return DEFAULTS[name](module)


class Plate:
    """A loaded plate module as the engine uses it: each hook it calls runs under guarded() and its return is
    checked; a name it does not declare is its default (DEFAULTS); every other name is the module's own."""

    def __init__(self, module, folder: Path | None = None):
        object.__setattr__(self, "_module", module)
        # Two copies of the same code share one module (load), but each is its own plate: its FOLDER (where its
        # page/ fragments are, and the files its messages name) is the copy's, not the first copy loaded.
        object.__setattr__(self, "FOLDER", Path(folder) if folder is not None else module.FOLDER)

    def __getattr__(self, name: str):
        try:
            value = getattr(self._module, name)
        except AttributeError:
            if name not in DEFAULTS:
                raise
            value = DEFAULTS[name](self)
        if name not in RETURNS or not callable(value):
            return value
        package = self.FOLDER / PACKAGE

        @functools.wraps(value)
        def hook(*args, **kwargs):
            got = guarded(package, name, value, *args, **kwargs)
            if not _well_formed(name, got):
                raise _malformed(package, name, value, got, RETURNS[name][1])
            return got
        return hook

    def __setattr__(self, name: str, value) -> None:
        setattr(self._module, name, value)

    def __repr__(self) -> str:
        return f"<plate module {self._module.__name__} from {self.FOLDER / PACKAGE}>"


# --- loading -------------------------------------------------------------------------------------------

def code_of(package: Path) -> list[tuple[str, bytes]]:
    """(relative name, bytes) of every Python file of a plate package, in a stable order."""
    return [(p.relative_to(package).as_posix(), p.read_bytes()) for p in sorted(package.rglob("*.py"))
            if "__pycache__" not in p.parts]


def library_code() -> list[tuple[str, bytes]]:
    """code_of the shared library plates import (LIBRARY), or [] where it is not installed."""
    spec = importlib.util.find_spec(LIBRARY)
    if spec is None or not spec.submodule_search_locations:
        return []
    return code_of(Path(next(iter(spec.submodule_search_locations))))


def load(package: Path):
    """The plate package at this folder, imported once per distinct code (under the time limit, a failure one
    ModuleError line): two copies of the same files (a test's copy of a plate) are one module, so their
    dataclasses compare equal."""
    package = Path(package).resolve()
    # the library's code too: the build cache keys a plate's products by CODE, and a formula there changes them
    library = library_code()
    if _LIBRARY_SEEN and _LIBRARY_SEEN[0] != library:  # else the new CODE would key products of the old formulas
        for loaded in [n for n in sys.modules if n == LIBRARY or n.startswith(LIBRARY + ".")]:
            del sys.modules[loaded]
        importlib.invalidate_caches()  # a module the edit added is found
    _LIBRARY_SEEN[:] = [library]
    digest = hashlib.sha256(repr((code_of(package), library)).encode()).hexdigest()[:16]
    name = f"plate_{digest}"
    if name not in _LOADED:
        spec = importlib.util.spec_from_file_location(name, package / "__init__.py",
                                                      submodule_search_locations=[str(package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            guarded(package, None, spec.loader.exec_module, module)
        except BaseException:
            for loaded in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
                del sys.modules[loaded]  # a fixed copy of the same code imports afresh
            raise
        module.FOLDER = package.parent  # where its page modules are found (PAGE)
        module.CODE = digest  # what the build cache keys the plate's products by, besides the engine's code
        _LOADED[name] = module
    return _LOADED[name]


def module_of(problems: Problems, root: Path) -> Plate:
    """The plate module of the content folder root, its hooks guarded (Plate); a ContentError naming what is
    missing, or a ModuleError naming a hook of the wrong kind."""
    package = Path(root) / PACKAGE
    if not (package / "__init__.py").is_file():
        problems.add(package, None, f"no plate module: a plate's folder holds its content and a Python package "
                                    f"{PACKAGE}/ (an __init__.py declaring the plate; see docs/plates.md)")
        problems.raise_if_any()
    module = load(package)
    missing = [name for name in REQUIRED if not hasattr(module, name)]
    if missing:
        problems.add(package / "__init__.py", None, f"the plate module lacks {', '.join(missing)} (see docs/plates.md)")
        problems.raise_if_any()
    for name in (*REQUIRED, *DEFAULTS, "PAGE"):
        if not hasattr(module, name):
            continue  # an optional name: its default (DEFAULTS)
        value = getattr(module, name)
        if name in VALUES and not isinstance(value, VALUES[name][0]):
            raise _malformed(package.resolve(), name, value, value, VALUES[name][1])
        if name in RETURNS and not callable(value):
            where = _at(package.resolve(), *_defined_at(package.resolve(), name, value))
            raise ModuleError(f"{where}: the plate module's hook {name} is {type(value).__name__}, not a function "
                              f"(see docs/plates.md)")
    page = getattr(module, "PAGE", None)
    if page is not None:
        missing = [role for role in (*PAGE_ROLES, *(r for r in PAGE_OPTIONAL if r in page))
                   if not callable(page.get(role))]
        unknown = [str(role) for role in page if role not in PAGE_ROLES and role not in PAGE_OPTIONAL]
        if missing or unknown:
            where = _at(package.resolve(), *_defined_at(package.resolve(), "PAGE", page))
            what = "; ".join(([f"no function for {', '.join(missing)}"] if missing else []) +
                             ([f"roles it does not know: {', '.join(unknown)}"] if unknown else []))
            raise ModuleError(f"{where}: the plate module's PAGE has {what} (its roles: {', '.join(PAGE_ROLES)}; "
                              f"optional: {', '.join(PAGE_OPTIONAL)}; see docs/plates.md)")
    return Plate(module, package.resolve().parent)


def page_folders(module) -> list[Path]:
    """Where a plate's page modules are: its own page/ folder (bundled after the engine's)."""
    return [module.FOLDER / PAGE]
