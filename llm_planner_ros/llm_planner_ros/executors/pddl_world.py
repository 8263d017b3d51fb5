"""Skill executor on any PDDL world: a profile's skills run on a state by the domain's own
semantics (:mod:`llm_planner_ros.pddl.semantics`). A skill names the profile's skill and object
classes (instance ids where given); the action's other parameters (the agent, where the robot
is) are bound from the state. A skill whose preconditions do not hold changes nothing and comes
back as a failure naming the first unmet precondition in the profile's words ("I am not holding
the cup"), so corrective re-prompting works on it. A robot without a simulator can use it for
dry runs; any domain and problem file becomes a world to test in.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Optional

from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.core.world import WorldState, fact_line, fill, parse_fact
from llm_planner_ros.pddl.semantics import Atom, PddlError, PddlWorld
from llm_planner_ros.profiles.loader import ProfileError, WorldProfile, class_of, profile_from_texts


class PddlWorldExecutor:
    def __init__(self, profile: WorldProfile, world_text: str = "") -> None:
        self.profile = profile
        self._world_text = world_text or profile.world_text
        self._start_facts: Optional[frozenset[Atom]] = None   # the facts a start state gave, if any
        self._by_id: Optional[tuple[PddlWorld, dict[int, str]]] = None
        self.history: list[str] = []
        try:
            self.reset()
        except PddlError as exc:
            raise ProfileError(f"{profile.name}: its world: {exc}") from None

    # -- Executor API -----------------------------------------------------------------------
    def reset(self, scene_id: str = "", graph: Optional[dict] = None) -> list[str]:
        """Back to the start state: the reference world, or the last one :meth:`start_from` gave."""
        self.world, _ = PddlWorld.from_texts(self.profile.domain_text, self._world_text)
        if self._start_facts is not None:
            self.world.state = set(self._start_facts)
        self.history = []
        self.objects = sorted({self.profile.class_of(o) for o in self.world.objects})
        return self.objects

    def start_from(self, world_text: str = "", facts: Sequence[str] = ()) -> list[str]:
        """Reset to another start state: ``world_text`` (a problem of the profile's domain, checked
        as its reference world is) instead of the reference world, then ``facts`` (``(pred arg ...)``
        over its objects) as the facts that hold; later resets go back to it. Raises ProfileError
        naming what is wrong, leaving the world and the start state as they were."""
        text = world_text or self._world_text
        if world_text:
            profile_from_texts(self.profile.text, self.profile.domain_text, world_text, where="the start world",
                               worlds=self.profile.worlds)
        try:
            world, _ = PddlWorld.from_texts(self.profile.domain_text, text)
        except PddlError as exc:
            raise ProfileError(f"the start world: {exc}") from None
        state: set[Atom] = set()
        if facts:
            state = {parse_fact(f) for f in facts if f.strip()}
            problems = [f"{fact_line(a)}: unknown predicate {a[0]!r}" for a in state
                        if a[0] not in world.domain.predicates]
            problems += [f"{fact_line(a)}: {a[0]} takes {world.domain.predicates[a[0]]} argument(s)" for a in state
                         if a[0] in world.domain.predicates and len(a) - 1 != world.domain.predicates[a[0]]]
            problems += [f"{fact_line(a)}: no object {o!r} in the world" for a in state for o in a[1:]
                         if o not in world.objects]
            if problems:
                raise ProfileError("facts: " + "; ".join(sorted(problems)))
        self._world_text, self._start_facts = text, frozenset(state) if facts else None
        return self.reset()

    def domain_text(self) -> str:
        return self.profile.domain_text

    def world_state(self) -> WorldState:
        return self.world.world_state(self.profile.declared_classes)

    def goal_met(self) -> Optional[bool]:
        return None

    def instance_class(self, instance_id: int) -> Optional[str]:
        if self._by_id is None or self._by_id[0] is not self.world:   # the instances change at a reset only
            self._by_id = (self.world, self.world_state().classes_by_id())
        return self._by_id[1].get(instance_id)

    def execute(self, skill: Skill) -> ExecutionResult:
        actions = [name for name, a in self.profile.spec.actions.items() if a.skill == skill.action]
        if not actions:
            return ExecutionResult.failed(ErrorType.PARSE_ERROR, f"unknown skill {skill.action!r}",
                                          f"I cannot {skill.action.lower().replace('_', ' ') or skill.text!r}")
        wanted = {len(self.profile.spec.actions[a].args) for a in actions}
        if len(skill.objects) not in wanted or (skill.object_ids and len(skill.object_ids) != len(skill.objects)):
            takes = " or ".join(map(str, sorted(wanted)))
            return ExecutionResult.failed(ErrorType.PARSE_ERROR,
                                          f"{skill.action} takes {takes} object(s), given {len(skill.objects)} "
                                          f"({', '.join(skill.objects) or 'none'}) with {len(skill.object_ids)} id(s)",
                                          f"I cannot {skill.action.lower().replace('_', ' ')} "
                                          f"{' and '.join(skill.objects) or 'nothing'}: it takes {takes} object(s)")
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
            absent = [o for o in skill.objects if not any(x == o or self.profile.class_of(x) == o
                                                          for x in self.world.objects)]
            doing = fill(self.profile.spec.actions[actions[0]].words, [self.profile.phrase(o) for o in skill.objects])
            return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION, f"no object fits {skill.action} {names}",
                                          f"I cannot {doing}: " + (f"there is no {' or '.join(absent)} here" if absent
                                                                   else "nothing here fits it"))
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
            return self.world.world_state(self.profile.declared_classes) if result.success else None
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
                skill = self.profile.skill(name, tuple(b if b in self.profile.spec.instances else class_of(b)
                                                       for b in (binding[a] for a in words.args)))
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
            pools: dict[str, list[str]] = {}
            for param, type_ in schema.parameters:
                if param in words.args:
                    k = words.args.index(param)
                    wanted = _instance(skill, k)
                    pools[param] = [o for o in self.world.of_type(type_)
                                    if (o == wanted if wanted else o == skill.objects[k] or
                                        self.profile.class_of(o) == skill.objects[k])]
                elif self.profile.spec.agent and self.world.objects.get(self.profile.spec.agent) and \
                        self.world.domain.is_a(self.world.objects[self.profile.spec.agent], type_):
                    pools[param] = [self.profile.spec.agent]
            pools = self.world.parameter_pools(schema.parameters, schema.precondition, pools)
            choices = [pools[param] for param, _ in schema.parameters]
            for values in product(*choices):
                try:
                    self.world.binding((name, *values))
                except PddlError:
                    continue
                yield (name, *values)


def _instance(skill: Skill, k: int) -> Optional[str]:
    """The instance the skill's k-th object names by its id (or its own name), or None: any of its class."""
    if not skill.object_ids:
        return None
    i = skill.object_ids[k]
    return skill.objects[k] if i == Skill.NAMED else f"{skill.objects[k]}_{i}"
