"""`python -m generator` and the `plate` command: imports lazily, so Ctrl-C from the moment plate's code runs is one
line. (Before that, during the interpreter's own start-up, a Ctrl-C is Python's to report: see the README.)"""
import atexit
import os
import signal
import sys


_interrupted: list[int] = []


def _interrupt(signum, frame) -> None:
    """Ctrl-C: a KeyboardInterrupt, remembered in case a library turns it into an error of its own."""
    _interrupted.append(signum)
    raise KeyboardInterrupt


def run(argv: list[str] | None = None) -> int:
    """Run `plate`; Ctrl-C at any moment (while modules load, builds or serves) ends it with one line, status 130.
    Run as the command (argv None), it exits once it has reported, without tearing the interpreter down: that took
    a tenth of a second (numpy, Altair, vl-convert), during which Python no longer answers Ctrl-C with a line."""
    signal.signal(signal.SIGINT, _interrupt)  # first: Ctrl-C is a KeyboardInterrupt from here on
    try:
        try:
            from .cli import main  # numpy, Altair, vl-convert: most of the start-up time
        except Exception:  # noqa: BLE001 - numpy turns a Ctrl-C while its C extensions load into an ImportError
            if _interrupted:
                raise KeyboardInterrupt from None
            raise
        status = main(argv)
        if argv is None:
            signal.signal(signal.SIGINT, _interrupted_while_exiting)
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):  # a reader that went away, a stream closed: nothing more to say
                    pass
            atexit._run_exitfuncs()  # what libraries asked to run at exit still runs
            os._exit(status)
        return status
    except KeyboardInterrupt as error:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while exiting must not print a traceback
        cli = sys.modules.get(f"{__package__}.cli")
        if getattr(error, "swapped", False):
            line = "plate: interrupted; the new site was already swapped in"
        elif cli is not None and cli._after:  # the work was done: the new site is in place
            line = cli.after_the_end()
        else:
            line = "plate: interrupted; nothing was changed"
        print(line, file=sys.stderr)
        return 130


def _interrupted_while_exiting(signum, frame) -> None:
    """Ctrl-C after the command's work and report, as it exits."""
    cli = sys.modules.get(f"{__package__}.cli")
    line = cli.after_the_end() if cli is not None else "plate: interrupted after it had finished"
    os.write(2, (line + "\n").encode())
    os._exit(130)


if __name__ == "__main__":
    sys.exit(run())
