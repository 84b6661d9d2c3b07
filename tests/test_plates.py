"""The plate module (generator/plate/plates.py): the hooks the docs list are the ones required, and each hook runs under
a time limit, its failures (an exception, SystemExit, a timeout, a malformed return) one line naming file, line
and hook; `plate check`, `build` and `serve` say so, and serve recovers once the module is fixed."""
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request
from pathlib import Path

import pytest

from generator.plate import plates
from generator.site import assembly, build
from generator.source.schema import ContentError, Problems

from conftest import FIXTURE, ROOT

DOCS = ROOT / "docs" / "plates.md"
LIMIT_S = 0.5  # the in-process tests' time limit
BOUND_S = 30  # a looping hook the guard failed to stop gives up by itself after this, so the test fails, not hangs


# --- the contract ------------------------------------------------------------------------------------------

def documented_hooks() -> list[str]:
    """The names the required names' table of docs/plates.md lists, in its first column (PAGE aside: optional while a
    plate brings its own page modules)."""
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("\n### Required names\n", 1)[1].split("\n### ", 1)[0]
    names = []
    for row in table.splitlines():
        if row.startswith("| `"):
            names += [re.match(r"\w+", name).group() for name in re.findall(r"`([^`]+)`", row.split("|")[1])]
    return [name for name in names if name != "PAGE"]


def test_the_required_hooks_are_the_ones_the_docs_list():
    assert 1 <= len(documented_hooks()) <= 7
    assert sorted(plates.REQUIRED) == sorted(documented_hooks())


def stub_package(folder: Path, lacking: str = "") -> Path:
    """A plate package declaring every documented hook (as a harmless stand-in) but lacking."""
    lines = []
    for name in documented_hooks():
        kind = plates.VALUES.get(name, (None,))[0]
        kind = kind[0] if isinstance(kind, tuple) else kind
        if name != lacking:
            lines.append(f"{name} = {kind.__name__}()" if kind else f"def {name}(*args, **kwargs):\n    return None")
    package = folder / plates.PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("\n".join(lines) + "\n")
    return package


def test_a_plate_is_keyed_by_the_shared_library_too_and_an_edit_of_it_is_imported_afresh(tmp_path, monkeypatch):
    """A plate module's CODE includes the library's code (plates.LIBRARY), and a library edited between two loads
    (plate serve) is imported afresh: the new CODE never keys products of the old formulas."""
    library = tmp_path / "path" / "sharedlib_under_test"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("")
    (library / "formulas.py").write_text("def double(x):\n    return 2 * x\n")
    package = tmp_path / "plate"
    package.mkdir()
    (package / "__init__.py").write_text("from sharedlib_under_test.formulas import double\n")
    monkeypatch.syspath_prepend(str(tmp_path / "path"))
    monkeypatch.setattr(plates, "LIBRARY", library.name)
    monkeypatch.setattr(plates, "_LIBRARY_SEEN", [])  # the session's platelib stays as it was imported
    first = plates.load(package)
    assert first.double(3) == 6 and plates.load(package) is first
    (library / "formulas.py").write_text("def double(x):\n    return 2 * x + 1\n")
    second = plates.load(package)
    assert second.CODE != first.CODE and second.double(3) == 7
    assert first.double(3) == 6  # a module loaded before keeps what it imported


def test_a_module_with_every_documented_hook_is_taken(tmp_path):
    stub_package(tmp_path)
    module = plates.module_of(Problems(tmp_path), tmp_path)
    assert module.FOLDER == tmp_path.resolve()



def test_two_copies_of_the_same_code_are_each_their_own_plate(tmp_path):
    # One module for both (load), but each copy's page/ fragments and messages are its own, whichever loaded first.
    first, second = tmp_path / "first", tmp_path / "second"
    stub_package(first)
    shutil.copytree(first, second)
    a, b = (plates.module_of(Problems(f), f) for f in (first, second))
    assert a._module is b._module
    assert (a.FOLDER, b.FOLDER) == (first.resolve(), second.resolve())
    assert plates.page_folders(b) == [second.resolve() / plates.PAGE]
    assert str(second.resolve()) in repr(b)

@pytest.mark.parametrize("name", documented_hooks())
def test_a_module_lacking_a_documented_hook_is_refused_naming_it(tmp_path, name):
    stub_package(tmp_path, lacking=name)
    with pytest.raises(ContentError) as raised:
        plates.module_of(Problems(tmp_path), tmp_path)
    assert re.search(rf"the plate module lacks {name} ", raised.value.problems[0])


