"""Send one PlanTask goal, stream its feedback and print the result.

Usage: ``ros2 run llm_planner_ros send_goal "make breakfast" [--method translated] [--execute]``
or, goal-directed: ``send_goal "Watch TV" --method pddl --goal "(on tv)" --action-goal "LOOKAT|WATCH" --execute``
Ctrl-C cancels the goal. Exit code 0 when the goal succeeded.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional

import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.node import Node

from llm_planner_msgs.action import PlanTask

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
    if not client.wait_for_server(timeout_sec=server_timeout):
        print(f"no action server '{action_name}' after {server_timeout:.0f}s", file=sys.stderr)
        return 3
    print(f"goal: {goal.task!r} method={goal.method or '(default)'} execute={goal.execute}")
    send_future = client.send_goal_async(
        goal, feedback_callback=lambda m: print(format_feedback(m.feedback), flush=True))
    rclpy.spin_until_future_complete(node, send_future)
    handle = send_future.result()
    if not handle.accepted:
        print("goal rejected by the server (see its log for the reason)", file=sys.stderr)
        return 4
    result_future = handle.get_result_async()
    try:
        rclpy.spin_until_future_complete(node, result_future)
    except KeyboardInterrupt:
        print("cancelling...", file=sys.stderr)
        rclpy.spin_until_future_complete(node, handle.cancel_goal_async(), timeout_sec=5.0)
        rclpy.spin_until_future_complete(node, result_future, timeout_sec=30.0)
    response = result_future.result()
    if response is None:
        return 5
    print(format_result(response.status, response.result), flush=True)
    return 0 if response.status == GoalStatus.STATUS_SUCCEEDED else 1


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
    args = parser.parse_args(ros_args)
    goal = PlanTask.Goal(task=args.task, description=args.description, scene_id=args.scene,
                         method=args.method, execute=args.execute, goal_conditions=args.goal,
                         action_goals=args.action_goal, objects=args.objects)
    rclpy.init(args=["send_goal", *args_all])
    node = rclpy.create_node("send_goal")
    try:
        code = send(node, goal, args.action, args.server_timeout)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    raise SystemExit(code)
