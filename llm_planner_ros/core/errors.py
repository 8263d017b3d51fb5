"""Exceptions that end a plan; each maps to one termination reason."""
from __future__ import annotations

import threading
from typing import Callable, Optional

from llm_planner_ros.core.types import TerminationReason


class PlanningError(RuntimeError):
    """Base class: a plan ended early for a known reason."""

    reason = TerminationReason.INTERNAL_ERROR


class PlanCanceled(PlanningError):
    reason = TerminationReason.CANCELED


class LLMError(PlanningError):
    reason = TerminationReason.LLM_ERROR


class ExecutorError(PlanningError):
    reason = TerminationReason.EXECUTOR_ERROR


class InvalidGoal(PlanningError):
    """The goal cannot be planned as asked; the message names the field."""

    reason = TerminationReason.INVALID_GOAL


class CancelToken:
    """Asked between steps and while waiting on the LLM; ``check`` raises once cancelled."""

    def __init__(self, is_requested: Optional[Callable[[], bool]] = None) -> None:
        self._event = threading.Event()
        self._is_requested = is_requested

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        if not self._event.is_set() and self._is_requested is not None and self._is_requested():
            self._event.set()
        return self._event.is_set()

    def check(self) -> None:
        if self.cancelled:
            raise PlanCanceled("the goal was cancelled")
