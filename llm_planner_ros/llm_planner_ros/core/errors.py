"""Exceptions that end a plan; each maps to one termination reason."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Optional

from llm_planner_ros.core.types import Skill, TerminationReason


class PlanningError(RuntimeError):
    """Base class: a plan ended early for a known reason. ``interrupted_skill``: the skill that
    was running on the executor when it ended (it becomes the result's last step)."""

    reason = TerminationReason.INTERNAL_ERROR
    interrupted_skill: Optional[Skill] = None


class HazardStopped(PlanningError):
    """A skill was stopped at the last hop (the gate, or the bridge): its effects would make a
    declared hazard hold. ``hazards``: each in words."""

    reason = TerminationReason.HAZARD_STOPPED

    def __init__(self, message: str, hazards: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.hazards = list(hazards)


class PlanCanceled(PlanningError):
    reason = TerminationReason.CANCELED


class LLMError(PlanningError):
    reason = TerminationReason.LLM_ERROR


class ExecutorError(PlanningError):
    reason = TerminationReason.EXECUTOR_ERROR


class InvalidGoal(PlanningError):
    """The goal cannot be planned as asked; the message names the field."""

    reason = TerminationReason.INVALID_GOAL


class GoalTimeLimit(PlanningError):
    reason = TerminationReason.TIME_LIMIT


class Shutdown(PlanningError):
    reason = TerminationReason.SHUTDOWN


class PromptTooLong(InvalidGoal):
    """The goal's prompt does not fit the LLM's context: the goal, not the LLM, must change."""


class CancelToken:
    """A goal's stop signal: a cancel (with the error it ends the goal with) or its time limit.

    Asked between steps and while waiting on the LLM (``check`` raises once stopped); waiters on
    ROS futures register ``on_stop`` instead of polling."""

    def __init__(self, is_requested: Optional[Callable[[], bool]] = None,
                 time_limit_s: Optional[float] = None) -> None:
        self._event = threading.Event()
        self._is_requested = is_requested
        self._lock = threading.Lock()
        self._error: Optional[PlanningError] = None
        self._callbacks: list[Callable[[], None]] = []
        self.time_limit_s: Optional[float] = None
        self._timer: Optional[threading.Timer] = None
        if time_limit_s:
            self.start_time_limit(time_limit_s)

    def start_time_limit(self, seconds: float) -> None:
        """From now, the goal stops with :class:`GoalTimeLimit` after ``seconds``."""
        self.close()
        self.time_limit_s = seconds
        self._timer = threading.Timer(seconds, self._time_up)
        self._timer.daemon = True
        self._timer.start()

    def _time_up(self) -> None:
        self.cancel(GoalTimeLimit(f"the goal ran past its time limit of {self.time_limit_s:g}s"))

    def cancel(self, error: Optional[PlanningError] = None) -> None:
        """Stop the goal; it ends with ``error`` (default: cancelled). The first stop wins."""
        with self._lock:
            if self._event.is_set():
                return
            self._error = error or PlanCanceled("the goal was cancelled")
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when the goal stops (now, if it has); returns its remover."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def close(self) -> None:
        """The goal ended: stop the time-limit timer."""
        if self._timer is not None:
            self._timer.cancel()

    def wait(self, timeout_s: float) -> bool:
        """Sleep up to ``timeout_s``, waking when the goal stops; whether it has."""
        return self._event.wait(timeout_s) or self.cancelled

    @property
    def cancelled(self) -> bool:
        if not self._event.is_set() and self._is_requested is not None and self._is_requested():
            self.cancel()
        return self._event.is_set()

    @property
    def error(self) -> PlanningError:
        """What the goal ends with once stopped."""
        return self._error or PlanCanceled("the goal was cancelled")

    def check(self) -> None:
        if self.cancelled:
            raise self.error

    @contextlib.contextmanager
    def active(self) -> Iterator[CancelToken]:
        """Within it, :func:`stop_point` checks this token: a long loop deep below a goal that is
        handed no token (embedding a bank, a scene's conditions) still ends with the goal."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[Optional[CancelToken]] = ContextVar("llm_planner_active_goal", default=None)


def stop_point() -> None:
    """Raise the active goal's stop (see :meth:`CancelToken.active`), if it has one; else nothing."""
    token = _ACTIVE.get()
    if token is not None:
        token.check()
