"""Managed (lifecycle) nodes, as nav2's: ``configure`` loads what the node needs (models, the
world), ``activate`` serves, ``deactivate`` stops serving, ``cleanup`` lets go of what configure
loaded, ``shutdown`` (from any state) ends what still runs. With ``autostart`` (the default) a
node configures and activates itself at start, as nav2's lifecycle manager would, so ``ros2
run``, the launch files and ``llm_planner_stack`` need no manager; ``ros2 lifecycle set <node>
deactivate`` and the rest move it afterwards.

Bond (nav2's link from the manager to each node) is not on PyPI; the stack's heartbeats
(``ros/liveness.py``) tell its nodes that a peer went away."""
from __future__ import annotations

from typing import Optional

from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn

from llm_planner_ros.core.errors import PlanningError


class ManagedNode(LifecycleNode):
    """A lifecycle node whose subclass implements :meth:`configure` (it may raise: the transition
    fails, and at start the node exits with that error), :meth:`activate`, :meth:`deactivate`,
    :meth:`cleanup` and :meth:`shutdown`. ``serving`` is true while the node is active."""

    serving = False
    _failure: Optional[BaseException] = None

    def start(self, autostart: bool) -> None:
        """At the end of the subclass's ``__init__``: configure and activate when ``autostart``;
        a failed configure raises its error (the process exits with its code)."""
        if not autostart:
            self.get_logger().info(f"unconfigured (autostart false): ros2 lifecycle set "
                                   f"{self.get_fully_qualified_name()} configure, then activate")
            return
        for trigger in (self.trigger_configure, self.trigger_activate):
            if trigger() is not TransitionCallbackReturn.SUCCESS:
                failure, self._failure = self._failure, None
                raise failure if failure is not None else PlanningError(f"{self.get_name()}: {trigger.__name__} "
                                                                        "failed")

    # subclasses implement these
    def configure(self) -> None: ...

    def activate(self) -> None: ...

    def deactivate(self) -> None: ...

    def cleanup(self) -> None: ...

    def shutdown(self) -> None: ...

    def _step(self, action) -> TransitionCallbackReturn:   # noqa: ANN001
        try:
            action()
        except Exception as exc:   # the transition fails; at start, start() raises it
            self._failure = exc
            self.get_logger().error(f"{action.__name__} failed: {type(exc).__name__}: {exc}")
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._step(self.configure)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.serving = True   # before activate() says so: a client that reads its log line finds it serving
        returned = self._step(self.activate)
        self.serving = returned is TransitionCallbackReturn.SUCCESS
        return returned

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.serving = False
        return self._step(self.deactivate)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:   # from inactive: not serving
        return self._step(self.cleanup)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.serving = False
        return self._step(self.shutdown)
