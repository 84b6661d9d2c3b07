"""The `plate` command: build the site, or serve it and rebuild when content or templates change."""
from __future__ import annotations

import argparse
import errno
import os
import stat
import sys
import time
import traceback
from pathlib import Path

from .. import __version__
from ..site import build, output, pdf, prints, series
from ..source import checks, content, schema
from ..plate import plates
from ..page import runtime
from ..source.schema import ContentError

SERIES = Path("plates")  # what `plate build` builds when no --content is given: the series, with its volume files

EXIT_CONTENT, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and exit status 2; a description made only when help is shown."""

    describe = None  # () -> str, called by format_help: --version and every command read no content for it

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"plate: {message} (see 'plate --help')\n")

    def format_help(self) -> str:
        if self.describe is not None:
            self.description = self.describe()
        return super().format_help()


MAX_SHOWN_CHARS = 200  # of a title or a path in a one-line message


def shortened(text: object) -> str:
    """Text for a one-line message: at most MAX_SHOWN_CHARS characters, control characters as escapes."""
    text = str(text).encode("unicode_escape").decode("ascii") if not str(text).isprintable() else str(text)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 1] + "…"


def describe_plate(argv: list[str]) -> str:
    """The command's description, naming the plate of the content folder given (--content), or the series (the
    default, plates/); read with the build's guards (a regular file of bounded size, nesting within limits), and
    never failing."""
    folder = SERIES
    for i, arg in enumerate(argv):
        if arg == "--content" and i + 1 < len(argv):
            folder = Path(argv[i + 1])
        elif arg.startswith("--content="):
            folder = Path(arg.partition("=")[2])
    plate = "a plate"  # no readable content here: the command still explains itself
    try:
        if folder.is_dir() and series.is_series(folder):
            return (f"Build the series in {shortened(folder)}/: every written plate its volume files list, each as one "
                    f"self-contained HTML page, with each volume's index and the top page.")
        problems = schema.Problems(folder)
        text = schema.read_text(problems, folder / "plate.md")
        parts = content.split_front_matter(problems, folder / "plate.md", text) if text is not None else None
        front, _ = schema.read_toml(problems, folder / "plate.md", parts[0]) if parts else (None, "")
        if isinstance(front, dict) and all(isinstance(front.get(k), (str, int)) for k in ("volume", "plate", "title")):
            plate = shortened(f"Plate {front['volume']}.{front['plate']}, '{front['title']}'")
    except (OSError, ValueError, RecursionError, MemoryError):
        pass
    return f"Build {plate}, from {shortened(folder)}/ as one self-contained HTML page."


def parser(argv: list[str] | None = None) -> Parser:
    """The command line of `plate`."""
    p = Parser(prog="plate")
    p.describe = lambda: describe_plate(sys.argv[1:] if argv is None else argv)
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    p.add_argument("--version", action="version", version=f"plate {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    b = sub.add_parser("build", help="write the site (index.html and the CSV)")
    s = sub.add_parser("serve", help="build, serve every page on 127.0.0.1 and rebuild when content or templates "
                                     "change")
    c = sub.add_parser("check", help="check the content and report every mistake and warning; writes nothing")
    d = sub.add_parser("pdf", help="build the site and print every plate's page into it as A4 and US Letter PDFs "
                                   "(needs the system's Chromium)")
    d.add_argument("--select", default="", metavar="KEY=ID,...",
                   help="the selection to print, with --content naming one plate (default: the plate's default)")
    for command in (b, s, c, d):
        # a series (series.py): every plate its volume files list, the indexes, the top page
        command.add_argument("--content", default=SERIES, type=Path,
                             help=f"a plate's folder, or a series' (default: {SERIES}, the series)")
        if command is not c:
            command.add_argument("--out", default="site", type=Path, help="output folder (default: site)")
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        command.add_argument("--hook-timeout", type=hook_seconds, default=None, metavar="SECONDS",
                             help=f"the time limit of each call of the plate module's code (default: "
                                  f"${plates.TIME_LIMIT_VARIABLE}, else {plates.TIME_LIMIT_S:g}; see docs/plates.md)")
    s.add_argument("--port", default=8000, type=port_number, help="port on 127.0.0.1 (default: 8000)")
    from . import scaffold  # `plate new` (generator/commands/scaffold.py): its arguments are its own
    scaffold.add_arguments(sub.add_parser("new", help="start a plate from the template, listed in its volume's file "
                                                      "beside it"))
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


def hook_seconds(text: str) -> float:
    """--hook-timeout's value: a positive number of seconds (anything else is a usage error)."""
    try:
        return plates.seconds(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid time limit {text!r}: give a positive number of seconds") from None


MAX_LINE_CHARS = 2_000  # of one reported mistake or warning: "known: …" lists of thousands of ids are cut


def bounded(line: str) -> str:
    """A reported line cut to MAX_LINE_CHARS (its file and line come first, so they always stay)."""
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS - 1] + "…"


