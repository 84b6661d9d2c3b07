"""`plate serve`: the built site on 127.0.0.1, rebuilt on every saved edit, with a page that reloads itself."""
from __future__ import annotations

import http.server
import json
import os
import re
import stat
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Callable

from .render import TEMPLATES, csp_hash

VERSION_PATH = "/__plate/build"
POLL_MS = 150            # how often the served page asks whether a new build is in
WATCH_S = 0.1            # how often content/ and templates/ are looked at, without watchfiles (inotify)
IDLE_TIMEOUT_S = 15      # a connection that sends nothing for this long is closed
BACKLOG = 512            # connections the kernel queues while every thread is busy (socketserver's default: 5)
MAX_THREADS = 64         # requests answered at once; more wait in the backlog, none is dropped
MAX_FILE_BYTES = 1 << 30  # a site's file larger than this is not one plate wrote
TYPES = {".html": "text/html", ".csv": "text/csv", ".css": "text/css", ".js": "text/javascript",
         ".json": "application/json", ".txt": "text/plain", ".xml": "application/xml", ".svg": "image/svg+xml",
         ".png": "image/png", ".pdf": "application/pdf"}
TEXT_TYPES = {"text/html", "text/csv", "text/css", "text/javascript", "application/json", "text/plain",
              "application/xml", "image/svg+xml"}

# Only the served copy carries this script; the published index.html never does. It asks for the build number
# and reloads when a newer good build is in (location.reload keeps the URL's fragment, so the selection stays),
# and lays a build's mistakes over the last good plate until the next good build.
RELOAD_JS = """(() => {
  const served = %(build)d;
  let box = null;
  function show(problems) {
    if (!box) {
      box = document.createElement("section");
      box.id = "plate-serve-problems";
      box.setAttribute("role", "alert");
      Object.assign(box.style, {position: "fixed", left: "0", right: "0", top: "0", zIndex: "2147483647",
        maxHeight: "60vh", overflow: "auto", margin: "0", padding: "1em 1.5em", background: "#fff4f2",
        color: "#5a0d00", borderBottom: "3px solid #b42318", font: "14px/1.45 ui-monospace, monospace",
        whiteSpace: "pre-wrap"});
      document.body.append(box);
    }
    const head = document.createElement("strong");
    head.textContent = "plate serve: the last build failed; this is the last good plate.";
    const list = document.createElement("ul");
    for (const problem of problems) {
      const item = document.createElement("li");
      item.textContent = problem;
      list.append(item);
    }
    box.replaceChildren(head, list);
  }
  async function poll() {
    try {
      const response = await fetch("%(path)s", {cache: "no-store"});
      const state = await response.json();
      if (state.problems.length) show(state.problems);
      else if (state.build !== served) { location.reload(); return; }
    } catch (error) {
      // the server is restarting or stopped: try again
    }
    setTimeout(poll, %(poll)d);
  }
  setTimeout(poll, %(poll)d);
})();"""

PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>plate serve: no plate yet</title></head>
<body><h1>No plate has been built yet</h1><p>Fix the mistakes below and save; this page reloads itself.</p>
</body></html>"""

CSP = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")')


class State:
    """What the watcher knows about the builds: the number of the last build and its mistakes (none if good)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.build = 0
        self.problems: list[str] = []

    def finished(self, problems: list[str]) -> None:
        """Record a finished build."""
        with self.lock:
            self.build += 1
            self.problems = list(problems)

    def snapshot(self) -> tuple[int, list[str]]:
        """The build number and its mistakes, read together."""
        with self.lock:
            return self.build, list(self.problems)


def with_reload(html: str, build: int) -> str:
    """The page as served: the reload script added, and allowed by the page's own CSP (its hash, and fetch to self)."""
    code = RELOAD_JS % {"build": build, "path": VERSION_PATH, "poll": POLL_MS}
    allow = csp_hash(code)

    def widen(match: re.Match) -> str:
        policy = re.sub(r"script-src ", f"script-src {allow} ", match.group(2), count=1)
        return f"{match.group(1)}{policy}; connect-src 'self'{match.group(3)}"
    html, found = CSP.subn(widen, html, count=1)
    if not found:  # the placeholder has no policy of its own
        html = html.replace("<head>", f'<head><meta http-equiv="Content-Security-Policy" content="default-src '
                            f"'none'; script-src {allow}; connect-src 'self'\">", 1)
    return html.replace("</body>", f'<script type="module">{code}</script>\n</body>', 1)


