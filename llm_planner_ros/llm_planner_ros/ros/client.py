"""A small Python facade over the ``plan_task`` action, in the manner of nav2_simple_commander::

    from llm_planner_ros.ros.client import PlannerClient

    with PlannerClient("/robot1") as planner:
        planner.wait_until_ready()
        outcome = planner.plan("Wash hands", method="interpret", execute=True,
                               on_feedback=lambda fb: print(fb.script))
        print(outcome.status_name, outcome.result.termination_reason, outcome.result.program)

A goal whose interpreted goal needs an operator's confirmation (method interpret, parameter
``interpret_confirm``) waits for it; the client can give it::

        run = planner.send("Watch TV", method="interpret", execute=True)
        asked = planner.wait_confirmation(run)          # the proposal: asked.texts, asked.alternatives
        planner.answer(asked, approve=True)
        outcome = planner.result(run)

By default it spins its own node in a background thread (its own rclpy context, so it coexists
with other rclpy users in the process); given ``node=``, it adds its clients to that node, which
its owner spins on a multi-threaded executor (the operator console does so). It waits on
futures, and notices a planner that goes away (its heartbeat stops) instead of waiting forever.
"""
from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

import rclpy
from action_msgs.msg import GoalInfo, GoalStatus
from action_msgs.srv import CancelGoal
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import ApprovalRequest, MethodOptions
from llm_planner_msgs.srv import Approve
from llm_planner_ros.ros.action_goal import SpinSafeActionClient, send_goal
from llm_planner_ros.ros.conversions import nul_field
from llm_planner_ros.ros.executor import NodeExecutor
from llm_planner_ros.ros.liveness import RESEND_S, PeerWatch
from llm_planner_ros.ros.qos import LATCHED_EVERY
from llm_planner_ros.ros.skill_action import GoalStatusWatch
from llm_planner_ros.ros.wait import wait_future
from llm_planner_ros.safety.policy import approval_digest

STATUS_NAMES = {GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED", GoalStatus.STATUS_ABORTED: "ABORTED",
                GoalStatus.STATUS_CANCELED: "CANCELED"}

T = TypeVar("T")


class PlannerGone(RuntimeError):
    """The planner stopped answering (no heartbeat) before the goal ended."""


@dataclass
class PlanOutcome:
    status: int
    result: PlanTask.Result

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, str(self.status))

    @property
    def succeeded(self) -> bool:
        return self.status == GoalStatus.STATUS_SUCCEEDED


@dataclass
class GoalRun:
    """A goal in flight: its handle, the feedback so far, and its result future."""

    handle: Any
    result_future: Any
    feedback: list = field(default_factory=list)


