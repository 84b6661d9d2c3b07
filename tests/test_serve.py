"""`plate serve`: port checked first, safe responses, a page that reloads on a saved edit and shows a broken build;
the series served whole, and slow clients dropped at a deadline."""
import collections
import http.client
import json
import os
import re
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
import urllib.parse
import urllib.request

import pytest

from conftest import FIXTURE, ROOT
from generator.source import content, volume
from generator.site import output
from generator.commands import cli, server


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
from generator.site import assembly
real, calls = assembly.gather, []
def gather(*args, **kwargs):
    calls.append(args)
    if len(calls) == 2:
        print("rebuild held", flush=True)
        time.sleep(600)
    return real(*args, **kwargs)
assembly.gather = gather
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
    monkeypatch.setattr(server, "READ_DEADLINE_S", 1)
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
    choice = {"link": next(i for i in presets["links"] if i != front["default"]["link"])}
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
def serving_site(tmp_path, mini_site, monkeypatch):
    """The server over a copy of the fixture site in tmp_path/site (to plant links in), on a free port, and the
    state of its builds."""
    monkeypatch.setattr(server, "READ_DEADLINE_S", 1)
    site = tmp_path / "site"
    shutil.copytree(mini_site, site)
    state = server.State()
    state.finished([])
    httpd = server.Server(("127.0.0.1", 0), server.handler_class(site, state))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield site, httpd.server_address[1], state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def serving_folder(serving_site):
    """The server over a copy of the fixture site: the site's folder and the port."""
    return serving_site[:2]


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


def test_two_hundred_requests_at_once_are_all_answered(serving_folder, monkeypatch):
    # the fixture's 1 s deadline is for the tests of slow clients: 200 client threads here share a loaded machine
    # (and this process's GIL) with the server, and one may send its head later than that
    monkeypatch.setattr(server, "READ_DEADLINE_S", 30)
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


# --- the series: every page served, the edited plate's page reloaded -------------------------------------------

def poll(url: str, page: str) -> dict:
    """What the served pages' reload script reads: the build's number and mistakes, and the page's version."""
    return json.loads(fetch(f"{url}{server.VERSION_PATH[1:]}?page={urllib.parse.quote(page)}"))


def served_version(html: str) -> str:
    """The version a served page was sent at, as its reload script holds it."""
    return json.loads(re.search(r"const served = (\S+), page", html).group(1))


def test_serve_defaults_to_the_series():
    assert cli.parser().parse_args(["serve"]).content == cli.SERIES


def test_the_series_is_served_whole_and_the_edited_plates_page_reloads(tmp_path):
    plates = tmp_path / "plates"
    shutil.copytree(ROOT / "plates", plates, ignore=shutil.ignore_patterns("__pycache__"))
    vol = volume.load(plates)
    written = vol.written()
    pages = [vol.page] + [vol.page_of(entry) for entry in written]
    port, out = free_port(), tmp_path / "site"
    serving = Serving(plates, out, port)
    url = f"http://127.0.0.1:{port}/"
    try:
        serving.wait_for("serving", timeout=600)  # only a bound: a cold build cache draws every figure first
        listed = [name for name in output.survey(out).plates if not name.startswith(".")]
        assert set(pages) <= set(listed) and len(set(pages)) == len(written) + 1, listed
        for name in ["", *listed]:  # every page, the index, the CSVs, the PDFs if the site has them
            with urllib.request.urlopen(url + urllib.parse.quote(name), timeout=30) as response:
                assert response.status == 200, name
                body = response.read()
            if name.endswith(".html") or not name:
                assert server.VERSION_PATH.encode() in body, name
            else:
                assert body == (out / name).read_bytes(), name
        edited = vol.page_of(written[-1])
        sent = {page: served_version(fetch(url + page)) for page in pages}
        assert all(poll(url, "/" + page)["version"] == sent[page] for page in pages)  # nothing to reload yet

        prose = vol.folder(written[-1]) / volume.PLATE_FILE
        prose.write_text(prose.read_text() + "\nA sentence added while the series is served.\n")
        serving.wait_for("change seen, rebuilding")
        serving.wait_for("plate: built", timeout=600)
        state = poll(url, "/" + edited)
        deadline = time.monotonic() + 60  # the build's line comes just before the server records the build
        while state["version"] == sent[edited] and time.monotonic() < deadline:
            time.sleep(0.05)
            state = poll(url, "/" + edited)
        assert state["problems"] == [] and state["version"] != sent[edited]  # its open page reloads
        assert "A sentence added while the series is served." in fetch(url + edited)
    finally:
        serving.stop()


def test_a_page_reloads_when_its_own_bytes_change(serving_site):
    site, port, state = serving_site
    url = f"http://127.0.0.1:{port}/"
    (site / "other.html").write_text("<!doctype html><html><head></head><body>one</body></html>")
    index = served_version(fetch(url))
    other = served_version(fetch(url + "other.html"))
    assert poll(url, "/")["version"] == index and poll(url, "/other.html")["version"] == other
    missing = get(port, "/later.html")
    assert missing.status == 404 and server.VERSION_PATH.encode() in missing.body
    assert poll(url, "/later.html")["version"] == served_version(missing.body.decode())

    (site / "other.html").write_text("<!doctype html><html><head></head><body>two</body></html>")
    (site / "later.html").write_text("<!doctype html><html><head></head><body>now here</body></html>")
    state.finished([])  # a build is in
    assert poll(url, "/")["version"] == index  # unchanged: not reloaded
    assert poll(url, "/other.html")["version"] != other
    assert poll(url, "/later.html")["version"] == served_version(fetch(url + "later.html"))
    assert get(port, "/later.html").status == 200


