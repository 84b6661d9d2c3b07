"""A real, non-editable install: `pip install .` gives a `plate` that builds with its templates as package data."""
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from conftest import FIXTURE, ROOT
from test_packaging import OFFLINE

import generator
from generator.page import runtime
from generator.site import build


def test_non_editable_install_builds(tmp_path):
    # A copy of what a clean clone holds for packaging, so the build writes nothing into the repository.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("generator", "templates", "plates/lib"):  # plates/lib: platelib, the plates' shared formulas
        # not the npm install an editable install put beside generator/node/'s scripts: the wheel's build makes its own
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules",
                                                                             runtime.STAMP))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # The dependencies (and setuptools, for --no-build-isolation) come from the running environment, so the
    # test needs no network; its own site-packages is only appended to the path, after the fresh one.
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "zz-outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", str(src)], check=True, cwd=tmp_path)
    shutil.rmtree(src)  # the installed plate must not need the source tree
    plate = env_dir / "bin" / "plate"
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    where = subprocess.run([python, "-c", "import generator; print(generator.__file__)"], capture_output=True,
                           text=True, cwd=tmp_path, env=environ, check=True).stdout
    assert Path(where).resolve().is_relative_to(env_dir.resolve())
    # the fixture's plate module imports platelib: the wheel holds it, as a plate module outside the repository needs
    library = subprocess.run([python, "-c", "import platelib.compute; print(platelib.compute.__file__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=environ, check=True).stdout
    assert Path(library).resolve().is_relative_to(env_dir.resolve())
    version = subprocess.run([plate, "--version"], capture_output=True, text=True, cwd=tmp_path, env=environ)
    assert version.returncode == 0 and version.stdout.strip() == f"plate {generator.__version__}"

    # The wheel carries Vega's npm packages: a first build with the network cut makes this checkout's page.
    out = tmp_path / "site"
    built = subprocess.run([plate, "build", "--content", str(FIXTURE), "--out", str(out)], capture_output=True,
                           text=True, cwd=tmp_path, env={**environ, **OFFLINE, "PLATE_CACHE": str(tmp_path / "cache")})
    assert built.returncode == 0 and "warning" not in built.stderr, built.stderr
    build.build(FIXTURE, tmp_path / "here")
    assert (out / "index.html").read_bytes() == (tmp_path / "here" / "index.html").read_bytes()
