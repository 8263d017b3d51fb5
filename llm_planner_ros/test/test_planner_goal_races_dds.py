"""Races between a goal's cancel, its start and its end in the planner node, over DDS.

The real PlannerNode runs in this process (so a test can widen a race window of rclpy's
ServerGoalHandle, as a loaded machine does) with a scripted planner; the client is the product's
PlannerClient, or ``llm_planner_send_goal`` in its own process. Each window is held open on an
event, never a sleep, so that each test fails without its fix.
"""
from __future__ import annotations

import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Optional

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action.server import GoalEvent, GoalResponse, ServerGoalHandle
from rclpy.signals import SignalHandlerOptions

from helpers.processes import NodeProcess, console_script, wait_until
from llm_planner_msgs.msg import ApprovalRequest, GoalQueue
from llm_planner_msgs.srv import Approve
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.types import PlanResult, Skill, TerminationReason
from llm_planner_ros.ros import planner_node
from llm_planner_ros.ros.approval import RosApprover
from llm_planner_ros.ros.client import PlannerClient
from llm_planner_ros.ros.executor import NodeExecutor
from llm_planner_ros.ros.planner_node import PlannerNode
from llm_planner_ros.ros.qos import LATCHED, LATCHED_EVERY
from llm_planner_ros.safety.policy import approval_digest

WAIT_S = 60.0   # discovery and results on a loaded machine


class ScriptedPlanner:
    """The planner double: a task with a gate plans until the gate opens or the goal stops."""

    def __init__(self) -> None:
        self.gates: dict[str, threading.Event] = {}
        self.left: dict[str, threading.Event] = {}   # set when the task's plan() is about to return
        self.ran: list[str] = []
        self.stopped: list[str] = []   # tasks whose goal was stopped (cancel, shutdown)

    def hold(self, *tasks: str) -> None:
        for task in tasks:
            self.gates[task], self.left[task] = threading.Event(), threading.Event()

    def plan(self, request, on_step, cancel: CancelToken, goal_id="", on_plan=None) -> PlanResult:
        self.ran.append(request.task)
        gate = self.gates.get(request.task)
        if gate is not None:
            remove = cancel.on_stop(gate.set)
            gate.wait(WAIT_S)
            remove()
            if cancel.cancelled:
                self.stopped.append(request.task)
            self.left[request.task].set()
        cancel.check()
        return PlanResult(TerminationReason.END_OF_PLAN, checked=True)


