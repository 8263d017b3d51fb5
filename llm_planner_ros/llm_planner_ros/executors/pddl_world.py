"""Skill executor on any PDDL world: a profile's skills run on a state by the domain's own
semantics (:mod:`llm_planner_ros.pddl.semantics`). A skill names the profile's skill and object
classes (instance ids where given); the action's other parameters (the agent, where the robot
is) are bound from the state. A skill whose preconditions do not hold changes nothing and comes
back as a failure naming the first unmet precondition in the profile's words ("I am not holding
the cup"), so corrective re-prompting works on it. A robot without a simulator can use it for
dry runs; any domain and problem file becomes a world to test in.
"""
from __future__ import annotations

from itertools import product
from typing import Optional

from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl.semantics import Atom, PddlError, PddlWorld
from llm_planner_ros.profiles.loader import WorldProfile, class_of


class PddlWorldExecutor:
    def __init__(self, profile: WorldProfile, world_text: str = "") -> None:
        self.profile = profile
        self._world_text = world_text or profile.world_text
        self.history: list[str] = []
        self.reset()

    # -- Executor API -----------------------------------------------------------------------
    def reset(self, scene_id: str = "", graph: Optional[dict] = None) -> list[str]:
        self.world, _ = PddlWorld.from_texts(self.profile.domain_text, self._world_text)
        self.history = []
        self.objects = sorted({class_of(o) for o in self.world.objects})
        return self.objects

    def domain_text(self) -> str:
        return self.profile.domain_text

    def world_state(self) -> WorldState:
        return self.world.world_state()

    def goal_met(self) -> Optional[bool]:
        return None

    def instance_class(self, instance_id: int) -> Optional[str]:
        return self.world_state().classes_by_id().get(instance_id)

    def execute(self, skill: Skill) -> ExecutionResult:
        actions = [name for name, a in self.profile.spec.actions.items() if a.skill == skill.action]
        if not actions:
            return ExecutionResult.failed(ErrorType.PARSE_ERROR, f"unknown skill {skill.action!r}",
                                          f"I cannot {skill.action.lower().replace('_', ' ') or skill.text!r}")
        best: Optional[tuple[Atom, list[str]]] = None
        for ground in self._groundings(actions, skill):
            missing = self.world.missing(ground)
            if not missing:
                added, deleted = self.world.apply(ground)
                line = skill.script()
                self.history.append(line)
                said = [self.profile.say(f"({' '.join(a)})") for a in sorted(added)]
                return ExecutionResult(True, observation="; ".join(said) or f"I did: {line}", script=line)
            if best is None or self._rank(missing) < self._rank(best[1]):
                best = (ground, missing)
        if best is None:
            names = ", ".join(skill.objects) or "nothing"
            return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION, f"no object fits {skill.action} {names}",
                                          f"there is no {' and '.join(skill.objects)} here I can "
                                          f"{self.profile.spec.actions[actions[0]].words.split(' {')[0]}")
        ground, missing = best
        because = self.world.why(missing[0])   # a quantified precondition: what makes it false
        cause = "; ".join(self.profile.say(lit) for lit in because) if because else self.profile.why_not(missing[0])
        return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION,
                                      f"({' '.join(ground)}) needs {', '.join(missing)}", cause, skill.script())

    def predict(self, skill: Skill) -> Optional[WorldState]:
        """The world as it would be after ``skill`` (nothing changes here); None when it would not run."""
        state, history = set(self.world.state), list(self.history)
        try:
            result = self.execute(skill)
            return self.world.world_state() if result.success else None
        finally:
            self.world.state, self.history = state, history

    def applicable_skills(self, limit: Optional[int] = None) -> list[Skill]:
        out = []
        for name, words in self.profile.spec.actions.items():
            schema = self.world.domain.actions[name]
            for values in product(*(list(self.world.of_type(t)) for _, t in schema.parameters)):
                ground = (name, *values)
                if self.world.missing(ground):
                    continue
                binding = dict(zip((p for p, _ in schema.parameters), values))
                skill = self.profile.skill(name, tuple(class_of(binding[a]) for a in words.args))
                if skill not in out:
                    out.append(skill)
                if limit and len(out) >= limit:
                    return out
        return out

    # -- helpers ----------------------------------------------------------------------------
    def _rank(self, missing: list[str]) -> tuple[int, int]:
        """Of two ways to read a skill, the one that misses fewer preconditions, then fewer that
        the robot cannot fix itself (not about the agent): its failure says what to do next."""
        agent = self.profile.spec.agent or "\0"
        return len(missing), sum(agent not in m.split() and f"{agent})" not in m for m in missing)

    def _groundings(self, actions: list[str], skill: Skill):
        """Every ground action of ``actions`` that binds the skill's objects to its args."""
        for name in actions:
            words = self.profile.spec.actions[name]
            if len(words.args) != len(skill.objects):
                continue
            schema = self.world.domain.actions[name]
            choices = []
            for param, type_ in schema.parameters:
                if param in words.args:
                    k = words.args.index(param)
                    wanted = (f"{skill.objects[k]}_{skill.object_ids[k]}",) if skill.object_ids else None
                    pool = [o for o in self.world.of_type(type_)
                            if (o in wanted if wanted else class_of(o) == skill.objects[k])]
                elif self.profile.spec.agent and self.world.objects.get(self.profile.spec.agent) and \
                        self.world.domain.is_a(self.world.objects[self.profile.spec.agent], type_):
                    pool = [self.profile.spec.agent]
                else:
                    pool = list(self.world.of_type(type_))
                choices.append(pool)
            for values in product(*choices):
                try:
                    self.world.binding((name, *values))
                except PddlError:
                    continue
                yield (name, *values)
