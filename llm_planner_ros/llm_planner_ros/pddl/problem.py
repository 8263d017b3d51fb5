"""The PDDL problem for one goal: the world, restricted to what the goal needs where the world
says how (a large world's cut; see :data:`RelevantObjects`), and the goal."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl.goals import GroundGoal

# (world, goal, objects allowed or None, objects excluded) -> the instances the problem keeps
RelevantObjects = Callable[[WorldState, GroundGoal, Optional[set[str]], frozenset[str]], set[str]]


def whole_world(world: WorldState, goal: GroundGoal, allowed: Optional[set[str]] = None,
                excluded: frozenset[str] = frozenset()) -> set[str]:
    """Every instance (or the ``allowed`` ones and the goal's own), none of ``excluded``."""
    return (set(world.objects) if allowed is None else allowed | set(goal.objects)) - excluded


@dataclass(frozen=True)
class Problem:
    text: str
    objects: frozenset[str]
    num_facts: int


def build_problem(world: WorldState, goal: GroundGoal, domain: str, name: str = "goal",
                  allowed: Optional[set[str]] = None, excluded: frozenset[str] = frozenset(),
                  relevant: RelevantObjects = whole_world) -> Problem:
    objects = relevant(world, goal, allowed, excluded)
    return _problem(world, objects, goal.pddl(), domain, name)


def world_problem(world: WorldState, domain: str, name: str = "world") -> str:
    """The whole ``world`` as a problem's objects and init, with an empty goal."""
    return _problem(world, set(world.objects), "(and)", domain, name).text


def _problem(world: WorldState, objects: set[str], goal: str, domain: str, name: str) -> Problem:
    facts = sorted(a for a in world.facts if all(x in objects for x in a[1:]))
    by_type: dict[str, list[str]] = {}
    for o in sorted(objects):
        by_type.setdefault(world.objects[o], []).append(o)
    decl = "\n    ".join(f"{' '.join(names)} - {t}" for t, names in sorted(by_type.items()))
    init = "\n    ".join(f"({' '.join(a)})" for a in facts)
    text = (f"(define (problem {name}) (:domain {domain})\n  (:objects\n    {decl})\n"
            f"  (:init\n    {init})\n  (:goal {goal}))\n")
    return Problem(text, frozenset(objects), len(facts))
