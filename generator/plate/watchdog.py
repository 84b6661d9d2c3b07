"""The watchdog: `plate` runs its command in a child process and waits, so that a plate hook that ends the process
(os._exit, a crash in C code, a signal) is still one line naming the plate's file, line and hook, with a non-zero
exit. The child says which hook it is in through a page of memory shared with the parent (no system call per
hook); the parent reads it once the child is gone. Nothing here imports more than the standard library."""
from __future__ import annotations

import itertools
import os
import signal
import sys
import threading

PAGE_BYTES = 4096  # the shared page: the innermost hook running, as UTF-8 ending in NUL
SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD}
SHARED = None  # the shared page, in the child of a watched command; None when nothing watches (tests, --version)
_open: dict[int, str] = {}  # {token: "FILE, line N: the plate module's hook H"} of the hook calls running
_tokens = itertools.count(1)
_lock = threading.Lock()


def _write() -> None:
    """The innermost hook running (the last entered of those still open) into the shared page (the lock held)."""
    text = next(reversed(_open.values())) if _open else ""
    data = text.encode("utf-8", "replace")[:PAGE_BYTES - 1] + b"\0"
    SHARED[:len(data)] = data


def enter(describe) -> int:
    """A hook call begins: describe() names it; a token for leave(), 0 when nothing watches."""
    if SHARED is None:
        return 0
    text = describe()
    with _lock:
        token = next(_tokens)
        _open[token] = text
        _write()
    return token


def leave(token: int) -> None:
    """The hook call of this token returned or raised."""
    if SHARED is None or not token:
        return
    with _lock:
        _open.pop(token, None)
        _write()


def _dies_with_parent(parent: int) -> None:
    """The child is killed should the parent die (a SIGKILL to `plate` takes its work with it)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before that was set
        os._exit(128 + signal.SIGKILL)


def watch() -> None:
    """Fork: the child returns and runs the command; the parent forwards the signals sent to it (not those the
    terminal sent the whole process group, which the child had too), waits for the child and ends as it ended, or,
    when the child died inside a plate hook, with one line naming it and status 1. Where fork is not possible, the
    command runs unwatched."""
    global SHARED
    import mmap
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        shared = mmap.mmap(-1, PAGE_BYTES)  # anonymous and shared: the child's writes are the parent's to read
        parent = os.getpid()
        child = os.fork()
    except (OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        return
    if child == 0:
        _dies_with_parent(parent)
        SHARED = shared
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        return
    while True:
        info = signal.sigwaitinfo(SIGNALS)
        if info.si_signo == signal.SIGCHLD:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                break
        elif info.si_pid != 0:  # sent by a process (kill, a test, a supervisor): the child must have it too
            try:
                os.kill(child, info.si_signo)
            except ProcessLookupError:
                pass
    _end_as(status, bytes(shared[:PAGE_BYTES]).split(b"\0", 1)[0].decode("utf-8", "replace"), previous)


def _end_as(status: int, hook: str, previous) -> None:
    """End the parent as the child ended; when a hook was running, one line naming it and status 1."""
    if hook:
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            how = f"was killed by {_name(number)}"
            hint = " (a crash in C code, or a signal sent to the process)" if number != signal.SIGKILL else \
                " (sent by the plate itself, or by the system for want of memory)"
        else:
            how = f"ended the process with exit status {os.WEXITSTATUS(status)}"
            hint = " (os._exit, or C code that exits)"
        os.write(2, f"plate: {hook} {how}{hint}; a plate module must return or raise, never end the process; "
                    f"the command stopped there, and the site is replaced only once every hook has returned\n"
                 .encode("utf-8", "replace"))
        os._exit(1)
    if os.WIFSIGNALED(status):  # as the child was: a Ctrl-C during the interpreter's start-up, say
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


