"""PET over DDS: the real planner node asks the tracker node's check_subtask after each executed
skill (tracker_mode=ros); the tracker publishes the subtasks and the progress pointer."""
from __future__ import annotations

import uuid

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from helpers.processes import ros_node, wait_until
from helpers.ros_client import RosTestClient
from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import MethodOptions, TrackerState


def test_planner_tracks_subtasks_through_the_tracker_node():
    ns = f"/pet_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, "serving action 'execute_skill'", "backend:=sim"), \
            ros_node("tracker_node", ns, "serving 'check_subtask'"), \
            ros_node("planner_node", ns, "planner ready", "tracker_mode:=ros", "executor_mode:=bridge"):
        with RosTestClient(ns) as client:
            states = []
            qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
            client.node.create_subscription(TrackerState, "tracker_state", states.append, qos)
            goal = PlanTask.Goal(task="Turn on light", method="reprompt", execute=True,
                                 options=MethodOptions(plan_subtasks=True, track_subtasks=True,
                                                       eliminate_objects=True))
            run = client.send_plan(goal, timeout=60)
            status, result = run.result(timeout=240)
            assert result.termination_reason, result.detail
            executed = [s for s in result.steps if s.executed]
            assert list(result.subtasks), "Plan gave no subtasks"
            assert all(f.subtask for f in run.feedback)
            assert executed, result.detail   # seeded: the embedded model's first step executes
            # each executed skill was followed by a question to the tracker node
            assert wait_until(lambda: states and list(states[-1].subtasks) == list(result.subtasks), 10)
            assert states[-1].task == "Turn on light" and 0 <= states[-1].pointer <= len(result.subtasks)
            assert states[-1].source in ("embedding", "llm")


def test_a_tracker_that_dies_ends_the_goal_with_tracker_error_at_once():
    """Issue 15: with the tracker down, a goal waited 30 s and ended 'internal_error'."""
    import signal
    import time

    ns = f"/petdead_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, "serving action 'execute_skill'", "backend:=sim"), \
            ros_node("planner_node", ns, "planner ready", "tracker_mode:=ros", "executor_mode:=bridge") as planner:
        tracker = ros_node("tracker_node", ns, "serving 'check_subtask'")
        with tracker, RosTestClient(ns) as client:
            # the planner has heard the tracker: a tracker it never heard is "not available", not "gone"
            assert wait_until(lambda: "heard the tracker's heartbeat" in planner.output, 60), planner.output
            # the planner listens to the tracker's heartbeat, and beats flow, before the tracker dies
            from builtin_interfaces.msg import Time

            from llm_planner_ros.ros.qos import HEARTBEAT
            beats = []
            client.node.create_subscription(Time, "heartbeat/tracker", beats.append, HEARTBEAT)
            assert wait_until(lambda: client.node.count_subscribers("heartbeat/tracker") >= 2, 30)
            n = len(beats)
            assert wait_until(lambda: len(beats) >= n + 4, 10)
            tracker.proc.send_signal(signal.SIGKILL)
            tracker.proc.wait(10)
            t0 = time.monotonic()
            goal = PlanTask.Goal(task="Turn on light", method="reprompt", execute=True,
                                 options=MethodOptions(plan_subtasks=True, track_subtasks=True))
            status, result = client.send_plan(goal, timeout=60).result(timeout=120)
            seconds = time.monotonic() - t0
    assert result.termination_reason == PlanTask.Result.REASON_TRACKER_ERROR, result.detail
    assert "the tracker is not running" in result.detail
    assert seconds < 60   # planning time only: the tracker is not waited for (it was 30 s per question)
