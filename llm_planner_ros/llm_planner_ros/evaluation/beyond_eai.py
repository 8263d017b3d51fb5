"""Tasks beyond EAI's 26 titles (issue 25), on VirtualHome's scene 1 as it starts, written before
anything was tuned on them: what the interpreted goal must say, what it must not, or an object the
scene lacks, which the goal's end must name rather than substitute. bench/interpret.py runs them
after its rows; test/test_interpret.py runs them with the real model."""
from __future__ import annotations

import re
from dataclasses import dataclass

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.planning.service import PlanningService
from llm_planner_ros.profiles.virtualhome.examples import class_level


@dataclass(frozen=True)
class BeyondTask:
    task: str
    must: tuple[str, ...] = ()       # patterns over class-level goal lines, e.g. r"^\(off \w*light\w*\)$"
    must_not: tuple[str, ...] = ()
    absent: str = ""                 # an object the scene lacks: the end's detail names it

    def run(self, service: PlanningService, executor: Executor) -> dict:
        """This task through ``service`` (method interpret, executed) on ``executor``'s scene:
        :meth:`check`'s verdict, with the first steps."""
        result, report = service.plan_with_report(parse_request(task=self.task, method="interpret", execute=True),
                                                  lambda e: None, CancelToken(), executor)
        world = executor.world_state()
        lines = sorted({class_level(x, world) if x.startswith("(") else x for x in report.stats.get("interpreted", [])})
        return {**self.check(result, lines), "steps": [s.skill.script() for s in result.steps][:12]}

    def check(self, result: PlanResult, lines: list[str]) -> dict:
        """Whether ``result`` (its interpreted goal as class-level ``lines``) passes, and why not."""
        missing = [m for m in self.must if not any(re.search(m, line) for line in lines)]
        wrong = [line for line in lines if any(re.search(m, line) for m in self.must_not)]
        named = bool(self.absent) and result.termination_reason.value != "goal_reached" \
            and self.absent in result.detail.lower()
        passed = named if self.absent else not missing and not wrong
        return dict(task=self.task, passed=passed, goal=lines, missing=missing, wrong=wrong, absent=self.absent,
                    termination=result.termination_reason.value, detail=result.detail[:300])


BEYOND = (
    BeyondTask("Turn off the lights", (r"^\(off \w*(light|lamp)\w*\)$",), (r"plugged_out",)),
    BeyondTask("Switch off the television", (r"^\(off television\)$",), (r"^\(on television\)$",)),
    BeyondTask("Close the door", (r"^\(closed \w*door\w*\)$",)),
    BeyondTask("Open the fridge", (r"^\(open (freezer|fridge)\)$",)),
    BeyondTask("Watch TV", (r"^\(on television\)$",), (r"holds_\w+ character television", r"floor")),
    BeyondTask("Sit on the sofa", (r"sitting character|ontop character (sofa|couch)",)),
    BeyondTask("Wash hands", (r"hands_both",), (r"next_to character hands_both",)),
    BeyondTask("make breakfast", (r"kitchen|food|toaster|stove|oven|coffe|pan|bread",), (r"bedroom|nightstand",)),
    BeyondTask("Put the milk in the fridge", absent="milk"),
    BeyondTask("Feed the cat", absent="cat"),
)
