"""Wait for an rclpy future from a callback thread without spinning (a MultiThreadedExecutor's
other threads complete it; spinning inside a callback deadlocks, ros2/rclpy#1313)."""
from __future__ import annotations

import threading
from typing import Any, Optional

from rclpy.task import Future


def wait_for(future: Future, timeout_s: float) -> Optional[Any]:
    """The future's result, or None when it is not done within ``timeout_s``."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()
