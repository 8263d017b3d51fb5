"""What a robot may be commanded: one policy, loaded by the planner (before it plans a step) and
by the executor bridge (before anything reaches the robot) from one file, config/policy.yaml.

A skill is refused when it is not admissible in the robot's world (which says why: an unknown
action, the wrong number of objects, an object its skill does not take), when
an instance id it names is not an instance of the class named beside it (the executor says what
each id is), or when the allow/deny lists exclude its action or one of its objects.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from typing import ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.types import Skill

# skill -> why it is not admissible in the robot's world, or ""
SkillProblem = Callable[[Skill], str]
# an object's name in a skill -> its class (a named instance's declared one)
ClassOf = Callable[[str], str]


class SkillPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    LIVE: ClassVar[tuple[str, ...]] = ("skill_allowlist", "skill_denylist", "object_allowlist", "object_denylist",
                                       "hazard_unknown")

    skill_allowlist: list[str] = Field([""], description="actions allowed (e.g. WALK, GRAB); [''] = all")
    skill_denylist: list[str] = Field([""], description="actions never sent, e.g. ['CUT', 'PLUGOUT']")
    object_allowlist: list[str] = Field([""], description="object classes allowed; [''] = all")
    object_denylist: list[str] = Field([""], description="object classes never touched, e.g. ['knife', 'stove']")
    hazard_unknown: Literal["refuse", "warn"] = Field(
        "refuse", description="a skill whose hazards cannot be checked (the world's facts cannot be read): "
                              "refuse it, or send it with a warning")

    def names(self, field: str) -> set[str]:
        return {x.strip().upper() if "skill" in field else x.strip().lower() for x in getattr(self, field) if x.strip()}

    def refusal(self, skill: Skill, skill_problem: SkillProblem,
                instance_class: Optional[InstanceClass] = None, class_of: Optional[ClassOf] = None) -> str:
        """Why ``skill`` must not reach the robot, or "" when it may. ``skill_problem``: the robot's
        world's check of its skills and objects (a profile's, or a world given in code).
        ``instance_class(id)`` gives the class of an instance id in the executor's world (None: no
        such id); a skill that names ids is refused when it cannot be checked or an id is not of
        its named class. ``class_of``: the class of an object a skill names (a profile's named
        instance, e.g. bobs_phone: phone); None: names are classes."""
        problem = skill_problem(skill) or instance_problem(skill, instance_class)
        if problem:
            return f"not admissible: {problem}"
        return self.list_refusal(skill, class_of)

    def list_refusal(self, skill: Skill, class_of: Optional[ClassOf] = None) -> str:
        """Why the allow and deny lists refuse ``skill``'s action or one of its objects (by its
        name, and by its class where ``class_of`` gives one), or ""."""
        if not self.action_allowed(skill.action):
            return f"the action {skill.action} is not allowed on this robot"
        for name in skill.objects:
            kind = class_of(name) if class_of is not None else name
            if not self.object_allowed(name) or not self.object_allowed(kind):
                return f"the object {name!r}{f' (a {kind})' if kind != name else ''} is not allowed on this robot"
        return ""

    def unknown_names(self, skills: Collection[str], objects: Optional[Collection[str]] = None) -> str:
        """Why the lists do not fit a world whose skills are ``skills`` and, where it declares them
        all, whose object classes and named instances are ``objects`` (None: not checked): a name
        that is none of them (a misspelt deny entry denies nothing), or ""."""
        known = {"skill": {x.upper() for x in skills}, "object": {x.lower() for x in (objects or ())}}
        for field in ("skill_denylist", "skill_allowlist", "object_denylist", "object_allowlist"):
            kind = field.split("_")[0]
            if kind == "object" and objects is None:
                continue
            unknown = sorted(self.names(field) - known[kind])
            if unknown:
                return (f"the policy's {field} names {', '.join(map(repr, unknown))}, which is no {kind} of this "
                        f"world (its {kind}s: {', '.join(sorted(known[kind]))[:300]}); correct the policy")
        return ""

    def action_allowed(self, action: str) -> bool:
        """Whether the allow and deny lists let ``action`` (e.g. GRAB) through."""
        allow, deny = self.names("skill_allowlist"), self.names("skill_denylist")
        return not ((allow and action not in allow) or action in deny)

    def object_allowed(self, class_name: str) -> bool:
        """Whether the allow and deny lists let an object of ``class_name`` be touched."""
        allow, deny = self.names("object_allowlist"), self.names("object_denylist")
        return not ((allow and class_name not in allow) or class_name in deny)


InstanceClass = Callable[[int], Optional[str]]


def instance_problem(skill: Skill, instance_class: Optional[InstanceClass]) -> str:
    """Why the instance ids of ``skill`` do not name its objects, or "" when they do (or it names none)."""
    if not skill.object_ids:
        return ""
    if len(skill.object_ids) != len(skill.objects):
        return f"{len(skill.object_ids)} instance id(s) for {len(skill.objects)} object(s)"
    if instance_class is None:
        return "its instance ids cannot be checked here (the executor does not say what an id is)"
    for name, i in zip(skill.objects, skill.object_ids):
        if i == Skill.NAMED:   # the object names its instance: there is no id to check
            continue
        actual = instance_class(i)
        if actual is None:
            return f"there is no object with id {i}"
        if actual != name:
            return f"the object with id {i} is a {actual!r}, not a {name!r}"
    return ""


def approval_digest(request_id: str, goal_id: str, kind: str, scripts: Sequence[str]) -> str:
    """The digest an approval must carry: binds it to exactly the content the operator saw.
    An operator's tool recomputes it from what it shows, never copies it."""
    content = json.dumps([request_id, goal_id, kind, list(scripts)], separators=(",", ":"))
    return hashlib.sha256(content.encode()).hexdigest()
