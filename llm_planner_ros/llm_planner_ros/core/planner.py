"""The contract every planning method implements."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import PlanPreview, PlanResult, StepEvent

StepCallback = Callable[[StepEvent], None]
PlanCallback = Callable[[PlanPreview], None]


def no_preview(preview: PlanPreview) -> None:
    """The default ``on_plan``: nobody watches the whole plan."""


class Planner(Protocol):
    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
             goal_id: str = "", on_plan: PlanCallback = no_preview) -> PlanResult:
        """Plan (and, if ``request.execute``, execute) a task; ``goal_id`` names it in records.

        Calls ``on_step`` after every decided step, ``on_plan`` with the whole plan where a
        method makes one before it executes, and ``cancel.check()`` between steps.
        Raises :class:`~llm_planner_ros.core.errors.PlanningError` subclasses to end early.
        """
        ...
