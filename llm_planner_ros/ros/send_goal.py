"""Send one PlanTask goal, stream its feedback and print the result.

Usage: ``ros2 run llm_planner_ros send_goal "make breakfast" [--method translated] [--execute]``
or, goal-directed: ``send_goal "Watch TV" --method pddl --goal "(on tv)" --action-goal "LOOKAT|WATCH" --execute``
Ctrl-C cancels the goal. Exit code 0 when the goal succeeded, 1 when it did not, 6 when the
planner went away before it answered.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional

import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import MethodOptions

from llm_planner_ros.ros.liveness import LOST_AFTER_S, PeerWatch

_STATUS = {GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED", GoalStatus.STATUS_ABORTED: "ABORTED",
           GoalStatus.STATUS_CANCELED: "CANCELED"}


def format_feedback(fb: PlanTask.Feedback) -> str:
    line = f"  goal: {', '.join(fb.goal_conditions)}\n" if fb.goal_conditions and fb.step_index == 1 else ""
    line += f"  step {fb.step_index:2d}  {fb.script:<40s} score={fb.score:+.3f}"
    if fb.generated_text:   # a planner action reads "(verb args)"; an LLM's step is free text
        line += f"  ({'plan' if fb.generated_text.startswith('(') else 'LLM'}: {fb.generated_text!r})"
    if fb.last_error.type:
        line += f"  FAILED: {fb.last_error.cause}"
    elif fb.executed:
        line += "  executed"
    return line


def format_result(status: int, result: PlanTask.Result) -> str:
    lines = [f"status: {_STATUS.get(status, status)}  reason: {result.termination_reason}"
             + (f"  ({result.detail})" if result.detail else "")]
    if result.goal_conditions:
        lines.append(f"goal (what done means): {', '.join(result.goal_conditions)}")
    for step in result.steps:
        mark = ("executed" if step.executed else f"FAILED: {step.error.cause}") if step.error.type or \
            step.executed else ""
        lines.append(f"  {step.index:2d}. {step.script:<40s} {step.skill.text:<28s} {mark}")
    goal = {1: "met", 0: "not met"}.get(result.goal_status, "unknown")
    lines.append(f"steps={len(result.program)} executed={result.executed} goal={goal} "
                 f"corrections={result.num_corrections} llm_calls={result.num_llm_calls} "
                 f"wall={result.wall_time_s:.2f}s")
    return "\n".join(lines)


def send(node: Node, goal: PlanTask.Goal, action_name: str, server_timeout: float) -> int:
    client = ActionClient(node, PlanTask, action_name)
    planner = PeerWatch(node, "planner", namespace=action_name.rpartition("/")[0])
    if not client.wait_for_server(timeout_sec=server_timeout):
        print(f"no action server '{action_name}' after {server_timeout:.0f}s", file=sys.stderr)
        return 3
    print(f"goal: {goal.task!r} method={goal.method or '(default)'} execute={goal.execute}")
    send_future = client.send_goal_async(
        goal, feedback_callback=lambda m: print(format_feedback(m.feedback), flush=True))
    if not _wait(node, send_future, planner):
        return 6
    handle = send_future.result()
    if not handle.accepted:
        print("goal rejected by the server (see its log for the reason)", file=sys.stderr)
        return 4
    result_future = handle.get_result_async()
    try:
        if not _wait(node, result_future, planner):
            return 6
    except KeyboardInterrupt:
        print("cancelling...", file=sys.stderr)
        handle.cancel_goal_async()
        if not _wait(node, result_future, planner):
            return 6
    response = result_future.result()
    print(format_result(response.status, response.result), flush=True)
    return 0 if response.status == GoalStatus.STATUS_SUCCEEDED else 1


def _wait(node: Node, future, planner: PeerWatch) -> bool:
    """Spin until ``future`` is done; False, with a message, when the planner went away first."""
    while not future.done():
        rclpy.spin_until_future_complete(node, future, timeout_sec=0.25)
        if not future.done() and planner.lost():
            print(f"the planner went away before it answered (no heartbeat for {LOST_AFTER_S:g}s); "
                  "the goal has no result", file=sys.stderr)
            return False
    return True


def main(argv: Optional[list[str]] = None) -> None:
    args_all = sys.argv[1:] if argv is None else argv
    ros_args = rclpy.utilities.remove_ros_args(["send_goal", *args_all])[1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--description", default="")
    parser.add_argument("--scene", default="")
    parser.add_argument("--method", default="")
    parser.add_argument("--execute", action="store_true", help="execute the skills, not only plan")
    parser.add_argument("--goal", action="append", default=[], metavar="LITERAL",
                        help="goal condition for --method pddl, e.g. '(on tv)'; repeat for more")
    parser.add_argument("--action-goal", action="append", default=[], metavar="VERBS",
                        help="action goal for --method pddl, e.g. 'LOOKAT|WATCH'")
    parser.add_argument("--object", action="append", default=[], dest="objects", metavar="NAME",
                        help="--method pddl plans only with these objects")
    parser.add_argument("--action", default="plan_task", help="action name (relative)")
    parser.add_argument("--server-timeout", type=float, default=30.0)
    parser.add_argument("--time-limit", type=float, default=-1.0, help="seconds for the goal; default: the node's")
    args = parser.parse_args(ros_args)
    goal = PlanTask.Goal(task=args.task, description=args.description, scene_id=args.scene,
                         method=args.method, execute=args.execute, goal_conditions=args.goal,
                         action_goals=args.action_goal, objects=args.objects,
                         options=MethodOptions(time_limit_s=args.time_limit))
    # Ctrl-C raises KeyboardInterrupt with the context still up, so the cancel can be sent
    rclpy.init(args=["send_goal", *args_all], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("send_goal")
    try:
        code = send(node, goal, args.action, args.server_timeout)
    except KeyboardInterrupt:
        print("interrupted; the goal may still run", file=sys.stderr)
        code = 130
    except ExternalShutdownException:
        print("ROS was shut down before the goal ended", file=sys.stderr)
        code = 6
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    raise SystemExit(code)
