"""EAI's BEHAVIOR-100 as a world profile: the domain EAI ships in ``virtualhome-eval``
(``resources/behavior/behavior.pddl``), its 100 problems as the worlds (scenes) the profile
offers, and the activities' task sentences (``eai-eval``) with their goals as examples.

Instances are renamed so that ids are unique in a world (``rag_n_01_1`` becomes
``rag_n_01_5``: the class and the object's position in the problem), as a profile's worlds
require; :class:`BehaviorProblem` keeps the map, and applies it to the goal and EAI's gold plan.

A problem's PDDL goal holds at most four literals: one grounding of the activity's BDDL goal, cut
short ("all the spoons in the cabinet, none dusty" becomes two spoons in it and two not dusty).
:func:`whole_goal` gives the BDDL goal's groundings that eai-eval lists, over this problem's objects.
"""
from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Optional

from llm_planner_ros.core.data_packages import data_packages_dir
from llm_planner_ros.pddl.domain import parse_sexpr
from llm_planner_ros.pddl.semantics import PddlWorld, read_domain, read_problem, render
from llm_planner_ros.profiles.loader import WorldProfile, profile_from_texts

HERE = Path(__file__).parent


def _package_dir(name: str) -> Path:
    """An installed package's folder, without importing it (eai-eval's package wants iGibson)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{name} is not installed (make bootstrap installs it)")
    return Path(list(spec.submodule_search_locations)[0])


def resources() -> Path:
    return _package_dir("virtualhome_eval") / "resources" / "behavior"


@cache
def domain_text() -> str:
    return (resources() / "behavior.pddl").read_text()


@cache
def problem_names() -> tuple[str, ...]:
    """The 100 problems (the underscore-named set; the dotted one does not parse)."""
    return tuple(sorted(p.stem for p in (resources() / "problem_pddl").glob("*.pddl")))


def activity_of(problem: str) -> str:
    """``cleaning_a_car_0_Ihlen_0_int_0_2021-09-11_16-37-11`` -> ``cleaning_a_car``."""
    m = re.match(r"(.+?)_\d+_[A-Z]", problem)
    return m.group(1) if m else problem


@cache
def sentences() -> dict[str, str]:
    """Activity -> its task sentence, from eai-eval ({} when it is not there)."""
    path = data_packages_dir() / "behavior_eval" / "evaluation" / "goal_interpretation" / "resources" / "data" \
        / "instructions_by_activity_name.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def class_words(cls: str) -> str:
    """``electric_refrigerator_n_01`` -> "electric refrigerator"."""
    return re.sub(r"_n_\d+$", "", cls).replace("_", " ")


def _class(instance: str) -> str:
    return re.sub(r"_\d+$", "", instance)


_INSTANCE = re.compile(r"\b([a-z][a-z0-9_]*?_n_\d+)_\d+\b")


def class_level(literal: str) -> str:
    """``(inside soap_n_01_7 bucket_n_01_2)`` -> ``(inside soap_n_01 bucket_n_01)``."""
    return _INSTANCE.sub(r"\1", literal)


@dataclass(frozen=True)
class BehaviorProblem:
    name: str
    activity: str
    sentence: str                       # the activity's task sentence ("" without eai-eval)
    world_text: str                     # the problem, instances renamed
    goal: tuple[str, ...]               # its goal literals over the renamed instances
    gold_plan: tuple[tuple[str, ...], ...]   # EAI's gold PDDL plan, renamed: (action, args...)
    renames: tuple[tuple[str, str], ...]     # (EAI's name, this world's)

    def class_goal(self) -> tuple[str, ...]:
        """The goal over classes (an example goal: ``(inside soap_n_01 bucket_n_01)``)."""
        return tuple(dict.fromkeys(class_level(lit) for lit in self.goal))

    def reached(self, world: PddlWorld) -> bool:
        """Whether the problem's goal holds in ``world``."""
        return world.holds(["and"] + [parse_sexpr(lit)[0] for lit in self.goal])

    def reached_whole(self, world: PddlWorld) -> Optional[bool]:
        """Whether one grounding of the activity's whole goal holds (None: eai-eval's list is not there)."""
        options = whole_goal(self.name)
        if not options:
            return None
        return any(world.holds(["and"] + [parse_sexpr(lit)[0] for lit in option]) for option in options)


