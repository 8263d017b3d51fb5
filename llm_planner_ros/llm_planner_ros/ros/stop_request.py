"""A Ctrl-C or SIGTERM that a process's main loop waits for.

The signal handler only assigns a flag. A ``threading.Event`` cannot serve: its ``set()`` takes
a lock, and a second signal that lands while the first handler is inside ``set()`` runs a
second handler that waits on that lock forever. Two signals a moment apart is the usual case: a
terminal's Ctrl-C reaches the whole process group, and ``llm_planner_stack`` (or ``ros2
launch``) forwards its own to each node. A node of the stack hung so, until it was killed."""
from __future__ import annotations

import signal
import time
from typing import Any

POLL_S = 0.05   # how soon ``wait`` sees the flag (a sleep a signal interrupts, then resumes)


class StopRequest:
    """Install on SIGINT and SIGTERM with :meth:`install`; :meth:`restore` puts the previous
    handlers back."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}   # signal.signal's previous handlers

    def _handle(self, signum, frame) -> None:
        self.requested = True

    def install(self, signals=(signal.SIGINT, signal.SIGTERM)) -> StopRequest:
        for sig in signals:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def wait(self, timeout: float) -> bool:
        """True once a stop was requested; False when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        while not self.requested:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, POLL_S))
        return True