def test_a_hook_of_the_wrong_kind_is_one_line_at_its_name(tmp_path):
    package = stub_package(tmp_path)
    init = package / "__init__.py"
    init.write_text(init.read_text() + "SLOT_TABLES = 3\n")  # an optional name, declared: of the kind it must be
    line = init.read_text().splitlines().index("SLOT_TABLES = 3") + 1
    with pytest.raises(plates.ModuleError) as raised:
        plates.module_of(Problems(tmp_path), tmp_path)
    assert str(raised.value) == (f"{tmp_path.name}/plate/__init__.py, line {line}: the plate module's hook "
                                 f"SLOT_TABLES is int, not a dict (see docs/plates.md)")


# --- the guard, in process ---------------------------------------------------------------------------------

HOOKS = '''import sys, time
BOUND = {bound}


def loops():
    started = time.monotonic()
    while time.monotonic() - started < BOUND:
        pass
    return "the guard let it run"


def sleeps():
    time.sleep(BOUND)
    return "the guard let it sleep"


def swallows():
    started = time.monotonic()
    try:
        while time.monotonic() - started < BOUND:
            try:
                while time.monotonic() - started < BOUND:
                    pass
            except Exception:
                pass
    except BaseException:
        pass
    while time.monotonic() - started < BOUND:
        pass
    return "the guard let it swallow the timeout"


def exits():
    sys.exit(0)


def raises():
    raise ValueError("no such\\nthing")


def returns():
    return 7
'''


