"""Goal-directed planning: goal conditions in, Fast Downward's plan out, executed and repaired.

The executor reports its world as facts over its PDDL domain (PlanSys2's domain / problem
split). The goal is grounded in that world, the problem is cut to what the goal needs, Fast
Downward sequences it, and each plan action runs as a skill through the safety gate. A failed
skill, or an observation that lacks an effect the domain promised, triggers a new plan from
the observed state, up to ``pddl_max_replans`` times.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Optional, Protocol

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken, ExecutorError, InvalidGoal
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import GoalStatus, PlanPreview, PlanResult, PlanStep, StepEvent, TerminationReason
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pddl.domain import Domain
from llm_planner_ros.pddl.goals import (
    GoalSpec,
    GoalVocabulary,
    GroundGoal,
    contradictions,
    ground_goal,
    parse_goal,
    resolve_objects,
)
from llm_planner_ros.pddl.problem import RelevantObjects, build_problem
from llm_planner_ros.safety.hazards import Hazards
from llm_planner_ros.safety.policy import SkillPolicy


class GoalDirectedSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pddl_time_limit_s: float = Field(10.0, gt=0.0, le=600.0, description="Fast Downward's limit per plan")
    pddl_memory_limit_mb: int = Field(fast_downward.MEMORY_LIMIT_MB, ge=64, le=1 << 20,
                                      description="Fast Downward's memory (address space) per child; past it the "
                                                  "goal ends 'no_plan' with that reason")
    pddl_max_replans: int = Field(5, ge=0, le=100, description="new plans after a failed or surprising step")
    pddl_max_steps: int = Field(60, ge=1, le=1000, description="executed steps per goal")
    pddl_search: str = Field("astar(ff())", pattern=r"^[a-z0-9_\-\[\]\(\),=. ]+$",
                             description="Fast Downward search: an alias (driver/aliases.py, e.g. "
                                         "lama-first) or a search expression (astar(ff()): shorter plans)")
    pddl_invariants: bool = Field(False, description="Fast Downward's translator synthesises invariants "
                                  "(mutex groups): most of a small problem's translation time; larger problems "
                                  "may plan a little faster with it (docs/benchmarks.md)")


class PlanningWorld(Protocol):
    """What the goal-directed planner reads of the world it plans in (a profile, or a world given
    in code); the executor reports that world's state."""

    @property
    def relevant_objects(self) -> RelevantObjects:
        """The instances a goal's problem keeps."""

    @property
    def hazards(self) -> Hazards:
        """The states that must never come about."""

    def goal_vocabulary(self) -> GoalVocabulary: ...

    def planning_domain(self) -> Domain:
        """The domain as the goal-directed planner reads it: each action with its skill and words."""


