"""`plate serve`: the built site on 127.0.0.1, rebuilt on every saved edit, with pages that reload themselves."""
from __future__ import annotations

import contextlib
import hashlib
import html as markup
import http.server
import io
import json
import os
import queue
import re
import selectors
import socket
import stat
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable

from ..site.output import survey
from ..page.render import TEMPLATES, csp_hash

VERSION_PATH = "/__plate/build"
POLL_MS = 150            # how often the served page asks whether a new build is in
WATCH_S = 0.1            # how often content/ and templates/ are looked at, without watchfiles (inotify)
READ_DEADLINE_S = 5      # a connection's request line and headers must all arrive within this, or it is closed
SEND_TIMEOUT_S = 15      # a client that takes no byte of its answer for this long is closed
BACKLOG = 512            # connections the kernel queues before they are accepted (socketserver's default: 5)
MAX_THREADS = 64         # requests answered at once; more wait, their request read, for a free thread
MAX_READING = 1_000      # connections whose request line and headers are still coming in, read by one thread
MAX_HEAD_BYTES = 65_536  # a request line and headers longer than this are handed on as they are (http.server refuses)
MAX_VERSIONS = 1_000     # pages' versions kept per build
MAX_FILE_BYTES = 1 << 30  # a site's file larger than this is not one plate wrote
TYPES = {".html": "text/html", ".csv": "text/csv", ".css": "text/css", ".js": "text/javascript",
         ".json": "application/json", ".txt": "text/plain", ".xml": "application/xml", ".svg": "image/svg+xml",
         ".png": "image/png", ".pdf": "application/pdf"}
TEXT_TYPES = {"text/html", "text/csv", "text/css", "text/javascript", "application/json", "text/plain",
              "application/xml", "image/svg+xml"}

# Only the served copy carries this script; the published pages never do. It asks for its own page's version (a
# hash of its bytes) and reloads when a good build changed it (location.reload keeps the URL's fragment, so the
# selection stays); it lays a build's mistakes over the last good page until the next good build, then reloads.
RELOAD_JS = """(() => {
  const served = %(version)s, page = %(page)s;
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
      const response = await fetch("%(path)s?page=" + encodeURIComponent(page), {cache: "no-store"});
      const state = await response.json();
      if (state.problems.length) show(state.problems);
      else if (box || state.version !== served) { location.reload(); return; }
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

MISSING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>plate serve: not found</title></head>
<body><h1>Not found</h1><p>The site has no page %s. This page reloads itself if a build writes it.</p>
</body></html>"""

LISTING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>plate serve: the site's pages</title></head>
<body><h1>The site's pages</h1><p>The site has no index.html; its pages:</p><ul>%s</ul></body></html>"""

CSP = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")')


class State:
    """What the watcher knows about the builds: the number of the last build and its mistakes (none if good), and
    the versions of the pages asked for since it finished."""

    def __init__(self):
        self.lock = threading.Lock()
        self.build = 0
        self.problems: list[str] = []
        self.versions: dict[str, str | None] = {}

    def finished(self, problems: list[str]) -> None:
        """Record a finished build."""
        with self.lock:
            self.build += 1
            self.problems = list(problems)
            self.versions = {}

    def version(self, path: str, make: Callable[[], str | None]) -> str | None:
        """The version of the page at path, made once per build (an open page asks for it several times a second)."""
        with self.lock:
            build, known = self.build, self.versions.get(path, False)
        if known is not False:
            return known
        made = make()
        with self.lock:
            if self.build == build and len(self.versions) < MAX_VERSIONS:  # any path may be asked for
                self.versions[path] = made
        return made

    def snapshot(self) -> tuple[int, list[str]]:
        """The build number and its mistakes, read together."""
        with self.lock:
            return self.build, list(self.problems)


