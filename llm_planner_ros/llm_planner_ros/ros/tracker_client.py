"""PET's subtask judge over ROS: asks the tracker node's ``check_subtask`` service."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Optional

from rclpy.client import Client
from rclpy.node import Node

from llm_planner_msgs.srv import CheckSubtask
from llm_planner_ros.core.errors import CancelToken, PlanningError
from llm_planner_ros.core.types import TerminationReason
from llm_planner_ros.pet.judges import Answer
from llm_planner_ros.ros.liveness import PeerWatch, call_peer


class TrackerUnavailable(PlanningError):
    """The tracker node did not answer, or went away."""

    reason = TerminationReason.TRACKER_ERROR


class RosSubtaskJudge:
    def __init__(self, node: Node, timeout_s: float = 30.0, wait_s: float = 5.0,
                 stop: Callable[[], Optional[CancelToken]] = lambda: None) -> None:
        self.client: Client[Any, Any] = node.create_client(CheckSubtask, "check_subtask")
        self.tracker = PeerWatch(node, "tracker")
        self.timeout_s = timeout_s
        self.wait_s = wait_s
        self.stop = stop

    def ask(self, task: str, subtask: str, observations: Sequence[str], subtasks: Sequence[str] = (),
            pointer: int = -1) -> Answer:
        request = CheckSubtask.Request(task=task, subtask=subtask, observations=list(observations),
                                       subtasks=list(subtasks), pointer=pointer)
        response = call_peer(self.client, request, self.tracker, "the tracker", TrackerUnavailable, self.wait_s,
                             self.timeout_s, self.stop())
        return Answer(response.done, float(response.probability), response.source)
