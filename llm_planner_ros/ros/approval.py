"""Approval over ROS: the planner publishes an ApprovalRequest and waits for the operator's
answer on its ``approve`` service, for at most ``approval_timeout_s``."""
from __future__ import annotations

import threading
import uuid
from typing import Callable, Optional, Sequence

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from llm_planner_msgs.msg import ApprovalRequest
from llm_planner_msgs.srv import Approve

from llm_planner_ros.core.errors import PlanCanceled
from llm_planner_ros.core.types import Skill
from llm_planner_ros.ros.planner_node import LATCHED


class RosApprover:
    def __init__(self, node: Node, timeout_s: float, goal_info: Callable[[], tuple[str, str, bool]]) -> None:
        """``goal_info()`` gives (goal id, task, cancel requested) of the goal being planned."""
        self.node = node
        self.timeout_s = timeout_s
        self.goal_info = goal_info
        self._pending: dict[str, tuple[threading.Event, list]] = {}
        self._lock = threading.Lock()
        self._pub = node.create_publisher(ApprovalRequest, "approval_request", LATCHED)
        node.create_service(Approve, "approve", self._answer, callback_group=ReentrantCallbackGroup())

    def _answer(self, request: Approve.Request, response: Approve.Response) -> Approve.Response:
        with self._lock:
            waiting = self._pending.get(request.request_id)
            if waiting is None:
                response.accepted, response.message = False, f"no approval {request.request_id!r} is waiting"
                return response
            waiting[1].append((request.approve, request.reason))
            waiting[0].set()
        response.accepted, response.message = True, "approved" if request.approve else "denied"
        return response

    def __call__(self, skills: Sequence[Skill], kind: str) -> Optional[tuple[bool, str]]:
        goal_id, task, _ = self.goal_info()
        request_id = uuid.uuid4().hex[:12]
        event, answers = threading.Event(), []
        with self._lock:
            self._pending[request_id] = (event, answers)
        self._pub.publish(ApprovalRequest(request_id=request_id, goal_id=goal_id, kind=kind, task=task,
                                          scripts=[s.script() for s in skills], texts=[s.text for s in skills],
                                          timeout_s=float(self.timeout_s)))
        self.node.get_logger().info(f"waiting up to {self.timeout_s:.0f}s for approval {request_id} of "
                                    f"{skills[0].script() if kind == 'step' else f'a plan of {len(skills)} steps'}")
        try:
            waited = 0.0
            while not event.wait(0.1):
                waited += 0.1
                if self.goal_info()[2]:
                    raise PlanCanceled("canceled while waiting for approval")
                if waited >= self.timeout_s:
                    return None
            return answers[0]
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
