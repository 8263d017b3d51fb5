"""NodeExecutor on rclpy's real executor machinery: a task that waits for a thread is queued once."""
import threading

import rclpy
from rclpy.executors import MultiThreadedExecutor

from llm_planner_ros.ros.executor import NodeExecutor


def queued_while_the_thread_is_busy(executor_type) -> tuple[int, bool]:
    """With its one thread held by a task, spin 50 times while a second task waits: how many
    submissions are outstanding then, and whether the waiting task ran once the thread was free."""
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = executor_type(num_threads=1, context=context)
    try:
        release, started = threading.Event(), threading.Event()
        executor.create_task(lambda: (started.set(), release.wait(10)))
        while not started.is_set():
            executor.spin_once(timeout_sec=0.1)
        ran = threading.Event()
        executor.create_task(ran.set)
        for _ in range(50):
            executor.spin_once(timeout_sec=0.01)
        queued = len(executor._futures)
        release.set()
        for _ in range(200):
            if ran.is_set():
                break
            executor.spin_once(timeout_sec=0.01)
        return queued, ran.wait(5)
    finally:
        executor.shutdown(timeout_sec=5)
        rclpy.shutdown(context=context)


def test_a_task_waiting_for_a_thread_is_queued_once():
    queued, ran = queued_while_the_thread_is_busy(NodeExecutor)
    assert queued <= 2 and ran   # the blocker and the waiting task, each submitted once


def test_rclpys_executor_queues_it_on_every_wake_up():
    """Why NodeExecutor exists (ros2/rclpy#1452): when this fails, the installed rclpy has the fix."""
    queued, ran = queued_while_the_thread_is_busy(MultiThreadedExecutor)
    assert queued > 10 and ran
