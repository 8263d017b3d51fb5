"""What the LLM methods need from a world profile: the admissible skill bank (each skill on
each object class whose type its parameter admits, in the profile's words) and
demonstrations (the profile's example goals, each planned by Fast Downward and written in the
profile's words)."""
from __future__ import annotations

import itertools
import logging
import math
import threading

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pddl.goals import ground_goal, parse_goal
from llm_planner_ros.pddl.problem import build_problem
from llm_planner_ros.pddl.semantics import PddlWorld
from llm_planner_ros.profiles.loader import WorldProfile
from llm_planner_ros.skills.bank import SkillBank
from llm_planner_ros.translation.demonstrations import Demonstration

log = logging.getLogger(__name__)


def _arguments(profile: WorldProfile, world: WorldState) -> list[tuple[str, list[list[str]]]]:
    """Per action, the object classes (and named instances) in ``world`` that each of its skill's
    arguments admits."""
    types: dict[str, set[str]] = {}
    for name, type_ in world.objects.items():
        types.setdefault(world.classes.get(name, name), set()).add(type_)
        if name in profile.spec.instances:   # a named instance is a skill's object by its own name too
            types.setdefault(name, set()).add(type_)
    out = []
    for action, words in profile.spec.actions.items():
        params = dict(profile.domain.actions[action].parameters)
        admits = [[c for c, ts in sorted(types.items()) if any(profile.domain.is_a(t, params[a]) for t in ts)]
                  for a in words.args]
        out.append((action, admits))
    return out


def profile_bank(profile: WorldProfile, world: WorldState) -> SkillBank:
    """Every skill of ``profile`` on every combination of object classes in ``world`` whose
    instances' types its parameters admit, in a stable order."""
    skills: dict[tuple[str, tuple[str, ...]], Skill] = {}
    for action, candidates in _arguments(profile, world):
        skill = profile.spec.actions[action].skill
        for combo in itertools.product(*candidates):
            if len(set(combo)) == len(combo):
                skills.setdefault((skill, combo), profile.skill(action, combo))
    return SkillBank(tuple(skills.values()))


def bank_size(profile: WorldProfile, world: WorldState) -> int:
    """At most how many skills :func:`profile_bank` holds, counted without making them (a
    building's named instances make millions)."""
    return sum(math.prod(len(c) for c in candidates) for _, candidates in _arguments(profile, world))


def reference_world(profile: WorldProfile, scene: str = "") -> WorldState:
    """The profile's reference world, or the world of one of the scenes it offers."""
    text = profile.worlds[scene] if scene else profile.world_text
    return PddlWorld.from_texts(profile.domain_text, text)[0].world_state(profile.declared_classes)


_DEMOS: dict[tuple[str, str, str], tuple[Demonstration, ...]] = {}
_DEMOS_LOCK = threading.Lock()


def _plan_examples(profile: WorldProfile, reference: WorldState) -> tuple[Demonstration, ...]:
    domain = profile.planning_domain()
    vocabulary = profile.goal_vocabulary()
    demos = []
    own: dict[str, WorldState] = {}
    for i, example in enumerate(profile.spec.examples):
        world = reference
        if example.world:   # planned in its own world, of those the profile offers
            if example.world not in own:
                own[example.world] = reference_world(profile, example.world)
            world = own[example.world]
        try:
            goal = ground_goal(parse_goal(example.goal, (), vocabulary), world, vocabulary)
        except InvalidGoal as exc:   # an example about objects this world does not have
            log.debug("example %r of profile %s is not about this world: %s", example.task, profile.name, exc)
            continue
        problem = build_problem(world, goal, domain=domain.name, relevant=profile.relevant_objects)
        outcome = fast_downward.solve(domain.text, problem.text, 10.0, "astar(ff())")
        if outcome.status != "solved":
            log.warning("example %r of profile %s has no plan in its world: %s", example.task,
                        profile.name, outcome.detail)
            continue
        steps = tuple(domain.skill(action, world).text for action in outcome.actions)
        demos.append(Demonstration(example.task, "", steps, f"{profile.name}:example{i}"))
    return tuple(demos)


def profile_demonstrations(profile: WorldProfile, world: WorldState) -> list[Demonstration]:
    """The profile's examples as demonstrations: Fast Downward's plan for each example goal in
    the profile's reference world (or, for a profile sent without one, in ``world``), in the
    profile's words; an example about objects that world lacks is left out. Computed once per
    profile and world."""
    if all(e.world for e in profile.spec.examples):   # each planned in its own world
        where = ""
    else:
        where = profile.world_text or str(hash((frozenset(world.objects.items()), world.facts)))
    key = (profile.text, profile.domain_text, where)
    with _DEMOS_LOCK:
        if key not in _DEMOS:
            _DEMOS[key] = _plan_examples(profile, reference_world(profile) if profile.world_text else world)
        return list(_DEMOS[key])
