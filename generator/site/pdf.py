"""Paper: the built page printed to PDF by the system's Chromium, driven over its DevTools pipe (no extra package)."""
from __future__ import annotations

import base64
import bisect
import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

# Inches, as Chromium's printToPDF takes them (the same sizes Playwright's page.pdf uses).
PAPERS = {"A4": (8.27, 11.7), "Letter": (8.5, 11.0)}
# No network, no first-run or background chatter: the page needs nothing outside its file.
FLAGS = ["--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--remote-debugging-pipe"]
READY_TIMEOUT_S = 60
CHANNEL_TIMEOUT_S = 120


class PrintError(Exception):
    """Printing cannot go on (no Chromium, a page that never gets ready); the message is one line."""


def chromium() -> str:
    """The system's Chromium: $PLATE_CHROMIUM, else chromium or chromium-browser on PATH."""
    named = os.environ.get("PLATE_CHROMIUM")
    if named:
        if shutil.which(named):
            return shutil.which(named)
        raise PrintError(f"PLATE_CHROMIUM names {named}, which is not an executable")
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise PrintError("Chromium is not installed: plate pdf prints with the system's Chromium (on Debian: "
                     "apt-get install chromium; or set PLATE_CHROMIUM to a Chromium or Chrome executable)")


def page_count(pdf: bytes) -> int:
    """Pages in a PDF written by Chromium (its page objects are plain objects, not in object streams)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


class DevTools:
    """A headless Chromium and the DevTools protocol over its pipe (fd 3 in, fd 4 out, NUL-separated JSON)."""

    def __init__(self, executable: str):
        self.profile = tempfile.mkdtemp(prefix="plate-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # Kept above 4 so that moving them onto 3 and 4 in the child always clears close-on-exec.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        os.close(to_browser)
        os.close(from_browser)

        def onto_3_and_4():
            os.dup2(moved[0], 3)
            os.dup2(moved[1], 4)
        flags = FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else [])  # Chromium's sandbox refuses root
        try:
            self.process = subprocess.Popen([executable, *flags, f"--user-data-dir={self.profile}", "about:blank"],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=onto_3_and_4)
        except OSError as error:
            self.close()
            raise PrintError(f"cannot start {executable}: {error.strerror or error}") from error
        finally:
            for fd in moved:
                os.close(fd)
        self.buffer = b""
        self.next_id = 0

    def call(self, method: str, session: str | None = None, **params) -> dict:
        """Send one command and wait for its answer (events meanwhile are skipped)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + CHANNEL_TIMEOUT_S
        while True:
            while b"\0" not in self.buffer:
                if time.monotonic() > deadline:
                    raise PrintError(f"Chromium did not answer {method} within {CHANNEL_TIMEOUT_S} s")
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise PrintError(f"Chromium quit during {method}")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise PrintError(f"Chromium refused {method}: {answer['error'].get('message')}")
                return answer.get("result", {})

    def close(self) -> None:
        """Stop Chromium and remove its throwaway profile."""
        process = getattr(self, "process", None)
        if process is not None and process.poll() is None:
            try:
                self.call("Browser.close")
            except (PrintError, OSError):
                pass
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for fd in (getattr(self, "_write", None), getattr(self, "_read", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        shutil.rmtree(self.profile, ignore_errors=True)


def _printed_in(browser: DevTools, page: Path, fragment: str,
                papers: dict[str, tuple[float, float]]) -> dict[str, bytes]:
    """One page (opened with the URL fragment, e.g. 'model=x&batch=y') printed on each paper, in a tab of its own:
    a fresh tab starts on about:blank, so the wait below never sees the previous page as ready."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    try:
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
        browser.call("Page.navigate", session, url=url)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            state = browser.call("Runtime.evaluate", session, expression="document.readyState + ' ' + "
                                 "(document.documentElement.dataset.ready || '')", returnByValue=True)
            value = state.get("result", {}).get("value", "")
            if value == "complete true":
                break
            if value.endswith("failed"):
                raise PrintError(f"the page's figures failed to start in Chromium ({url})")
            if time.monotonic() > deadline:
                raise PrintError(f"the page was not ready after {READY_TIMEOUT_S} s in Chromium ({url})")
            time.sleep(0.05)
        pdfs = {}
        for name, (width, height) in papers.items():
            result = browser.call("Page.printToPDF", session, paperWidth=width, paperHeight=height,
                                  marginTop=0, marginBottom=0, marginLeft=0, marginRight=0,
                                  displayHeaderFooter=False, printBackground=False, preferCSSPageSize=False)
            pdfs[name] = base64.b64decode(result["data"])
        return pdfs
    finally:
        with contextlib.suppress(PrintError, OSError):  # a browser that quit has said why already
            browser.call("Target.closeTarget", targetId=target)


def print_pages(pages: dict[Path, str], papers: dict[str, tuple[float, float]] = PAPERS,
                executable: str | None = None) -> dict[Path, dict[str, bytes]]:
    """Each page ({HTML file: URL fragment}) printed on each paper, by one Chromium."""
    browser = DevTools(executable or chromium())
    try:
        return {page: _printed_in(browser, page, fragment, papers) for page, fragment in pages.items()}
    finally:
        browser.close()


def pdf_names(stem: str) -> dict[str, str]:
    """The PDFs' file names in the site, per paper, after the page's: index-a4.pdf, index-letter.pdf."""
    return {paper: f"{stem}-{paper.lower()}.pdf" for paper in PAPERS}


def printed(files: dict[str, str | bytes], pages: dict[str, str]) -> dict[str, dict[str, bytes]]:
    """Pages of the site ({page's file name: URL fragment}) printed on every paper, as {page: {paper: PDF}}: the
    site is put in a throwaway folder first (the pages open their CSVs and each other there), so the PDFs join the
    site in the same swap as the pages they show."""
    executable = chromium()
    folder = Path(tempfile.mkdtemp(prefix="plate-print-")).resolve()  # as the pages' URLs name it
    try:
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        made = print_pages({folder / page: fragment for page, fragment in pages.items()}, executable=executable)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {path.name: {paper: relative_links(data, folder) for paper, data in pdfs.items()}
            for path, pdfs in made.items()}


def relative_links(data: bytes, folder: Path) -> bytes:
    """A PDF whose links into the (resolved) folder it was printed from are made relative ("index-a4.pdf", beside
    it in the site): Chromium writes each link as an absolute URL, here into a throwaway folder. The
    cross-reference table's offsets are moved to match; a PDF laid out otherwise is returned as it was."""
    prefix = b"/URI (" + (Path(folder).as_uri() + "/").encode()
    cuts = [m.start() + len(b"/URI (") for m in re.finditer(re.escape(prefix), data)]
    end = re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", data)
    table = int(end.group(1)) if end else -1
    trailer = data.find(b"trailer", table) if end else -1
    if not cuts or not data.startswith(b"xref", table) or trailer < 0 or cuts[-1] > table:
        return data  # a cross-reference stream, or no table where startxref says: Chromium's layout changed
    cut = len(prefix) - len(b"/URI (")

    def moved(offset: int) -> int:
        return offset - cut * bisect.bisect_left(cuts, offset)
    body = b"".join(data[start + (cut if i else 0):stop] for i, (start, stop)
                    in enumerate(zip([0, *cuts], [*cuts, table])))
    entries = re.sub(rb"(\d{10}) (\d{5}) n", lambda m: b"%010d %s n" % (moved(int(m[1])), m[2]),
                     data[table:trailer])
    return body + entries + data[trailer:end.start(1)] + str(moved(table)).encode() + data[end.end(1):]


def fragment_of(selection: str, choices: dict[str, list[str]]) -> str:
    """--select 'key=id,key=id' as the page's URL fragment, each id checked against the plate's choices."""
    parts = []
    for item in filter(None, (s.strip() for s in selection.split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in choices:
            raise ValueError(f"--select takes {', '.join(f'{k}=<id>' for k in choices)} separated by commas, "
                             f"got {item!r}")
        if value not in choices[key]:
            raise ValueError(f"--select: no {key} {value!r} among the presets (known: {', '.join(choices[key])})")
        parts.append(f"{key}={value}")
    return "&".join(parts)
