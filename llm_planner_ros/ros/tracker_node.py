"""Tracker node: serves ``check_subtask`` (CheckSubtask) and publishes ``tracker_state``
(latched).

Until the PET tracker (Wu et al.) lands it answers only what it can check honestly: whether the
whole task is done, from the goal conditions the executor bridge reports. A question about any
other subtask is answered "not done" with probability 0.5 and source "unknown", saying why.
"""
from __future__ import annotations

from typing import Optional

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from llm_planner_msgs.msg import TrackerState
from llm_planner_msgs.srv import CheckSubtask

from llm_planner_ros.core.errors import ExecutorError
from llm_planner_ros.ros.spin import spin_node
from llm_planner_ros.ros.executor_client import RosExecutor
from llm_planner_ros.ros.planner_node import LATCHED


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


class TrackerNode(Node):
    def __init__(self) -> None:
        super().__init__("tracker")
        group = ReentrantCallbackGroup()
        self.bridge = RosExecutor(self, skill_timeout_s=30.0, wait_s=2.0)
        self.state = TrackerState(pointer=-1)
        self._pub = self.create_publisher(TrackerState, "tracker_state", LATCHED)
        self._pub.publish(self.state)
        self.create_service(CheckSubtask, "check_subtask", self._check, callback_group=group)
        self.get_logger().info("serving 'check_subtask' (goal conditions from the executor bridge)")

    def _check(self, request: CheckSubtask.Request, response: CheckSubtask.Response) -> CheckSubtask.Response:
        whole_task = not request.subtask.strip() or normalise(request.subtask) == normalise(request.task)
        goal: Optional[bool] = None
        if whole_task:
            try:
                goal = self.bridge.goal_met()
            except ExecutorError as exc:
                response.detail = f"cannot reach the executor bridge: {exc}"
        if goal is not None:
            response.done, response.probability = goal, 1.0 if goal else 0.0
            response.source = "goal_check"
            response.detail = "the executor reports the goal conditions " + ("met" if goal else "not met")
        else:
            response.done, response.probability, response.source = False, 0.5, "unknown"
            response.detail = response.detail or (
                "the executor cannot check goal conditions for this task" if whole_task else
                f"subtask {request.subtask!r} cannot be checked without the PET tracker; only the whole "
                "task's goal conditions can be checked")
        if request.task != self.state.task:
            self.state.goal_met = False
        self.state.task = request.task
        if goal is not None:
            self.state.goal_met = goal
        self.state.source = response.source
        self.state.last_question = request.subtask or request.task
        self.state.last_answer = response.done
        self._pub.publish(self.state)
        return response


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(TrackerNode, "tracker", args))

