"""Planner node: serves the ``plan_task`` action (llm_planner_msgs/action/PlanTask).

Follows ros2/examples ``minimal_action_server``: a ReentrantCallbackGroup, a
MultiThreadedExecutor, explicit goal/cancel callbacks, and a queue or reject policy for a
goal that arrives while another runs.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Callable, Optional

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import PlanState
from llm_planner_msgs.msg import PlanStep as PlanStepMsg

from llm_planner_ros.core.errors import CancelToken, PlanningError
from llm_planner_ros.core.planner import Planner
from llm_planner_ros.core.request import InvalidRequest, PlanRequest
from llm_planner_ros.core.types import Method, StepEvent, TerminationReason
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.spin import spin_node
from llm_planner_ros.wiring import PlannerNodeParams

# Latched topics: late joiners get the last message.
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


PlannerFactory = Callable[[PlannerNodeParams, Node], Planner]


class PlannerNode(Node):
    """Hosts the goal action server; all planning happens in the ROS-free ``Planner``."""

    def __init__(self, planner_factory: PlannerFactory, node_name: str = "planner") -> None:
        super().__init__(node_name)
        self.params = declare_and_validate(self, PlannerNodeParams)
        self._planner = planner_factory(self.params, self)
        refuse_unknown_parameters(self)
        self._lock = threading.Lock()
        self._active: Optional[ServerGoalHandle] = None
        self._queue: collections.deque[ServerGoalHandle] = collections.deque()
        self._plan_pub = self.create_publisher(PlanState, "plan", LATCHED)
        self._events_pub = self.create_publisher(PlanStepMsg, "plan_events", 10)
        self._server = ActionServer(
            self, PlanTask, "plan_task",
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup())
        self.get_logger().info(
            f"serving action 'plan_task' with policy '{self.params.goal_policy}', "
            f"default method '{self.params.default_method}'")

    def active_goal_info(self) -> tuple[str, str, bool]:
        """(goal id, task, cancel requested) of the goal being planned."""
        with self._lock:
            goal = self._active
        if goal is None:
            return "", "", False
        return bytes(goal.goal_id.uuid).hex(), goal.request.task[:500], bool(goal.is_cancel_requested)

    def destroy_node(self) -> None:
        self._server.destroy()
        super().destroy_node()

    # -- goal admission -------------------------------------------------------------------
    def _on_goal(self, goal: PlanTask.Goal) -> GoalResponse:
        with self._lock:
            busy = self._active is not None
            if busy and self.params.goal_policy == "reject":
                self.get_logger().warning(
                    f"rejected goal '{goal.task[:80]}': another goal is running (goal_policy=reject)")
                return GoalResponse.REJECT
            if busy and len(self._queue) >= self.params.max_queued_goals:
                self.get_logger().warning(
                    f"rejected goal '{goal.task[:80]}': {len(self._queue)} goals already queued "
                    f"(max_queued_goals={self.params.max_queued_goals})")
                return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
        with self._lock:
            if self._active is None:
                self._active = goal_handle
                goal_handle.execute()
            else:
                self._queue.append(goal_handle)

    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        self.get_logger().info("cancel requested")
        return CancelResponse.ACCEPT

    def _start_next(self) -> None:
        with self._lock:
            self._active = self._queue.popleft() if self._queue else None
            if self._active is not None:
                self._active.execute()

    # -- execution ------------------------------------------------------------------------
    def _execute(self, goal_handle: ServerGoalHandle) -> PlanTask.Result:
        start = time.monotonic()
        try:
            return self._run(goal_handle, start)
        finally:
            self._start_next()

    def _run(self, goal_handle: ServerGoalHandle, start: float) -> PlanTask.Result:
        state = PlanState(goal_id=bytes(goal_handle.goal_id.uuid).hex(), task=goal_handle.request.task[:500],
                          method=goal_handle.request.method, status=PlanState.STATUS_PLANNING, subtask_index=-1)
        self._plan_pub.publish(state)

        def finish(reason: TerminationReason, detail: str) -> PlanTask.Result:
            if reason is TerminationReason.CANCELED:
                goal_handle.canceled()
            else:
                goal_handle.abort()
            self.get_logger().warning(f"goal ended: {reason.value}: {detail}")
            self._publish_end(state, reason, canceled=reason is TerminationReason.CANCELED, success=False)
            return conversions.failed_result(reason, detail, time.monotonic() - start)

        cancel = CancelToken(lambda: goal_handle.is_cancel_requested)
        if cancel.cancelled:
            return finish(TerminationReason.CANCELED, "cancelled before it started")
        try:
            request = self._with_defaults(conversions.request_from_goal(goal_handle.request))
        except InvalidRequest as exc:
            return finish(TerminationReason.INVALID_GOAL, str(exc))

        self.get_logger().info(f"planning '{request.task}' with method '{request.method.value}'")
        state.method = request.method.value

        def on_step(event: StepEvent) -> None:
            goal_handle.publish_feedback(conversions.feedback_from_event(event))
            step = conversions.step_to_msg(event.step)
            self._events_pub.publish(step)
            state.steps.append(step)
            self._plan_pub.publish(state)

        try:
            result = self._planner.plan(request, on_step, cancel)
        except PlanningError as exc:
            return finish(exc.reason, str(exc) or exc.reason.value)
        except Exception as exc:  # a planner bug must not take the node or later goals down
            self.get_logger().error(f"planner raised {type(exc).__name__}: {exc}")
            return finish(TerminationReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")

        result.wall_time_s = time.monotonic() - start
        if result.termination_reason.is_success and not result.success:
            result.detail = ("the plan is empty; " if not result.steps else "not every step executed; ") \
                + result.detail
        msg = conversions.result_to_msg(result)
        if result.termination_reason is TerminationReason.CANCELED:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        state.steps = list(msg.steps)
        self._publish_end(state, result.termination_reason, canceled=False, success=result.success)
        self.get_logger().info(
            f"goal ended: {result.termination_reason.value} after {len(result.steps)} steps "
            f"in {result.wall_time_s:.2f}s")
        return msg

    def _publish_end(self, state: PlanState, reason: TerminationReason, canceled: bool, success: bool) -> None:
        state.status = (PlanState.STATUS_CANCELED if canceled else
                        PlanState.STATUS_SUCCEEDED if success else PlanState.STATUS_ABORTED)
        state.termination_reason = reason.value
        self._plan_pub.publish(state)

    def _with_defaults(self, request: PlanRequest) -> PlanRequest:
        return request.model_copy(update={
            "method": request.method or Method(self.params.default_method),
            "scene_id": request.scene_id or self.params.default_scene,
        })


def run_node(planner_factory: PlannerFactory, args: Optional[list[str]] = None) -> int:
    """Spin a :class:`PlannerNode` until shutdown; returns a process exit code."""
    return spin_node(lambda: PlannerNode(planner_factory), "planner", args)


def build_planning_service(params: PlannerNodeParams, node: Node) -> Planner:
    """The real planner, wired by :mod:`llm_planner_ros.wiring` from the node's parameters."""
    from llm_planner_ros.trace.log import TraceLog
    from llm_planner_ros.wiring import SERVICE_MODELS, ServiceConfig, build_service

    parts = {model: declare_and_validate(node, model) for model in SERVICE_MODELS}
    refuse_unknown_parameters(node)   # before anything slow is loaded
    config = ServiceConfig(*parts.values())
    approver = None
    if config.safety.approval != "none":
        from llm_planner_ros.ros.approval import RosApprover

        approver = RosApprover(node, config.safety.approval_timeout_s, node.active_goal_info)
    judge = None
    if params.tracker_mode == "ros":
        from llm_planner_ros.ros.tracker_client import RosSubtaskJudge

        judge = RosSubtaskJudge(node, timeout_s=params.tracker_timeout_s, wait_s=params.bridge_wait_s)
    node.get_logger().info(f"loading planner (llm backend '{config.backend.llm_backend}')")
    factory: Optional[Callable[[str, str], object]] = None
    if params.executor_mode == "bridge":
        from llm_planner_ros.ros.executor_client import RosExecutor

        bridge = RosExecutor(node, skill_timeout_s=params.skill_timeout_s, wait_s=params.bridge_wait_s,
                             cancel_requested=lambda: node.active_goal_info()[2])

        def bridge_executor(scene_id: str, task: str) -> RosExecutor:
            bridge.reset(scene_id, task=task)
            return bridge
        factory = bridge_executor
    service = build_service(config, executor_factory=factory, judge=judge, approver=approver,
                            trace=TraceLog(params.trace_log) if params.trace_log else None)
    if config.safety.dry_run:
        node.get_logger().warning("dry_run: skills run in the in-process simulator; nothing reaches the bridge")
    service.index_for(params.default_scene, config.planner.bank)   # embed the default bank before serving
    node.get_logger().info(f"planner ready: {service.llm.name}")
    return service


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(run_node(build_planning_service, args))
