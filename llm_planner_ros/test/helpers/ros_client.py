"""A test client over DDS: the product's PlannerClient facade, plus the test's own clients and
subscriptions on its node."""
from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from rclpy.action import ActionClient
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from llm_planner_msgs.action import ExecuteSkill, PlanTask
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.action_goal import SpinSafeActionClient
from llm_planner_ros.ros.client import PlannerClient
from llm_planner_ros.ros.liveness import ask_until_answered


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
        self.planner = PlannerClient(namespace, node_name="test_client")
        self.node = self.planner.node
        self._action_clients: dict[tuple[type, str], ActionClient] = {}
        self._service_clients: dict[tuple[type, str], Any] = {}
        self.arrivals: list[tuple[GoalRun, Any]] = []   # every goal's feedback, in the order it arrived

    def action_client(self, action_type: type, name: str) -> ActionClient:
        """One client per action for the life of this test client: destroying an action client
        while the executor spins kills the spin thread (rclpy), so clients go with the node.
        Each is made on an attached node (one made on the spinning node races the executor)."""
        key = (action_type, name)
        if key not in self._action_clients:
            self._action_clients[key] = self.planner.attach(lambda node: SpinSafeActionClient(node, action_type, name))
        return self._action_clients[key]

    def send_plan(self, goal: PlanTask.Goal, timeout: float = 30.0) -> GoalRun:
        if not self.planner.wait_until_ready(timeout):
            raise TimeoutError("plan_task action server not found")
        run = GoalRun(handle=None)

        def on_feedback(feedback) -> None:
            run.feedback.append(feedback)
            self.arrivals.append((run, feedback))
            run.first_feedback.set()
        sent = self.planner.send_goal(goal, on_feedback, timeout)
        run.handle, run.result_future = sent.handle, sent.result_future
        return run

    def service(self, srv_type: type, name: str) -> Any:
        """One client per service for the life of this test client, made on an attached node."""
        key = (srv_type, name)
        if key not in self._service_clients:
            self._service_clients[key] = self.planner.attach(lambda node: node.create_client(srv_type, name))
        return self._service_clients[key]

    def call(self, srv_type: type, name: str, request: Any, timeout: float = 60.0) -> Any:
        """The answer to an idempotent ``request``. A server listed in the graph may not have
        matched this client yet (under load, for seconds), and a request sent then is lost: it
        is sent again every 5 s (the product's own resend loop, ``ask_until_answered``)."""
        client = self.service(srv_type, name)
        started = time.monotonic()
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"no '{name}' service within {timeout:g} s")
        waited, answer = ask_until_answered(client, request, max(0.1, timeout - (time.monotonic() - started)))
        if waited == "done":
            return answer
        # what a failure under load needs to be told apart: a dead spin thread, or answers never taken
        raise TimeoutError(f"'{name}' did not answer within {timeout:g} s (this client's spin thread "
                           f"{'alive' if self.planner._spinner.is_alive() else 'dead'}; "
                           f"service ready: {client.service_is_ready()})")

    def cancel(self, run: GoalRun, timeout: float = 10.0):
        return wait_future(run.handle.cancel_goal_async(), timeout)

    def __enter__(self) -> RosTestClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.planner.close()


def send_goal(ac: ActionClient, goal: Any, timeout: float = 60.0) -> Any:
    """The goal handle of ``goal`` sent on ``ac``. A goal request sent before the server has
    matched this client is lost (the server is listed first): it is sent again every 5 s, with
    the same goal id, as the product's clients do."""
    goal_id = UUID(uuid=list(uuid.uuid4().bytes))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return wait_future(ac.send_goal_async(goal, goal_uuid=goal_id), 5)
        except TimeoutError:
            continue
    raise TimeoutError(f"the goal was not answered within {timeout:g} s")


def execute_skill(client: RosTestClient, skill) -> Any:
    """The bridge's (or the robot's) ExecuteSkill result for ``skill``, sent straight to it."""

    ac = client.action_client(ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=30)
    handle = send_goal(ac, ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill)))
    return wait_future(handle.get_result_async(), 60).result


def lose_first_goal_answer(client: ActionClient) -> list:
    """Make rclpy's lost-answer race (llm_planner_ros/ros/action_goal.py) happen on ``client``'s
    first goal: the goal really goes out, and ``send_goal_async`` raises the ValueError that
    rclpy raises when the answer comes in too soon. Returns the futures of every goal sent."""
    real = client.send_goal_async
    sent: list = []

    def send_goal_async(*args: Any, **kwargs: Any) -> Future:
        sent.append(real(*args, **kwargs))
        if len(sent) == 1:
            raise ValueError("list.remove(x): x not in list")
        return sent[-1]
    client.send_goal_async = send_goal_async
    return sent
