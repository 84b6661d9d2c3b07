"""The `plate` command: build the site, or serve it and rebuild when content or templates change."""
from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import time
import traceback
from pathlib import Path

from . import build
from .content import ContentError
from .render import TEMPLATES

EXIT_CONTENT, EXIT_USAGE = 1, 2


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"plate: {message} (see 'plate --help')\n")


def parser() -> Parser:
    """The command line of `plate`."""
    p = Parser(prog="plate", description="Build Plate XIV.4, 'Data Parallelism', as one self-contained HTML page.")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    b = sub.add_parser("build", help="write the site (index.html and the CSV)")
    s = sub.add_parser("serve", help="build, serve on 127.0.0.1 and rebuild when content or templates change")
    for command in (b, s):
        command.add_argument("--content", default="content", type=Path, help="content folder (default: content)")
        command.add_argument("--out", default="site", type=Path, help="output folder (default: site)")
        command.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--port", default=8000, type=int, help="port on 127.0.0.1 (default: 8000)")
    return p


def run_build(content_dir: Path, out: Path, debug: bool) -> int:
    """Build once and report; the exit status."""
    started = time.perf_counter()
    try:
        files = build.build(content_dir, out)
    except ContentError as error:
        print(f"plate: the content has {len(error.problems)} mistake(s); nothing was written:", file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        if debug:
            traceback.print_exc()
        return EXIT_CONTENT
    except OSError as error:
        if debug:
            traceback.print_exc()
        print(f"plate: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    elapsed = time.perf_counter() - started
    sizes = ", ".join(f"{name} {len(text.encode()) / 1024:,.0f} KB" for name, text in sorted(files.items()))
    print(f"plate: built {out}/ in {elapsed:.1f} s ({sizes})")
    return 0


def snapshot(*folders: Path) -> dict:
    """Modification times of every file below the folders."""
    return {p: p.stat().st_mtime_ns for f in folders for p in sorted(Path(f).rglob("*")) if p.is_file()}


def serve(content_dir: Path, out: Path, port: int, debug: bool) -> int:
    """Serve out on 127.0.0.1:port, rebuilding whenever content or templates change."""
    run_build(content_dir, out, debug)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        print(f"plate: cannot serve on 127.0.0.1:{port}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"plate: serving {out}/ at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    seen = snapshot(content_dir, TEMPLATES)
    try:
        while True:
            time.sleep(0.5)
            now = snapshot(content_dir, TEMPLATES)
            if now != seen:
                seen = now
                print("plate: change seen, rebuilding")
                run_build(content_dir, out, debug)
    except KeyboardInterrupt:
        server.shutdown()
        return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plate` command."""
    args = parser().parse_args(argv)
    if not args.content.is_dir():
        print(f"plate: content folder {args.content} does not exist", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "serve":
        return serve(args.content, args.out, args.port, args.debug)
    return run_build(args.content, args.out, args.debug)


if __name__ == "__main__":
    sys.exit(main())
