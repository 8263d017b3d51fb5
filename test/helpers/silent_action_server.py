"""Unit-test double: a ``plan_task`` action server that is discovered but never answers a goal
(its goal callback blocks) and publishes no heartbeat: a planner that hangs before it was heard.

Run: python -m helpers.silent_action_server [--ros-args -r __ns:=/ns]
"""
from __future__ import annotations

import sys
import threading

import rclpy
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from llm_planner_msgs.action import PlanTask


def main() -> None:
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("planner")
    forever = threading.Event()

    def never(_goal):
        forever.wait()
    ActionServer(node, PlanTask, "plan_task", execute_callback=lambda handle: PlanTask.Result(),
                 goal_callback=never, callback_group=ReentrantCallbackGroup())
    node.get_logger().info("silent server up")
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
