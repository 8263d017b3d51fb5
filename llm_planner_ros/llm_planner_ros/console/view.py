"""What the operator console shows, kept from the stack's topics; ROS-free and thread-safe.

The ROS side feeds it plain dicts (``plan``, ``goal_queue``, ``tracker_state``,
``approval_request``); the web side reads snapshots and waits for changes."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Optional

from llm_planner_ros.safety.policy import approval_digest

RUNNING = ("planning", "awaiting_approval")
KEEP_APPROVALS = 100   # requests remembered (one waits at a time per goal)


class ConsoleView:
    def __init__(self, keep_goals: int = 20, namespace: str = "/") -> None:
        self.keep_goals = keep_goals
        self.namespace = namespace
        self._lock = threading.Lock()
        self._goals: dict[str, dict] = {}          # by goal id, from `plan`, newest last
        self._queue: list[dict] = []               # from `goal_queue`: active first, then queued
        self._tracker: dict = {}
        self._approvals: dict[str, dict] = {}      # by request id
        self._answered: set[str] = set()
        self._planner_up = False
        self.version = 0
        self._listeners: list[Callable[[], None]] = []

    # -- from the stack ------------------------------------------------------------------
    def on_plan(self, state: dict) -> None:
        with self._lock:
            self._goals.pop(state["goal_id"], None)
            self._goals[state["goal_id"]] = state
            while len(self._goals) > self.keep_goals:
                self._goals.pop(next(iter(self._goals)))
        self._changed()

    def on_queue(self, goals: list[dict]) -> None:
        with self._lock:
            self._queue = goals
        self._changed()

    def on_tracker(self, state: dict) -> None:
        with self._lock:
            self._tracker = state
        self._changed()

    def on_approval_request(self, request: dict) -> None:
        """A request as published. The same request id published again with other content (a
        rogue publisher, or a replay) marks it ``conflict``: the console then approves it never."""
        content = approval_digest(request["request_id"], request["goal_id"], request["kind"], request["scripts"])
        with self._lock:
            before = self._approvals.get(request["request_id"])
            conflict = before is not None and (before["conflict"] or before["content_digest"] != content)
            self._approvals[request["request_id"]] = {
                **request, "received": before["received"] if before else time.time(),
                "content_digest": content, "conflict": conflict,
                "content_matches_digest": content == request["digest"]}
            while len(self._approvals) > KEEP_APPROVALS:   # the oldest have long been answered or expired
                self._answered.discard(self._approvals.pop(next(iter(self._approvals)))["request_id"])
        self._changed()

    def on_planner(self, up: bool) -> None:
        if up != self._planner_up:
            self._planner_up = up
            self._changed()

    # -- for the operator ----------------------------------------------------------------
    def approval(self, request_id: str) -> Optional[dict]:
        """A pending request as held now, with the digest recomputed from its content: the
        caller compares it with the ``content_digest`` the operator's page showed."""
        with self._lock:
            shown = self._approvals.get(request_id)
        if shown is None or request_id in self._answered:
            return None
        return {**shown, "digest": shown["content_digest"]}

    def answered(self, request_id: str) -> None:
        with self._lock:
            self._answered.add(request_id)
        self._changed()

    def snapshot(self) -> dict[str, Any]:
        now = time.time()
        with self._lock:
            active = self._queue[0]["goal_id"] if self._queue and self._queue[0]["status"] in RUNNING else ""
            # only the goal's newest request, and only while the planner says the goal waits for
            # an answer (its plan status; the queue's until its plan is heard): one answered
            # elsewhere, or latched from before this console started, is not shown
            status = self._goals.get(active, self._queue[0] if active else {}).get("status")
            newest = [a for a in self._approvals.values() if a["goal_id"] == active][-1:]
            approvals = [a for a in newest
                         if status == "awaiting_approval" and a["request_id"] not in self._answered
                         and now - a["received"] < a["timeout_s"]]
            return {"version": self.version, "namespace": self.namespace, "planner_up": self._planner_up,
                    "active": active,
                    "queue": list(self._queue), "goals": list(reversed(self._goals.values())),
                    "tracker": dict(self._tracker),
                    "approvals": [{**a, "seconds_left": round(a["timeout_s"] - (now - a["received"]), 1)}
                                  for a in approvals]}

    def listen(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (from any thread) after every change; returns its remover."""
        with self._lock:
            self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def _changed(self) -> None:
        with self._lock:
            self.version += 1
            listeners = list(self._listeners)
        for callback in listeners:
            callback()


def past_goals(traces: list[dict], limit: int) -> list[dict]:
    """The newest ``limit`` goals of a trace log (``trace.log.read_traces``), newest first."""
    goals = []
    for goal in traces[-limit:][::-1]:
        end = goal.get("end") or {}
        request = goal.get("request") or {}
        goals.append({"goal_id": goal["trace"], "task": request.get("task", ""),
                      "method": request.get("method") or "", "started": goal.get("started"),
                      "ended": end.get("t"), "success": bool(end.get("success")),
                      "termination": end.get("termination") or ("error" if end.get("error") else "no end recorded"),
                      "detail": end.get("detail") or end.get("error", ""), "hazards": end.get("hazards") or [],
                      "steps": [{"index": s.get("index"), "skill": s.get("skill", ""), "executed": s.get("executed")}
                                for s in (end.get("steps") or goal.get("steps") or [])]})
    return goals