class GoalDirectedPlanner:
    def __init__(self, world: PlanningWorld, settings: GoalDirectedSettings = GoalDirectedSettings()) -> None:
        """``world``: the world this planner plans in (a profile, or a world given in code): its
        domain, its words and its hazards; the executor it is handed reports that world's state."""
        self.world = world
        self.settings = settings

    @staticmethod
    def check(request: PlanRequest, vocabulary: GoalVocabulary) -> GoalSpec:
        """The goal's conditions, or :class:`InvalidGoal` when there are none or they name what
        the world's predicates do not (before anything runs; objects are checked against the
        world when it is read)."""
        spec = parse_goal(request.goal_conditions, request.action_goals, vocabulary)
        if not spec:
            raise InvalidGoal("goal_conditions: method 'pddl' needs goal conditions or action goals, e.g. "
                              "goal_conditions: ['(on tv)'], action_goals: ['LOOKAT|WATCH']")
        return spec

    def holds(self, lines: Sequence[str], executor: Executor) -> Optional[bool]:
        """Whether the goal ``lines`` (a result's ``goal_conditions``: literals, and action goals as
        ``VERB|VERB``) hold in the executor's world now; None when they cannot be read there."""
        vocabulary = self.world.goal_vocabulary()
        try:
            spec = parse_goal([x for x in lines if x.startswith("(")], [x for x in lines if not x.startswith("(")],
                              vocabulary)
            world = executor.world_state()
            return ground_goal(spec, world, vocabulary).holds(world)
        except (InvalidGoal, ExecutorError):
            return None

    def hazardous(self, spec: GoalSpec, executor: Executor, world: Optional[WorldState] = None) -> Optional[PlanResult]:
        """The goal refused (``hazardous_goal``, naming the hazards) when every way to meet it, with
        what it does not mention as the executor's world has it, makes a hazard of that world hold;
        None when some way is safe."""
        world = world if world is not None else executor.world_state()
        return self.refusal(spec, ground_goal(spec, world, self.world.goal_vocabulary()), world)

    def refusal(self, spec: GoalSpec, goal: GroundGoal, world: WorldState) -> Optional[PlanResult]:
        """:meth:`hazardous` for ``spec`` already grounded in ``world`` as ``goal``."""
        known = self.world
        hits = [h.text() for h in known.hazards.implied(goal, world, known.goal_vocabulary().mutex)]
        if not hits:
            return None
        return PlanResult(TerminationReason.HAZARDOUS_GOAL, ending="refused: the goal, with the rest of the world as "
                          "it is, would make a hazard hold: "
                          + "; ".join(hits), goal_conditions=list(spec.lines()), hazards=hits)

    def plan(self, spec: GoalSpec, executor: Executor, on_step: StepCallback, cancel: CancelToken,
             execute: bool = True, stats: Optional[dict] = None, objects: Sequence[str] = (),
             policy: Optional[SkillPolicy] = None, on_plan: PlanCallback = no_preview,
             time_limit_s: Optional[float] = None) -> PlanResult:
        """Plan for ``spec`` from the executor's current world; with ``execute``, run the plan
        through ``executor`` (a safety gate) and re-plan on surprises. ``objects`` (instances or
        classes) limits what the plan may use; ``policy`` takes the actions and objects it refuses
        out of the domain and the problem before planning. ``stats`` collects timings, added to
        over every call a caller makes for one goal. ``on_plan`` gets each plan before its first
        skill, and the plan with each condition's state after every step. ``time_limit_s``: Fast
        Downward's limit per plan, where shorter than the setting."""
        run = _GoalRun(self, spec, executor, on_step, cancel, execute, stats if stats is not None else {},
                       objects, policy, on_plan, time_limit_s)
        try:
            run.check_goal()
            while True:
                cancel.check()
                actions = run.solve()
                run.preview(actions)
                if not execute:
                    run.hand_back(actions)
                run.replan(run.execute(actions))
        except _Ended as ended:
            return ended.result


class _Ended(Exception):
    """A goal's planning ended, with its result."""

    def __init__(self, result: PlanResult) -> None:
        super().__init__(result.detail)
        self.result = result