def test_the_root_lists_the_pages_of_a_site_without_an_index(serving_folder):
    site, port = serving_folder
    (site / "index.html").unlink()
    (site / "volume-x.html").write_text("<!doctype html><html><head></head><body>volume</body></html>")
    response = get(port, "/")
    assert response.status == 200 and b'href="volume-x.html"' in response.body
    assert b"No plate has been built yet" not in response.body


def test_one_plate_is_never_served_over_a_series_site(tmp_path):
    out = tmp_path / "site"
    series_site = {"index.html": "<p>plate one</p>", "volume-x.html": "<p>the index</p>", "two.html": "<p>two</p>"}
    output.write(series_site, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    result = subprocess.run([sys.executable, "-m", "generator", "serve", "--content", str(FIXTURE), "--out", str(out),
                             "--port", str(free_port())], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--out" in result.stderr and "two.html" in result.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_whatever_a_build_raises_is_a_mistake_and_serving_goes_on(capsys):
    def exits(problems):
        raise SystemExit(0)
    problems = []
    assert server.built(exits, problems) == 1
    assert len(problems) == 1 and "SystemExit" in problems[0]
    assert "rebuilding at the next change" in capsys.readouterr().err

    def interrupted(problems):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C still stops serving
        server.built(interrupted, [])


# --- slow clients: dropped at the read deadline, the others answered ------------------------------------------

def test_slow_clients_cannot_starve_a_normal_request(serving_folder):
    """More slow clients than threads, each trickling a byte of its request line now and then; one normal
    request next to them is answered (a bound, not a speed: without a deadline it never is)."""
    _, port = serving_folder
    count = server.MAX_THREADS + 16
    slow = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
    stop, closed = threading.Event(), []

    def trickle():
        for connection in slow:
            connection.sendall(b"GET /")
        deadline = time.monotonic() + 60
        while len(closed) < count and time.monotonic() < deadline and not stop.wait(0.3):
            for connection in slow:
                if connection in closed:
                    continue
                try:
                    connection.sendall(b"a")
                except OSError:
                    closed.append(connection)
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        time.sleep(0.5)  # the slow ones connect first and hold every thread
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/")
        response = connection.getresponse()
        assert response.status == 200 and b"</html>" in response.read()
        connection.close()
        thread.join(timeout=60)  # every slow client is dropped at the deadline
        assert len(closed) == count
    finally:
        stop.set()
        thread.join(timeout=10)
        for connection in slow:
            connection.close()


def test_a_normal_request_is_answered_while_a_hundred_clients_stall(serving_folder, monkeypatch):
    """100 clients (more than the answering threads) each send part of a request line and stall; a normal request
    is answered meanwhile, long before the read deadline would free any of them (a bound: with a thread held per
    stalled client it waited for the deadline). Loopback only; the clients are closed at the end."""
    monkeypatch.setattr(server, "READ_DEADLINE_S", 30)  # read as each connection is accepted
    _, port = serving_folder
    stalled = []
    try:
        assert 100 > server.MAX_THREADS
        for _ in range(100):
            stalled.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            stalled[-1].sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")
        time.sleep(0.5)  # every one of them accepted and stalled
        started = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/")
        response = connection.getresponse()
        assert response.status == 200 and b"</html>" in response.read()
        connection.close()
        assert time.monotonic() - started < server.READ_DEADLINE_S / 2
        for client in stalled[:3]:  # still held open, not answered: they never finished their request
            client.settimeout(0.2)
            with pytest.raises(socket.timeout):
                client.recv(1)
    finally:
        for client in stalled:
            client.close()


@pytest.mark.browser
def test_the_open_page_of_the_edited_plate_reloads(tmp_path, browser):
    plates = tmp_path / "plates"
    shutil.copytree(ROOT / "plates", plates, ignore=shutil.ignore_patterns("__pycache__"))
    vol = volume.load(plates)
    entry = vol.written()[-1]  # not the plate at index.html
    port = free_port()
    serving = Serving(plates, tmp_path / "site", port)
    context = browser.new_context()
    try:
        serving.wait_for("serving", timeout=600)
        page = context.new_page()
        refused = []
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"http://127.0.0.1:{port}/{vol.page_of(entry)}")
        wait_until(page, "() => document.documentElement.dataset.ready === 'true'")
        page.evaluate("() => { window.notReloaded = true; }")
        prose = vol.folder(entry) / volume.PLATE_FILE
        prose.write_text(prose.read_text() + "\nA sentence added while the series is served.\n")
        try:
            wait_until(page, "() => !window.notReloaded && document.body.textContent.includes("
                             "'A sentence added while the series is served.')", timeout=120)
        except AssertionError as error:  # say what the server did meanwhile
            raise AssertionError(f"{error}; serve printed: {serving.stop()}") from None
        wait_until(page, "() => document.documentElement.dataset.ready === 'true'")
        page.evaluate("() => { window.notReloaded = true; }")
        time.sleep(20 * server.POLL_MS / 1000)  # many polls, no change: the page stays
        assert page.evaluate("() => window.notReloaded === true")
        assert refused == []  # the reload script and its fetch are allowed by the page's own policy
    finally:
        context.close()
        serving.stop()


def test_a_series_rebuild_keeps_each_plates_figures_apart():
    from generator.site import series
    memo: dict = {}
    first = series.gather(ROOT / "plates", [], memo)
    shelf = volume.load_series(ROOT / "plates")
    assert sorted(memo) == sorted(str(vol.folder(entry)) for vol, entry in shelf.written())
    assert all("figures" in kept and "csv" in kept for kept in memo.values())
    assert series.gather(ROOT / "plates", [], memo) == first  # what was kept makes the same site
