"""The admissible skill bank: every action x every object class its properties admit."""
from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from llm_planner_ros.core.types import Skill
from llm_planner_ros.skills import resources
from llm_planner_ros.skills.vocabulary import ACTIONS, admits, make_skill


@dataclass(frozen=True)
class SkillBank:
    skills: tuple[Skill, ...]

    def __len__(self) -> int:
        return len(self.skills)

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.skills]

    @property
    def digest(self) -> str:
        """Content hash, the cache key of the bank's embeddings."""
        h = hashlib.sha256()
        for s in self.skills:
            h.update(s.text.encode())
            h.update(b"\n")
        return h.hexdigest()[:16]

    def objects(self) -> set[str]:
        return {o for s in self.skills for o in s.objects}


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
