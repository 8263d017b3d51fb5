"""The anchor for goal-directed planning: Fast Downward on EAI's own PDDL files.

EAI ships a domain (``resources/virtualhome/virtualhome.pddl``) and one problem per program
(``problem_pddl/<Task_Name>/<id>.pddl``, state goals only, objects named by class). The plan is
mapped verb by verb to EAI's answer format and scored like any LLM's answer.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from llm_planner_ros.pddl.fast_downward import SolveOutcome, solve
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS

# EAI's action names -> VirtualHome verbs; the rest are the name upper-cased without underscores
VERBS = {"walk_towards": "WALK", "walk_into": "WALK", "put_on": "PUTBACK", "put_inside": "PUTIN",
         "put_on_character": "PUTON", "move": "PUSH"}


def folder() -> Path:
    return resources.package_root() / "resources" / "virtualhome"


def problem_path(task: EaiTask) -> Optional[Path]:
    path = folder() / "problem_pddl" / task.task.replace(" ", "_") / f"{task.identifier}.pddl"
    return path if path.exists() else None


def answer(actions: tuple[tuple[str, ...], ...]) -> str:
    """A plan of EAI's domain in EAI's answer format (repeated verbs kept as repeated keys)."""
    items = []
    for name, *args in actions:
        verb = VERBS.get(name, name.replace("_", "").upper())
        spec = ACTIONS.get(verb)
        objects = [a for a in args if a != "character"][:spec.arity if spec else None]
        items.append(f"{json.dumps(verb)}: {json.dumps(objects)}")
    return "{\n" + ",\n".join(items) + "\n}"


def plan_with_eai_pddl(task: EaiTask, time_limit_s: float = 10.0) -> tuple[str, SolveOutcome]:
    """(EAI-format answer, the planner's outcome); an empty answer ``{}`` when there is no plan."""
    path = problem_path(task)
    if path is None:
        return "{}", SolveOutcome("error", detail=f"EAI ships no problem file for {task.identifier}")
    outcome = solve((folder() / "virtualhome.pddl").read_text(), path.read_text(), time_limit_s)
    return (answer(outcome.actions) if outcome.status == "solved" else "{}"), outcome
