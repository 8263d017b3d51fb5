"""Send an action goal, surviving rclpy's lost-answer race.

rclpy 9.1 (Kilted's wheels) ``ActionClient.send_goal_async`` files its goal request's future
twice: once under its lock, and again after it (the lines after the lock repeat those inside it,
apparently left over from the backport of ros2/rclpy#1308 that added the lock). When the server's
answer arrives between the second filing and the second ``add_future``, the future is
already done, its done-callback runs at once, and ``send_goal_async`` raises ``ValueError:
list.remove(x): x not in list``. The goal was sent and answered; only the answer is lost. Seen
under load as ``llm_planner_send_goal`` exiting with "not sent: list.remove(x): x not in list"
while the planner ran the goal."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from rclpy.action import ActionClient
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID


def send_goal(client: ActionClient, goal: Any, goal_id: UUID,
              feedback_callback: Optional[Callable[[Any], None]] = None) -> Optional[Future]:
    """``client.send_goal_async``; None when the goal went out and its answer was lost to the race
    above. The caller reads None as an answer that never came: the action's status lists the goal
    when the server accepted it, and a resend with the same ``goal_id`` never runs it twice."""
    try:
        return client.send_goal_async(goal, feedback_callback=feedback_callback, goal_uuid=goal_id)
    except ValueError as exc:
        if "not in list" not in str(exc):
            raise
        return None
