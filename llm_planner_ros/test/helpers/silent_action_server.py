"""Unit-test double: a ``plan_task`` action server that is discovered but never answers a goal
(its goal callback blocks) and publishes no heartbeat: a planner that hangs before it was heard.
With ``--answer-after N`` it loses only the first N goal requests (as a goal sent before the
server has matched the client is lost), then accepts and ends each goal at once.

Run: python -m helpers.silent_action_server [--answer-after N] [--ros-args -r __ns:=/ns]
"""
from __future__ import annotations

import sys
import threading

import rclpy
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from llm_planner_msgs.action import PlanTask


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--answer-after", type=int, default=-1, help="lose this many goal requests, then answer")
    own, rest = parser.parse_known_args()
    rclpy.init(args=[sys.argv[0], *rest])
    node = rclpy.create_node("planner")
    forever = threading.Event()
    seen = []

    def goal_callback(_goal) -> GoalResponse:
        seen.append(1)
        if own.answer_after < 0 or len(seen) <= own.answer_after:
            forever.wait()   # this request is never answered
        return GoalResponse.ACCEPT

    def execute(handle) -> PlanTask.Result:
        handle.succeed()
        return PlanTask.Result(success=True, termination_reason="end_of_plan", detail=f"request {len(seen)}")
    ActionServer(node, PlanTask, "plan_task", execute_callback=execute, goal_callback=goal_callback,
                 callback_group=ReentrantCallbackGroup())
    node.get_logger().info("silent server up")
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
