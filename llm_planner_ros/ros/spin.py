"""Run a node on a MultiThreadedExecutor until shutdown, with exit codes for start-up errors."""
from __future__ import annotations

from typing import Callable, Optional

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from llm_planner_ros.core.errors import PlanningError
from llm_planner_ros.ros.params import ParameterError


def spin_node(factory: Callable[[], Node], name: str, args: Optional[list[str]] = None,
              num_threads: int = 4) -> int:
    """0 on shutdown; 2 for an invalid parameter; 3 when the node cannot start its backend.
    Several threads, because a long callback (a goal) blocks one while replies need others."""
    rclpy.init(args=args)
    node: Optional[Node] = None
    try:
        node = factory()
        executor = MultiThreadedExecutor(num_threads=num_threads)
        executor.add_node(node)
        executor.spin()
        return 0
    except ParameterError as exc:
        rclpy.logging.get_logger(name).fatal(str(exc))
        return 2
    except PlanningError as exc:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {exc}")
        return 3
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