def _rename(tree: object, names: dict[str, str]) -> object:
    if isinstance(tree, list):
        return [_rename(x, names) for x in tree]
    return names.get(tree, tree) if isinstance(tree, str) else tree


@cache
def problem(name: str) -> BehaviorProblem:
    text = (resources() / "problem_pddl" / f"{name}.pddl").read_text()
    parsed = read_problem(text)
    order = sorted(parsed.objects, key=lambda o: (parsed.objects[o] != "agent", list(parsed.objects).index(o)))
    names = {o: f"{_class(o)}_{i}" for i, o in enumerate(order, start=1)}
    renamed = render(_rename(parse_sexpr(text)[0], names))
    goal = parsed.goal
    literals = goal[1:] if isinstance(goal, list) and goal[:1] == ["and"] else [goal]
    gold = json.loads((resources() / "gold_pddl_plan.json").read_text()).get(name, [])
    plan = tuple(tuple(names.get(tok, tok) for tok in line.split()) for line in gold)
    return BehaviorProblem(name, activity_of(name), sentences().get(activity_of(name), ""), renamed,
                           tuple(render(_rename(lit, names)) for lit in literals), plan, tuple(names.items()))


def _ground(literal: list, names: dict[str, str]) -> Optional[str]:
    """``["not", "dusty", "spoon.n.01_1"]`` -> ``(not (dusty spoon_n_01_4))``; None for an object
    the problem does not keep."""
    negated = literal[:1] == ["not"]
    predicate, *args = literal[1:] if negated else literal
    mapped = [names.get(a.replace(".", "_"), "") for a in args]
    if "" in mapped:
        return None
    atom = f"({' '.join([predicate, *mapped])})"
    return f"(not {atom})" if negated else atom


@cache
def whole_goal(name: str) -> tuple[tuple[str, ...], ...]:
    """The groundings of the activity's BDDL goal (eai-eval's ``goal_option``), each over the
    problem's renamed objects, without the literals of objects the problem does not keep; () without
    eai-eval."""
    path = data_packages_dir() / "behavior_eval" / "evaluation" / "transition_modeling" / "resources" \
        / "behavior_bddl_info" / f"{name}.json"
    if not path.exists():
        return ()
    names = dict(problem(name).renames)
    options = (tuple(sorted(g for g in (_ground(lit, names) for lit in option) if g))
               for option in json.loads(path.read_text())["goal_option"])
    return tuple(dict.fromkeys(o for o in options if o))


@cache
def behavior_profile(world: str = "") -> WorldProfile:
    """The profile, with ``world`` (a problem's name; default: the first) as its reference world.
    Its examples are every activity with a sentence: its sentence and its goal over classes."""
    spec = (HERE / "profile.yaml").read_text()
    types = sorted(t for t in read_domain(domain_text()).parents if t not in ("agent", "object"))
    objects = "\n".join(f"  {t}: [{json.dumps(class_words(t))}]" for t in types)
    examples = []
    for name in problem_names():
        p = problem(name)
        if p.sentence:
            examples.append(f"  - {{task: {json.dumps(p.sentence)}, goal: {json.dumps(list(p.class_goal()))}, "
                            f"world: {name}}}")
    text = spec.replace("objects: {}", "objects:\n  agent: [me]\n" + objects) \
        + ("\nexamples:\n" + "\n".join(examples) + "\n" if examples else "")
    return profile_from_texts(text, domain_text(), problem(world or problem_names()[0]).world_text,
                              "profiles/behavior/profile.yaml", worlds=worlds())


@cache
def worlds() -> dict[str, str]:
    """Every problem's world, by name: the scenes the profile offers."""
    return {name: problem(name).world_text for name in problem_names()}
