"""Unit-test double: the real PlannerNode serving a scripted planner instead of an LLM.

It lets the action plumbing (feedback, cancel, goal policies, crash isolation) be tested over
DDS in milliseconds. Tasks steer it: "raise" makes the planner raise; "steps=N" plans N steps.

Run: python -m helpers.scripted_planner_server [--delay S] [--ros-args ...]
"""
from __future__ import annotations

import argparse
import sys
import time

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import PlanResult, PlanStep, Skill, StepEvent, TerminationReason
from llm_planner_ros.ros.planner_node import run_node

SCRIPT = [Skill("WALK", ("kitchen",), text="walk to kitchen"),
          Skill("OPEN", ("fridge",), text="open fridge"),
          Skill("GRAB", ("milk",), text="grab milk")]


class ScriptedPlanner:
    def __init__(self, delay: float) -> None:
        self.delay = delay

    def plan(self, request: PlanRequest, on_step, cancel: CancelToken, goal_id: str = "", on_plan=None) -> PlanResult:
        if request.task == "raise":
            raise RuntimeError("scripted planner failure")
        n = int(request.task.split("=")[1]) if request.task.startswith("steps=") else len(SCRIPT)
        steps = []
        for i in range(n):
            deadline = time.monotonic() + self.delay
            while time.monotonic() < deadline:  # a long LLM call that honours cancel
                cancel.check()
                cancel.wait(0.01)
            skill = SCRIPT[i % len(SCRIPT)]
            step = PlanStep(index=i + 1, generated_text=skill.text.capitalize(), skill=skill,
                            score=1.0 - 0.1 * i, similarity=1.0)
            steps.append(step)
            on_step(StepEvent(step=step, num_corrections=0))
        # a script stands for a plan checked on a world model (the service's check_plan is not here)
        return PlanResult(termination_reason=TerminationReason.END_OF_PLAN, steps=steps, checked=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.1)
    own, rest = parser.parse_known_args()
    raise SystemExit(run_node(lambda params, node: ScriptedPlanner(own.delay), [sys.argv[0], *rest]))


if __name__ == "__main__":
    main()
