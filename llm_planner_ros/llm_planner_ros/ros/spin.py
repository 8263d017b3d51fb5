"""Run a node on a MultiThreadedExecutor until shutdown, with exit codes for start-up errors.

SIGINT and SIGTERM are handled here rather than by rclpy (whose handler shuts the context down
at once): the node's ``shutdown_goals`` runs first, while the executor still spins, so clients
get their goals' results before the node goes away."""
from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Optional

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from llm_planner_ros.core.errors import PlanningError
from llm_planner_ros.ros.executor import NodeExecutor
from llm_planner_ros.ros.params import ParameterError, use_command_line
from llm_planner_ros.ros.stop_request import StopRequest

RESULT_GRACE_S = 0.5   # after the last goal ends: time for the executor to send its result


class RosLogHandler(logging.Handler):
    """The package's Python log records (a progress line from the ROS-free core: embedding a
    bank, a damaged cache shard) through the node's ROS logger, so they are not lost."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.INFO)
        self.logger = rclpy.logging.get_logger(name)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"{record.name.rsplit('.', 1)[-1]}: {record.getMessage()}"
            if record.levelno >= logging.ERROR:
                self.logger.error(text)
            elif record.levelno >= logging.WARNING:
                self.logger.warning(text)
            else:
                self.logger.info(text)
        except Exception:
            self.handleError(record)


def forward_package_logs(name: str) -> None:
    """Route ``llm_planner_ros``'s Python logging (INFO and above) to the ROS logger ``name``; once.
    Until a node adopts them (:func:`adopt_package_logs`) they reach the console only."""
    package = logging.getLogger("llm_planner_ros")
    if not any(isinstance(h, RosLogHandler) for h in package.handlers):
        package.addHandler(RosLogHandler(name))
        package.setLevel(logging.INFO)
        package.propagate = False


def adopt_package_logs(node: Node) -> None:
    """From now on the package's Python log records go through ``node``'s own logger, which
    publishes to /rosout (a logger by name alone, not the node's, reaches only the console)."""
    for handler in logging.getLogger("llm_planner_ros").handlers:
        if isinstance(handler, RosLogHandler):
            handler.logger = node.get_logger()


def spin_node(factory: Callable[[], Node], name: str, args: Optional[list[str]] = None,
              num_threads: int = 4) -> int:
    """0 on shutdown; 2 for an invalid parameter or a parameter file that sets nothing for the
    node; 3 when the node cannot start its backend.
    Several threads, because a long callback (a goal) blocks one while replies need others."""
    stop = StopRequest().install()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node: Optional[Node] = None
    executor: Optional[MultiThreadedExecutor] = None
    spinner: Optional[threading.Thread] = None
    try:
        use_command_line(sys.argv if args is None else args)   # its --params-file arguments are checked
        forward_package_logs(name)
        node = factory()
        executor = NodeExecutor(num_threads=num_threads)
        executor.add_node(node)
        spinner = threading.Thread(target=_spin, args=(executor,), daemon=True)
        spinner.start()
        while not stop.wait(0.5) and spinner.is_alive():
            pass
        shutdown_goals = getattr(node, "shutdown_goals", None)
        if stop.requested and spinner.is_alive() and shutdown_goals is not None:
            node.get_logger().info("stopping: ending the active and queued goals first")
            shutdown_goals()
            time.sleep(RESULT_GRACE_S)
        return 0
    except ParameterError as exc:
        rclpy.logging.get_logger(name).fatal(str(exc))
        return 2
    except PlanningError as exc:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {exc}")
        return 3
    except KeyboardInterrupt:
        return 0
    finally:
        # stop spinning, and wait for the spinner, before the node goes: destroying a node under
        # a running wait set aborts the process ("terminate called without an active exception")
        if executor is not None:
            executor.shutdown(timeout_sec=5.0)
        if spinner is not None:
            spinner.join(5.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        # the handlers go back last: a second Ctrl-C (the terminal's to the group, and a launcher's
        # forwarded) that lands during the teardown above only sets ``stop`` again, never interrupts it
        stop.restore()


def _spin(executor: MultiThreadedExecutor) -> None:
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
