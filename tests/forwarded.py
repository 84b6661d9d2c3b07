"""Signals to a `plate` command reach its work through the watchdog (generator/plate/watchdog.py), which forwards them to
the child that runs the command: a test that signals the command and then goes on talking to it waits until the
signal is forwarded."""
from __future__ import annotations

import time


def _status(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as status:
            return dict(line.split(":\t", 1) for line in status.read().splitlines() if ":\t" in line)
    except OSError:
        return {}


def forwarded(process, timeout: float = 30.0) -> None:
    """Wait until the watchdog of process (a Popen of `plate`) holds no signal it has not forwarded: none pending,
    and back asleep waiting for the next (a bound only; a process that ends meanwhile has nothing to forward)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        status = _status(process.pid)
        if not status:
            return
        idle = status.get("State", "").startswith("S")
        if idle and int(status.get("SigPnd", "0"), 16) == 0 and int(status.get("ShdPnd", "0"), 16) == 0:
            return
        time.sleep(0.001)
