"""VirtualHome's admissible skill banks: every action x every object class its properties admit."""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

from llm_planner_ros.core.types import Skill
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, admits, make_skill
from llm_planner_ros.skills.bank import SkillBank


def build_bank(properties: Mapping[str, Iterable[str]]) -> SkillBank:
    """Skills for the given object classes and their properties, in a stable order."""
    props = {name: frozenset(p) for name, p in sorted(properties.items())}
    skills: list[Skill] = []
    for spec in ACTIONS.values():
        if spec.arity == 0:
            skills.append(make_skill(spec.name))
            continue
        candidates = [[n for n, p in props.items() if admits(spec, i, n, p)] for i in range(spec.arity)]
        for combo in itertools.product(*candidates):
            if len(set(combo)) == len(combo):
                skills.append(make_skill(spec.name, combo))
    return SkillBank(tuple(skills))


def full_bank() -> SkillBank:
    """All known object classes (the analogue of Huang et al.'s 47,522-step bank)."""
    return build_bank(resources.object_properties())


def large_bank() -> SkillBank:
    """All known classes plus those of VirtualHome's Unity property file (439 classes, 50,571
    skills): the size of Huang et al.'s bank, for speed measurements."""
    props = dict(resources.object_properties())
    for name, p in resources.unity_properties().items():
        props.setdefault(name, p)
    return build_bank(props)


def scene_properties(graph: dict) -> dict[str, frozenset[str]]:
    """Object classes present in a scene graph with the union of their instances' properties."""
    out: dict[str, set[str]] = {}
    for node in graph["nodes"]:
        if node["class_name"] == "character":
            continue
        out.setdefault(node["class_name"], set()).update(node.get("properties", ()))
    return {k: frozenset(v) for k, v in out.items()}


def scene_bank(graph: dict) -> SkillBank:
    return build_bank(scene_properties(graph))
