"""`python -m generator` and the `plate` command: imports lazily, so Ctrl-C from the moment plate's code runs is one
line. (Before that, during the interpreter's own start-up, a Ctrl-C is Python's to report: see docs/checks.md.)"""
import atexit
import os
import signal
import sys

_interrupted: list[int] = []  # every Ctrl-C since run() began, raised as KeyboardInterrupt or not
_hooks: list = []  # the unraisable hook run() replaced, put back when it returns


def _interrupt(signum, frame) -> None:
    """Ctrl-C: a KeyboardInterrupt, remembered in case it is lost (raised in a weakref callback during an import,
    where Python ignores it) or turned into an error of a library's own (numpy's ImportError)."""
    _interrupted.append(signum)
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """Python's report of an exception it ignores, but for a Ctrl-C of ours: run() acts on that one itself."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt) or not _interrupted:
        sys.__unraisablehook__(unraisable)


def run(argv: list[str] | None = None) -> int:
    """Run `plate`; Ctrl-C at any moment (while modules load, builds or serves) ends it with one line, status 130.
    Run as the command (argv None), it exits once it has reported, without tearing the interpreter down: that took
    a tenth of a second (numpy, Altair, vl-convert), during which Python no longer answers Ctrl-C with a line."""
    try:  # first: every KeyboardInterrupt from here on is caught
        _interrupted.clear()
        if argv is None:  # the command: run in a child, watched (generator/plate/watchdog.py), the parent waits
            from .plate import watchdog
            watchdog.watch()
        signal.signal(signal.SIGINT, _interrupt)
        _hooks.append(sys.unraisablehook)
        sys.unraisablehook = _unraisable
        try:
            from .commands.cli import main  # numpy, Altair, vl-convert: most of the start-up time
        except Exception:  # noqa: BLE001 - numpy turns a Ctrl-C while its C extensions load into an ImportError
            if _interrupted:
                raise KeyboardInterrupt from None
            raise
        if _interrupted:  # a Ctrl-C the imports lost
            raise KeyboardInterrupt
        status = main(argv)
        if argv is None:  # the command is done: from here on a Ctrl-C says so and ends it at once
            signal.signal(signal.SIGINT, _interrupted_while_exiting)
        if _interrupted and status != 130:  # a Ctrl-C lost while it worked, whose work is now done
            print(_after_the_end(), file=sys.stderr)
            status = 130
    except KeyboardInterrupt as error:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while exiting must not print a traceback
        cli = sys.modules.get(f"{__package__}.commands.cli")
        if getattr(error, "swapped", False):
            line = "plate: interrupted; the new site was already swapped in"
        elif cli is not None and cli._after:  # the work was done: the new site is in place
            line = cli.after_the_end()
        else:
            line = "plate: interrupted; nothing was changed"
        print(line, file=sys.stderr)
        status = 130
    finally:
        if _hooks:
            sys.unraisablehook = _hooks.pop()
    if argv is None:
        _exit(status)
    return status


def _after_the_end() -> str:
    """The line for a Ctrl-C once the command's work is done (cli says what became of the site)."""
    cli = sys.modules.get(f"{__package__}.commands.cli")
    return cli.after_the_end() if cli is not None else "plate: interrupted after it had finished"


def _interrupted_while_exiting(signum, frame) -> None:
    """Ctrl-C after the command's work and report, as it exits."""
    os.write(2, (_after_the_end() + "\n").encode())
    os._exit(130)


def _exit(status: int) -> None:
    """End the process with status once everything is reported, skipping Python's teardown: a Ctrl-C there killed
    it without a word, and the process could end killed by the signal even after plate's line."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, a stream closed: nothing more to say
            pass
    atexit._run_exitfuncs()  # what libraries asked to run at exit still runs
    os._exit(status)


if __name__ == "__main__":
    sys.exit(run())
