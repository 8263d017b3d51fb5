"""Planner node: serves the ``plan_task`` action (llm_planner_msgs/action/PlanTask).

Follows ros2/examples ``minimal_action_server``: a ReentrantCallbackGroup, a
MultiThreadedExecutor, explicit goal/cancel callbacks, and a queue or reject policy for a
goal that arrives while another runs.

Every goal ends with a result that has a reason and the steps decided so far: a goal refused by
the policy is accepted and ends at once with ``rejected`` and why (an action server's plain
rejection carries no reason); a cancel stops the running skill on the robot; a goal past its
time limit ends with ``time_limit``; on SIGINT or SIGTERM the active and queued goals end with
``shutdown`` before the node exits.
"""
from __future__ import annotations

import collections
import ctypes
import ctypes.util
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Time as TimeMsg
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import RCLError, ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import GoalQueue, PlanState
from llm_planner_msgs.msg import PlanStep as PlanStepMsg
from llm_planner_ros.core.errors import CancelToken, InvalidGoal, PlanningError, Shutdown
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import Planner
from llm_planner_ros.core.request import InvalidRequest, PlanRequest
from llm_planner_ros.core.secrets import redact
from llm_planner_ros.core.types import PlanPreview, PlanStep, StepEvent, TerminationReason
from llm_planner_ros.planning.methods import method_entry
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.diagnostics import OK, WARN, publish_diagnostics
from llm_planner_ros.ros.liveness import publish_heartbeat
from llm_planner_ros.ros.managed import ManagedNode
from llm_planner_ros.ros.params import LiveParameters, declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.qos import EVENTS, LATCHED
from llm_planner_ros.ros.skill_action import wait_cancel_recorded
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node
from llm_planner_ros.safety.gate import SafetySettings
from llm_planner_ros.wiring import PlannerNodeParams

PlannerFactory = Callable[[PlannerNodeParams, "PlannerNode"], Planner]


@dataclass
class GoalContext:
    """One goal, from acceptance to its result."""

    handle: ServerGoalHandle
    stop: CancelToken
    rejected: str = ""   # why it is not planned (the goal policy)
    steps: dict[int, PlanStep] = field(default_factory=dict)   # every step decided so far, by index
    accepted: TimeMsg = field(default_factory=TimeMsg)
    state: Optional[PlanState] = None   # what `plan` shows of it, once it runs
    awaiting: str = ""                  # what it waits for ("": nothing)
    cancel_asked: bool = False          # a client asked to cancel it (rclpy records it a little later)

    @property
    def goal_id(self) -> str:
        return bytes(self.handle.goal_id.uuid).hex()

    @property
    def task(self) -> str:
        return self.handle.request.task[:500]

    def summary(self, status: str) -> PlanState:
        """This goal as a GoalQueue entry."""
        request = self.handle.request
        return PlanState(goal_id=self.goal_id, task=self.task, method=request.method, confidence=math.nan,
                         status=PlanState.STATUS_AWAITING_APPROVAL if self.awaiting else status,
                         subtask_index=-1, goal_conditions=list(request.goal_conditions)[:100],
                         accepted=self.accepted)


# a goal that ended so: a part of the stack failed, which /diagnostics reports as WARN
FAILED_PARTS = frozenset(r.value for r in (TerminationReason.LLM_ERROR, TerminationReason.EXECUTOR_ERROR,
                                           TerminationReason.TRACKER_ERROR, TerminationReason.INTERNAL_ERROR))


