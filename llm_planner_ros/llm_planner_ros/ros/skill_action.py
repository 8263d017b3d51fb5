"""Send an ExecuteSkill goal and wait for its end: the one helper the planner (to the executor
bridge) and the bridge (to the robot) both use.

As py_trees_ros's action clients do, it waits on futures, passes a stop (cancel, time limit,
shutdown) on to the server at once, and cancels its goal whenever it stops waiting without a
result. One skill runs at a time: a new one is not sent while the server may still run the last
(one it cancelled, or one whose acceptance it did not see in time: cancelled by its id and waited
for, since the server may accept it late). A skill whose goal stops while it waits its turn is not
sent. A skill the server aborted or cancelled on its own ends ``failed``, the server's status named.

With ``reconcile``, the client owns the server (the bridge owns the robot): before it sends its
first skill it cancels every goal the server still runs, left by a client before it (a bridge
that was killed), and waits until each has ended. It asks the server itself (a cancel of all
goals answers with the goals it cancels; ``get_result`` answers when each has ended), so the
usual case does not depend on a status message arriving in time. An unanswered cancel is sent
again. A goal that the first cancel put to cancelling, its answer lost, is not in the next
answer; the server's status lists it (published before the server answers), so the goals the
status lists as running are waited for too.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Optional

from action_msgs.msg import GoalInfo, GoalStatus, GoalStatusArray
from action_msgs.srv import CancelGoal
from rclpy.action import ActionClient, CancelResponse
from rclpy.action.client import ClientGoalHandle
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from rclpy.qos import qos_profile_action_status_default
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure as FailureMsg
from llm_planner_ros.core.errors import CancelToken, Shutdown
from llm_planner_ros.ros.action_goal import SpinSafeActionClient, send_goal
from llm_planner_ros.ros.liveness import ask_until_answered
from llm_planner_ros.ros.wait import wait_future

# the cancel of all goals and a leftover's result are asked again this often within the short
# wait for a cancel: a server matched a moment ago can lose the first request or its answer
ASK_AGAIN_S = 1.0
RUNNING = (GoalStatus.STATUS_ACCEPTED, GoalStatus.STATUS_EXECUTING, GoalStatus.STATUS_CANCELING)

Ended = Literal["done", "stopped", "timeout", "lost", "unavailable", "rejected", "busy", "failed"]
ENDED_AS = {GoalStatus.STATUS_ABORTED: "aborted", GoalStatus.STATUS_CANCELED: "cancelled"}


@dataclass(frozen=True)
class SkillOutcome:
    ended: Ended
    result: Optional[ExecuteSkill.Result] = None   # the server's result, when it gave one
    message: str = ""                               # why, when it did not end "done"
    stopped_confirmed: bool = True                  # a cancelled skill: the server confirmed it stopped


class GoalStatusWatch:
    """Goal ids an action server lists on its status topic, and those its latest status lists
    as not ended.

    On first DDS contact a goal's acceptance response can be lost while the goal itself arrived;
    the server's (transient-local) status topic still lists it, so its result can be fetched
    without sending the skill twice."""

    def __init__(self, node: Node, action_name: str, group: ReentrantCallbackGroup, keep: int = 256) -> None:
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._running: dict[bytes, UUID] = {}
        self._keep = keep
        self._changed = threading.Condition()
        node.create_subscription(GoalStatusArray, f"{action_name}/_action/status", self._on_status,
                                 qos_profile_action_status_default, callback_group=group)

    def _on_status(self, msg: GoalStatusArray) -> None:
        with self._changed:
            for status in msg.status_list:
                key = bytes(status.goal_info.goal_id.uuid)
                self._seen[key] = None
                self._seen.move_to_end(key)
            while len(self._seen) > self._keep:
                self._seen.popitem(last=False)
            self._running = {bytes(s.goal_info.goal_id.uuid): s.goal_info.goal_id
                             for s in msg.status_list if s.status in RUNNING}
            self._changed.notify_all()

    def running(self) -> dict[bytes, UUID]:
        """The goals the server's latest status lists as accepted, executing or cancelling, by id."""
        with self._changed:
            return dict(self._running)

    def wait_listed(self, goal_id: UUID, timeout_s: float) -> bool:
        key = bytes(goal_id.uuid)
        with self._changed:
            return self._changed.wait_for(lambda: key in self._seen, timeout_s)