def report_mistakes(problems: list[str], after: str = "") -> None:
    """The content's mistakes, each on its own line, after one line counting them; a mistake several plates meet
    (a file two plates read) is said once."""
    problems = list(dict.fromkeys(problems))
    count = len(problems)
    print(f"plate: the content has {count} mistake{'s' if count != 1 else ''}{after}:", file=sys.stderr)
    for problem in problems:
        print(f"  {bounded(problem)}", file=sys.stderr)


def report_warnings(warnings: list[str]) -> None:
    """What `plate check` warns about; build and check print the same lines."""
    for warning in dict.fromkeys(warnings):  # once per build, however many plates gave it
        print(f"plate: warning: {bounded(warning)}", file=sys.stderr)


def run_check(content_dir: Path, debug: bool) -> int:
    """Check the content without writing anything; the exit status (warnings alone do not fail)."""
    started = time.perf_counter()
    from ..site import series
    try:
        if series.is_series(Path(content_dir)):
            warnings = series.check(Path(content_dir))
        else:
            result = checks.checked(content_dir)
            checks.page_checked(result)  # the page's Python compiled and its promises checked, as the build does
            warnings = result.warnings
    except ContentError as error:
        if debug:
            traceback.print_exc()
        report_mistakes(error.problems)
        return EXIT_CONTENT
    except plates.ModuleError as error:
        return module_failed(error, debug)
    except KeyboardInterrupt:
        print("plate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    report_warnings(warnings)
    count = len(dict.fromkeys(warnings))
    print(f"plate: {content_dir}/ has no mistakes ({count} warning{'s' if count != 1 else ''}); checked in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


def module_failed(error: plates.ModuleError, debug: bool, after: str = "") -> int:
    """The plate module's failure in one line (the traceback with --debug); the exit status."""
    if debug:
        traceback.print_exc()
    hint = "" if debug else "; run again with --debug to see the traceback"
    print(f"plate: {bounded(str(error))}{after}{hint}", file=sys.stderr)
    return EXIT_CONTENT


def run_pdf(content_dir: Path, out: Path, selection: str, debug: bool) -> int:
    """Build the site with every plate's page printed on A4 and Letter; the exit status."""
    from ..site import series
    try:
        if selection.strip() and series.is_series(Path(content_dir)):
            raise ValueError(f"--select chooses one plate's presets, and each plate of a series has its own: give "
                             f"--content one plate's folder (not {shortened(content_dir)})")
        pdf.chromium()  # before building: say at once that it cannot print
        fragment = ""
        if selection.strip():
            try:
                loaded = content.load(content_dir)
                fragment = pdf.fragment_of(selection, loaded.module.select_choices(loaded))
            except (ContentError, plates.ModuleError):
                pass  # the build reports the content's (or the module's) mistakes
    except (pdf.PrintError, ValueError) as error:
        print(f"plate: {error}", file=sys.stderr)
        return EXIT_USAGE
    return run_build(content_dir, out, debug, plan=prints.Plan(every=True, select=fragment))


def run_build(content_dir: Path, out: Path, debug: bool, mistakes: list[str] | None = None,
              plan: prints.Plan | None = None, memo: dict | None = None) -> int:
    """Build once and report; the exit status. A failed build's messages are also added to mistakes. plan says
    what becomes of the plate pages' PDFs (generator/site/prints.py: by default the previous site's are kept or printed
    again)."""
    _after.clear()  # serve builds again and again: only a build that succeeds says its site is in place
    output.on_swap = lambda: finished(interrupted_message(out, True))  # from the swap on, a Ctrl-C says so
    mistakes = [] if mistakes is None else mistakes
    started = time.perf_counter()
    warnings: list[str] = []
    notes: list[str] = []  # what became of the PDFs, and pages the previous site held that this one lacks
    try:
        files = build.build(content_dir, out, warnings, plan, memo, notes)
    except ContentError as error:
        if debug:
            traceback.print_exc()
        report_mistakes(error.problems, f"; {out}/ was left as it was")
        mistakes.extend(dict.fromkeys(error.problems))
        return EXIT_CONTENT
    except plates.ModuleError as error:
        mistakes.append(str(error))
        return module_failed(error, debug, f"; {out}/ was left as it was")
    except (build.OutputError, pdf.PrintError) as error:
        if debug:
            traceback.print_exc()
        print(f"plate: {error}", file=sys.stderr)
        mistakes.append(str(error))
        return EXIT_USAGE
    except runtime.MissingFeature as error:  # a figure needs more of Vega than the bundle can carry
        if debug:
            traceback.print_exc()
        print(f"plate: {error}; {out}/ was left as it was", file=sys.stderr)
        mistakes.append(str(error))
        return EXIT_CONTENT
    except KeyboardInterrupt as error:
        print(interrupted_message(out, getattr(error, "swapped", False) or bool(_after)), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (Exception, SystemExit, GeneratorExit) as error:  # noqa: BLE001 - a bug, a broken install, an exit
        # from code the build ran: one line, never a half-written site, and never status 0 without a site
        if debug:
            traceback.print_exc()
        detail = " ".join(str(error).split())[:300]
        where = f"{out}/ holds the new build" if _after else f"{out}/ was left as it was"  # _after: swapped in
        print(f"plate: the build failed unexpectedly ({type(error).__name__}: {detail}); {where}. Run again with "
              f"--debug to see the traceback.", file=sys.stderr)
        mistakes.append(f"the build failed unexpectedly ({type(error).__name__}: {detail})")
        return EXIT_CONTENT
    finished(interrupted_message(out, True))  # from here on the new site is in place, whatever happens
    report_warnings(warnings)
    elapsed = time.perf_counter() - started
    sizes = ", ".join(f"{name} {len(data if isinstance(data, bytes) else data.encode()) / 1024:,.0f} KB"
                      for name, data in sorted(files.items()) if not name.startswith("."))  # not the record
    print(f"plate: built {out}/ in {elapsed:.1f} s ({sizes})")
    for note in notes:
        print(f"plate: {note}")
    return 0


AFTER_THE_END = "plate: interrupted after it had finished; what it reported stands"
_after: list[str] = []


def finished(line: str) -> None:
    """Say what a Ctrl-C from now on should print: the command's work is done (the new site is in place)."""
    _after[:] = [line]


def after_the_end() -> str:
    """The one line for a Ctrl-C after the command finished its work (while it reports or Python exits)."""
    return _after[0] if _after else AFTER_THE_END


def interrupted_message(out: Path, swapped: bool) -> str:
    """The one line after Ctrl-C, saying truthfully whether the new site was swapped in."""
    if swapped:
        return f"plate: interrupted after the new site was swapped in; {out}/ holds the new build"
    return f"plate: interrupted; {out}/ was left as it was"


MAX_OUT_NAME_BYTES = 200  # plate writes folders named after the output folder beside it (.NAME-new-…)


def folder_problem(folder: Path, what: str, must_exist: bool) -> str | None:
    """Why a folder named on the command line cannot be used, in one line (a usage error), or None."""
    try:
        info = folder.stat()
    except (FileNotFoundError, NotADirectoryError):
        if must_exist:
            return f"{what} {shortened(folder)} does not exist"
        info = None
    except OSError as error:  # a name too long for the file system (ENAMETOOLONG), a link loop, …
        if error.errno == errno.ELOOP:
            return f"{what} {shortened(folder)} is a symlink loop (a link that leads back to itself, maybe through others)"
        return f"{what} {shortened(folder)} cannot be used: {error.strerror or error}"
    if must_exist and not stat.S_ISDIR(info.st_mode):
        return f"{what} {shortened(folder)} is a file, not a folder"
    name = os.fsencode(Path(os.path.abspath(folder)).name)
    if not must_exist and len(name) > MAX_OUT_NAME_BYTES:
        return (f"{what} {shortened(folder)}: its name is {len(name):,} bytes long, more than the "
                f"{MAX_OUT_NAME_BYTES} plate can use (it writes folders named after it beside it)")
    return None


def member(content_dir: Path) -> bool:
    """Whether a plate's folder is one its parent series' volume files list (its build goes into the series'
    site: series.into_site); False too when those files have mistakes."""
    try:
        return series.plate_of(content_dir) is not None
    except ContentError:
        return False


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plate` command."""
    _after.clear()
    args = parser(argv).parse_args(argv)
    args.debug = getattr(args, "debug", False)
    if args.command == "new":  # reads no content folder and writes no site
        from . import scaffold
        return scaffold.run(args, finished)
    try:
        plates.set_time_limit(args.hook_timeout)
        plates.time_limit()  # $PLATE_HOOK_TIMEOUT read now: a wrong one is a usage error before anything runs
    except ValueError as error:
        print(f"plate: ${plates.TIME_LIMIT_VARIABLE}: {error}", file=sys.stderr)
        return EXIT_USAGE
    wrong = folder_problem(args.content, "content folder", must_exist=True)
    if wrong is None and hasattr(args, "out"):
        wrong = folder_problem(args.out, "output folder", must_exist=False)
    if wrong:
        print(f"plate: {wrong}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "pdf":
        return run_pdf(args.content, args.out, args.select, args.debug)
    if args.command == "check":
        return run_check(args.content, args.debug)
    if args.command == "serve":
        memo: dict = {}  # figures and CSV kept between rebuilds while the presets stay as they were
        from ..site import series  # here: `plate build` needs no web server
        from . import server
        return server.serve(args.content, args.out, args.port,
                            # a rebuild drops a changed page's PDFs rather than print them on every edit
                            lambda mistakes: run_build(args.content, args.out, args.debug, mistakes,
                                                       prints.Plan(reprint=False), memo=memo),
                            interrupted=EXIT_INTERRUPTED, usage=EXIT_USAGE,
                            one_plate=not series.is_series(args.content) and not member(args.content))
    return run_build(args.content, args.out, args.debug)


if __name__ == "__main__":
    sys.exit(main())
