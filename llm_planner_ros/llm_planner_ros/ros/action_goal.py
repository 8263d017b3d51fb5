"""An action client and its goals, surviving two of rclpy's races.

``SpinSafeActionClient``: rclpy 9.1's ``ActionClient.__init__`` adds the client to its node, which
wakes the node's executor, before it sets the lock that ``get_num_entities`` takes
(ros2/rclpy#1589). An executor spinning in another thread then raised ``AttributeError: 'ActionClient'
object has no attribute '_lock'`` and its thread ended: nothing on that executor ran again. Seen
in a test, as a skill server that never received its goal.

``send_goal``: rclpy's lost-answer race.

rclpy 9.1 (Kilted's wheels) ``ActionClient.send_goal_async`` files its goal request's future
twice: once under its lock, and again after it (the lines after the lock repeat those inside it,
apparently left over from the backport of ros2/rclpy#1308 that added the lock). When the server's
answer arrives between the second filing and the second ``add_future``, the future is
already done, its done-callback runs at once, and ``send_goal_async`` raises ``ValueError:
list.remove(x): x not in list``. The goal was sent and answered; only the answer is lost. Seen
under load as ``llm_planner_send_goal`` exiting with "not sent: list.remove(x): x not in list"
while the planner ran the goal."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Optional

from rclpy.action import ActionClient
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID


class SpinSafeActionClient(ActionClient):
    """rclpy's ``ActionClient``, safe to create on a node that an executor spins in another thread:
    what the executor reads is set before the client joins its node (the module says why)."""

    def __init__(self, node: Any, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        self._logger = node.get_logger().get_child("action_client")
        super().__init__(node, *args, **kwargs)


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
