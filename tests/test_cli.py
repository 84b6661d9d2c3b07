"""The plate command: build, its report, exit statuses, and python -m generator."""
import subprocess
import sys

from generator import cli

from conftest import FIXTURE, ROOT


def test_build_reports_where_and_how_long(tmp_path, capsys):
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"built {tmp_path / 'out'}/ in " in out and " s (" in out and "index.html" in out
    assert (tmp_path / "out" / "index.html").exists()


def test_content_mistake_exits_1_and_names_the_file(tmp_path, capsys):
    import shutil
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
    import shutil
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    (root / "terms.toml").write_text("[terms.x]\nname = 3\n")
    for args in (["--debug", "build"], ["build", "--debug"]):
        assert cli.main([*args, "--content", str(root), "--out", str(tmp_path / "out")]) == 1
        assert "Traceback" in capsys.readouterr().err
    assert cli.main(["build", "--content", str(root), "--out", str(tmp_path / "out")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_an_unreadable_file_is_a_content_error(tmp_path, capsys, monkeypatch):
    import pathlib
    import shutil
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    real = pathlib.Path.read_bytes

    def read_bytes(self):
        if self.name == "sources.toml":
            raise PermissionError(13, "Permission denied")
        return real(self)
    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    assert cli.main(["build", "--content", str(root), "--out", str(tmp_path / "out")]) == 1
    assert "content/sources.toml: cannot be read: Permission denied" in capsys.readouterr().err
