"""The PDDL problem for one goal: the world, restricted to what the goal needs where the world
says how (a large world's cut; see :data:`RelevantObjects`), and the goal."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl.goals import GroundGoal
from llm_planner_ros.pddl.semantics import DomainDef

# (world, goal, objects allowed or None, objects excluded) -> the instances the problem keeps
RelevantObjects = Callable[[WorldState, GroundGoal, Optional[set[str]], frozenset[str]], set[str]]


def whole_world(world: WorldState, goal: GroundGoal, allowed: Optional[set[str]] = None,
                excluded: frozenset[str] = frozenset()) -> set[str]:
    """Every instance (or the ``allowed`` ones and the goal's own), none of ``excluded``."""
    return (set(world.objects) if allowed is None else allowed | set(goal.objects)) - excluded


@dataclass(frozen=True)
class ReachableCut:
    """The relevance cut for any domain's world: the goal's objects and the agent, then,
    transitively, the other arguments of every fact whose first argument is kept: where an
    object is (``(on cup_3 desk_5)`` keeps the desk), what the agent holds and where it stands,
    but not what else lies on that desk. Every object an action of such a world needs to reach
    the goal is one of these, for domains whose facts point from a thing to where it is; where
    that is not so, the planner finds no plan on the cut and widens it once (:attr:`widens`,
    :meth:`widen`): by every object that shares a fact with one kept (what lies on that desk, who
    stands at it), not to the whole world, which Fast Downward cannot ground in time from about a
    thousand objects. A world is kept whole where grounding it is cheap: at most ``whole_up_to``
    ground actions, counted as each action's parameters' objects multiplied (``domain``'s types;
    without a domain, objects). Small worlds of many actions stay whole (a cut of such a world
    can leave out a tool its goal needs, and grounding it is cheap); a 300-object building
    (33,924 ground actions: 5.2 s whole, 0.03 s cut) is cut, where counting objects (at most 300
    whole) kept it whole. Measured in docs/profiles.md."""

    agent: str = ""
    whole_up_to: int = 5000
    widens: bool = True
    domain: Optional[DomainDef] = None

    def __call__(self, world: WorldState, goal: GroundGoal, allowed: Optional[set[str]] = None,
                 excluded: frozenset[str] = frozenset()) -> set[str]:
        if allowed is not None or self.ground_actions(world) <= self.whole_up_to:   # objects given: only those
            return whole_world(world, goal, allowed, excluded)
        by_first: dict[str, list[tuple[str, ...]]] = {}
        for atom in world.facts:
            if len(atom) > 2:
                by_first.setdefault(atom[1], []).append(atom)
        keep = (set(goal.objects) | ({self.agent} if self.agent in world.objects else set())) - excluded
        frontier = set(keep)
        while frontier:
            found = {x for o in frontier for atom in by_first.get(o, ()) for x in atom[2:]} - keep - excluded
            keep |= found
            frontier = found
        return keep

    def ground_actions(self, world: WorldState) -> int:
        """How many ground actions the whole world has at most: each action's parameters'
        objects multiplied, summed (the objects, without a domain)."""
        domain = self.domain
        if domain is None:
            return len(world.objects)
        per_type = Counter(world.objects.values())
        fits: dict[str, int] = {}
        total = 0
        for action in domain.actions.values():
            count = 1
            for _, wanted in action.parameters:
                if wanted not in fits:
                    fits[wanted] = sum(n for t, n in per_type.items() if domain.is_a(t, wanted))
                count *= fits[wanted]
            total += count
        return total

    def widen(self, world: WorldState, kept: Collection[str], excluded: frozenset[str] = frozenset()) -> set[str]:
        """``kept`` and every object that shares a fact with one of them."""
        kept = set(kept)
        return kept | ({x for atom in world.facts if len(atom) > 2 and not kept.isdisjoint(atom[1:])
                        for x in atom[1:]} - excluded)


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