class PlannerNode(ManagedNode):
    """Hosts the goal action server; all planning happens in the ROS-free ``Planner``. A managed
    node: configure builds the planner (models, world), activate accepts goals; while it is not
    active a goal ends ``rejected`` at once, saying so."""

    def __init__(self, planner_factory: PlannerFactory, node_name: str = "planner") -> None:
        super().__init__(node_name)
        adopt_package_logs(self)
        self.params = declare_and_validate(self, PlannerNodeParams)
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)
        self._active: Optional[GoalContext] = None
        self._queue: collections.deque[GoalContext] = collections.deque()
        self._goals: dict[str, GoalContext] = {}
        self._early_cancels: set[str] = set()   # goals cancelled before _on_accepted saw them
        self._queue_pub_lock = threading.Lock()   # a queue snapshot is published before a newer one
        self._shutting_down = False
        self._last_end: Optional[tuple[str, float, float]] = None   # reason, seconds it took, when it ended
        self.peers: dict[str, Callable[[], bool]] = {}   # nodes the planner needs: whether each was heard
        self._factory = planner_factory
        self._planner: Optional[Planner] = None   # built by configure
        self._live = LiveParameters(self)
        self._live.add(PlannerNodeParams, self._set_params)
        self._live_setters: dict[type, Callable] = {}   # the configured planner's, by model (each added once)
        self.approver: Optional[Callable] = None   # the operator's approval over ROS, made by the first configure
        self.ready_note = ""   # what configure loaded, said when the node is active ("planner ready: ...")
        self._plan_pub = self.create_publisher(PlanState, "plan", LATCHED)
        self._events_pub = self.create_publisher(PlanStepMsg, "plan_events", EVENTS)
        self._queue_pub = self.create_publisher(GoalQueue, "goal_queue", LATCHED)
        self._queue_pub.publish(GoalQueue())
        self._server = ActionServer(
            self, PlanTask, "plan_task",
            execute_callback=self._execute,
            goal_callback=lambda goal: GoalResponse.ACCEPT,   # refused goals end with a reason
            handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup())
        publish_heartbeat(self, "planner")
        publish_diagnostics(self, "planner", self._health)
        self.start(self.params.autostart)

    # -- lifecycle ------------------------------------------------------------------------
    def configure(self) -> None:
        self._planner = self._factory(self.params, self)
        refuse_unknown_parameters(self)
        setters = dict(getattr(self._planner, "live_settings", lambda: [])())
        for model in setters.keys() - self._live_setters.keys():   # after a cleanup: none twice
            self._live.add(model, self._live_setter(model))
        self._live_setters.update(setters)

    def approval_timeout_s(self) -> float:
        """The configured planner's live approval time-out."""
        return float(getattr(self._planner, "safety", SafetySettings()).approval_timeout_s)

    def _live_setter(self, model: type) -> Callable[[object], None]:
        """A live setting's change goes to the planner configured now."""
        def apply(value: object) -> None:
            self._live_setters[model](value)
        return apply

    def activate(self) -> None:
        if self.ready_note:
            self.get_logger().info(f"planner ready: {self.ready_note}")
        self.get_logger().info(
            f"serving action 'plan_task' with policy '{self.params.goal_policy}', "
            f"default method '{self.params.default_method}'")

    def deactivate(self) -> None:
        self.get_logger().info("inactive: goals are refused until it is activated again (a running goal ends first)")
        self._reject_queued()

    def cleanup(self) -> None:
        self._planner = None

    def shutdown(self) -> None:
        """A finalized node runs no goal: the active and queued ones end ``shutdown``, as on SIGINT,
        and so does any goal sent later."""
        self.shutdown_goals()

    def _set_params(self, params: PlannerNodeParams) -> None:
        self.params = params

    def _health(self) -> tuple[bytes, str, dict[str, object]]:
        """/diagnostics: the model and world, the peers heard, the queue, the last goal's end."""
        with self._lock:
            active, queued, last = self._active, len(self._queue), self._last_end
        values: dict[str, object] = dict(getattr(self._planner, "status", dict)())
        values.update({"active goal": active.task if active is not None else "", "queued goals": queued})
        unheard = [name for name, heard in self.peers.items() if not heard()]
        values.update({f"{name} heard": name not in unheard for name in self.peers})
        level, message = (OK, f"serving; {queued} goal(s) queued") if self.serving else \
            (WARN, "not active (lifecycle): goals are refused")
        if last is not None:
            reason, took, ended = last
            values.update({"last goal": reason, "last goal seconds": f"{took:.2f}",
                           "last goal ended, seconds ago": f"{time.monotonic() - ended:.0f}"})
            if reason in FAILED_PARTS:
                level, message = WARN, f"{message}; the last goal ended {reason}"
        if unheard:
            level, message = WARN, f"{message}; not heard: {', '.join(unheard)}"
        return level, message, values

    def active_goal(self) -> Optional[GoalContext]:
        with self._lock:
            return self._active

    def awaiting(self, goal_id: str, what: str) -> None:
        """The active goal ``goal_id`` waits for ``what`` (an operator's approval), or no longer
        (""): its state, the queue and a feedback message say so."""
        with self._lock:
            ctx = self._active if self._active is not None and self._active.goal_id == goal_id else None
        if ctx is None:
            return
        ctx.awaiting = what
        running = (PlanState.STATUS_PLANNING, PlanState.STATUS_AWAITING_APPROVAL)
        if ctx.state is not None and ctx.state.status in running:
            ctx.state.status = PlanState.STATUS_AWAITING_APPROVAL if what else PlanState.STATUS_PLANNING
            self._plan_pub.publish(conversions.redacted(ctx.state))
        self._publish_queue()
        if what:
            last = ctx.steps[max(ctx.steps)] if ctx.steps else None
            ctx.handle.publish_feedback(conversions.redacted(PlanTask.Feedback(
                step_index=last.index if last is not None else 0, subtask_index=-1, awaiting=what,
                goal_conditions=list(ctx.state.goal_conditions) if ctx.state is not None else [])))

    def destroy_node(self) -> None:
        server = getattr(self, "_server", None)   # absent when the planner failed to start
        if server is not None:
            server.destroy()
        super().destroy_node()

    # -- goal admission -------------------------------------------------------------------
    def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
        ctx = GoalContext(goal_handle, CancelToken(lambda: goal_handle.is_cancel_requested),
                          accepted=self.get_clock().now().to_msg())
        p = self.params
        with self._lock:
            self._goals[ctx.goal_id] = ctx
            busy = self._active is not None
            queued = False
            if ctx.goal_id in self._early_cancels:   # cancelled before this callback ran: it ends now
                self._early_cancels.discard(ctx.goal_id)
                ctx.cancel_asked = True
                ctx.stop.cancel()
            elif self._shutting_down:
                ctx.stop.cancel(Shutdown("the planner is shutting down"))
            elif self._planner is None:   # unconfigured: activate alone is refused
                ctx.rejected = (f"the planner is not configured (lifecycle); configure and activate it: ros2 "
                                f"lifecycle set {self.get_fully_qualified_name()} configure, then activate")
            elif not self.serving:
                ctx.rejected = (f"the planner is not active (lifecycle); activate it: ros2 lifecycle set "
                                f"{self.get_fully_qualified_name()} activate")
            elif busy and p.goal_policy == "reject":
                ctx.rejected = "another goal is running (goal_policy reject)"
            elif busy and len(self._queue) >= p.max_queued_goals:
                ctx.rejected = f"{len(self._queue)} goals are already queued (max_queued_goals {p.max_queued_goals})"
            elif busy:
                self._queue.append(ctx)
                queued = True
            else:
                self._active = ctx
        self._publish_queue()
        if not queued:
            self._start(goal_handle)   # the active goal, or one that ends at once with its reason

    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        goal_id = bytes(goal_handle.goal_id.uuid).hex()
        with self._lock:
            ctx = self._goals.get(goal_id)
            queued = ctx is not None and ctx in self._queue
            if ctx is not None and queued:
                self._queue.remove(ctx)
            if ctx is not None:
                ctx.cancel_asked = True
            elif goal_handle.status == GoalStatus.STATUS_ACCEPTED:   # rclpy answered "accepted" and
                self._early_cancels.add(goal_id)                     # has not called _on_accepted yet
        if queued:
            self._publish_queue()
        self.get_logger().info(f"cancel requested for goal {goal_id[:8]}" + (" (queued)" if queued else ""))
        if ctx is not None:
            ctx.stop.cancel()   # stops the LLM, the approval wait and the running skill at once
        if queued:   # end it now, not when its turn comes; execute() once the cancel is recorded
            threading.Thread(target=self._end_queued, args=(goal_handle,), daemon=True).start()
        return CancelResponse.ACCEPT

    def _end_queued(self, goal_handle: ServerGoalHandle) -> None:
        wait_cancel_recorded(goal_handle, 2.0)
        self._start(goal_handle)

    @staticmethod
    def _start(goal_handle: ServerGoalHandle) -> None:
        """``goal_handle.execute()``, which runs ``_execute``. rclpy's execute() asks whether a cancel
        was recorded and then records EXECUTING: a cancel recorded in between makes that raise
        (CANCELING cannot go to EXECUTING). The goal is CANCELING then, and execute() again runs it
        without that step; its stop token is stopped, so it ends at once."""
        try:
            goal_handle.execute()
        except RCLError:
            if not goal_handle.is_cancel_requested:
                raise
            goal_handle.execute()

    def _start_next(self) -> None:
        """The next queued goal runs; while the node is not active, the queued goals end rejected."""
        while self.serving:
            with self._lock:
                self._active = self._queue.popleft() if self._queue else None
                nxt = self._active
            self._publish_queue()
            if nxt is None:
                return
            try:
                self._start(nxt.handle)
                return
            except Exception as exc:   # it cannot run: the queue moves on
                self.get_logger().error(f"goal {nxt.goal_id[:8]} could not start: {type(exc).__name__}: {exc}")
                with self._ended:
                    self._goals.pop(nxt.goal_id, None)
                    self._ended.notify_all()
        with self._lock:
            self._active = None
        self._reject_queued()

    def _reject_queued(self) -> None:
        """End every queued goal ``rejected``: the node was deactivated."""
        with self._lock:
            queued, self._queue = list(self._queue), collections.deque()
            for ctx in queued:
                ctx.rejected = (f"the planner was deactivated (lifecycle) before its turn; activate it: "
                                f"ros2 lifecycle set {self.get_fully_qualified_name()} activate")
        self._publish_queue()
        for ctx in queued:
            self._start(ctx.handle)   # it ends at once with that reason

    def _publish_queue(self) -> None:
        with self._queue_pub_lock:   # snapshot and publish in one step: the latched message is the latest
            with self._lock:
                active, queued = self._active, list(self._queue)
            goals = [active.summary(PlanState.STATUS_PLANNING)] if active is not None else []
            self._queue_pub.publish(conversions.redacted(
                GoalQueue(goals=goals + [ctx.summary(PlanState.STATUS_QUEUED) for ctx in queued])))

    def shutdown_goals(self) -> None:
        """End the active goal and every queued one with ``shutdown``; wait, up to
        ``shutdown_wait_s``, until their results are set."""
        with self._lock:
            self._shutting_down = True
            queued, self._queue = list(self._queue), collections.deque()
            active = self._active
        if active is not None:
            active.stop.cancel(Shutdown("the planner is shutting down"))
        for ctx in queued:
            ctx.stop.cancel(Shutdown("the planner is shutting down"))
            self._start(ctx.handle)
        with self._ended:
            if not self._ended.wait_for(lambda: not self._goals, self.params.shutdown_wait_s):
                self.get_logger().error(f"{len(self._goals)} goal(s) did not end within "
                                        f"{self.params.shutdown_wait_s:g}s of the shutdown")

    # -- execution ------------------------------------------------------------------------
    def _execute(self, goal_handle: ServerGoalHandle) -> PlanTask.Result:
        goal_id = bytes(goal_handle.goal_id.uuid).hex()
        with self._lock:
            ctx = self._goals[goal_id]
        start = time.monotonic()
        try:
            return conversions.redacted(self._run(ctx, start))
        finally:
            release_freed_memory()
            ctx.stop.close()
            with self._ended:
                self._goals.pop(goal_id, None)
                self._ended.notify_all()
            try:   # whatever happens to the next goal, this one keeps its result
                if self._active is ctx:
                    self._start_next()
                else:
                    self._publish_queue()
            except Exception as exc:
                self.get_logger().error(f"after goal {goal_id[:8]}: {type(exc).__name__}: {exc}")

    def _run(self, ctx: GoalContext, start: float) -> PlanTask.Result:
        goal_handle = ctx.handle
        state = PlanState(goal_id=ctx.goal_id, task=ctx.task, method=goal_handle.request.method, confidence=math.nan,
                          status=PlanState.STATUS_PLANNING, subtask_index=-1,
                          goal_conditions=list(goal_handle.request.goal_conditions)[:100], accepted=ctx.accepted)
        ctx.state = state

        started = False   # only a goal that started planning owns the latched `plan` topic
        planned = False   # the planner got it (and traces it)

        def finish(reason: TerminationReason, detail: str) -> PlanTask.Result:
            detail = redact(detail)
            if not planned:   # the planner's trace has no record of it yet: every goal gets one
                record = getattr(self._planner, "record_unplanned", None)
                if record is not None:
                    request = goal_handle.request
                    try:
                        record(ctx.goal_id, {"task": ctx.task, "method": request.method or None,
                                             "scene_id": request.scene_id}, reason.value, detail)
                    except Exception as exc:   # a trace that cannot be written does not change the result
                        self.get_logger().error(f"the trace did not record goal {ctx.goal_id[:8]}: "
                                                f"{type(exc).__name__}: {redact(str(exc))}")
            canceled = reason is TerminationReason.CANCELED and cancel_recorded(ctx)
            if canceled:
                goal_handle.canceled()
            else:
                goal_handle.abort()
            self.get_logger().warning(f"goal ended: {reason.value}: {detail} (goal {ctx.goal_id[:8]})")
            steps = [ctx.steps[i] for i in sorted(ctx.steps)]
            if started:
                state.detail = detail
                self._publish_end(state, reason, canceled=canceled, success=False)
            return conversions.failed_result(reason, detail, time.monotonic() - start, steps)

        if ctx.rejected:
            return finish(TerminationReason.REJECTED, f"not planned: {ctx.rejected}")
        if ctx.stop.cancelled:
            return finish(ctx.stop.error.reason, f"{ctx.stop.error}; it ended before it started")
        started = True
        self._plan_pub.publish(conversions.redacted(state))
        try:
            request = self._with_defaults(conversions.request_from_goal(goal_handle.request))
        except InvalidRequest as exc:
            return finish(TerminationReason.INVALID_GOAL, str(exc))
        ctx.stop.start_time_limit(request.options.time_limit_s or self.params.goal_time_limit_s)

        method = request.method or self.params.default_method
        self.get_logger().info(f"planning '{request.task}' with method '{method}' "
                               f"(goal {ctx.goal_id[:8]})")
        state.method = method

        def on_step(event: StepEvent) -> None:
            ctx.steps[event.step.index] = event.step
            goal_handle.publish_feedback(conversions.redacted(conversions.feedback_from_event(event)))
            step = conversions.redacted(conversions.step_to_msg(event.step))
            self._events_pub.publish(step)
            state.steps.append(step)
            state.subtask_index = event.step.subtask_index
            state.goal_conditions = list(event.goal_conditions)
            state.confidence = float(event.confidence)
            self._plan_pub.publish(conversions.redacted(state))

        def on_plan(preview: PlanPreview) -> None:
            state.planned = [s.script() for s in preview.skills]
            state.goal_conditions = list(preview.goal_conditions)
            state.conditions_met = list(preview.conditions_met)
            self._plan_pub.publish(conversions.redacted(state))

        planned = True
        planner = self._planner
        if planner is None:   # cleaned up since the goal was accepted
            return finish(TerminationReason.REJECTED, "not planned: the planner was cleaned up (lifecycle)")
        try:
            result = planner.plan(request, on_step, ctx.stop, goal_id=ctx.goal_id, on_plan=on_plan)
        except PlanningError as exc:
            return finish(exc.reason, str(exc) or exc.reason.value)
        except Exception as exc:  # a planner bug must not take the node or later goals down
            self.get_logger().error(f"planner raised {type(exc).__name__}: {redact(str(exc))}")
            return finish(TerminationReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")

        result.wall_time_s = time.monotonic() - start
        msg = conversions.result_to_msg(result)   # redacted, with every string, when _run returns it
        canceled = result.termination_reason is TerminationReason.CANCELED and cancel_recorded(ctx)
        if canceled:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        state.steps = list(msg.steps)
        state.subtasks, state.goal_conditions, state.detail = list(msg.subtasks), list(msg.goal_conditions), msg.detail
        state.confidence = msg.confidence
        state.hazards = list(msg.hazards)
        self._publish_end(state, result.termination_reason, canceled=canceled, success=result.success)
        sure = "" if math.isnan(result.confidence) else f", confidence {result.confidence:.2f}"
        self.get_logger().info(
            f"goal ended: {result.termination_reason.value} after {len(result.steps)} steps "
            f"in {result.wall_time_s:.2f}s{sure} (goal {ctx.goal_id[:8]})")
        return msg

    def _publish_end(self, state: PlanState, reason: TerminationReason, canceled: bool, success: bool) -> None:
        state.ended = self.get_clock().now().to_msg()
        state.status = (PlanState.STATUS_CANCELED if canceled else
                        PlanState.STATUS_SUCCEEDED if success else PlanState.STATUS_ABORTED)
        state.termination_reason = reason.value
        took = (state.ended.sec - state.accepted.sec) + (state.ended.nanosec - state.accepted.nanosec) / 1e9 \
            if state.accepted.sec else 0.0
        with self._lock:
            self._last_end = (reason.value, max(0.0, took), time.monotonic())
        self._plan_pub.publish(conversions.redacted(state))

    def _with_defaults(self, request: PlanRequest) -> PlanRequest:
        """The goal with the node's defaults; :class:`InvalidRequest` for a method nobody registered."""
        try:
            method_entry(request.method or self.params.default_method)
        except InvalidGoal as exc:
            raise InvalidRequest(str(exc)) from None
        return request.model_copy(update={
            "method": request.method or self.params.default_method,
            "scene_id": request.scene_id or self.params.default_scene,
        })


def cancel_recorded(ctx: GoalContext) -> bool:
    """Whether the goal ends ``canceled`` (else aborted): its cancel, when one was asked, is awaited
    up to a second; ending first would make rclpy refuse the cancel it is about to record."""
    return wait_cancel_recorded(ctx.handle, 1.0) if ctx.cancel_asked else ctx.handle.is_cancel_requested


_LIBC_NAME = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_LIBC_NAME) if _LIBC_NAME else None


