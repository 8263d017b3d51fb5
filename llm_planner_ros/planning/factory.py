"""Builds the planner a node serves, from its validated parameters."""
from __future__ import annotations

from typing import Any

from llm_planner_ros.core.errors import PlanningError
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.core.planner import StepCallback


class NoPlannerAvailable:
    """Placeholder until a planning method is implemented: every goal aborts with the reason."""

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken) -> PlanResult:
        raise PlanningError(f"method '{request.method.value}' is not implemented in this build")


def build_planner(params: Any, node: Any = None) -> NoPlannerAvailable:
    return NoPlannerAvailable()