class PlannerClient:
    def __init__(self, namespace: str = "", action: str = "plan_task", node_name: str = "planner_client",
                 node: Optional[Node] = None, args: Optional[list[str]] = None) -> None:
        """``args``: ROS command-line arguments (remappings, ``--ros-args``) for the own node."""
        self._own = node is None
        self._executor: Optional[MultiThreadedExecutor] = None
        self._extra: list[Node] = []
        self._attached = 0
        if node is None:
            self._context = Context()
            # no signal handlers: Ctrl-C stays a KeyboardInterrupt, with the context still up to cancel
            rclpy.init(args=args, context=self._context, signal_handler_options=SignalHandlerOptions.NO)
            node = rclpy.create_node(node_name, namespace=namespace or "/", context=self._context)
        self.node = node
        self._action: ActionClient[Any, Any, Any] = SpinSafeActionClient(self.node, PlanTask, action)
        self._cancel: Client[Any, Any] = self.node.create_client(CancelGoal, f"{action}/_action/cancel_goal")
        self._planner = PeerWatch(self.node, "planner", namespace=action.rpartition("/")[0], announce=False)
        self._status = GoalStatusWatch(self.node, action, ReentrantCallbackGroup())
        prefix = action.rpartition("/")[0]
        self._requests: list[ApprovalRequest] = []
        self._requested = threading.Condition()
        self.node.create_subscription(ApprovalRequest, f"{prefix}/approval_request" if prefix else "approval_request",
                                      self._on_request, LATCHED_EVERY, callback_group=ReentrantCallbackGroup())
        self._approve: Optional[Client[Any, Any]] = None
        self._approve_refused = ""
        try:
            self._approve = self.node.create_client(
                Approve, f"{prefix}/approve" if prefix else "approve", callback_group=ReentrantCallbackGroup())
        except Exception as exc:   # an SROS2 enclave that denies it (the shipped policy's client enclave)
            self._approve_refused = f"{type(exc).__name__}: {exc}"
        if self._own:
            self._executor = NodeExecutor(context=self._context)
            self._executor.add_node(self.node)
            self._spinner = threading.Thread(target=self._spin, daemon=True)
            self._spinner.start()

    def _on_request(self, request: ApprovalRequest) -> None:
        with self._requested:
            self._requests = [r for r in self._requests if r.request_id != request.request_id][-99:] + [request]
            self._requested.notify_all()

    def wait_confirmation(self, run: GoalRun, timeout_s: float = 60.0) -> ApprovalRequest:
        """The request to confirm ``run``'s interpreted goal (an ApprovalRequest of kind "goal": its
        conditions in ``scripts`` and words in ``texts``, up to three ``alternatives``, its
        ``confidence``), once the planner asks; TimeoutError when it does not within ``timeout_s``."""
        goal_id = bytes(run.handle.goal_id.uuid).hex()

        def asked() -> Optional[ApprovalRequest]:
            return next((r for r in reversed(self._requests) if r.goal_id == goal_id and r.kind == "goal"), None)
        def ended(_: Any) -> None:
            with self._requested:
                self._requested.notify_all()
        if run.result_future is not None:
            run.result_future.add_done_callback(ended)
        with self._requested:
            if not self._requested.wait_for(lambda: asked() is not None or run.result_future is None
                                            or run.result_future.done(), timeout_s):
                raise TimeoutError(f"the planner did not ask to confirm the goal within {timeout_s:g}s")
            found = asked()
        if found is None:
            raise RuntimeError("the goal ended without asking for a confirmation")
        return found

    def answer(self, request: ApprovalRequest, approve: bool, reason: str = "",
               timeout_s: float = 10.0) -> tuple[bool, str]:
        """Confirm (or decline) what ``request`` showed, on the planner's ``approve`` service, with the
        digest recomputed from that content: (accepted, the planner's message)."""
        if self._approve is None:
            raise RuntimeError(f"this node may not call the planner's approve service ({self._approve_refused}); "
                               "answer in the operator console")
        if not self._approve.wait_for_service(timeout_sec=timeout_s):
            raise TimeoutError(f"no '{self._approve.srv_name}' service within {timeout_s:g}s")
        digest = approval_digest(request.request_id, request.goal_id, request.kind, list(request.scripts))
        future = self._approve.call_async(Approve.Request(request_id=request.request_id, digest=digest,
                                                          approve=approve, reason=reason))
        self._wait(future, timeout_s, "answer the confirmation")
        response = future.result()
        if response is None:
            raise RuntimeError("the planner's approve service gave no answer")
        return bool(response.accepted), response.message

    def _spin(self) -> None:
        try:
            assert self._executor is not None
            self._executor.spin()
        except ExternalShutdownException:
            pass

    @property
    def action_name(self) -> str:
        """The action's full name, e.g. ``/robot1/plan_task``."""
        return self.node.resolve_topic_name(self._action._action_name)

    def planner_alive(self) -> bool:
        """The planner's heartbeat is heard."""
        return self._planner.heard()

    def wait_until_ready(self, timeout_s: float = 30.0) -> bool:
        """Whether the planner's action server is up within ``timeout_s``."""
        return self._action.wait_for_server(timeout_sec=timeout_s)

    def send(self, task: str, method: str = "", execute: bool = False,
             on_feedback: Optional[Callable[[PlanTask.Feedback], None]] = None,
             options: Optional[MethodOptions] = None, timeout_s: float = 30.0, **goal: Any) -> GoalRun:
        """Send a goal and return at once; ``goal`` sets any other PlanTask.Goal field."""
        request = PlanTask.Goal(task=task, method=method, execute=execute, options=options or MethodOptions(), **goal)
        return self.send_goal(request, on_feedback, timeout_s)

    def send_goal(self, goal: PlanTask.Goal, on_feedback: Optional[Callable[[PlanTask.Feedback], None]] = None,
                  timeout_s: float = 30.0) -> GoalRun:
        """Send a whole PlanTask.Goal and return at once. Raises ValueError for a string that
        ROS would cut short: a NUL character ends a string on the wire (``Watch\\0TV`` would
        arrive as ``Watch``), so it is refused here, where the whole text is still seen."""
        cut = nul_field(goal)
        if cut:
            raise ValueError(f"{cut} contains a NUL character (U+0000), which a ROS string cannot carry; "
                             "remove it")
        feedback: list = []

        def on_message(message) -> None:
            feedback.append(message.feedback)
            if on_feedback is not None:
                on_feedback(message.feedback)
        handle = self._send(goal, on_message, timeout_s)
        return GoalRun(handle, handle.get_result_async() if handle.accepted else None, feedback)

    def _send(self, goal: PlanTask.Goal, on_message, timeout_s: float) -> ClientGoalHandle:
        """The planner's answer to ``goal``. A server listed in the graph may not have matched this
        client yet (under load, for seconds), and a goal sent then is lost: an unanswered goal is
        sent again, with the same goal id, every ``RESEND_S``. The server refuses a goal id it
        already has, so a goal is never run twice; such a refusal is read as "it has it" when the
        action's status lists the goal (its acceptance was lost). An answer that rclpy loses on
        its way in (action_goal.py) is read from the status as well."""
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        decided: Future = Future()
        refused_resends: list[ClientGoalHandle] = []

        def answer_to(nth: int):
            def on_answer(sent: Future) -> None:
                handle = sent.result()
                if handle is None or decided.done():
                    return
                if handle.accepted or nth == 0:   # accepted, or refused before any resend existed
                    decided.set_result(handle)
                else:                              # maybe a duplicate of a goal the server has
                    refused_resends.append(handle)
            return on_answer
        asked_at = time.monotonic()
        until = asked_at + timeout_s
        for nth in itertools.count():
            sent = send_goal(self._action, goal, goal_id, on_message)
            if sent is None:   # answered, and the answer lost (action_goal.py): the status says which
                if not decided.done():
                    decided.set_result(self._handle(goal_id, self._status.wait_listed(goal_id, RESEND_S)))
                break
            sent.add_done_callback(answer_to(nth))
            waited = wait_future(decided, min(RESEND_S, max(0.0, until - time.monotonic())),
                                 lost=lambda: self._planner.went_away(asked_at, RESEND_S))
            if waited == "lost":
                raise PlannerGone("the planner went away before it could accept the goal")
            if waited == "done" or time.monotonic() >= until:
                break
            if refused_resends:   # the first arrived and its answer did not: the status lists the goal
                listed = self._status.wait_listed(goal_id, RESEND_S)
                decided.set_result(self._handle(goal_id, True) if listed else refused_resends[0])
                break
        handle = decided.result() if decided.done() else None
        if handle is None:
            raise TimeoutError(f"the planner did not accept the goal within {timeout_s:g}s")
        return handle

    def _handle(self, goal_id: UUID, accepted: bool) -> ClientGoalHandle:
        """A handle for a goal whose answer did not reach this client."""
        return ClientGoalHandle(self._action, goal_id, PlanTask.Impl.SendGoalService.Response(accepted=accepted))

    def result(self, run: GoalRun, timeout_s: float = 3600.0) -> PlanOutcome:
        """Wait for the goal's end."""
        if run.result_future is None:
            raise RuntimeError("the planner rejected the goal")
        self._wait(run.result_future, timeout_s, "end the goal")
        response = run.result_future.result()
        return PlanOutcome(response.status, response.result)

    def plan(self, task: str, method: str = "", execute: bool = False,
             on_feedback: Optional[Callable[[PlanTask.Feedback], None]] = None, timeout_s: float = 3600.0,
             **goal: Any) -> PlanOutcome:
        """Send a goal and wait for its result."""
        return self.result(self.send(task, method, execute, on_feedback, **goal), timeout_s)

    def cancel(self, run: GoalRun, timeout_s: float = 10.0) -> bool:
        """Ask the planner to cancel ``run``; whether it accepted."""
        future = run.handle.cancel_goal_async()
        self._wait(future, timeout_s, "answer the cancel")
        response = future.result()
        return response is not None and bool(response.goals_canceling)

    def cancel_goal_id(self, goal_id: str, timeout_s: float = 10.0) -> bool:
        """Cancel any goal by its id (hex, as on the ``plan`` and ``goal_queue`` topics), also one
        another client sent; whether the planner accepted."""
        request = CancelGoal.Request(goal_info=GoalInfo())
        request.goal_info.goal_id.uuid = list(uuid.UUID(hex=goal_id).bytes)
        if not self._cancel.wait_for_service(timeout_sec=timeout_s):
            raise TimeoutError(f"no '{self._cancel.srv_name}' service within {timeout_s:g}s")
        future = self._cancel.call_async(request)
        self._wait(future, timeout_s, "answer the cancel")
        response = future.result()
        return response is not None and bool(response.goals_canceling)

    def _wait(self, future, timeout_s: float, what: str) -> None:
        waited = wait_future(future, timeout_s, lost=self._planner.lost)
        if waited == "lost":
            raise PlannerGone(f"the planner went away before it could {what}")
        if waited == "timeout":
            raise TimeoutError(f"the planner did not {what} within {timeout_s:g}s")

    def attach(self, build: Callable[[Node], T]) -> T:
        """Build ROS entities on a new node of this client's context, then spin it with the client.
        Entities made on a node that already spins race the executor (rclpy's ActionClient joins
        the wait set before it has its lock: the spin thread dies)."""
        if not self._own:
            raise RuntimeError("attach() needs the client's own node; build on the given node before it spins")
        assert self._executor is not None
        self._attached += 1
        node = rclpy.create_node(f"{self.node.get_name()}_{self._attached}", namespace=self.node.get_namespace(),
                                 context=self._context)
        built = build(node)
        self._executor.add_node(node)
        self._extra.append(node)
        return built

    def close(self) -> None:
        """Stop the own node (a given node stays its owner's)."""
        if not self._own:
            return
        assert self._executor is not None
        # nodes are destroyed once nothing spins (rclpy: the spin thread dies on a destroyed
        # handle); a starved machine can take seconds to finish the callbacks in flight
        self._executor.shutdown(timeout_sec=30.0)
        self._spinner.join(30.0)
        for extra in self._extra:
            extra.destroy_node()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self._context)

    def __enter__(self) -> PlannerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
