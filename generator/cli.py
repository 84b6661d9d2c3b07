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
from .schema import ContentError
from .render import TEMPLATES

EXIT_CONTENT, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


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
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    s.add_argument("--port", default=8000, type=port_number, help="port on 127.0.0.1 (default: 8000)")
    return p


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535 (argparse reports anything else as a usage error)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: give a number from 1 to 65535") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"invalid port {port}: give a number from 1 to 65535")
    return port


def run_build(content_dir: Path, out: Path, debug: bool) -> int:
    """Build once and report; the exit status."""
    started = time.perf_counter()
    try:
        files = build.build(content_dir, out)
    except ContentError as error:
        if debug:
            traceback.print_exc()
        count = len(error.problems)
        print(f"plate: the content has {count} mistake{'s' if count != 1 else ''}; {out}/ was left as it was:",
              file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_CONTENT
    except build.OutputError as error:
        if debug:
            traceback.print_exc()
        print(f"plate: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        print(interrupted_message(out, getattr(error, "swapped", False)), file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # noqa: BLE001 - a bug or a broken install: one line, never a half-written site
        if debug:
            traceback.print_exc()
        detail = " ".join(str(error).split())[:300]
        print(f"plate: the build failed unexpectedly ({type(error).__name__}: {detail}); {out}/ was left as "
              f"it was. Run again with --debug to see the traceback.", file=sys.stderr)
        return EXIT_CONTENT
    elapsed = time.perf_counter() - started
    sizes = ", ".join(f"{name} {len(text.encode()) / 1024:,.0f} KB" for name, text in sorted(files.items()))
    print(f"plate: built {out}/ in {elapsed:.1f} s ({sizes})")
    return 0


def interrupted_message(out: Path, swapped: bool) -> str:
    """The one line after Ctrl-C, saying truthfully whether the new site was swapped in."""
    if swapped:
        return f"plate: interrupted after the new site was swapped in; {out}/ holds the new build"
    return f"plate: interrupted; {out}/ was left as it was"


def snapshot(*folders: Path) -> dict:
    """Modification times of every file below the folders (files that vanish meanwhile are skipped)."""
    seen = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            try:
                seen[path] = path.stat().st_mtime_ns
            except OSError:
                continue
    return seen


def serve(content_dir: Path, out: Path, port: int, debug: bool) -> int:
    """Serve out on 127.0.0.1:port, rebuilding whenever content or templates change."""
    if run_build(content_dir, out, debug) == EXIT_USAGE:
        return EXIT_USAGE
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
    args.debug = getattr(args, "debug", False)
    if not args.content.exists():
        print(f"plate: content folder {args.content} does not exist", file=sys.stderr)
        return EXIT_USAGE
    if not args.content.is_dir():
        print(f"plate: content folder {args.content} is a file, not a folder", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "serve":
        return serve(args.content, args.out, args.port, args.debug)
    return run_build(args.content, args.out, args.debug)


if __name__ == "__main__":
    sys.exit(main())
