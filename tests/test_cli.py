"""The plate command: build, its report, exit statuses, and python -m generator."""
import shutil
from pathlib import Path
import subprocess
import sys

import pytest

from generator.commands import cli

from conftest import FIXTURE, ROOT


def test_build_reports_where_and_how_long(tmp_path, capsys):
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"built {tmp_path / 'out'}/ in " in out and " s (" in out and "index.html" in out
    assert (tmp_path / "out" / "index.html").exists()


def test_content_mistake_exits_1_and_names_the_file(tmp_path, capsys):
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    (root / "terms.toml").write_text("[terms.x]\nname = 3\n")
    assert cli.main(["build", "--content", str(root), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert 'content/terms.toml, line 2: term "x": name must be non-empty text, got 3' in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_missing_content_folder_exits_2(tmp_path, capsys):
    assert cli.main(["build", "--content", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unknown_option_exits_2():
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--frobnicate"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unrecognized arguments: --frobnicate" in result.stderr


def test_python_dash_m_builds(tmp_path):
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(FIXTURE),
                             "--out", str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o" / "index.html").exists()


def test_debug_works_before_or_after_the_command(tmp_path, capsys):
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    (root / "terms.toml").write_text("[terms.x]\nname = 3\n")
    for args in (["--debug", "build"], ["build", "--debug"]):
        assert cli.main([*args, "--content", str(root), "--out", str(tmp_path / "out")]) == 1
        assert "Traceback" in capsys.readouterr().err
    assert cli.main(["build", "--content", str(root), "--out", str(tmp_path / "out")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_an_unreadable_file_is_a_content_error(tmp_path, capsys, monkeypatch):
    import os
    from generator.source import schema
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    real = os.open

    def open_(path, *args, **kwargs):  # as root, chmod 000 would not stop the read
        if os.fspath(path).endswith("sources.toml"):
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)
    monkeypatch.setattr(schema.os, "open", open_)
    assert cli.main(["build", "--content", str(root), "--out", str(tmp_path / "out")]) == 1
    assert "content/sources.toml: cannot be read: Permission denied" in capsys.readouterr().err


# --- Ctrl-C: one line, exit status 130, and the truth about the site ----------------------------------

def interrupted(process: subprocess.Popen, moment: str) -> subprocess.CompletedProcess:
    """Send SIGINT once the process has printed the line moment (it then holds there until interrupted); the
    finished process's status and output. Waits on that line, however long a cold cache or a loaded machine
    takes to reach it."""
    import signal
    for line in process.stdout:
        if line == moment + "\n":
            break
    else:
        out, err = process.communicate()
        raise AssertionError(f"the process ended before {moment!r} (status {process.returncode}): {out}{err}")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)  # only a bound: the process ends at once on the signal
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


# `python -m generator build`, its first heavy import held until the signal comes: the start-up is interrupted,
# wherever the machine's speed would have put the signal otherwise.
IMPORT_HELD = """import runpy, sys, time
class Held:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":  # among the first heavy imports, made while the command starts
            print("importing numpy", flush=True)
            time.sleep(600)
        return None
sys.meta_path.insert(0, Held())
sys.argv = ["plate", *sys.argv[1:]]
runpy.run_module("generator", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_python_imports_is_one_line_and_status_130(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", IMPORT_HELD, "build", "--content", str(FIXTURE), "--out",
                                str(tmp_path / "site")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    result = interrupted(process, "importing numpy")
    assert result.returncode == 130, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("plate: interrupted") and not (tmp_path / "site").exists()


def interrupted_build(out, word: str, patch: str) -> subprocess.CompletedProcess:
    """`plate build` of the fixture into out, in a process that first runs patch (which prints word where the build
    is to be held), Ctrl-C'd once word is printed."""
    script = ("import sys, time\n" + patch + "from generator.__main__ import run\n"
              f"sys.exit(run(['build', '--content', {str(FIXTURE)!r}, '--out', {str(out)!r}]))\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    return interrupted(process, word)


def test_ctrl_c_during_a_build_leaves_the_site_and_says_so(tmp_path):
    out = tmp_path / "site"
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # The build holds where the figures are drawn until the signal comes, so the signal lands in the middle of it.
    result = interrupted_build(out, "drawing", "from pathlib import Path\n"
                                               "from generator.plate import plates\n"
                                               "def slow(*args, **kwargs):\n"
                                               "    print('drawing', flush=True)\n"
                                               "    time.sleep(600)\n"
                                               f"plates.load(Path({str(FIXTURE / 'plate')!r})).figures = slow\n")
    assert result.returncode == 130
    assert result.stderr == f"plate: interrupted; {out}/ was left as it was\n"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_ctrl_c_after_the_swap_says_the_new_site_is_in_place(tmp_path, capsys, monkeypatch):
    from generator.site import build, output
    out = tmp_path / "site"
    build.write({"index.html": "<p>old</p>"}, out)
    real = output._after_swap

    def interrupt(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt  # Ctrl-C while the previous site is being removed, after the swap
    monkeypatch.setattr(output, "_after_swap", interrupt)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 130
    assert capsys.readouterr().err == (f"plate: interrupted after the new site was swapped in; {out}/ holds the "
                                       f"new build\n")
    assert "A Small Plate" in (out / "index.html").read_text()


# Each holds the build at a moment after the rename that put the new site in place, until the signal comes: in
# the rename itself (where Ctrl-C is held back, so it waits until one was held), while the previous site is
# cleared away, and once write() has returned, before the command has said anything.
AFTER_THE_RENAME = {
    "the rename": ("output", "_swap", "while not held._held: time.sleep(0.01)"),
    "the clean-up": ("output", "_after_swap", "time.sleep(600)"),
    "write returned": ("build", "write", "time.sleep(600)"),
}


@pytest.mark.parametrize("moment", list(AFTER_THE_RENAME))
def test_ctrl_c_at_each_moment_after_the_rename_says_the_new_site_is_in_place(tmp_path, moment):
    from generator.site import build
    out = tmp_path / "site"
    build.write({"index.html": "<p>old</p>"}, out)
    module, name, wait = AFTER_THE_RENAME[moment]
    result = interrupted_build(out, "swapped", f"from generator.site import {module} as held\n"
                                               f"real = held.{name}\n"
                                               "def hold(*args, **kwargs):\n"
                                               "    result = real(*args, **kwargs)\n"
                                               "    print('swapped', flush=True)\n"
                                               f"    {wait}\n"
                                               "    return result\n"
                                               f"held.{name} = hold\n")
    assert result.returncode == 130, result.stderr
    assert result.stderr == f"plate: interrupted after the new site was swapped in; {out}/ holds the new build\n"
    assert "A Small Plate" in (out / "index.html").read_text()


def test_ctrl_c_before_the_swap_says_the_site_was_left(tmp_path, capsys, monkeypatch):
    from generator.site import build, output
    out = tmp_path / "site"
    build.write({"index.html": "<p>old</p>"}, out)

    def interrupt(staging, target):
        raise KeyboardInterrupt
    monkeypatch.setattr(output, "_swap", interrupt)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 130
    assert capsys.readouterr().err == f"plate: interrupted; {out}/ was left as it was\n"
    assert (out / "index.html").read_text() == "<p>old</p>" and [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_failure_after_the_swap_says_the_new_site_is_in_place(tmp_path, monkeypatch, capsys):
    """A bug that strikes after the new site was swapped in is reported truthfully: out/ holds the new build."""
    from generator.site import build
    real = build.write

    def write_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("after the swap")
    monkeypatch.setattr(build, "write", write_then_fail)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == cli.EXIT_CONTENT
    err = capsys.readouterr().err
    assert "after the swap" in err and "holds the new build" in err and "left as it was" not in err, err
    assert (tmp_path / "site" / "index.html").is_file()


def test_help_describes_the_series_by_default_and_the_plate_given(tmp_path):
    from generator.source import content
    series = cli.describe_plate([])
    assert series.startswith(f"Build the series in {cli.SERIES}/") and "Plate " not in series
    front = content.load(FIXTURE).plate
    one = cli.describe_plate(["build", "--content", str(FIXTURE)])
    assert one.startswith(f"Build Plate {front.volume}.{front.plate}, '{front.title}'"), one
    assert cli.describe_plate(["build", f"--content={tmp_path / 'nope.md'}"]).startswith("Build a plate")


def test_a_mistake_several_plates_meet_is_said_once_and_relative(capsys, tmp_path, monkeypatch):
    """A file two plates read (one plate's presets, read by another from beside it) with a syntax error was said
    once per plate, some absolute: each distinct line is said once, and a path given absolute under a relative
    plate folder is shown from the same parent as the rest."""
    from generator.source import schema
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plates" / "a").mkdir(parents=True)
    (tmp_path / "plates" / "b").mkdir()
    absolute = (tmp_path / "plates" / "a" / "presets.toml").resolve()
    assert str(schema.shown_path(absolute, Path("plates/b"))) == "a/presets.toml"
    line = "a/presets.toml, line 6: TOML syntax error"
    cli.report_mistakes([line, "b/plate.md, line 2: another", line])
    err = capsys.readouterr().err
    assert err.startswith("plate: the content has 2 mistakes:") and err.count(line) == 1
