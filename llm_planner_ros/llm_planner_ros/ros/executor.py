"""The nodes' executor: rclpy's MultiThreadedExecutor, less a busy loop of rclpy 9.x.

rclpy's executor yields every task that has not started yet on every wake-up, and the
multi-threaded one submits it to its thread pool again each time (ros2/rclpy#1452, fixed in rclpy
10.0.4; Kilted's rclpy 9.1 has it). A task that waits for a pool thread (a future's done callback,
say) makes the spin thread loop without waiting, queue it again and again, and scan the growing
list of submissions on each turn: the planner node was measured with 5,375 of them queued, its spin
thread busy and later goals slower than earlier ones. Here a task already queued is not queued
again; the spin thread yields the processor instead, so that a pool thread can start it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Optional

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)

QUEUED_YIELD_S = 0.0005   # the spin thread's pause when all it finds is a task already queued


class NodeExecutor(MultiThreadedExecutor):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queued: set[Any] = set()
        self._queued_lock = threading.Lock()

    def _spin_once_impl(self, timeout_sec: Optional[Any] = None,
                        wait_condition: Callable[[], bool] = lambda: False) -> None:
        try:
            handler, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        with self._queued_lock:
            queued = handler in self._queued
            self._queued.add(handler)
        if queued:
            time.sleep(QUEUED_YIELD_S)
            return

        def run() -> None:
            with self._queued_lock:
                self._queued.discard(handler)
            handler()
        self._executor.submit(run)
        self._futures.append(handler)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()   # raise any exception of a callback, as rclpy does
