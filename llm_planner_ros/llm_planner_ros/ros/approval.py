"""Approval over ROS: the planner publishes an ApprovalRequest and waits for the operator's
answer on its ``approve`` service, for at most ``approval_timeout_s``.

An answer must carry the request's digest (:func:`~llm_planner_ros.safety.policy.approval_digest`),
recomputed by the operator's tool from the content it showed; an answer for other content (a
republished request id with other scripts) is refused, and the request keeps waiting."""
from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Optional

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from llm_planner_msgs.msg import ApprovalRequest
from llm_planner_msgs.srv import Approve
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.secrets import redact
from llm_planner_ros.core.types import Skill
from llm_planner_ros.ros.qos import LATCHED
from llm_planner_ros.safety.policy import approval_digest


class RosApprover:
    def __init__(self, node: Node, timeout_s: Callable[[], float], goal_info: Callable[[], tuple[str, str]],
                 awaiting: Callable[[str, str], None] = lambda goal_id, what: None) -> None:
        """``timeout_s()`` is the current approval timeout (a live parameter); ``goal_info()``
        gives (goal id, task) of the goal being planned; ``awaiting(goal id, what)`` is told what
        the goal waits for while a request waits, and "" once it is answered."""
        self.node = node
        self.timeout_s = timeout_s
        self.goal_info = goal_info
        self.awaiting = awaiting
        self._pending: dict[str, tuple[str, threading.Event, list]] = {}
        self._lock = threading.Lock()
        self._pub = node.create_publisher(ApprovalRequest, "approval_request", LATCHED)
        node.create_service(Approve, "approve", self._answer, callback_group=ReentrantCallbackGroup())

    def _answer(self, request: Approve.Request, response: Approve.Response) -> Approve.Response:
        with self._lock:
            waiting = self._pending.get(request.request_id)
            if waiting is None:
                response.accepted, response.message = False, f"no approval {request.request_id!r} is waiting"
                return response
            digest, event, answers = waiting
            if request.digest != digest:
                self.node.get_logger().warning(f"refused an answer to approval {request.request_id}: its digest "
                                               "is not that of the content published")
                response.accepted = False
                response.message = ("the digest does not match the request's content: approve only what "
                                    "approval_request published, with the digest recomputed from it")
                return response
            answers.append((request.approve, request.reason))
            event.set()
        response.accepted, response.message = True, "approved" if request.approve else "denied"
        return response

    def __call__(self, skills: Sequence[Skill], kind: str, stop: CancelToken, scripts: Optional[Sequence[str]] = None,
                 alternatives: Sequence[str] = (), confidence: float = math.nan,
                 why: str = "") -> Optional[tuple[bool, str]]:
        """(approved, reason), or None when no answer came in time. Kind "goal" (an interpreted goal
        to confirm): ``skills`` carry its conditions in words, ``scripts`` its lines, with up to three
        ``alternatives`` in words, its ``confidence`` and ``why`` it is asked."""
        goal_id, task = self.goal_info()
        request_id = uuid.uuid4().hex[:12]
        scripts = list(scripts) if scripts is not None else [s.script() for s in skills]
        digest = approval_digest(request_id, goal_id, kind, scripts)
        event = threading.Event()
        answers: list[tuple[bool, str]] = []
        timeout_s = self.timeout_s()
        with self._lock:
            self._pending[request_id] = (digest, event, answers)
        # the scripts are the approved content (the digest's); task and texts are what may carry a secret
        self._pub.publish(ApprovalRequest(request_id=request_id, goal_id=goal_id, kind=kind, task=redact(task),
                                          scripts=scripts, texts=[redact(s.text) for s in skills],
                                          timeout_s=float(timeout_s), digest=digest,
                                          alternatives=[redact(a) for a in alternatives][:3],
                                          confidence=float(confidence), why=redact(why)))
        what = {"step": f"step {scripts[0] if scripts else ''}", "plan": f"a plan of {len(skills)} steps",
                "goal": f"the goal {', '.join(scripts)}"}.get(kind, kind)
        asked = "approval" if kind != "goal" else "confirmation"
        self.node.get_logger().info(f"waiting up to {timeout_s:.0f}s for {asked} {request_id} of {what}")
        remove = stop.on_stop(event.set)
        proposal = ""
        if kind == "goal":   # the proposal in words, how sure, and what else the task may mean
            sure = "unknown" if math.isnan(confidence) else f"{confidence:.2f}"
            proposal = f" ({' '.join(redact(s.text) for s in skills)}; confidence {sure}" + \
                (f"; or: {'; '.join(redact(a) for a in alternatives[:3])}" if alternatives else "") + \
                (f"; asked because {redact(why)}" if why else "") + ")"
        self.awaiting(goal_id, f"{asked} of {what}{proposal} (request {request_id}, up to {timeout_s:.0f} s): "
                               f"answer on {self.node.resolve_service_name('approve')} or in the operator console")
        try:
            if not event.wait(timeout_s):
                return None
            stop.check()
            return answers[0]
        finally:
            remove()
            self.awaiting(goal_id, "")
            with self._lock:
                self._pending.pop(request_id, None)
