"""Wait for an rclpy future from a callback thread without spinning (a MultiThreadedExecutor's
other threads complete it; spinning inside a callback deadlocks, ros2/rclpy#1313)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Literal, Optional

from rclpy.task import Future

from llm_planner_ros.core.errors import CancelToken

TICK_S = 0.25   # how often a waiter asks whether its peer is still there

Waited = Literal["done", "stopped", "lost", "timeout"]


def wait_for(future: Future, timeout_s: float) -> Optional[Any]:
    """The future's result, or None when it is not done within ``timeout_s``."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()


def wait_future(future: Future, timeout_s: float, stop: Optional[CancelToken] = None,
                lost: Optional[Callable[[], bool]] = None) -> Waited:
    """Wait until ``future`` is done, the goal stops (woken at once), ``lost()`` says the peer
    is gone (asked every ``TICK_S``), or ``timeout_s`` passes; says which came first."""
    wake = threading.Event()
    future.add_done_callback(lambda _: wake.set())
    remove = stop.on_stop(wake.set) if stop is not None else (lambda: None)
    deadline = time.monotonic() + timeout_s
    try:
        while not future.done():
            if stop is not None and stop.cancelled:
                return "stopped"
            if lost is not None and lost():
                return "lost"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            wake.wait(min(TICK_S if lost is not None else left, left))
            wake.clear()
        return "done"
    finally:
        remove()
