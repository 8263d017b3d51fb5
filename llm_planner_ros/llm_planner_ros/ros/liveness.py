"""Heartbeats, so that a peer that died is noticed in about a second.

DDS discovery notices a killed process only when its participant lease runs out (Fast DDS:
20 s), and so do ``service_is_ready`` and DDS liveliness QoS (measured here: 20 s for both). The
executor bridge and the tracker publish ``heartbeat/<node>`` every ``PERIOD_S``; a client that
has heard a peer, then hears nothing for ``LOST_AFTER_S`` and nothing in the ``CONFIRM_S`` after
that either, treats it as gone (about 3 s in all). The second wait is for a client or peer that
was starved of CPU a moment: the beats it has not handled yet arrive then.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Optional

from builtin_interfaces.msg import Time
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from rclpy.task import Future

from llm_planner_ros.core.errors import CancelToken, PlanningError
from llm_planner_ros.ros.qos import HEARTBEAT
from llm_planner_ros.ros.wait import TICK_S, Waited, wait_future

PERIOD_S = 0.25
LOST_AFTER_S = 2.0
CONFIRM_S = 1.0         # silence seen: how long more a beat is waited for before the peer is called lost
RESTART_GRACE_S = 2.0   # a call to a peer heard lost first waits this long for a restarted one's beat
MATCH_WAIT_S = 30.0     # a peer heard beating gets this long for its services to match (discovery under load)
RESEND_S = 5.0          # an unanswered idempotent request is sent again after this long


def topic(peer: str) -> str:
    return f"heartbeat/{peer}"


def publish_heartbeat(node: Node, peer: str) -> None:
    """Publish ``heartbeat/<peer>`` every ``PERIOD_S`` while ``node`` exists, from a thread of
    its own: a beat says the process is alive, so it does not wait for a free executor thread
    (every one may be waiting on a slow robot; a call's own timeout covers a stuck answer)."""
    pub = node.create_publisher(Time, topic(peer), HEARTBEAT)

    def beat() -> None:
        while node.context.ok():
            try:
                pub.publish(node.get_clock().now().to_msg())
            except Exception:   # the node or its context is gone: the beats end with it
                return
            time.sleep(PERIOD_S)
    threading.Thread(target=beat, name=f"heartbeat/{peer}", daemon=True).start()


class PeerWatch:
    """Whether ``peer`` (a node publishing its heartbeat) is alive, as last heard."""

    def __init__(self, node: Node, peer: str, namespace: str = "", announce: bool = True) -> None:
        """Listens on ``[namespace/]heartbeat/<peer>`` (relative to ``node``'s namespace);
        ``announce``: log when the peer is first heard, and heard again after it was lost."""
        self.peer = peer
        self._node = node
        self._announce = announce
        self._last: Optional[float] = None
        self._lost_since: Optional[float] = None   # the last beat of a peer confirmed lost
        self._heard = threading.Condition()
        name = f"{namespace.rstrip('/')}/{topic(peer)}" if namespace else topic(peer)
        node.create_subscription(Time, name, self._on_beat, HEARTBEAT, callback_group=ReentrantCallbackGroup())

    def _on_beat(self, _msg: Time) -> None:
        with self._heard:
            back = self._last is None or time.monotonic() - self._last > LOST_AFTER_S
            self._last = time.monotonic()
            self._heard.notify_all()
        if back and self._announce:   # said once per coming up: from then on, silence means the peer is gone
            self._node.get_logger().info(f"heard the {self.peer}'s heartbeat")

    def lost(self) -> bool:
        """Heard once, then silent for ``LOST_AFTER_S`` and for ``CONFIRM_S`` after that (waited
        here the first time the silence is seen)."""
        last = self._last
        if last is None or time.monotonic() - last <= LOST_AFTER_S:
            return False
        if self._lost_since == last:
            return True
        if self.wait_heard(CONFIRM_S):
            return False
        self._lost_since = last
        if self._announce:
            self._node.get_logger().warning(f"no heartbeat from the {self.peer} for {time.monotonic() - last:.1f}s")
        return True

    def went_away(self, asked_at: float, wait_s: float) -> bool:
        """Whether the peer is gone while a request sent at ``asked_at`` (``time.monotonic()``)
        waits: lost after it was last heard since the request; or, silent since before the
        request, still unheard ``wait_s`` (at least ``RESTART_GRACE_S``) after it. A request sent
        just after a restart goes to the new peer before its first beats are heard (discovery of
        a new process takes seconds under load), so it gets the grace that a new call gets."""
        if not self.lost():
            return False
        last = self._last
        return last is None or last >= asked_at or time.monotonic() - asked_at >= max(RESTART_GRACE_S, wait_s)

    def ever_heard(self) -> bool:
        """A beat arrived once (the peer exists, or existed)."""
        return self._last is not None

    def heard(self) -> bool:
        """A beat arrived within ``LOST_AFTER_S``."""
        last = self._last
        return last is not None and time.monotonic() - last <= LOST_AFTER_S

    def gone(self, wait_s: float = 0.0) -> bool:
        """Lost, and no beat within ``wait_s`` (at least ``RESTART_GRACE_S``) either: what a new
        call checks, so that a peer restarted a moment ago (its first beats not heard yet) is
        waited for, not refused."""
        return self.lost() and not self.wait_heard(max(RESTART_GRACE_S, wait_s))

    def wait_heard(self, timeout_s: float) -> bool:
        """Wait until a beat arrives within ``LOST_AFTER_S`` of now."""
        with self._heard:
            return self._heard.wait_for(
                lambda: self._last is not None and time.monotonic() - self._last <= LOST_AFTER_S, timeout_s)


def call_peer(client: Client, request, peer: PeerWatch, who: str, error: type[PlanningError], wait_s: float,
              timeout_s: float, stop: Optional[CancelToken] = None):
    """``client``'s answer to an idempotent ``request`` from ``who``, a node whose heartbeat
    ``peer`` hears. Raises ``error`` when ``who`` is known gone (a peer heard lost gets ``wait_s``
    to be heard again: it may have been restarted a moment ago), when its service is not there
    after ``wait_s`` (``MATCH_WAIT_S`` while its heartbeat is heard), when it goes away while it
    answers, or when it takes longer than ``timeout_s``; the goal's own error when ``stop`` fires
    first.

    The request is sent again every ``RESEND_S`` until one is answered: a server that was
    restarted can be listed before it has matched this client (the dead one stays listed until
    its DDS lease ends), and a request sent then reaches only the dead one."""
    gone = f"{who} is not running: no heartbeat for {LOST_AFTER_S + CONFIRM_S:g}s"
    if peer.gone(wait_s):
        raise error(gone)
    start = time.monotonic()
    while not client.service_is_ready():
        if peer.lost():
            raise error(gone)
        elapsed = time.monotonic() - start
        if elapsed >= wait_s and not (peer.heard() and elapsed < MATCH_WAIT_S):
            raise error(f"{who}'s '{client.srv_name}' service is not available after {elapsed:.3g}s")
        if stop is not None and stop.wait(TICK_S):
            stop.check()
        elif stop is None:
            time.sleep(TICK_S)
    if peer.lost():
        raise error(gone)
    waited, answer = ask_until_answered(client, request, timeout_s, stop, lambda at: peer.went_away(at, wait_s))
    if waited == "stopped" and stop is not None:
        stop.check()
    if waited == "lost":
        raise error(f"{who} is not running: it went away while it answered '{client.srv_name}'")
    if waited == "timeout":
        raise error(f"{who} did not answer '{client.srv_name}' within {timeout_s:g}s")
    return answer


def ask_until_answered(client: Client, request, timeout_s: float, stop: Optional[CancelToken] = None,
                       went_away: Optional[Callable[[float], bool]] = None,
                       every_s: float = RESEND_S) -> tuple[Waited, Any]:
    """An idempotent ``request``, sent again every ``every_s`` until one is answered (a server
    just matched, or restarted, can lose a request sent before it has matched this client), for
    at most ``timeout_s``; ``went_away(asked_at)`` says the server is gone. Returns how the wait
    ended and the answer (None unless "done"); requests left unanswered are dropped."""
    answered: Future = Future()
    sent: list[Future] = []

    def first(done: Future) -> None:
        if not answered.done():
            answered.set_result(done.result())

    def send() -> None:
        future = client.call_async(request)
        future.add_done_callback(first)
        sent.append(future)
    asked_at = time.monotonic()
    until = asked_at + timeout_s
    lost = (lambda: went_away(asked_at)) if went_away is not None else None
    send()
    while True:
        waited = wait_future(answered, min(every_s, max(0.0, until - time.monotonic())), stop, lost)
        if waited != "timeout" or time.monotonic() >= until:
            break
        send()
    for future in sent:
        if not future.done():
            client.remove_pending_request(future)
    return waited, answered.result() if waited == "done" else None