class _GoalRun:
    """One call of :meth:`GoalDirectedPlanner.plan`: the goal grounded in the executor's world,
    planned, executed and re-planned as named steps; each ends the goal by raising :class:`_Ended`."""

    def __init__(self, planner: GoalDirectedPlanner, spec: GoalSpec, executor: Executor, on_step: StepCallback,
                 cancel: CancelToken, execute: bool, stats: dict, objects: Sequence[str],
                 policy: Optional[SkillPolicy], on_plan: PlanCallback, time_limit_s: Optional[float]) -> None:
        s = self.settings = planner.settings
        self.planner, self.spec, self.executor, self.on_step, self.cancel = planner, spec, executor, on_step, cancel
        self.execute_plan, self.stats, self.on_plan = execute, stats, on_plan
        self.limit = s.pddl_time_limit_s if time_limit_s is None else min(time_limit_s, s.pddl_time_limit_s)
        for key in ("planner_s", "planner_translate_s", "plans", "world_s"):   # added to over a caller's rounds
            stats.setdefault(key, 0)
        self.plans_before = stats["plans"]
        self.known = planner.world
        self.vocabulary = self.known.goal_vocabulary()
        domain = self.known.planning_domain()
        self.refused = sorted({a.skill_verb for a in domain.actions.values()
                               if policy is not None and not policy.action_allowed(a.skill_verb)})
        self.domain = domain.without_skills(set(self.refused))
        t0 = time.perf_counter()
        self.world = world = executor.world_state()
        self.goal = ground_goal(spec, world, self.vocabulary)
        self.allowed = resolve_objects(objects, world, self.vocabulary) if objects else None
        self.excluded = frozenset(n for n, c in world.classes.items()
                                  if policy is not None and not policy.object_allowed(c))
        stats["world_s"] += time.perf_counter() - t0
        self.steps: list[PlanStep] = []
        # each condition alone, to tick it as it comes to hold (one instance is chosen per
        # condition here, so a tick may differ from the whole goal's joint choice)
        self.parts = [] if on_plan is no_preview else \
            [ground_goal(GoalSpec(literals=(lit,)), world, self.vocabulary) for lit in spec.literals] + \
            [ground_goal(GoalSpec(actions=(verbs,)), world, self.vocabulary) for verbs in spec.actions]
        self.corrections = 0
        self.notes: list[str] = []
        self.hazards = self.known.hazards
        self.named: list[str] = []   # the hazards refused or planned around, in words
        self.last_seconds = 0.0       # Fast Downward's time for the plan last found

    def end(self, reason: TerminationReason, detail: str) -> _Ended:
        """The goal's end, judged by its conditions in the world as it is now."""
        met, execute, notes = self.goal.holds(self.world), self.execute_plan, self.notes
        if met and reason not in (TerminationReason.GOAL_REACHED, TerminationReason.ALREADY_DONE) and execute:
            reason = TerminationReason.GOAL_REACHED
        shown = notes if len(notes) <= 3 else [f"re-planned {len(notes)} times; the last 3:"] + notes[-3:]
        full = "; ".join([detail] + shown) if notes else detail
        steps = self.steps
        return _Ended(PlanResult(termination_reason=reason, ending=full, steps=steps, executing=execute,
                                 executed=bool(steps) and all(st.executed for st in steps),
                                 goal_status=(GoalStatus.MET if met else GoalStatus.NOT_MET) if execute
                                 else GoalStatus.UNKNOWN, num_corrections=self.corrections,
                                 checked=not execute,   # plan-only: Fast Downward's plan is in the world model
                                 hazards=list(dict.fromkeys(self.named)), seeks_goal=True))

    def check_goal(self) -> None:
        """Before anything is planned: a goal that holds, contradicts itself, makes a hazard hold
        or needs what the policy keeps untouched ends here."""
        world, goal = self.world, self.goal
        if goal.holds(world):
            raise self.end(TerminationReason.ALREADY_DONE, "the goal already holds; nothing to do")
        conflicts = contradictions(goal, self.vocabulary.mutex, world.facts)
        if conflicts:
            raise self.end(TerminationReason.NO_PLAN, f"the goal contradicts itself: {conflicts[0]}")
        unsafe = self.planner.refusal(self.spec, goal, world)
        if unsafe is not None:
            self.named.extend(unsafe.hazards)
            raise self.end(TerminationReason.HAZARDOUS_GOAL, unsafe.ending)
        already = self.hazards.in_world(world) if self.hazards else []
        if already:
            self.notes.append("a hazard already holds (not the goal's doing): "
                              + "; ".join(h.text() for h in already[:3])
                              + (f"; and {len(already) - 3} more" if len(already) > 3 else ""))
        forbidden = sorted(set(goal.objects) & self.excluded)
        if forbidden:
            raise self.end(TerminationReason.NO_PLAN, f"the goal needs {', '.join(forbidden)}, which the skill "
                           "policy does not allow to be touched")

    def _fast_downward(self, domain: str, problem: str) -> fast_downward.SolveOutcome:
        s = self.settings
        outcome = fast_downward.solve(domain, problem, self.limit, s.pddl_search, s.pddl_invariants,
                                      s.pddl_memory_limit_mb)
        self.stats["planner_s"] += outcome.seconds
        self.stats["planner_translate_s"] += outcome.stats.get("translate_s", 0.0)   # of it, the translator's
        self.stats["plans"] += 1
        self.last_seconds = outcome.seconds
        return outcome

    def solve(self) -> tuple[tuple[str, ...], ...]:
        """Fast Downward's plan from the world as it is; planned again with every hazard forbidden
        where the plan passes through one."""
        world, domain = self.world, self.domain
        relevant = self.known.relevant_objects
        problem = build_problem(world, self.goal, domain.name, allowed=self.allowed, excluded=self.excluded,
                                relevant=relevant)
        self.stats["problem_objects"], self.stats["problem_facts"] = len(problem.objects), problem.num_facts
        outcome = self._fast_downward(domain.text, problem.text)
        # The cut left out something the goal needs: widened once. Only where the goal is unreachable
        # even ignoring deletes (as when no object can fill a parameter): one proved unsolvable by
        # search would be searched again over every arrangement of every object added.
        widen = getattr(relevant, "widen", None) if getattr(relevant, "widens", False) else None
        if outcome.unreachable_ignoring_deletes and widen is not None and self.allowed is None \
                and len(problem.objects) < len(world.objects) - len(self.excluded):
            cut = len(problem.objects)
            wider = widen(world, problem.objects, self.excluded)
            if len(wider) > cut:
                problem = build_problem(world, self.goal, domain.name, allowed=wider, excluded=self.excluded)
                self.stats["problem_objects"], self.stats["problem_facts"] = len(problem.objects), problem.num_facts
                self.stats["widened"] = 1
                self.notes.append(f"the relevance cut ({cut} of {len(world.objects)} objects) had no plan; widened "
                                  f"once to {len(problem.objects)} (each object that shares a fact with one kept)")
                outcome = self._fast_downward(domain.text, problem.text)
        if outcome.status != "solved":
            without = f"; planned without the skills the policy refuses: {', '.join(self.refused)}" \
                if self.refused else ""
            raise self.end(TerminationReason.NO_PLAN, f"{outcome.status}: {outcome.detail} "
                           f"({len(problem.objects)} objects, {problem.num_facts} facts){without}")
        hazards = self.hazards
        at, hits = hazards.along(domain.text, world, outcome.actions) if hazards else (0, [])
        if hits:   # the plan passes through a hazard: plan again with every hazard forbidden
            passes = f"step {at} {_pddl(outcome.actions[at - 1])} of the plan makes it hold"
            self.named.extend(h.text() for h in hits)
            self.stats.setdefault("hazards_avoided", []).extend(h.text() for h in hits)
            outcome = self._fast_downward(*hazards.compiled(domain.text, problem.text, world, problem.objects))
            if outcome.status != "solved":
                raise self.end(TerminationReason.NO_PLAN, f"no plan avoids the hazard {hits[0].text()} "
                               f"({passes}; {outcome.status} with every hazard forbidden: {outcome.detail})")
            self.notes.append(f"re-planned around the hazard {hits[0].text()} ({passes})")
        return tuple(outcome.actions)

    def preview(self, todo: Sequence[tuple[str, ...]]) -> None:
        """The whole plan (the steps done, then ``todo``), with each condition's state now."""
        if self.parts:
            world, domain = self.world, self.domain
            self.on_plan(PlanPreview(tuple(st.skill for st in self.steps) + tuple(domain.skill(a, world) for a in todo),
                                     tuple(self.spec.lines()), tuple(part.holds(world) for part in self.parts)))

    def hand_back(self, actions: Sequence[tuple[str, ...]]) -> None:
        """A plan-only goal: the plan as its steps, none executed."""
        for action in actions:
            step = PlanStep(index=len(self.steps) + 1, generated_text=_pddl(action),
                            skill=self.domain.skill(action, self.world), score=1.0, similarity=math.nan)
            self.steps.append(step)
            self.on_step(StepEvent(step=step, num_corrections=0))
        raise self.end(TerminationReason.END_OF_PLAN, f"planned {len(self.steps)} steps with Fast Downward "
                       f"in {self.last_seconds:.2f}s; not executed")

    def execute(self, actions: Sequence[tuple[str, ...]]) -> str:
        """Run the plan through the executor, step by step; the goal ends where it holds. Returns
        the surprise that calls for a new plan: a failed step, an effect the domain promised that
        the world does not show, or a plan that ran out."""
        s, steps = self.settings, self.steps
        for done, action in enumerate(actions, 1):
            self.cancel.check()
            if len(steps) >= s.pddl_max_steps:
                raise self.end(TerminationReason.MAX_STEPS, f"{s.pddl_max_steps} steps executed")
            step = PlanStep(index=len(steps) + 1, generated_text=_pddl(action),
                            skill=self.domain.skill(action, self.world), score=1.0, similarity=math.nan,
                            corrections=self.corrections)
            result = self.executor.execute(step.skill)
            step.executed, step.error = result.success, result.failure
            t1 = time.perf_counter()
            self.world = world = self.executor.world_state()
            self.stats["world_s"] += time.perf_counter() - t1
            if not result.success:   # reported as it happened; its correction takes its place (and index)
                self.on_step(StepEvent(step=step, num_corrections=self.corrections))
                return f"step {step.index} {step.skill.script()} failed: {result.failure.message}"
            steps.append(step)
            self.on_step(StepEvent(step=step, num_corrections=self.corrections))
            self.preview(actions[done:])
            adds, dels = self.domain.expected(action)
            missing = [a for a in adds if a not in world.facts] + [d for d in dels if d in world.facts]
            if self.goal.holds(world):
                raise self.end(TerminationReason.GOAL_REACHED, f"{len(steps)} steps, "
                               f"{self.stats['plans'] - self.plans_before} plan(s) by Fast Downward")
            if missing:
                return (f"after {step.skill.script()} the world does not show "
                        f"{', '.join('(' + ' '.join(a) + ')' for a in missing[:3])}")
        return "the plan ran out but the goal does not hold"

    def replan(self, surprise: str) -> None:
        """A new plan from the world as it is now, up to ``pddl_max_replans`` times."""
        self.corrections += 1
        self.notes.append(f"re-planned: {surprise}")
        if self.corrections > self.settings.pddl_max_replans:
            raise self.end(TerminationReason.REPLAN_LIMIT,
                           f"{self.settings.pddl_max_replans} re-plans used; last: {surprise}")


def _pddl(action: tuple[str, ...]) -> str:
    return f"({' '.join(action)})"