def version_of(html: str) -> str:
    """A page's version, as its reload script compares it: a hash of its text."""
    return hashlib.sha256(html.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def script_value(value: str | None) -> str:
    """value as a JavaScript literal safe inside a <script> element."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def with_reload(html: str, path: str) -> str:
    """The page at path as served: the reload script added, and allowed by the page's own CSP (its hash, and fetch
    to self)."""
    code = RELOAD_JS % {"version": script_value(version_of(html)), "page": script_value(path),
                        "path": VERSION_PATH, "poll": POLL_MS}
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


def site_pages(root: Path) -> list[str]:
    """The names of the site's pages: the regular .html files at its top."""
    try:
        with os.scandir(os.path.realpath(root)) as scan:
            return sorted(entry.name for entry in scan if entry.name.endswith(".html") and
                          not entry.name.startswith(".") and entry.is_file(follow_symlinks=False))
    except OSError:
        return []


def site_name(path: str) -> str | None:
    """The file name in the site that a URL's path (unquoted) asks for, or None for a malformed one (.., a NUL,
    a backslash) or a hidden file (the marker .plate-site); "" for the site's root."""
    if "\0" in path or "\\" in path or not path.startswith("/"):
        return None
    parts = path.strip("/").split("/")
    if path.strip("/") and any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        return None
    return path.strip("/")


def is_page(name: str) -> bool:
    """Whether the site's name (from site_name) is a page, served with the reload script."""
    return name == "" or name.lower().endswith(".html")


def page_text(root: Path, name: str) -> tuple[int, str]:
    """The status and text of the page at name (from site_name), before its reload script: the site's file; for
    the root without an index.html, a list of the site's pages (or, with none yet, a page saying so); else a page
    saying what is missing, which reloads once a build writes it."""
    data = site_file(root, name or "index.html")
    if data is not None:
        return 200, data.decode("utf-8", "surrogateescape")  # its bytes kept as they are, whatever they are
    if name in ("", "index.html"):
        pages = site_pages(root)
        if not pages:
            return 200, PLACEHOLDER
        links = "".join(f'<li><a href="{markup.escape(urllib.parse.quote(page))}">{markup.escape(page)}</a></li>'
                        for page in pages)
        return 200, LISTING % links
    return 404, MISSING % markup.escape(name)


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers the server answers to: its own address, by number or as localhost (a page of another
    site that a rebinding DNS name points here sends its own name, and gets nothing)."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def handler_class(out: Path, state: State) -> type:
    """A request handler serving the files of out (and nothing else) with safe headers."""
    root = Path(os.path.abspath(out))

    class Handler(http.server.BaseHTTPRequestHandler):
        """GET and HEAD for the built site, the served page with its reload script, and the build number."""

        server_version = "plate"
        sys_version = ""

        def setup(self) -> None:
            super().setup()
            # The request line and headers were read by the server's reader (Reading), under one deadline for them
            # all; what follows them, if anything, is read under what is left of it.
            head, deadline = self.server.taken(self.connection)
            self.rfile = io.BufferedReader(DeadlineReader(self.connection, deadline - time.monotonic(), head))

        def parse_request(self) -> bool:
            ok = super().parse_request()  # reads the headers, still under the deadline
            self.connection.settimeout(SEND_TIMEOUT_S)  # the request is in: from here on only its answer is sent
            return ok

        def do_HEAD(self):  # noqa: N802 - the name http.server calls
            self.answer(head=True)

        def do_GET(self):  # noqa: N802
            self.answer(head=False)

        def answer(self, head: bool) -> None:
            host = (self.headers.get("Host") or "").strip().lower()
            if host not in allowed_hosts(self.server.server_address[1]):
                return self.reply(421, "text/plain", b"misdirected request: this server answers only to "
                                  b"127.0.0.1 and localhost\n", head)
            path, query = urllib.parse.urlsplit(self.path)[2:4]
            try:
                path = urllib.parse.unquote(path, errors="strict")
            except UnicodeDecodeError:
                return self.reply(400, "text/plain", b"bad request: the path is not UTF-8\n", head)
            if "\0" in path or "\\" in path or any(part in ("..", ".") for part in path.split("/")):
                return self.reply(400, "text/plain", b"bad request: malformed path\n", head)
            if path == VERSION_PATH:
                return self.reply(200, "application/json", self.build_state(query), head)
            name = site_name(path)
            if name is not None and is_page(name):
                status, text = page_text(root, name)
                return self.reply(status, "text/html", with_reload(text, path).encode("utf-8", "surrogateescape"),
                                  head)
            body = site_file(root, name) if name else None
            if body is None:
                return self.reply(404, "text/plain", b"not found\n", head)
            self.reply(200, TYPES.get(Path(name).suffix.lower(), "application/octet-stream"), body, head)

        def build_state(self, query: str) -> bytes:
            """The last build's number and mistakes, and the version of the page the query names (null for one
            that is not a page of the site)."""
            page = (urllib.parse.parse_qs(query).get("page") or ["/"])[0]
            name = site_name(page)
            version = None
            if name is not None and is_page(name):
                version = state.version(page, lambda: version_of(page_text(root, name)[1]))
            build, problems = state.snapshot()
            return json.dumps({"build": build, "problems": problems, "version": version}).encode()

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