class StopAwareLock:
    """A lock whose waiter gives up, woken at once, when its goal stops."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._held = False

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    @contextmanager
    def held(self, stop: Optional[CancelToken] = None) -> Iterator[bool]:
        """Within it the lock is held (True), or ``stop`` stopped while it waited (False)."""
        remove = stop.on_stop(self._wake) if stop is not None else (lambda: None)
        try:
            with self._changed:
                self._changed.wait_for(lambda: not self._held or (stop is not None and stop.cancelled))
                mine = not self._held
                self._held = True
        finally:
            remove()
        try:
            yield mine
        finally:
            if mine:
                with self._changed:
                    self._held = False
                    self._changed.notify_all()


def wait_cancel_recorded(goal_handle: ServerGoalHandle, timeout_s: float) -> bool:
    """Whether rclpy records the goal's cancel within ``timeout_s``: it does so only after the
    cancel callback returns (which already stopped the goal)."""
    deadline = time.monotonic() + timeout_s
    while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
        time.sleep(0.005)   # rclpy gives no event for it
    return goal_handle.is_cancel_requested


def end_stopped(goal_handle: ServerGoalHandle, stop: CancelToken) -> str:
    """End a goal that ``stop`` stopped: canceled where its client's cancel stopped it (ending
    first would make rclpy refuse the cancel it is about to record), else aborted (the node,
    shutting down, stopped it). Returns how it ended."""
    if not isinstance(stop.error, Shutdown) and wait_cancel_recorded(goal_handle, 1.0):
        goal_handle.canceled()
        return "cancelled"
    goal_handle.abort()
    return "stopped"


class GoalStops:
    """An action server's per-goal stop tokens: its cancel callback stops the goal's token at
    once, so an execute callback waits on events instead of polling ``is_cancel_requested``."""

    def __init__(self) -> None:
        self._stops: dict[bytes, CancelToken] = {}
        self._lock = threading.Lock()

    def on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        with self._lock:
            stop = self._stops.get(bytes(goal_handle.goal_id.uuid))
        if stop is not None:
            stop.cancel()
        return CancelResponse.ACCEPT

    def stop_all(self, why: str) -> None:
        """Stop every goal that runs now: the node is shutting down (``why``)."""
        with self._lock:
            stops = list(self._stops.values())
        for stop in stops:
            stop.cancel(Shutdown(why))

    @contextmanager
    def running(self, goal_handle: ServerGoalHandle) -> Iterator[CancelToken]:
        key = bytes(goal_handle.goal_id.uuid)
        stop = CancelToken(lambda: goal_handle.is_cancel_requested)   # a cancel that came first
        with self._lock:
            self._stops[key] = stop
        try:
            yield stop
        finally:
            with self._lock:
                self._stops.pop(key, None)


class SkillActionClient:
    """``run`` sends one skill and waits for its end; see the module's docstring."""

    def __init__(self, node: Node, action_name: str, what: str,
                 went_away: Optional[Callable[[float], bool]] = None, reconcile: bool = False,
                 gone: Optional[Callable[[], bool]] = None) -> None:
        """``what`` names the server in messages ("the executor bridge"); ``went_away(asked_at)``
        says it is gone, while what was asked of it at ``asked_at`` waits, before DDS discovery
        notices (a heartbeat), besides ``server_is_ready``; ``reconcile``: end what the server
        still runs before the first skill (see the module); ``gone()``: what a new skill checks
        first (with a grace for a restarted server)."""
        group = ReentrantCallbackGroup()
        self._reconciled = not reconcile
        self.node = node
        self.what = what
        self.client: ActionClient[Any, Any, Any] = SpinSafeActionClient(node, ExecuteSkill, action_name,
                                                                          callback_group=group)
        # after the action client: DDS discovery announces a node's endpoints in the order they are
        # made, so a server that answers these has most likely matched the skill goal's as well
        self._cancel_all: Client[Any, Any] = node.create_client(CancelGoal, f"{action_name}/_action/cancel_goal",
                                                                callback_group=group)
        self._get_result: Client[Any, Any] = node.create_client(
            ExecuteSkill.Impl.GetResultService, f"{action_name}/_action/get_result", callback_group=group)
        self._status = GoalStatusWatch(node, action_name, group)
        self._went_away = went_away or (lambda _asked_at: False)
        self._gone = gone or (lambda: False)
        self._one_at_a_time = StopAwareLock()
        # a stopped skill the server has not ended (a future done when it has), what it is, and
        # until when it may run (its time limit)
        self._unfinished: Optional[tuple[Future, str, float]] = None

    @property
    def action_name(self) -> str:
        return self.client._action_name

    def _lost(self, asked_at: Optional[float] = None) -> Callable[[], bool]:
        """What a wait for an answer to something asked at ``asked_at`` (now) checks."""
        at = time.monotonic() if asked_at is None else asked_at
        return lambda: self._went_away(at) or not self.client.server_is_ready()

    def run(self, goal: ExecuteSkill.Goal, script: str, timeout_s: float, wait_s: float,
            stop: Optional[CancelToken] = None, stop_wait_s: float = 5.0) -> SkillOutcome:
        """Execute ``goal`` (``script`` names it in messages) within ``timeout_s``; ``wait_s``
        bounds discovery and acceptance; a stopped skill gets ``stop_wait_s`` to confirm. A
        ``stop`` while it waits its turn ends it at once, nothing sent."""
        not_sent = SkillOutcome("stopped", message=f"{script} was cancelled before it was sent; nothing was sent")
        with self._one_at_a_time.held(stop) as mine:
            if not mine or (stop is not None and stop.cancelled):
                return not_sent
            # the last skill was cancelled, so it gets the wait for a cancel too (a late acceptance)
            if not self._previous_ended(max(wait_s, stop_wait_s), stop):
                if stop is not None and stop.cancelled:
                    return not_sent
                running = self._unfinished[1] if self._unfinished is not None else "a skill"
                return SkillOutcome("busy", message=f"{self.what} may still run {running}; nothing was sent")
            if self._gone():
                return SkillOutcome("unavailable", message=f"{self.what} is not running (its heartbeat stopped)")
            if not self.client.wait_for_server(timeout_sec=wait_s):
                return SkillOutcome("unavailable", message=f"{self.what}'s '{self.action_name}' action is not "
                                                           f"available after {wait_s:g}s")
            if not self._reconciled:
                left = self._end_leftovers(stop_wait_s)
                if left:
                    return SkillOutcome("busy", message=left)
            if stop is not None and stop.cancelled:
                return not_sent
            asked_at = time.monotonic()
            handle = self._send(goal, wait_s, asked_at, script, timeout_s)
            if handle is None and self._lost(asked_at)():
                return SkillOutcome("lost", message=f"{self.what} went away before it accepted {script}")
            if handle is None:
                return SkillOutcome("rejected", message=f"{self.what} did not accept {script} within {wait_s:g}s; "
                                                        "it was cancelled, but may have started (the next skill "
                                                        "waits for it to end)")
            if not handle.accepted:
                return SkillOutcome("rejected", message=f"{self.what} rejected {script}")
            future = handle.get_result_async()
            waited = ""
            try:
                waited = wait_future(future, timeout_s, stop, self._lost(asked_at))
                response = future.result() if future.done() else None
                if waited == "done" and response is not None and response.status == GoalStatus.STATUS_CANCELED \
                        and stop is not None and stop.cancelled:   # its cancel came from here
                    return SkillOutcome("stopped", result=response.result,
                                        message=f"{self.what} confirmed that {script} stopped")
                if waited == "done":
                    why = self._unexplained(response, script)
                    if why:
                        return SkillOutcome("failed", result=response.result if response is not None else None,
                                            message=why)
                    return SkillOutcome("done", result=response.result if response is not None else None)
                if waited == "lost":
                    return SkillOutcome("lost", message=f"{self.what} went away while it ran {script}")
                confirmed = self._cancel(handle, future, stop_wait_s)
                say = (f"{self.what} confirmed that {script} stopped" if confirmed else
                       f"{self.what} did not confirm within {stop_wait_s:g}s that {script} stopped; "
                       "it may still run")
                if waited == "timeout":
                    return SkillOutcome("timeout", message=f"{script} did not finish within {timeout_s:g}s; {say}",
                                        stopped_confirmed=confirmed)
                response = future.result() if future.done() else None
                return SkillOutcome("stopped", result=response.result if confirmed and response is not None else None,
                                    message=say,
                                    stopped_confirmed=confirmed)
            finally:
                if not future.done():   # stopped waiting without an end: never leave it running
                    handle.cancel_goal_async()
                    if waited != "lost":   # a server that went away took its goals with it
                        self._unfinished = (future, f"{script}, which did not confirm its cancel",
                                            time.monotonic() + timeout_s)

    def _unexplained(self, response: Any, script: str) -> str:
        """Why a result is not the skill's own answer: the server aborted or cancelled it, or
        said it failed, without saying why; "" when it is (a failure it names, e.g. a precondition,
        is its answer, whether the goal ended aborted or succeeded: robots do both)."""
        if response is None:
            return f"{self.what} gave no result for {script}"
        result = response.result
        if not result.success and result.failure.type != FailureMsg.NONE:
            return ""
        reason = result.failure.message or result.failure.cause or result.observation
        said = f"{self.what} {ENDED_AS[response.status]} {script}" if response.status in ENDED_AS else ""
        if not said and not result.success and result.failure.type == FailureMsg.NONE and not result.failure.message:
            said = f"{self.what} said that {script} failed"
        return said and said + (f": {reason}" if reason else "; it gave no reason")

    def _end_leftovers(self, stop_wait_s: float) -> str:
        """Cancel every goal the server runs and wait for each to end, each step within
        ``stop_wait_s`` (the wait for a cancel to be confirmed); "" when none is left, else why
        nothing may be sent yet."""
        if not self._cancel_all.wait_for_service(timeout_sec=stop_wait_s):
            return f"{self.what}'s cancel service did not answer within {stop_wait_s:g}s; nothing was sent"
        _, answer = ask_until_answered(self._cancel_all, CancelGoal.Request(goal_info=GoalInfo()), stop_wait_s,
                                       went_away=lambda at: self._lost(at)(), every_s=ASK_AGAIN_S)
        if answer is None:
            return f"{self.what} did not say within {stop_wait_s:g}s whether it still runs a skill; nothing was sent"
        left = {bytes(g.goal_id.uuid): g.goal_id for g in answer.goals_canceling} | self._status.running()
        if left:
            self.node.get_logger().warning(f"{self.what} still ran {len(left)} skill(s) of a client before this one: "
                                           "cancelled; waiting for them to end before sending anything")
        for goal_id in left.values():
            ended, _ = ask_until_answered(self._get_result, ExecuteSkill.Impl.GetResultService.Request(goal_id=goal_id),
                                          stop_wait_s, went_away=lambda at: self._lost(at)(), every_s=ASK_AGAIN_S)
            if ended != "done":
                return (f"{self.what} still runs a skill that a client before this one left, and did not confirm "
                        f"within {stop_wait_s:g}s that it stopped; nothing was sent")
        self._reconciled = True
        if left:
            self.node.get_logger().info(f"{self.what} ended the {len(left)} skill(s) left running; sending")
        return ""

    def _previous_ended(self, wait_s: float, stop: Optional[CancelToken] = None) -> bool:
        """Whether the last skill is over: ended, its server gone, or past its own time limit."""
        if self._unfinished is None:
            return True
        future, _, until = self._unfinished
        if wait_future(future, wait_s, stop, lost=self._lost()) in ("done", "lost") or time.monotonic() > until:
            self._unfinished = None
            return True
        return False

    def _send(self, goal: ExecuteSkill.Goal, wait_s: float, asked_at: float, script: str,
              timeout_s: float) -> Optional[ClientGoalHandle]:
        # sent once, unlike the planner's goals (client.py): rcl refuses a goal id it already has,
        # which an rclcpp_action server, a robot's, raises from its executor ("Failed to accept new
        # goal"); and a new id could run the skill twice
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        sent = send_goal(self.client, goal, goal_id)
        if sent is None:   # answered, and the answer lost (action_goal.py): the status says which
            listed = self._status.wait_listed(goal_id, max(wait_s, 1.0))
            return ClientGoalHandle(self.client, goal_id, ExecuteSkill.Impl.SendGoalService.Response(accepted=listed))
        waited = wait_future(sent, wait_s or 1.0, lost=lambda: self._went_away(asked_at))
        if waited == "done":
            return sent.result()
        if waited == "lost":
            return None
        if self.client.server_is_ready() and self._status.wait_listed(goal_id, 1.0):
            self.node.get_logger().warning(f"no acceptance from {self.what} within {wait_s:g}s, but its status "
                                           "lists the skill: fetching its result (the skill is not sent again)")
            return ClientGoalHandle(self.client, goal_id, ExecuteSkill.Impl.SendGoalService.Response(accepted=True))
        if sent.done():
            return sent.result()
        # given up, but the request may still be accepted: cancel it by its id now (the server may
        # hold it), and once an acceptance comes, cancel that goal; the next skill waits for its end
        self._cancel_all.call_async(CancelGoal.Request(goal_info=GoalInfo(goal_id=goal_id)))
        ended: Future = Future()

        def answered(_: Future) -> None:
            handle = sent.result()
            if handle is None or not handle.accepted:
                ended.set_result(None)
                return
            handle.cancel_goal_async()
            handle.get_result_async().add_done_callback(lambda _: ended.set_result(None))
        sent.add_done_callback(answered)
        self._unfinished = (ended, f"{script}, whose acceptance it did not see in time", time.monotonic() + timeout_s)
        return None

    def _cancel(self, handle: ClientGoalHandle, future: Future, stop_wait_s: float) -> bool:
        """Cancel the goal and wait for the server to end it; whether it did in time."""
        handle.cancel_goal_async()
        return wait_future(future, stop_wait_s, lost=self._lost()) == "done"