def site_file(root: Path, name: str) -> bytes | None:
    """The bytes of the site's file at name (a relative path), or None: only a regular file that lies inside the
    site, reached without following a link (a link to /etc/passwd in the site is not served), and not too big."""
    real_root = os.path.realpath(root)  # a symlinked site/ itself is followed, as the build follows it
    fd = None
    try:
        fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY)
        for part in name.split("/"):
            step = os.open(part, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            os.close(fd)
            fd = step
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    finally:
        if fd is not None:
            os.close(fd)


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers the server answers to: its own address, by number or as localhost (a page of another
    site that a rebinding DNS name points here sends its own name, and gets nothing)."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def handler_class(out: Path, state: State) -> type:
    """A request handler serving the files of out (and nothing else) with safe headers."""
    root = Path(os.path.abspath(out))

    class Handler(http.server.BaseHTTPRequestHandler):
        """GET and HEAD for the built site, the served page with its reload script, and the build number."""

        timeout = IDLE_TIMEOUT_S
        server_version = "plate"
        sys_version = ""

        def do_HEAD(self):  # noqa: N802 - the name http.server calls
            self.answer(head=True)

        def do_GET(self):  # noqa: N802
            self.answer(head=False)

        def answer(self, head: bool) -> None:
            host = (self.headers.get("Host") or "").strip().lower()
            if host not in allowed_hosts(self.server.server_address[1]):
                return self.reply(421, "text/plain", b"misdirected request: this server answers only to "
                                  b"127.0.0.1 and localhost\n", head)
            path = urllib.parse.urlsplit(self.path).path
            try:
                name = urllib.parse.unquote(path, errors="strict")
            except UnicodeDecodeError:
                return self.reply(400, "text/plain", b"bad request: the path is not UTF-8\n", head)
            if "\0" in name or "\\" in name or any(part in ("..", ".") for part in name.split("/")):
                return self.reply(400, "text/plain", b"bad request: malformed path\n", head)
            if name == VERSION_PATH:
                build, problems = state.snapshot()
                body = json.dumps({"build": build, "problems": problems}).encode()
                return self.reply(200, "application/json", body, head)
            if name in ("/", "/index.html"):
                build, _ = state.snapshot()
                try:
                    html = (site_file(root, "index.html") or b"").decode("utf-8") or PLACEHOLDER
                except UnicodeDecodeError:
                    html = PLACEHOLDER
                return self.reply(200, "text/html", with_reload(html, build).encode(), head)
            parts = name.strip("/").split("/")
            if not name.strip("/") or any(p.startswith(".") for p in parts):
                return self.reply(404, "text/plain", b"not found\n", head)
            body = site_file(root, name.strip("/"))
            if body is None:
                return self.reply(404, "text/plain", b"not found\n", head)
            self.reply(200, TYPES.get(Path(name).suffix.lower(), "application/octet-stream"), body, head)

        def reply(self, status: int, kind: str, body: bytes, head: bool) -> None:
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8" if kind in TEXT_TYPES else kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def end_headers(self) -> None:
            # Every answer, http.server's own error pages included, carries these.
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            super().end_headers()

        def log_request(self, code="-", size="-") -> None:
            # The open page asks for the build number every POLL_MS: those answers are not worth a line each.
            if str(code) == "200" and urllib.parse.urlsplit(self.path).path == VERSION_PATH:
                return
            super().log_request(code, size)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the signature http.server calls
            # One line per request, with control characters of a hostile request line made visible.
            line = (format % args).encode("unicode_escape").decode("ascii")
            sys.stderr.write(f"plate: {self.address_string()} {line}\n")

    return Handler


class Server(http.server.ThreadingHTTPServer):
    """A thread per connection, at most MAX_THREADS at once (the rest wait in a deep listen backlog), that never
    keep the process alive; a dropped client is not an error to print."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, *args, **kwargs):
        self.slots = threading.BoundedSemaphore(MAX_THREADS)
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address) -> None:
        self.slots.acquire()  # blocks accepting: the kernel queues the connections meanwhile
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"plate: a request from {client_address[0]} failed: {type(exc).__name__}: {exc}\n")


def snapshot(*folders: Path) -> dict:
    """Modification times and sizes of every file below the folders (files that vanish meanwhile are skipped)."""
    seen = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            try:
                stat = path.stat()
            except OSError:
                continue
            seen[path] = (stat.st_mtime_ns, stat.st_size)
    return seen


def polled_changes(*folders: Path, stop: threading.Event):
    """Each change below the folders, found by looking every WATCH_S (the fallback without watchfiles: it costs
    CPU in proportion to the number of files); an empty batch first, once the first look is done."""
    seen = snapshot(*folders)
    yield set()
    while not stop.wait(WATCH_S):
        now = snapshot(*folders)
        if now != seen:
            seen = now
            yield {"changed"}


def _batches(*folders: Path, stop: threading.Event):
    """Batches of changes below the folders, empty ones included (the first says the watch is in place)."""
    try:
        import watchfiles
    except ImportError:
        print("plate: the package watchfiles is not installed (pip install -e . brings it); looking for "
              "changes by reading every file's time instead", file=sys.stderr, flush=True)
        return polled_changes(*folders, stop=stop)
    # The kernel reports changes (inotify): idle, this costs nothing however many files there are. The Rust
    # side wakes every `step` ms only to look at its own queue; editors' swap and backup files are ignored.
    return watchfiles.watch(*folders, debounce=50, step=50, rust_timeout=200, yield_on_timeout=True,
                            stop_event=stop, raise_interrupt=False)


class Watcher:
    """Changes below the folders, watched from a thread started at once: an edit saved during a build is kept for
    the next look (next() returns when something has changed since the last call)."""

    def __init__(self, *folders: Path):
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.changed = threading.Event()
        self.failed: list[str] = []
        threading.Thread(target=self._run, args=folders, daemon=True).start()
        self.ready.wait(30)  # the watch is in place before the first build starts

    def _run(self, *folders: Path) -> None:
        try:
            try:
                self._follow(_batches(*folders, stop=self.stop))
            except Exception as error:  # noqa: BLE001 - inotify refused (too many folders for its limit, say)
                self.failed.append(f"{type(error).__name__}: {error}")
                print(f"plate: the kernel could not watch {', '.join(map(str, folders))} ({error}); looking for "
                      f"changes by reading every file's time instead", file=sys.stderr, flush=True)
                self._follow(polled_changes(*folders, stop=self.stop))
        except Exception as error:  # noqa: BLE001 - say it once, and keep serving what was built
            print(f"plate: watching {', '.join(map(str, folders))} failed ({error}); rebuilds stop, the site "
                  f"is still served", file=sys.stderr, flush=True)
        finally:
            self.ready.set()

    def _follow(self, batches) -> None:
        for batch in batches:
            self.ready.set()
            if batch:
                self.changed.set()

    def next(self) -> None:
        """Wait until something has changed since the last call (Ctrl-C still stops the wait at once)."""
        while not self.changed.wait(1.0):
            pass
        self.changed.clear()

    def close(self) -> None:
        self.stop.set()


def serve(content_dir: Path, out: Path, port: int, build_once: Callable[[list[str]], int],
          interrupted: int, usage: int) -> int:
    """Serve out on 127.0.0.1:port, rebuilding on every change; build_once fills in a failed build's mistakes."""
    state = State()
    try:
        server = Server(("127.0.0.1", port), handler_class(out, state))
    except OSError as error:
        print(f"plate: cannot serve on 127.0.0.1:{port}: {error.strerror or error}; choose another --port",
              file=sys.stderr)
        return usage
    started = threading.Event()
    watching = None
    try:
        with server:
            watching = Watcher(content_dir, TEMPLATES)  # before the build: an edit during it is seen
            problems: list[str] = []
            status = build_once(problems)
            if status in (usage, interrupted):
                return status
            state.finished(problems)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            started.set()
            print(f"plate: serving {out}/ at http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
            while True:
                watching.next()
                print("plate: change seen, rebuilding", flush=True)
                problems = []
                if build_once(problems) == interrupted:
                    return interrupted
                state.finished(problems)  # an edit saved during the build is reported by the watcher next
    except KeyboardInterrupt:
        print("plate: interrupted; stopped serving", file=sys.stderr)
        return interrupted
    finally:
        if started.is_set():
            server.shutdown()
        if watching is not None:
            watching.close()
