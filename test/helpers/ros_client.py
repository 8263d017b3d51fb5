"""An rclpy client node spun in a background thread, for tests that talk to nodes over DDS."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import rclpy
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.task import Future

from llm_planner_msgs.action import PlanTask


def wait_future(future: Future, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no answer within {timeout}s")
        time.sleep(0.01)
    return future.result()


@dataclass
class GoalRun:
    handle: Any
    feedback: list = field(default_factory=list)
    first_feedback: threading.Event = field(default_factory=threading.Event)
    result_future: Optional[Future] = None

    def result(self, timeout: float = 30.0):
        """(status, PlanTask.Result)."""
        response = wait_future(self.result_future, timeout)
        return response.status, response.result


class RosTestClient:
    def __init__(self, namespace: str = "/") -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("test_client", namespace=namespace, context=self.context)
        self.executor = MultiThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self.executor.spin, daemon=True)
        self._thread.start()
        self.plan_client = ActionClient(self.node, PlanTask, "plan_task")
        self._action_clients: dict[tuple[type, str], ActionClient] = {}

    def action_client(self, action_type: type, name: str) -> ActionClient:
        """One client per action for the life of this test client: destroying an action client
        while the executor spins kills the spin thread (rclpy), so clients go only at close()."""
        key = (action_type, name)
        if key not in self._action_clients:
            self._action_clients[key] = ActionClient(self.node, action_type, name)
        return self._action_clients[key]

    def send_plan(self, goal: PlanTask.Goal, timeout: float = 30.0) -> GoalRun:
        if not self.plan_client.wait_for_server(timeout_sec=timeout):
            raise TimeoutError("plan_task action server not found")
        run = GoalRun(handle=None)

        def on_feedback(msg):
            run.feedback.append(msg.feedback)
            run.first_feedback.set()

        run.handle = wait_future(self.plan_client.send_goal_async(goal, feedback_callback=on_feedback),
                                 timeout)
        if run.handle.accepted:
            run.result_future = run.handle.get_result_async()
        return run

    def cancel(self, run: GoalRun, timeout: float = 10.0):
        return wait_future(run.handle.cancel_goal_async(), timeout)

    def __enter__(self) -> "RosTestClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.executor.shutdown()
        self._thread.join(5.0)   # the spinner is done before its clients and node go
        for client in [self.plan_client, *self._action_clients.values()]:
            client.destroy()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