class QueueWatch:
    """The latched ``goal_queue`` as a client sees it."""

    def __init__(self, client: PlannerClient, topic: str) -> None:
        self.last: Optional[GoalQueue] = None
        self._changed = threading.Condition()
        client.attach(lambda node: node.create_subscription(GoalQueue, topic, self._on, LATCHED_EVERY))

    def _on(self, msg: GoalQueue) -> None:
        with self._changed:
            self.last = msg
            self._changed.notify_all()

    def wait(self, tasks: list[str]) -> bool:
        """Whether the queue lists ``tasks`` (active first) within WAIT_S."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self.last is not None and [g.task for g in self.last.goals] == tasks, WAIT_S)


Stack = tuple[PlannerNode, ScriptedPlanner, PlannerClient, str]


@pytest.fixture
def make_stack() -> Iterator[Callable[..., Stack]]:
    """make_stack(planner, node_class): the node in its own namespace, spun here, and a client."""
    made: list[tuple[PlannerNode, NodeExecutor, PlannerClient]] = []

    def make(planner: Optional[ScriptedPlanner] = None, node_class: type[PlannerNode] = PlannerNode) -> Stack:
        ns = f"/races_{uuid.uuid4().hex[:8]}"
        rclpy.init(args=["races", "--ros-args", "-r", f"__ns:={ns}"],
                   signal_handler_options=SignalHandlerOptions.NO)
        planner = planner or ScriptedPlanner()
        node = node_class(lambda params, n: planner)
        executor = NodeExecutor(num_threads=8)   # room for callbacks a test holds
        executor.add_node(node)
        threading.Thread(target=executor.spin, daemon=True).start()
        client = PlannerClient(ns, node_name="races_client")
        made.append((node, executor, client))
        assert client.wait_until_ready(WAIT_S)
        return node, planner, client, ns
    yield make
    for node, executor, client in made:
        client.close()
        node.shutdown_goals()   # a goal still held ends (shutdown)
        executor.shutdown(timeout_sec=30.0)
        node.destroy_node()
    rclpy.try_shutdown()


def first_running(make_stack: Callable[..., Stack], node_class: type[PlannerNode]) -> tuple[Any, ...]:
    """A stack of ``node_class`` whose goal "first" is planning, held there: (node, planner,
    client, namespace, its run)."""
    planner = ScriptedPlanner()
    planner.hold("first")
    node, planner, client, ns = make_stack(planner, node_class)
    first = client.send("first")
    assert wait_until(lambda: planner.ran == ["first"], WAIT_S)
    return node, planner, client, ns, first


def test_a_cancel_while_a_queued_goal_starts_ends_it_and_the_queue_moves_on(make_stack, monkeypatch):
    """ServerGoalHandle.execute() asks for a cancel, then records EXECUTING: a cancel recorded in
    between made that raise inside the ended goal's `finally`; that goal lost its result, the
    next never got one, and later goals queued forever."""
    in_window, cancel_recorded = threading.Event(), threading.Event()
    update = ServerGoalHandle._update_state

    def recording(self, event):
        update(self, event)
        if event == GoalEvent.CANCEL_GOAL and self.request.task == "second":
            cancel_recorded.set()

    def execute(self, execute_callback=None):   # rclpy's, paused between its check and its update
        if not self.is_cancel_requested:
            if self.request.task == "second" and not in_window.is_set():
                in_window.set()
                cancel_recorded.wait(WAIT_S)
            self._update_state(GoalEvent.EXECUTE)
        self._action_server.notify_execute(self, execute_callback)
    monkeypatch.setattr(ServerGoalHandle, "_update_state", recording)
    monkeypatch.setattr(ServerGoalHandle, "execute", execute)
    node, planner, client, ns = make_stack()
    planner.hold("first")
    queue = QueueWatch(client, f"{ns}/goal_queue")
    first = client.send("first")
    second = client.send("second")
    assert queue.wait(["first", "second"])
    planner.gates["first"].set()
    assert in_window.wait(WAIT_S)   # the second goal is starting
    assert client.cancel(second, timeout_s=WAIT_S)
    outcome = client.result(first, WAIT_S)
    assert outcome.result.termination_reason == "end_of_plan"   # the ended goal keeps its result
    outcome = client.result(second, WAIT_S)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.result.termination_reason == "canceled"
    assert client.plan("third", timeout_s=WAIT_S).result.termination_reason == "end_of_plan"
    assert planner.ran == ["first", "third"]


def test_a_goal_that_stops_before_rclpy_records_its_cancel_ends_canceled(make_stack, monkeypatch):
    """rclpy records a cancel only after the cancel callback (which stops the goal) returns; a
    goal that ended first was aborted, and its client told that the cancel was refused."""
    ended = threading.Event()
    update = ServerGoalHandle._update_state
    planner = ScriptedPlanner()
    planner.hold("race")

    def late_cancel(self, event):
        if self.request.task == "race" and event == GoalEvent.CANCEL_GOAL:
            planner.left["race"].wait(WAIT_S)   # the goal has stopped;
            ended.wait(0.3)                     # it ends now unless it waits for this cancel
        update(self, event)
        if self.request.task == "race" and event in (GoalEvent.ABORT, GoalEvent.CANCELED, GoalEvent.SUCCEED):
            ended.set()
    monkeypatch.setattr(ServerGoalHandle, "_update_state", late_cancel)
    node, planner, client, ns = make_stack(planner)
    run = client.send("race")
    assert wait_until(lambda: planner.ran == ["race"], WAIT_S)
    assert client.cancel(run, timeout_s=WAIT_S)
    outcome = client.result(run, WAIT_S)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.result.termination_reason == "canceled"


def test_a_cancel_that_comes_before_the_goal_is_registered_ends_it_at_once(make_stack):
    """rclpy answers "accepted" before it calls handle_accepted_callback: a prompt cancel found no
    goal, stopped nothing, and the goal waited its turn in the queue."""
    cancelled = threading.Event()

    class LateAccept(PlannerNode):
        def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
            if goal_handle.request.task == "second":
                cancelled.wait(WAIT_S)   # a slow accepting thread: the cancel comes first
            super()._on_accepted(goal_handle)

        def _on_cancel(self, goal_handle: ServerGoalHandle) -> Any:
            try:
                return super()._on_cancel(goal_handle)
            finally:
                if goal_handle.request.task == "second":
                    cancelled.set()
    node, planner, client, ns, first = first_running(make_stack, LateAccept)
    second = client.send("second")
    assert client.cancel(second, timeout_s=WAIT_S)
    outcome = client.result(second, WAIT_S)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.result.termination_reason == "canceled"
    assert not first.result_future.done()   # it ended while the first goal ran, not after it
    planner.gates["first"].set()
    assert client.result(first, WAIT_S).result.termination_reason == "end_of_plan"
    assert planner.ran == ["first"]


def test_deactivate_rejects_the_queued_goals_and_the_running_goal_ends(make_stack):
    """docs/stack.md: while the node is not active a goal ends `rejected`; queued goals were
    planned and executed after a deactivate."""
    planner = ScriptedPlanner()
    planner.hold("first")
    node, planner, client, ns = make_stack(planner)
    queue = QueueWatch(client, f"{ns}/goal_queue")
    first = client.send("first")
    second = client.send("second")
    assert queue.wait(["first", "second"])
    node.trigger_deactivate()
    outcome = client.result(second, WAIT_S)
    assert outcome.status == GoalStatus.STATUS_ABORTED and outcome.result.termination_reason == "rejected"
    assert "deactivated" in outcome.result.detail, outcome.result.detail
    assert queue.wait(["first"]) and not first.result_future.done()
    planner.gates["first"].set()
    assert client.result(first, WAIT_S).result.termination_reason == "end_of_plan"
    assert planner.ran == ["first"]


def test_a_goal_queued_as_the_node_deactivates_is_not_started(make_stack):
    """A goal queued after deactivate emptied the queue (here: deactivate empties nothing) ends
    rejected when its turn comes, instead of being planned."""
    class QueueKept(PlannerNode):
        def deactivate(self) -> None:
            pass
    planner = ScriptedPlanner()
    planner.hold("first")
    node, planner, client, ns = make_stack(planner, QueueKept)
    queue = QueueWatch(client, f"{ns}/goal_queue")
    first = client.send("first")
    second = client.send("second")
    assert queue.wait(["first", "second"])
    node.trigger_deactivate()
    planner.gates["first"].set()
    assert client.result(first, WAIT_S).result.termination_reason == "end_of_plan"
    outcome = client.result(second, WAIT_S)
    assert outcome.result.termination_reason == "rejected" and "deactivated" in outcome.result.detail
    assert planner.ran == ["first"]


def test_a_trace_that_cannot_be_written_keeps_the_goals_reason(make_stack):
    class FullDisk(ScriptedPlanner):
        def record_unplanned(self, *args: object) -> None:
            raise OSError(28, "No space left on device")
    node, planner, client, ns = make_stack(FullDisk())
    node.trigger_deactivate()
    outcome = client.plan("refused", timeout_s=WAIT_S)
    assert outcome.status == GoalStatus.STATUS_ABORTED and outcome.result.termination_reason == "rejected"
    assert "not active (lifecycle)" in outcome.result.detail


def test_a_plan_that_returns_canceled_is_canceled_on_the_plan_topic_too(make_stack):
    """A planner that ends a cancelled goal with its result (steps that ran), not by raising:
    the action says canceled, and so does the latched ``plan`` (it said aborted)."""
    from llm_planner_msgs.msg import PlanState

    class ReturnsCanceled(ScriptedPlanner):
        def plan(self, request, on_step, cancel: CancelToken, goal_id="", on_plan=None) -> PlanResult:
            try:
                return super().plan(request, on_step, cancel, goal_id, on_plan)
            except Exception:
                return PlanResult(TerminationReason.CANCELED, ending="stopped after 0 steps", checked=True)
    states: list[PlanState] = []
    node, planner, client, ns = make_stack(ReturnsCanceled())
    client.attach(lambda n: n.create_subscription(PlanState, f"{ns}/plan", states.append, LATCHED))
    planner.hold("held")
    run = client.send("held")
    assert wait_until(lambda: planner.ran == ["held"], WAIT_S)
    assert client.cancel(run, timeout_s=WAIT_S)
    outcome = client.result(run, timeout_s=WAIT_S)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.result.termination_reason == "canceled"
    assert wait_until(lambda: any(s.task == "held" and s.ended.sec for s in states), WAIT_S)
    assert [s.status for s in states if s.task == "held" and s.ended.sec] == [PlanState.STATUS_CANCELED]


def test_the_latched_goal_queue_is_the_latest_of_racing_publishes(make_stack, monkeypatch):
    """The queue was snapshotted under the lock and published after it: a snapshot taken first
    and published last stayed latched (here: a cancelled goal still listed as queued)."""
    snapshot_taken, second_ended, accepted = threading.Event(), threading.Event(), threading.Event()
    summary = planner_node.GoalContext.summary

    def slow_summary(self, status):
        if self.task == "second" and status == planner_node.PlanState.STATUS_QUEUED and not snapshot_taken.is_set():
            snapshot_taken.set()
            second_ended.wait(5.0)   # this publish is overtaken (it holds the others back when it may not be)
        return summary(self, status)
    monkeypatch.setattr(planner_node.GoalContext, "summary", slow_summary)

    class Accepted(PlannerNode):
        def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
            super()._on_accepted(goal_handle)
            if goal_handle.request.task == "second":
                accepted.set()
    node, planner, client, ns, first = first_running(make_stack, Accepted)
    second = client.send("second")
    assert snapshot_taken.wait(WAIT_S)
    assert client.cancel(second, timeout_s=WAIT_S)
    assert client.result(second, WAIT_S).status == GoalStatus.STATUS_CANCELED
    second_ended.set()
    assert accepted.wait(WAIT_S)   # every publish is done
    latched: list[GoalQueue] = []
    got = threading.Event()

    def on_queue(msg: GoalQueue) -> None:
        latched.append(msg)
        got.set()
    client.attach(lambda n: n.create_subscription(GoalQueue, f"{ns}/goal_queue", on_queue, LATCHED))
    assert got.wait(WAIT_S)
    assert [g.task for g in latched[0].goals] == ["first"]
    planner.gates["first"].set()
    client.result(first, WAIT_S)


@pytest.fixture
def approver() -> Iterator[tuple[Callable[..., RosApprover], Callable[[Approve.Request], Approve.Response],
                                 Callable[[], ApprovalRequest]]]:
    """(make(timeout_s, awaiting), answer(request), asked()): a RosApprover on a node, its
    `approve` service called over DDS, and the request it published."""
    context = rclpy.Context()
    rclpy.init(context=context)
    ns = f"/approve_{uuid.uuid4().hex[:8]}"
    server = rclpy.create_node("planner", namespace=ns, context=context)
    operator = rclpy.create_node("operator", namespace=ns, context=context)
    requests: list[ApprovalRequest] = []
    asked = threading.Event()

    def on_request(msg: ApprovalRequest) -> None:
        requests.append(msg)
        asked.set()
    operator.create_subscription(ApprovalRequest, "approval_request", on_request, LATCHED_EVERY)
    service = operator.create_client(Approve, "approve")
    made: list[RosApprover] = []

    def make(timeout_s: float, awaiting: Callable[[str, str], None] = lambda goal_id, what: None) -> RosApprover:
        made.append(RosApprover(server, lambda: timeout_s, lambda: ("g1", "watch tv"), awaiting))
        executor.add_node(server)
        return made[-1]

    def answer(request: Approve.Request) -> Approve.Response:
        assert service.wait_for_service(timeout_sec=WAIT_S)
        done = threading.Event()
        future = service.call_async(request)
        future.add_done_callback(lambda _: done.set())
        assert done.wait(WAIT_S)
        return future.result()

    def last_request() -> ApprovalRequest:
        assert asked.wait(WAIT_S)
        return requests[-1]
    executor = NodeExecutor(num_threads=4, context=context)
    executor.add_node(operator)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        yield make, answer, last_request
    finally:
        executor.shutdown(timeout_sec=30.0)
        server.destroy_node()
        operator.destroy_node()
        rclpy.shutdown(context=context)


def ask(approver: RosApprover) -> tuple[threading.Thread, list]:
    """The approver asked, in a thread: (the thread, [its answer] once it returns)."""
    out: list = []
    skills = [Skill("SWITCHON", ("tv",), text="the tv is on")]
    thread = threading.Thread(target=lambda: out.append(approver(skills, "goal", CancelToken(), scripts=["(on tv)"])))
    thread.start()
    return thread, out


def reply(request: ApprovalRequest, approve: bool, reason: str = "") -> Approve.Request:
    digest = approval_digest(request.request_id, request.goal_id, request.kind, list(request.scripts))
    return Approve.Request(request_id=request.request_id, digest=digest, approve=approve, reason=reason)


def test_the_first_answer_to_an_approval_decides_and_a_second_is_refused(approver):
    """Two operators answer: the second was told accepted, and ignored."""
    make, answer, asked = approver
    answered = threading.Event()

    def awaiting(goal_id: str, what: str) -> None:
        if not what:   # the first answer woke the wait: a second one comes now
            answered.wait(WAIT_S)
    thread, out = ask(make(WAIT_S, awaiting))
    request = asked()
    first = answer(reply(request, True))
    second = answer(reply(request, False, "operator 2 says no"))
    answered.set()
    thread.join(WAIT_S)
    assert first.accepted and first.message == "approved"
    assert not second.accepted and "already answered" in second.message, second.message
    assert out == [(True, "")]


def test_an_answer_after_the_approval_timed_out_is_refused(approver):
    """An answer that came as the wait timed out was told accepted while the goal ended
    confirmation_timeout."""
    make, answer, asked = approver
    closing, answered = threading.Event(), threading.Event()

    def awaiting(goal_id: str, what: str) -> None:
        if not what:   # the wait is over: an answer comes now
            closing.set()
            answered.wait(WAIT_S)
    thread, out = ask(make(0.5, awaiting))
    request = asked()
    assert closing.wait(WAIT_S)
    late = answer(reply(request, True))
    answered.set()
    thread.join(WAIT_S)
    assert not late.accepted and "timed out" in late.message, late.message
    assert out == [None]


def test_ctrl_c_while_send_goal_waits_for_acceptance_cancels_the_goal(make_stack):
    """Ctrl-C while the planner had not yet answered left an accepted goal running."""
    planner = ScriptedPlanner()
    planner.hold("steps=1")
    node, planner, client, ns = make_stack(planner)
    arrived, release = threading.Event(), threading.Event()

    def slow_accept(goal: Any) -> GoalResponse:
        arrived.set()
        release.wait(WAIT_S)   # the planner is slow to answer
        return GoalResponse.ACCEPT
    node._server.register_goal_callback(slow_accept)
    try:
        with NodeProcess([str(console_script("send_goal")), "steps=1", "--namespace", ns],
                         ready="goal: ", timeout=WAIT_S) as sender:
            assert arrived.wait(WAIT_S), sender.output
            assert sender.proc is not None
            sender.proc.send_signal(signal.SIGINT)
            assert wait_until(lambda: "interrupted" in sender.output, WAIT_S), sender.output
            release.set()
            assert wait_until(lambda: planner.stopped == ["steps=1"], WAIT_S), sender.output
            assert sender.wait(WAIT_S) == 1, sender.output
    finally:
        release.set()
    assert "cancelling goal" in sender.output and "status: CANCELED" in sender.output, sender.output
