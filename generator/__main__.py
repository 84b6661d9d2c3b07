"""`python -m generator` and the `plate` command: imports lazily, so Ctrl-C even during start-up is one line."""
import sys


def run(argv: list[str] | None = None) -> int:
    """Run `plate`; Ctrl-C at any moment (while modules load, builds or serves) ends it with one line, status 130."""
    try:
        from .cli import main  # numpy, Altair, vl-convert: most of the start-up time
        return main(argv)
    except KeyboardInterrupt as error:
        import signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while exiting must not print a traceback
        swapped = getattr(error, "swapped", False)
        print("plate: interrupted; the new site was already swapped in" if swapped else
              "plate: interrupted; nothing was changed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(run())