class DeadlineReader(io.RawIOBase):
    """A connection's socket read until a deadline seconds from now, after the bytes already read from it (head):
    each read waits only for what is left of it, then TimeoutError (http.server closes the connection)."""

    def __init__(self, connection, seconds: float, head: bytes = b""):
        self.connection = connection
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.head = head

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            count = min(len(buffer), len(self.head))
            buffer[:count] = self.head[:count]
            self.head = self.head[count:]
            return count
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the request line and headers took longer than {self.seconds} s")
        self.connection.settimeout(left)
        return self.connection.recv_into(buffer)


class Reading:
    """Connections whose request line and headers are still coming in, read without blocking by one thread: a
    connection is handed to the answering threads (ready) only once its head is whole, so clients that send
    nothing, or trickle a byte a second, hold no answering thread. Each is closed at its deadline (READ_DEADLINE_S
    after it was accepted); beyond MAX_READING at once, the one accepted first is closed to make room."""

    def __init__(self, ready: queue.Queue):
        self.ready = ready
        self.lock = threading.Lock()
        self.selector = selectors.DefaultSelector()
        self.pending: dict[socket.socket, tuple] = {}  # {connection: (address, bytes so far, deadline)}
        self.wake_in, self.wake_out = socket.socketpair()
        self.wake_in.setblocking(False)
        self.wake_out.setblocking(False)
        self.selector.register(self.wake_out, selectors.EVENT_READ)
        self.closed = False
        threading.Thread(target=self._run, daemon=True, name="plate serve reader").start()

    def add(self, connection: socket.socket, address) -> None:
        """Read this connection's head (from the accepting thread: returns at once)."""
        connection.setblocking(False)
        with self.lock:
            if len(self.pending) >= MAX_READING:
                oldest = min(self.pending, key=lambda c: self.pending[c][2])
                self._drop(oldest)
            self.pending[connection] = (address, b"", time.monotonic() + READ_DEADLINE_S)
            self.selector.register(connection, selectors.EVENT_READ)
        with contextlib.suppress(OSError):
            self.wake_in.send(b"x")

    def _drop(self, connection: socket.socket) -> None:
        """Forget a connection and close it (the lock held)."""
        self.pending.pop(connection, None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.selector.unregister(connection)
        with contextlib.suppress(OSError):
            connection.close()

    def _run(self) -> None:
        while not self.closed:
            with self.lock:
                soonest = min((d for _, _, d in self.pending.values()), default=None)
            wait = 0.5 if soonest is None else max(0.0, min(0.5, soonest - time.monotonic()))
            try:
                events = self.selector.select(wait)
            except (OSError, ValueError):
                continue  # a connection closed meanwhile: look again
            now = time.monotonic()
            with self.lock:
                for key, _ in events:
                    connection = key.fileobj
                    if connection is self.wake_out:
                        with contextlib.suppress(OSError):
                            self.wake_out.recv(4096)
                        continue
                    if connection not in self.pending:
                        continue
                    address, head, deadline = self.pending[connection]
                    try:
                        data = connection.recv(MAX_HEAD_BYTES)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if not data:  # the client went away before its request was whole
                        self._drop(connection)
                        continue
                    head += data
                    if b"\r\n\r\n" in head or b"\n\n" in head or len(head) >= MAX_HEAD_BYTES:
                        self.pending.pop(connection)
                        self.selector.unregister(connection)
                        connection.setblocking(True)
                        self.ready.put((connection, address, head, deadline))
                    else:
                        self.pending[connection] = (address, head, deadline)
                for connection in [c for c, (_, _, d) in self.pending.items() if d <= now]:
                    self._drop(connection)  # its request line and headers took longer than READ_DEADLINE_S

    def close(self) -> None:
        self.closed = True
        with self.lock:
            for connection in list(self.pending):
                self._drop(connection)
        with contextlib.suppress(OSError):
            self.wake_in.send(b"x")


class Server(http.server.ThreadingHTTPServer):
    """Connections accepted at once and their requests read by one thread (Reading), then answered by at most
    MAX_THREADS threads; none keeps the process alive, and a dropped client is not an error to print."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, *args, **kwargs):
        self.ready: queue.Queue = queue.Queue()
        self.heads: dict[socket.socket, tuple[bytes, float]] = {}
        self.heads_lock = threading.Lock()
        self.reading = Reading(self.ready)
        for _ in range(MAX_THREADS):
            threading.Thread(target=self._answer, daemon=True, name="plate serve answer").start()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address) -> None:
        self.reading.add(request, client_address)  # never blocks accepting

    def _answer(self) -> None:
        """One answering thread: a connection whose head is in, answered, then closed."""
        while True:
            item = self.ready.get()
            if item is None:  # the server is closed
                return
            request, client_address, head, deadline = item
            with self.heads_lock:
                self.heads[request] = (head, deadline)
            try:
                self.finish_request(request, client_address)
            except Exception:  # noqa: BLE001 - as socketserver does: say it (handle_error), answer the next
                self.handle_error(request, client_address)
            finally:
                with self.heads_lock:
                    self.heads.pop(request, None)
                self.shutdown_request(request)

    def taken(self, connection) -> tuple[bytes, float]:
        """The head read for a connection being answered, and its deadline."""
        with self.heads_lock:
            return self.heads.get(connection, (b"", time.monotonic() + READ_DEADLINE_S))

    def server_close(self) -> None:
        self.reading.close()
        for _ in range(MAX_THREADS):
            self.ready.put(None)
        super().server_close()

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


def other_pages(out: Path) -> list[str]:
    """The pages a build of one plate would not write in out (its only page is index.html): a series' pages."""
    try:
        found = survey(out) if out.is_dir() else None
    except OSError:
        return []  # the build says what is wrong with out
    return sorted(name for name in found.plates if name.endswith(".html") and name != "index.html") if found else []


def built(build_once: Callable[[list[str]], int], problems: list[str]) -> int:
    """build_once's status; whatever a build raises (a plate module's SystemExit, say) is one of its mistakes, so
    serving and watching go on (Ctrl-C still stops them)."""
    try:
        return build_once(problems)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - a plate module is code: it may raise anything
        detail = " ".join(str(error).split())[:300]
        line = f"the build failed unexpectedly ({type(error).__name__}: {detail})"
        print(f"plate: {line}; rebuilding at the next change", file=sys.stderr, flush=True)
        problems.append(line)
        return 1


def serve(content_dir: Path, out: Path, port: int, build_once: Callable[[list[str]], int],
          interrupted: int, usage: int, one_plate: bool = False) -> int:
    """Serve out on 127.0.0.1:port, rebuilding on every change; build_once fills in a failed build's mistakes.
    One plate (one_plate) is never served into a series' site: that would replace its other pages."""
    pages = other_pages(out) if one_plate else []
    if pages:
        shown = ", ".join(pages[:3]) + (f" and {len(pages) - 3} more" if len(pages) > 3 else "")
        print(f"plate: {out}/ holds a series' site ({shown}); serving one plate would replace it with that plate "
              f"alone: give another --out, or serve the series", file=sys.stderr)
        return usage
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
            status = built(build_once, problems)
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
                if built(build_once, problems) == interrupted:
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
