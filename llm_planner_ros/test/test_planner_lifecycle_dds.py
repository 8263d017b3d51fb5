"""The planner's lifecycle ``shutdown`` transition, asked over DDS as ``ros2 lifecycle set
<node> shutdown`` asks it: a finalized planner runs no goal.

The real PlannerNode runs in this process with a scripted planner whose goal is held on an event
(the real planner's goal held so is one waiting for an operator's confirmation: measured, it ran
on for a minute after the node was finalized, and would have executed its plan once confirmed).
"""
from __future__ import annotations

import threading
import uuid

import rclpy
from action_msgs.msg import GoalStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.signals import SignalHandlerOptions

from helpers.processes import wait_until
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.types import PlanResult, TerminationReason
from llm_planner_ros.ros.client import PlannerClient
from llm_planner_ros.ros.executor import NodeExecutor
from llm_planner_ros.ros.planner_node import PlannerNode

WAIT_S = 60.0   # discovery and results on a loaded machine


class HeldPlanner:
    """Plans "held" until its goal is stopped (or WAIT_S); any other task ends at once."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.stopped = threading.Event()

    def plan(self, request, on_step, cancel: CancelToken, goal_id="", on_plan=None) -> PlanResult:
        self.ran.append(request.task)
        if request.task == "held":
            gate = threading.Event()
            remove = cancel.on_stop(gate.set)
            gate.wait(WAIT_S)
            remove()
            if cancel.cancelled:
                self.stopped.set()
        cancel.check()
        return PlanResult(TerminationReason.END_OF_PLAN, checked=True)


def test_a_lifecycle_shutdown_ends_the_running_and_queued_goals_and_refuses_later_ones():
    ns = f"/lifecycle_{uuid.uuid4().hex[:8]}"
    rclpy.init(args=["lifecycle", "--ros-args", "-r", f"__ns:={ns}"], signal_handler_options=SignalHandlerOptions.NO)
    planner = HeldPlanner()
    node = PlannerNode(lambda params, n: planner)
    executor = NodeExecutor(num_threads=8)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    client = PlannerClient(ns, node_name="lifecycle_client")
    try:
        assert client.wait_until_ready(WAIT_S)
        change = client.attach(lambda n: n.create_client(ChangeState, f"{ns}/planner/change_state"))
        get = client.attach(lambda n: n.create_client(GetState, f"{ns}/planner/get_state"))
        held = client.send("held")
        assert wait_until(lambda: planner.ran == ["held"], WAIT_S)
        queued = client.send("queued")
        assert change.wait_for_service(WAIT_S) and get.wait_for_service(WAIT_S)

        asked = change.call_async(ChangeState.Request(
            transition=Transition(id=Transition.TRANSITION_ACTIVE_SHUTDOWN)))
        assert wait_until(asked.done, WAIT_S) and asked.result().success
        state = get.call_async(GetState.Request())
        assert wait_until(state.done, WAIT_S) and state.result().current_state.label == "finalized"

        # the goal that was planning is stopped, not left to run on in a finalized node
        assert planner.stopped.is_set()
        for run in (held, queued):
            outcome = client.result(run, WAIT_S)
            assert outcome.status == GoalStatus.STATUS_ABORTED, outcome.status_name
            assert outcome.result.termination_reason == "shutdown", outcome.result.detail
        later = client.plan("later", timeout_s=WAIT_S)
        assert later.status == GoalStatus.STATUS_ABORTED and later.result.termination_reason == "shutdown"
        assert "activate it" not in later.result.detail   # a finalized node cannot be activated
        assert planner.ran == ["held"]
    finally:
        client.close()
        node.shutdown_goals()
        executor.shutdown(timeout_sec=30.0)
        node.destroy_node()
        rclpy.try_shutdown()
