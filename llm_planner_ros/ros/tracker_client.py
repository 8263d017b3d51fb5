"""PET's subtask judge over ROS: asks the tracker node's ``check_subtask`` service."""
from __future__ import annotations

from typing import Sequence

from rclpy.node import Node

from llm_planner_msgs.srv import CheckSubtask

from llm_planner_ros.core.errors import PlanningError
from llm_planner_ros.pet.judges import Answer
from llm_planner_ros.ros.wait import wait_for


class TrackerUnavailable(PlanningError):
    """The tracker node did not answer."""


class RosSubtaskJudge:
    def __init__(self, node: Node, timeout_s: float = 30.0, wait_s: float = 5.0) -> None:
        self.client = node.create_client(CheckSubtask, "check_subtask")
        self.timeout_s = timeout_s
        self.wait_s = wait_s

    def ask(self, task: str, subtask: str, observations: Sequence[str], subtasks: Sequence[str] = (),
            pointer: int = -1) -> Answer:
        if not self.client.wait_for_service(timeout_sec=self.wait_s):
            raise TrackerUnavailable(f"the tracker's 'check_subtask' service is not available after {self.wait_s}s")
        request = CheckSubtask.Request(task=task, subtask=subtask, observations=list(observations),
                                       subtasks=list(subtasks), pointer=pointer)
        response = wait_for(self.client.call_async(request), self.timeout_s)
        if response is None:
            raise TrackerUnavailable(f"'check_subtask' did not answer within {self.timeout_s}s")
        return Answer(response.done, float(response.probability), response.source)
