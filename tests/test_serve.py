"""`plate serve`: builds, serves on 127.0.0.1, and rebuilds when content changes."""
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from conftest import FIXTURE, ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, timeout: float = 20.0) -> str:
    """The body at url, retrying until the server answers or timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_serve_builds_serves_and_rebuilds(tmp_path):
    content = tmp_path / "content"
    shutil.copytree(FIXTURE, content)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "generator", "serve", "--content", str(content), "--out", str(tmp_path / "site"),
         "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}/index.html"
        assert "A Small Plate" in fetch(url)
        plate = content / "plate.md"
        plate.write_text(plate.read_text().replace('title = "A Small Plate"', 'title = "A Renamed Plate"'))
        deadline = time.monotonic() + 20
        while "A Renamed Plate" not in fetch(url):
            assert time.monotonic() < deadline, "serve did not rebuild after the content changed"
            time.sleep(0.3)
    finally:
        server.terminate()
        output = server.communicate(timeout=10)[0]
    assert f"serving {tmp_path / 'site'}/ at http://127.0.0.1:{port}/" in output
    assert "change seen, rebuilding" in output
