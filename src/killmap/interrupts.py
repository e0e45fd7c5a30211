"""The ending signals, raised in the main thread while a command runs, and never lost.

SIGINT raises KeyboardInterrupt and SIGTERM or SIGHUP raise Terminated, so a cancelled CI
job, `timeout` or ^C unwinds the gate through every `finally` that stops its workers and
removes its scratch. Three rules:

- One interrupt at a time: a signal that comes while an interrupt is being handled anywhere
  on the main thread's stack (unwinding through a `finally`, or behind an error raised
  meanwhile) is ignored, so a burst of ^C cannot cut short the stopping of the workers.
- An interrupt is never lost. C code that clears whatever error it meets (an extension
  module's initialisation, when ^C lands in a lazy import: `_elementtree`'s did) swallows
  the exception raised inside it, and the gate ran on to its end and exited 0. So the first
  signal is sent again every REPEAT_SECONDS until its interrupt is taken by the command line
  or seen unwinding, and a command that returns all the same ends as interrupted.
- The previous handlers come back after, so main() called in another program leaves its
  handlers as they were. Only in the main thread, the one that may set handlers; SIGINT only
  when it is not ignored (nohup, `&`). Workers never inherit them: they are started by exec,
  which resets a Python handler to the default.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
REPEAT_SECONDS = 0.2


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as ^C raises KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def interrupt_behind(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The interrupt `exc` is, or was raised while handling (Python 3.11 wraps ^C during a
    class's creation in RuntimeError("Error calling __set_name__"))."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


class Interrupts:
    """The handler's state for one command: the first signal, and whether its interrupt was
    taken (the command line caught it and is ending)."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.taken = False
        self._ended = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def pending(self) -> KeyboardInterrupt | None:
        """The interrupt the command still owes, when a signal came and was never taken."""
        if self.first is None or self.taken:
            return None
        return _raised_for(self.first)

    def handle(self, signum: int, frame: object) -> None:
        if self.taken or self._ended or interrupt_behind(sys.exc_info()[1]) is not None:
            return
        if self.first is None:
            self.first = signum
            self._send_again_later()
        raise _raised_for(self.first)

    def _send_again_later(self) -> None:
        with self._lock:
            if self._ended or self.taken:
                return
            self._timer = threading.Timer(REPEAT_SECONDS, self._send_again)
            self._timer.daemon = True
            self._timer.start()

    def _send_again(self) -> None:
        with self._lock:
            if self._ended or self.taken or self.first is None:
                return
            os.kill(os.getpid(), self.first)
        self._send_again_later()

    def end(self) -> None:
        with self._lock:
            self._ended = True
            timer = self._timer
        if timer is not None:
            timer.cancel()
            timer.join()


def _raised_for(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


@contextmanager
def raised_in_main_thread() -> Iterator[Interrupts]:
    """While the block runs, the ending signals raise (the module's rules)."""
    interrupts = Interrupts()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {signum: signal.signal(signum, interrupts.handle) for signum in ENDING_SIGNALS}
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, interrupts.handle)
    try:
        yield interrupts
    finally:
        interrupts.end()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def held() -> Iterator[None]:
    """While the block runs, an ending signal is noted, not raised; the first noted is raised at
    the block's end, by the handler that was in place. For a block that starts a process and
    hands it to what will stop it: an interrupt between the fork and the hand-over (Popen's
    pid not yet set, or not yet returned) left a worker no one stopped. In the main thread
    only; a signal whose handler is not Python's (ignored, or the default) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous: dict[int, Callable[[int, Any], Any]] = {}
    for signum in (signal.SIGINT, *ENDING_SIGNALS):
        handler = signal.getsignal(signum)
        if callable(handler):
            previous[signum] = handler
            signal.signal(signum, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for number, restored in previous.items():
            signal.signal(number, restored)
        if noted:
            previous[noted[0]](noted[0], None)