@pytest.fixture
def hooks(tmp_path):
    """A module of hooks inside a plate package folder, and the guard's time limit LIMIT_S."""
    package = tmp_path / "plate"
    package.mkdir()
    (package / "hooks.py").write_text(HOOKS.format(bound=BOUND_S))
    spec = importlib.util.spec_from_file_location("plate_test_hooks", package / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    plates.set_time_limit(LIMIT_S)
    yield package.resolve(), module
    plates.set_time_limit(None)


def line_of(package: Path, text: str) -> int:
    """The number of the first line of the hooks' module that starts with text."""
    return next(n for n, line in enumerate((package / "hooks.py").read_text().splitlines(), 1) if line.startswith(text))


def failure(package: Path, name: str, module) -> str:
    """The ModuleError's line for calling the hook name under the guard."""
    with pytest.raises(plates.ModuleError) as raised:
        plates.guarded(package, name, getattr(module, name))
    return str(raised.value)


def test_a_loop_on_the_main_thread_stops_at_the_limit_naming_file_line_and_hook(hooks):
    package, module = hooks
    started = time.monotonic()
    message = failure(package, "loops", module)
    assert time.monotonic() - started < BOUND_S / 2
    loop = line_of(package, "        pass")  # the loop is its two lines: the signal lands on either
    assert any(message.startswith(f"{package.parent.name}/plate/hooks.py, line {line}: the plate module's hook "
                                  f"loops ran past its time limit of {LIMIT_S:g} s") for line in (loop - 1, loop))


def test_a_sleep_on_the_main_thread_stops_at_the_limit(hooks):
    package, module = hooks
    started = time.monotonic()
    message = failure(package, "sleeps", module)
    assert time.monotonic() - started < BOUND_S / 2
    assert f"hooks.py, line {line_of(package, '    time.sleep(BOUND)')}: the plate module's hook sleeps ran past" \
           in message


def test_a_loop_on_another_thread_stops_at_the_limit(hooks):
    package, module = hooks
    found = []

    def run():
        try:
            plates.guarded(package, "loops", module.loops)
        except plates.ModuleError as error:
            found.append(str(error))
    worker = threading.Thread(target=run)
    worker.start()
    worker.join(BOUND_S * 2)
    assert len(found) == 1 and "the plate module's hook loops ran past its time limit" in found[0]


def test_a_hook_that_catches_exceptions_or_the_timeout_once_is_stopped_all_the_same(hooks):
    package, module = hooks
    started = time.monotonic()
    message = failure(package, "swallows", module)
    assert time.monotonic() - started < BOUND_S / 2 and "hook swallows ran past its time limit" in message


def test_nothing_is_raised_after_a_hook_returns(hooks):
    package, module = hooks
    assert plates.guarded(package, "returns", module.returns) == 7
    time.sleep(LIMIT_S * 3)  # past the limit of the call that returned: its watchdog is gone
    assert plates.guarded(package, "returns", module.returns) == 7


def test_sys_exit_and_exceptions_are_one_line_at_the_innermost_line(hooks):
    package, module = hooks
    shown = f"{package.parent.name}/plate/hooks.py"
    assert failure(package, "exits", module) == (f"{shown}, line {line_of(package, '    sys.exit(0)')}: the plate "
                                                 f"module's hook exits called sys.exit(0): a plate module must "
                                                 f"return or raise, never exit")
    assert failure(package, "raises", module) == (f"{shown}, line {line_of(package, '    raise ValueError(')}: "
                                                  f"the plate module's hook raises raised ValueError: no such thing")


def test_content_errors_and_ctrl_c_pass_on(hooks):
    package, _ = hooks

    def content_mistake():
        raise ContentError(["content/plate.md, line 3: wrong"])

    def ctrl_c():
        raise KeyboardInterrupt
    with pytest.raises(ContentError):
        plates.guarded(package, "check_model", content_mistake)
    with pytest.raises(KeyboardInterrupt):
        plates.guarded(package, "figures", ctrl_c)


def test_a_malformed_return_is_named_at_the_hooks_definition(tmp_path):
    package = tmp_path / "plate"
    package.mkdir()
    (package / "__init__.py").write_text("def page(*args):\n    return None\n\n\ndef csv_text(model):\n"
                                         "    return b'bytes'\n")
    spec = importlib.util.spec_from_file_location("plate_test_returns", package / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.FOLDER = tmp_path.resolve()
    guarded = plates.Plate(module)
    with pytest.raises(plates.ModuleError) as raised:
        guarded.page()
    assert str(raised.value).startswith(f"{tmp_path.name}/plate/__init__.py, line 1: the plate module's hook page "
                                        f"returned NoneType, not a dict")
    with pytest.raises(plates.ModuleError, match=r"__init__.py, line 5: .* csv_text returned bytes, not a str"):
        guarded.csv_text(None)


def test_the_time_limit_is_set_by_the_environment_or_the_command(monkeypatch):
    monkeypatch.delenv(plates.TIME_LIMIT_VARIABLE, raising=False)
    assert plates.time_limit() == plates.TIME_LIMIT_S
    monkeypatch.setenv(plates.TIME_LIMIT_VARIABLE, "2.5")
    assert plates.time_limit() == 2.5
    plates.set_time_limit(7)
    try:
        assert plates.time_limit() == 7
    finally:
        plates.set_time_limit(None)
    for wrong in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(ValueError):
            plates.seconds(wrong)


def test_a_wrong_time_limit_is_a_usage_error_in_one_line(monkeypatch, capsys):
    from generator.commands import cli
    monkeypatch.setenv(plates.TIME_LIMIT_VARIABLE, "soon")
    assert cli.main(["check", "--content", str(FIXTURE)]) == 2
    assert capsys.readouterr().err == "plate: $PLATE_HOOK_TIMEOUT: 'soon' is not a positive number of seconds\n"
    monkeypatch.delenv(plates.TIME_LIMIT_VARIABLE)
    with pytest.raises(SystemExit) as raised:
        cli.main(["check", "--content", str(FIXTURE), "--hook-timeout", "0"])
    assert raised.value.code == 2
    assert "invalid time limit '0': give a positive number of seconds" in capsys.readouterr().err


# --- the command ---------------------------------------------------------------------------------------------

def plate_copy(tmp_path: Path, code: str = "") -> tuple[Path, Path]:
    """A copy of the fixture plate (its links followed), code appended to its plate/__init__.py."""
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root, symlinks=False)
    init = root / "plate" / "__init__.py"
    init.write_text(init.read_text() + code)
    return root, init


def line_in(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def plate(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env={**os.environ, **(env or {})})


def assert_one_line(result: subprocess.CompletedProcess, starts: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"plate: {starts}"), result.stderr


LOOP = "\n\ndef model_of(content):\n    while True: pass  # noqa: E701 - one line, where the loop is stopped\n"


def test_a_looping_module_fails_check_at_the_time_limit_in_one_line(tmp_path):
    root, init = plate_copy(tmp_path, LOOP)
    started = time.monotonic()
    result = plate("check", "--content", str(root), "--hook-timeout", "1")  # the loop is the first hook run
    assert time.monotonic() - started < 120  # the process ended: without the limit it never would
    line = line_in(init, LOOP.splitlines()[-1])
    assert_one_line(result, f"content/plate/__init__.py, line {line}: the plate module's hook model_of ran past its "
                            f"time limit of 1 s")
    by_environment = plate("check", "--content", str(root), env={plates.TIME_LIMIT_VARIABLE: "1"})
    assert by_environment.returncode == 1 and "time limit of 1 s" in by_environment.stderr


@pytest.mark.parametrize("where", ["import", "hook"])
def test_sys_exit_in_a_module_fails_the_build_in_one_line_and_writes_nothing(tmp_path, where):
    code = "\nimport sys\n" + ("sys.exit(0)\n" if where == "import" else "\n\ndef check_model(model, root):\n    sys.exit(0)\n")
    root, init = plate_copy(tmp_path, code)
    out = tmp_path / "site"
    result = plate("build", "--content", str(root), "--out", str(out))
    what = "import" if where == "import" else "hook check_model"
    line = len(init.read_text().splitlines())
    assert_one_line(result, f"content/plate/__init__.py, line {line}: the plate module's {what} called sys.exit(0)")
    assert not out.exists()


def test_an_import_error_is_one_line_and_a_traceback_only_with_debug(tmp_path):
    root, init = plate_copy(tmp_path, "\nfrom .nowhere import thing\n")
    result = plate("check", "--content", str(root))
    assert_one_line(result, f"content/plate/__init__.py, line {line_in(init, 'from .nowhere import thing')}: the "
                            f"plate module's import raised ModuleNotFoundError: No module named 'plate.nowhere'")
    debug = plate("--debug", "check", "--content", str(root))
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_a_malformed_return_fails_the_build_in_one_line_and_leaves_the_site(tmp_path):
    root, init = plate_copy(tmp_path, "\n\ndef prose_names(content, model):\n    return None\n")
    out = tmp_path / "site"
    build.write({"index.html": "old"}, out)
    before = sorted((p.name, p.read_bytes()) for p in out.iterdir())
    result = plate("build", "--content", str(root), "--out", str(out))
    line = line_in(init, "def prose_names(content, model):")
    assert_one_line(result, f"content/plate/__init__.py, line {line}: the plate module's hook prose_names returned "
                            f"NoneType, not a dict")
    assert sorted((p.name, p.read_bytes()) for p in out.iterdir()) == before


def test_an_exception_in_a_hook_names_the_line_it_came_from(tmp_path):
    root, init = plate_copy(tmp_path, "\n\ndef scenario_ids(ids):\n    return {}['nothing']\n")
    result = plate("check", "--content", str(root))
    assert_one_line(result, f"content/plate/__init__.py, line {line_in(init, '    return {}[' + repr('nothing') + ']')}"
                            f": the plate module's hook scenario_ids raised KeyError: 'nothing'")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_of(port: int) -> str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Host": f"127.0.0.1:{port}"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.read().decode()


def test_serve_recovers_once_a_looping_module_is_fixed(tmp_path, mini_site):
    """(mini_site: the fixture built once for the run, so that its figures are in the cache and no hook but the loop
    nears the short time limit.)"""
    root, init = plate_copy(tmp_path)
    good = init.read_text()
    port, out = free_port(), tmp_path / "site"
    lines: list[str] = []
    process = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--content", str(root), "--out", str(out),
                                "--port", str(port), "--hook-timeout", "5"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True).start()

    def wait_for(text: str, after: int, seconds: float = 180) -> int:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [i for i, line in enumerate(list(lines)) if i >= after and text in line]
            if found:
                return found[0] + 1
            assert process.poll() is None, "".join(lines)
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} in:\n{''.join(lines)}")
    try:
        seen = wait_for("plate: serving", 0)
        init.write_text(good + LOOP)
        seen = wait_for("ran past its time limit of 5 s", seen)
        assert "the plate module's hook model_of" in lines[seen - 1]
        init.write_text(good)
        (root / "plate.md").write_text((root / "plate.md").read_text().replace("A Small Plate", "A Fixed Plate"))
        wait_for("plate: built", seen)
        assert "A Fixed Plate" in page_of(port)
    finally:
        process.kill()
        process.wait(30)


def test_an_exit_from_anywhere_in_a_build_is_status_1_and_no_site(tmp_path, monkeypatch, capsys):
    from generator.commands import cli

    def exits(*args, **kwargs):
        sys.exit(0)
    monkeypatch.setattr(assembly, "gather", exits)
    out = tmp_path / "site"
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 1
    assert capsys.readouterr().err.startswith("plate: the build failed unexpectedly (SystemExit: 0)")
    assert not out.exists()
