"""PeerWatch's rules on a real rclpy node; the beats' times are set by hand (no DDS timing)."""
import time

import pytest
import rclpy

from llm_planner_ros.ros import liveness
from llm_planner_ros.ros.liveness import PeerWatch


@pytest.fixture
def watch():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("liveness_test", context=context)
    try:
        yield PeerWatch(node, "executor_bridge", announce=False)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_a_request_sent_after_the_last_beat_gets_the_restart_grace(watch, monkeypatch):
    monkeypatch.setattr(liveness, "CONFIRM_S", 0.01)
    now = time.monotonic()
    watch._last = now - 0.5
    assert not watch.lost() and not watch.went_away(now - 1.0, wait_s=10.0)   # heard lately
    watch._last = now - 3.5   # heard after the request was sent, then silent: it went away answering
    assert watch.lost() and watch.went_away(now - 5.0, wait_s=10.0)
    watch._last = now - 2.5   # silent since before the request: a restarted peer, not heard yet
    assert watch.lost() and not watch.went_away(now - 0.5, wait_s=10.0)
    watch._last = now - 12.5   # ... and still unheard when the grace after the request is over
    assert watch.went_away(now - 10.5, wait_s=10.0)
    assert not watch.went_away(now - 1.0, wait_s=0.1)   # the grace is at least RESTART_GRACE_S