def release_freed_memory() -> None:
    """Hand the heap's freed pages back to the system after a goal: glibc keeps them in the arena
    of each thread that freed them, and goals run on changing threads (a planner node's resident
    memory otherwise creeps up with the goals it has served)."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


def run_node(planner_factory: PlannerFactory, args: Optional[list[str]] = None) -> int:
    """Spin a :class:`PlannerNode` until shutdown; returns a process exit code."""
    return spin_node(lambda: PlannerNode(planner_factory), "planner", args)


def build_planning_service(params: PlannerNodeParams, node: PlannerNode) -> Planner:
    """The real planner, wired by :mod:`llm_planner_ros.wiring` from the node's parameters."""
    from llm_planner_ros.ros.approval import RosApprover
    from llm_planner_ros.trace.log import TraceLog, default_path
    from llm_planner_ros.wiring import ServiceConfig, compose, service_models

    parts = {model: declare_and_validate(node, model) for model in service_models()}
    refuse_unknown_parameters(node)   # before anything slow is loaded
    config = ServiceConfig(parts)

    def stop() -> Optional[CancelToken]:
        goal = node.active_goal()
        return goal.stop if goal is not None else None

    def goal_info() -> tuple[str, str]:
        goal = node.active_goal()
        return (goal.goal_id, goal.task) if goal is not None else ("", "")
    judge = None
    if params.tracker_mode == "ros":
        from llm_planner_ros.ros.tracker_client import RosSubtaskJudge

        judge = RosSubtaskJudge(node, timeout_s=params.tracker_timeout_s, wait_s=params.bridge_wait_s, stop=stop)
    node.get_logger().info(f"loading planner (llm backend '{config.backend.llm_backend}')")
    factory: Optional[Callable[[str, str], Executor]] = None
    robot_world: Optional[Callable[[bool], Optional[Executor]]] = None
    if params.executor_mode == "bridge":
        from llm_planner_ros.ros.executor_client import RosExecutor

        bridge = RosExecutor(node, skill_timeout_s=params.skill_timeout_s, wait_s=params.bridge_wait_s,
                             stop=stop, cancel_wait_s=params.cancel_wait_s)
        node.peers["executor_bridge"] = bridge.bridge.heard

        def bridge_executor(scene_id: str, task: str) -> RosExecutor:
            bridge.reset(scene_id, task=task)
            return bridge

        def bridge_world(executes: bool) -> Optional[RosExecutor]:
            """The bridge, when it reports a profile's world; a plan-only goal sent while no bridge
            was ever heard plans in the built-in world."""
            if not executes and not bridge.bridge.ever_heard():
                return None
            bridge.redescribe()   # once a goal: the robot may now declare another world
            return bridge if bridge.profile is not None else None
        factory, robot_world = bridge_executor, bridge_world
    trace_path = default_path(node.get_namespace(), node.get_name()) if params.trace_log == "default" \
        else params.trace_log
    # approval may be switched on while the node runs, so its topic and service always exist; its
    # time-out is the service's live safety setting
    if node.approver is None:   # its topic and service once per node, whatever configures follow
        node.approver = RosApprover(node, lambda: node.approval_timeout_s(), goal_info, node.awaiting)
    approver = node.approver
    service = compose(config, executor_factory=factory, judge=judge, approver=approver,
                      trace=TraceLog(trace_path) if trace_path else None, robot_world=robot_world,
                      world=params.world)
    if config.safety.dry_run:
        node.get_logger().warning("dry_run: skills run in the in-process simulator; nothing reaches the bridge")
    service.parts.warm(params.default_scene, config.planner.bank)   # no goal embeds a bank or a scene
    node.ready_note = service.parts.llm.name + (f"; trace in {trace_path}" if trace_path else "")
    return service


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(run_node(build_planning_service, args))
