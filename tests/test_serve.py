"""`plate serve`: port checked first, safe responses, a page that reloads on a saved edit and shows a broken build."""
import collections
import http.client
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request

import pytest

from conftest import FIXTURE, ROOT
from generator import content, server


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


class Serving:
    """`plate serve` in a subprocess, its output lines collected as they come."""

    def __init__(self, content, out, port, python=("-m", "generator")):
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, *python, "serve", "--content", str(content), "--out", str(out),
             "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        """Block until a line containing text is printed."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"serve never printed {text!r}; it printed {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return

    def stop(self) -> list[str]:
        """Stop the server (if still running) and return everything it printed."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)
        time.sleep(0.1)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return self.seen


@pytest.fixture
def served(tmp_path):
    """The fixture content copied to tmp_path and served from a subprocess."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURE, content)
    port = free_port()
    serving = Serving(content, tmp_path / "site", port)
    serving.content, serving.out, serving.url = content, tmp_path / "site", f"http://127.0.0.1:{port}/"
    yield serving
    serving.stop()


def test_serve_builds_serves_and_rebuilds(served):
    served.wait_for("serving")
    assert "A Small Plate" in fetch(served.url + "index.html")
    plate = served.content / "plate.md"
    plate.write_text(plate.read_text().replace('title = "A Small Plate"', 'title = "A Renamed Plate"'))
    served.wait_for("change seen, rebuilding")
    served.wait_for("plate: built")
    assert "A Renamed Plate" in fetch(served.url + "index.html")
    # The reload script is only in what serve sends, never in the site it wrote.
    assert server.VERSION_PATH in fetch(served.url)
    assert server.VERSION_PATH not in (served.out / "index.html").read_text()


def test_a_busy_port_is_refused_before_building(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "generator", "serve", "--content", str(FIXTURE), "--out",
                                 str(tmp_path / "site"), "--port", str(port)], cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--port" in result.stderr and str(port) in result.stderr
    assert "built" not in result.stdout and not (tmp_path / "site").exists()


# `python -m generator serve` whose second build (the rebuild) holds until the signal comes: the signal lands
# during the rebuild however fast or slow the machine builds.
REBUILD_HELD = """import runpy, sys, time
from generator import build
real, calls = build.gather, []
def gather(*args, **kwargs):
    calls.append(args)
    if len(calls) == 2:
        print("rebuild held", flush=True)
        time.sleep(600)
    return real(*args, **kwargs)
build.gather = gather
sys.argv = ["plate", *sys.argv[1:]]
runpy.run_module("generator", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_during_a_rebuild_stops_the_server(tmp_path):
    content = tmp_path / "content"
    shutil.copytree(FIXTURE, content)
    serving = Serving(content, tmp_path / "site", free_port(), python=("-c", REBUILD_HELD))
    try:
        serving.wait_for("serving", timeout=600)  # only a bound: a cold build cache draws every figure first
        plate = content / "plate.md"
        plate.write_text(plate.read_text().replace('title = "A Small Plate"', 'title = "Interrupted"'))
        serving.wait_for("rebuild held", timeout=600)
        serving.process.send_signal(signal.SIGINT)
        assert serving.process.wait(timeout=120) == 130
    finally:
        after = serving.stop()
    after = after[after.index("rebuild held") + 1:]
    assert len(after) == 1 and "interrupted" in after[0], after
    assert "A Small Plate" in (tmp_path / "site" / "index.html").read_text()  # the old site, intact


@pytest.fixture
def in_process(mini_site, monkeypatch):
    """The server's handler on a free port in this process, over the built fixture site."""
    monkeypatch.setattr(server, "IDLE_TIMEOUT_S", 1)
    state = server.State()
    state.finished([])
    httpd = server.Server(("127.0.0.1", 0), server.handler_class(mini_site, state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", path)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def test_responses_carry_charset_and_safety_headers(in_process):
    csv_path = "/" + content.load(FIXTURE).plate.data_file
    for path in ("/", "/index.html", csv_path, "/nope.html", server.VERSION_PATH):
        response = get(in_process, path)
        assert response.getheader("X-Content-Type-Options") == "nosniff", path
        assert response.getheader("Referrer-Policy") == "no-referrer", path
        assert response.getheader("Content-Type").endswith("; charset=utf-8"), path
    assert get(in_process, "/nope.html").status == 404
    assert get(in_process, csv_path).getheader("Content-Type") == "text/csv; charset=utf-8"


def test_malformed_paths_get_400_or_404_without_a_traceback(in_process, capfd):
    for path in ("/%00", "/index.html%00.csv", "/%2e%2e/%2e%2e/etc/passwd", "/../README.md", "/%ff", "/.plate-site"):
        assert get(in_process, path).status in (400, 404), path
    err = capfd.readouterr().err
    assert "Traceback" not in err and "%00" in err


def test_idle_connections_time_out(in_process):
    with socket.create_connection(("127.0.0.1", in_process), timeout=10) as idle:
        started = time.monotonic()
        assert idle.recv(1) == b""  # closed by the server, not by our own timeout
        assert time.monotonic() - started < 9


# --- in a browser: the reload and the overlay ----------------------------------------------------

def wait_until(page, predicate: str, timeout: float = 15.0):
    """Poll a JavaScript function (not an eval'd string, which the page's CSP forbids) until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = page.evaluate(predicate)
        except Exception:  # noqa: BLE001 - the page is reloading: its context is gone for a moment
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{predicate} stayed false for {timeout} s")
        time.sleep(0.05)


@pytest.mark.browser
def test_the_open_page_reloads_keeps_its_selection_and_shows_a_broken_build(served, browser):
    served.wait_for("serving")
    presets = tomllib.loads((served.content / "presets.toml").read_text())
    front = tomllib.loads((served.content / "plate.md").read_text().split("---")[1])
    # A selection other than the default, chosen from the fixture's own presets.
    choice = {kind: next(i for i in reversed(list(presets[table])) if i != front["default"][kind] or
                         len(presets[table]) == 1)
              for kind, table in (("model", "models"), ("batch", "batches"), ("network", "networks"))}
    fragment = "#" + "&".join(f"{k}={v}" for k, v in choice.items())
    context = browser.new_context()
    try:
        page = context.new_page()
        problems = []
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(served.url + fragment)
        wait_until(page, "() => document.documentElement.dataset.ready === 'true'")
        page.evaluate("() => { window.notReloaded = true; }")

        plate = served.content / "plate.md"
        good = plate.read_text()
        plate.write_text(good.replace('title = "A Small Plate"', 'title = "A Renamed Plate"'))
        saved = time.monotonic()
        wait_until(page, "() => !window.notReloaded && document.querySelector('h1').textContent === "
                         "'A Renamed Plate' && document.documentElement.dataset.ready === 'true'")
        print(f"reloaded {time.monotonic() - saved:.2f} s after the save")
        assert page.evaluate("() => location.hash") == fragment
        for kind, value in choice.items():
            assert page.locator(f"#choose-{kind}").input_value() == value

        page.evaluate("() => { window.notReloaded = true; }")
        terms = served.content / "terms.toml"
        terms_text = terms.read_text()
        terms.write_text("[terms.x]\nname = 3\n")
        overlay = wait_until(page, "() => document.getElementById('plate-serve-problems')?.textContent")
        assert "terms.toml, line 2" in overlay and 'term "x"' in overlay
        assert page.evaluate("() => window.notReloaded === true")  # still the last good plate, not reloaded
        assert page.locator("h1").text_content() == "A Renamed Plate"

        terms.write_text(terms_text)
        wait_until(page, "() => !window.notReloaded && document.documentElement.dataset.ready === 'true'")
        assert page.locator("#plate-serve-problems").count() == 0
        assert page.evaluate("() => location.hash") == fragment
        assert problems == []  # in particular no CSP complaint about the reload script or its fetch
    finally:
        context.close()
    assert os.path.exists(served.out / "index.html")


def test_a_first_build_that_fails_is_served_as_its_mistakes(tmp_path):
    content_dir = tmp_path / "content"
    shutil.copytree(FIXTURE, content_dir)
    (content_dir / "terms.toml").write_text("[terms.x]\nname = 3\n")
    port = free_port()
    serving = Serving(content_dir, tmp_path / "site", port)
    try:
        serving.wait_for("serving")
        state = fetch(f"http://127.0.0.1:{port}{server.VERSION_PATH}")
        assert "content/terms.toml, line 2" in state
        page = fetch(f"http://127.0.0.1:{port}/")
        assert "No plate has been built yet" in page and server.VERSION_PATH in page
        assert not (tmp_path / "site").exists()
    finally:
        serving.stop()


# --- a local server: its own site only, its own name only, every request answered -------------------

@pytest.fixture
def serving_folder(tmp_path, mini_site, monkeypatch):
    """The server over a copy of the fixture site in tmp_path/site (to plant links in), on a free port."""
    monkeypatch.setattr(server, "IDLE_TIMEOUT_S", 1)
    site = tmp_path / "site"
    shutil.copytree(mini_site, site)
    state = server.State()
    state.finished([])
    httpd = server.Server(("127.0.0.1", 0), server.handler_class(site, state))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield site, httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_links_out_of_the_site_are_not_followed(serving_folder, tmp_path):
    site, port = serving_folder
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret outside the site")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "more.txt").write_text("the secret outside the site, in a folder")
    (site / "passwd.txt").symlink_to("/etc/passwd")
    (site / "secret.txt").symlink_to(secret)
    (site / "folder").symlink_to(tmp_path / "outside", target_is_directory=True)
    for path in ("/passwd.txt", "/secret.txt", "/folder/more.txt"):
        response = get(port, path)
        assert response.status == 404 and b"secret" not in response.body and b"root:" not in response.body, path
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(secret)  # the page itself, a link out: the placeholder, not the file
    response = get(port, "/")
    assert response.status == 200 and b"secret" not in response.body
    assert b"No plate has been built yet" in response.body


def test_a_symlinked_site_folder_is_served(tmp_path, mini_site):
    real = tmp_path / "real"
    shutil.copytree(mini_site, real)
    (tmp_path / "site").symlink_to(real, target_is_directory=True)
    csv_name = content.load(FIXTURE).plate.data_file
    assert server.site_file(tmp_path / "site", csv_name) == (real / csv_name).read_bytes()


def request(port: int, path: str, host: str | None) -> http.client.HTTPResponse:
    """GET path with this Host header (None: none at all)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.putrequest("GET", path, skip_host=True)
    if host is not None:
        connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def test_only_its_own_host_names_are_answered(serving_folder):
    site, port = serving_folder
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert request(port, server.VERSION_PATH, host).status == 200, host
    page = (site / "index.html").read_bytes()[:200]
    for host in ("attacker.example", f"attacker.example:{port}", f"localhost.attacker.example:{port}",
                 f"127.0.0.1:{port + 1}", "127.0.0.1", f"127.0.0.1:{port}@attacker", "", None):
        for path in ("/", server.VERSION_PATH, "/robots.txt"):
            response = request(port, path, host)
            assert response.status == 421, (host, path)
            assert b"build" not in response.body and page not in response.body, (host, path)


def test_two_hundred_requests_at_once_are_all_answered(serving_folder):
    _, port = serving_folder
    count, barrier, answers = 200, threading.Barrier(200), []

    def one():
        barrier.wait(timeout=60)
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)  # a bound, not a target
            connection.request("GET", "/")
            response = connection.getresponse()
            answers.append(response.status if b"</html>" in response.read() else "cut short")
            connection.close()
        except OSError as error:
            answers.append(type(error).__name__)
    threads = [threading.Thread(target=one, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert answers == [200] * count, collections.Counter(map(str, answers))


def test_the_pages_build_number_poll_is_not_logged(serving_folder, capfd):
    _, port = serving_folder
    for _ in range(5):
        assert get(port, server.VERSION_PATH).status == 200
    assert get(port, "/robots.txt").status == 200
    err = capfd.readouterr().err
    assert server.VERSION_PATH not in err and "GET /robots.txt" in err


def test_the_watcher_sees_an_edit_and_falls_back_when_the_kernel_will_not_watch(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.md").write_text("one")
    watcher = server.Watcher(tmp_path)
    try:
        (tmp_path / "a.md").write_text("two")
        done = threading.Thread(target=watcher.next, daemon=True)
        done.start()
        done.join(timeout=30)  # a bound for a missed change, not a speed target
        assert not done.is_alive()
    finally:
        watcher.close()

    def refused(*folders, stop):
        raise OSError(28, "inotify watch limit reached")
        yield  # a generator, as watchfiles.watch is
    monkeypatch.setattr(server, "_batches", refused)
    watcher = server.Watcher(tmp_path)
    try:
        (tmp_path / "a.md").write_text("three, a longer text")
        done = threading.Thread(target=watcher.next, daemon=True)
        done.start()
        done.join(timeout=30)
        assert not done.is_alive()
    finally:
        watcher.close()
    assert "looking for changes by reading every file's time instead" in capsys.readouterr().err
