"""Approval over ROS: the planner publishes an ApprovalRequest and waits for the operator's
answer on its ``approve`` service, for at most ``approval_timeout_s``.

An answer must carry the request's digest (:func:`~llm_planner_ros.safety.policy.approval_digest`),
recomputed by the operator's tool from the content it showed; an answer for other content (a
republished request id with other scripts) is refused, and the request keeps waiting. The first
valid answer decides; a later one (a second operator's, or one after the time-out) is refused,
saying why."""
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
        self._closed: dict[str, str] = {}   # why a request no longer waits, by id (the latest 100)
        self._lock = threading.Lock()
        self._pub = node.create_publisher(ApprovalRequest, "approval_request", LATCHED)
        node.create_service(Approve, "approve", self._answer, callback_group=ReentrantCallbackGroup())

    def _answer(self, request: Approve.Request, response: Approve.Response) -> Approve.Response:
        with self._lock:
            waiting = self._pending.get(request.request_id)
            if waiting is None:
                response.accepted = False
                response.message = self._closed.get(request.request_id,
                                                    f"no approval {request.request_id!r} is waiting")
                return response
            digest, event, answers = waiting
            if request.digest != digest:
                self.node.get_logger().warning(f"refused an answer to approval {request.request_id}: its digest "
                                               "is not that of the content published")
                response.accepted = False
                response.message = ("the digest does not match the request's content: approve only what "
                                    "approval_request published, with the digest recomputed from it")
                return response
            del self._pending[request.request_id]   # the first answer decides
            self._close(request.request_id, f"approval {request.request_id} was already answered "
                                            f"({'approved' if request.approve else 'denied'})")
            answers.append((request.approve, request.reason))
            event.set()
        response.accepted, response.message = True, "approved" if request.approve else "denied"
        return response

    def _close(self, request_id: str, why: str) -> None:
        """Under the lock: ``request_id`` no longer waits, for ``why`` (a later answer is told so)."""
        self._closed[request_id] = why
        while len(self._closed) > 100:
            del self._closed[next(iter(self._closed))]

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
            woken = event.wait(timeout_s)
            with self._lock:   # an answer either took the request or finds it closed
                answered = request_id not in self._pending
                if not answered:
                    del self._pending[request_id]
                    self._close(request_id, "no goal is waiting for an answer: " + (
                        "it stopped" if stop.cancelled else f"it timed out after {timeout_s:g} s"))
            if answered or woken:
                stop.check()
            return answers[0] if answered else None
        finally:
            remove()
            self.awaiting(goal_id, "")
            with self._lock:
                self._pending.pop(request_id, None)
