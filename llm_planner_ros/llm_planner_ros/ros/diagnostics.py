"""A node's health on ``/diagnostics`` (``diagnostic_msgs/DiagnosticArray``) once a second, as
diagnostic_updater publishes it, for rqt_robot_monitor, diagnostic_aggregator and Foxglove.

The status is named ``<node>: <what>`` and carries its node's fully qualified name as
``hardware_id``; a check returns its level (OK, WARN, ERROR), a message and key/value pairs."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from llm_planner_ros.ros.qos import EVENTS

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
Check = Callable[[], tuple[bytes, str, Mapping[str, object]]]
PERIOD_S = 1.0


def status(node: Node, what: str, check: Check) -> DiagnosticStatus:
    """``check``'s answer as a status; a check that raises is an ERROR saying why."""
    try:
        level, message, values = check()
    except Exception as exc:   # the health report must not take the node down
        level, message, values = ERROR, f"the health check failed: {type(exc).__name__}: {exc}", {}
    fqn = node.get_fully_qualified_name()
    return DiagnosticStatus(level=level, name=f"{fqn.lstrip('/')}: {what}", message=message, hardware_id=fqn,
                            values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])


def publish_diagnostics(node: Node, what: str, check: Check, period_s: float = PERIOD_S) -> None:
    """Publish ``check``'s status on /diagnostics every ``period_s`` while ``node`` lives."""
    pub = node.create_publisher(DiagnosticArray, "/diagnostics", EVENTS)

    def tick() -> None:
        msg = DiagnosticArray(status=[status(node, what, check)])
        msg.header.stamp = node.get_clock().now().to_msg()
        pub.publish(msg)
    node.create_timer(period_s, tick)
