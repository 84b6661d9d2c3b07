"""`plate serve`: the built site on 127.0.0.1, rebuilt on every saved edit, with a page that reloads itself."""
from __future__ import annotations

import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable

from .render import TEMPLATES, csp_hash

VERSION_PATH = "/__plate/build"
POLL_MS = 150            # how often the served page asks whether a new build is in
WATCH_S = 0.1            # how often content/ and templates/ are looked at
IDLE_TIMEOUT_S = 15      # a connection that sends nothing for this long is closed
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
                    html = (root / "index.html").read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    html = PLACEHOLDER
                return self.reply(200, "text/html", with_reload(html, build).encode(), head)
            target = root / name.lstrip("/")
            parts = name.strip("/").split("/")
            if not name.strip("/") or any(p.startswith(".") for p in parts):
                return self.reply(404, "text/plain", b"not found\n", head)
            try:
                if not target.is_file():
                    return self.reply(404, "text/plain", b"not found\n", head)
                body = target.read_bytes()
            except (OSError, ValueError):
                return self.reply(404, "text/plain", b"not found\n", head)
            self.reply(200, TYPES.get(target.suffix.lower(), "application/octet-stream"), body, head)

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

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the signature http.server calls
            # One line per request, with control characters of a hostile request line made visible.
            line = (format % args).encode("unicode_escape").decode("ascii")
            sys.stderr.write(f"plate: {self.address_string()} {line}\n")

    return Handler


class Server(http.server.ThreadingHTTPServer):
    """Threads per connection that never keep the process alive; a dropped client is not an error to print."""

    daemon_threads = True

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
    try:
        with server:
            seen = snapshot(content_dir, TEMPLATES)
            problems: list[str] = []
            status = build_once(problems)
            if status in (usage, interrupted):
                return status
            state.finished(problems)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            started.set()
            print(f"plate: serving {out}/ at http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
            while True:
                time.sleep(WATCH_S)
                now = snapshot(content_dir, TEMPLATES)
                if now == seen:
                    continue
                seen = now
                print("plate: change seen, rebuilding", flush=True)
                problems = []
                if build_once(problems) == interrupted:
                    return interrupted
                state.finished(problems)  # an edit saved during the build differs from `seen`: built next
    except KeyboardInterrupt:
        print("plate: interrupted; stopped serving", file=sys.stderr)
        return interrupted
    finally:
        if started.is_set():
            server.shutdown()
