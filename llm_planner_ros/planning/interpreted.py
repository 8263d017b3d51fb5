"""Method ``interpret``: the task sentence alone in, a reached goal out.

The LLM says what "done" means in short sentences; each is translated to the nearest goal
condition the scene admits (Huang et al.'s translation, applied to goals), completed with what
other tasks' goals state alongside, bound to instances, and handed to the goal-directed planner.
When the interpreted goal is empty or has no plan, a configured LLM method plans instead, and the
result's detail says so; a goal that already holds as interpreted ends ``already_done``. The
goal's confidence is calibrated on the demonstrations (:meth:`InterpretedGoalPlanner.calibration`).
"""
from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.types import GoalStatus, PlanResult, StepEvent, TerminationReason
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition, spec_of
from llm_planner_ros.interpretation.confidence import Calibration, Labelled, read_labelled, write_labelled
from llm_planner_ros.interpretation.interpreter import GoalDemo, GoalInterpreter, InstancePrior, Interpretation
from llm_planner_ros.pddl.goals import GoalSpec, GoalVocabulary, ground_goal
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner
from llm_planner_ros.safety.policy import SkillPolicy

log = logging.getLogger(__name__)


@dataclass
class InterpretedPlan:
    """The outcome: a result, or ``fallback`` saying why the LLM method should plan instead."""
    interpretation: Interpretation
    result: Optional[PlanResult] = None
    fallback: str = ""
    dropped: tuple[str, ...] = ()      # conditions given up so that a plan exists


# Before anything is planned: the interpretation and its goal's lines in, None to go on, or the
# result that ends the goal (e.g. it waits for an operator's confirmation, who declines)
Decide = Callable[[Interpretation, tuple[str, ...]], Optional[PlanResult]]


class InterpretedGoalPlanner:
    def __init__(self, interpreter: GoalInterpreter, prior: InstancePrior, goal_directed: GoalDirectedPlanner,
                 vocabulary: GoalVocabulary, use_llm: bool = True, relax_plans: int = 6,
                 added_time_s: Optional[float] = None, reference: Optional[Callable[[], Executor]] = None,
                 calibration_demos: int = 40) -> None:
        """``vocabulary``: what goals may say in the world planned over; ``relax_plans``: plan-only
        runs at most, each without one condition, when the interpreted goal has no plan (besides
        one run per condition alone); ``added_time_s``: the planner's limit while the goal holds
        conditions the model's choice added, which are given up first, together; ``reference()``: a
        fresh model of the world the confidence is calibrated in (None: no calibration, the
        confidence unknown), over at most ``calibration_demos`` demonstrations."""
        self.interpreter = interpreter
        self.prior = prior
        self.goal_directed = goal_directed
        self.use_llm = use_llm
        self.vocabulary = vocabulary
        self.relax_plans = relax_plans
        self.added_time_s = added_time_s
        self.reference = reference
        self.calibration_demos = calibration_demos
        self._calibration: Optional[Calibration] = None
        self._calibrating = threading.Lock()

    def calibration(self, cancel: Optional[CancelToken] = None) -> Calibration:
        """The confidence's calibration, made once (then kept on disk under the cache folder): each
        demonstration's task interpreted in the reference world with its own task held out, its
        interpreted goal planned there, and labelled by whether the plan reaches the
        demonstration's goal."""
        with self._calibrating:
            if self._calibration is None:
                demos = self.interpreter.demos if self.use_llm else []
                labelled: Optional[list[Labelled]] = [] if not demos or self.reference is None else None
                if labelled is None:
                    assert self.reference is not None
                    world = self.reference().world_state()
                    index = self.interpreter.index(world)
                    # the demonstrations whose goal the reference world can state, in part (a world of one
                    # activity states few or none: the confidence stays unknown)
                    demos = [d for d in demos if any(index.by_text(s) for s in d.sentences)]
                    demos = demos[:self.calibration_demos]
                    path = self.interpreter.calibration_file(world, demos)
                    labelled = read_labelled(path) if demos else []
                    if labelled is None:
                        t0 = time.perf_counter()
                        labelled = [self._labelled(demo, world, cancel or CancelToken()) for demo in demos]
                        write_labelled(path, labelled)
                        log.info("confidence calibrated on %d demonstrations in %.1f s", len(demos),
                                 time.perf_counter() - t0)
                self._calibration = Calibration(labelled)
            return self._calibration

    def _labelled(self, demo: GoalDemo, world: WorldState, cancel: CancelToken) -> Labelled:
        found = self.interpreter.interpret(demo.task, world, [demo.task], cancel)
        index = self.interpreter.index(world)
        asked_conditions = list(dict.fromkeys(c for c in map(index.by_text, demo.sentences) if c is not None))
        assert found.evidence is not None
        reached = self._reaches(found.conditions, asked_conditions, world, demo.task, cancel) \
            if asked_conditions and found.conditions else False
        return Labelled(demo.task, found.evidence, tuple(c.text for c in asked_conditions), reached)

    def _reaches(self, conditions: Sequence[Condition], asked: Sequence[Condition], world: WorldState, task: str,
                 cancel: CancelToken) -> bool:
        """Whether the plan for ``conditions``, replayed on a fresh model of ``world``, leaves the
        ``asked`` goal holding (its action goals done by a step of the plan)."""
        assert self.reference is not None
        model = self.reference()
        result = self.goal_directed.plan(self.bound(conditions, world, [task]), model, lambda event: None, cancel,
                                         execute=False)
        done: set[str] = set()
        for step in result.steps:
            if not model.execute(step.skill).success:
                return False
            done.add(step.skill.action)
        lines = self.bound(asked, world, [task]).lines()
        literals = [x for x in lines if x.startswith("(")]
        actions = [x for x in lines if not x.startswith("(")]
        if any(not done & set(a.split("|")) for a in actions):
            return False
        return not literals or bool(self.goal_directed.holds(literals, model))

    def bound(self, chosen: Sequence[Condition], world: WorldState, hold_out: Sequence[str]) -> GoalSpec:
        """``chosen`` as a goal over ``world``: each class bound to its first-ranked instance
        (:class:`InstancePrior`, ``hold_out``'s goals unseen), or, where a class means every
        instance, left as it is."""
        if self.vocabulary.every_instance:   # a class means every instance: nothing to choose
            return spec_of(chosen)
        return self.prior.bind(spec_of(chosen), world, hold_out)

    def judge(self, found: Interpretation, hold_out: Sequence[str], cancel: Optional[CancelToken]) -> None:
        """``found``'s confidence, calibrated (the query's own task held out of the fit)."""
        if found.evidence is not None:
            t0 = time.perf_counter()
            found.judgement = self.calibration(cancel).judge(found.evidence, hold_out)
            found.seconds["confidence_s"] = time.perf_counter() - t0

    def plan(self, task: str, executor: Executor, on_step: StepCallback, cancel: CancelToken,
             execute: bool = True, stats: Optional[dict] = None, hold_out: Sequence[str] = (),
             seed: int = 0, policy: Optional[SkillPolicy] = None,
             on_plan: PlanCallback = no_preview, decide: Optional[Decide] = None) -> InterpretedPlan:
        """``decide`` sees the interpreted goal before anything is planned (see :data:`Decide`)."""
        stats = stats if stats is not None else {}
        world = executor.world_state()
        if self.use_llm:
            found = self.interpreter.interpret(task, world, hold_out, cancel, seed)
            self.judge(found, hold_out, cancel)
        else:
            found = self.interpreter.retrieve(task, world, hold_out=hold_out)
        conditions = list(found.conditions)
        if not conditions:
            return InterpretedPlan(found, fallback="the interpreted goal is empty "
                                   f"(said: {' '.join(found.sentences)[:200]!r})")
        dropped: list[str] = []

        def bound(chosen: Sequence[Condition]) -> GoalSpec:
            return self.bound(chosen, world, hold_out)
        held = [c for c in conditions if ground_goal(bound([c]), world, self.vocabulary).holds(world)]
        probed, probes, relax_s, budget = False, 0, 0.0, self.relax_plans
        stats.update({f"interpret_{k}": v for k, v in found.seconds.items()})
        refused = self.goal_directed.hazardous(bound(conditions), executor, world)
        if refused is not None:   # never asked, never planned: the world forbids what it would bring about
            refused.num_llm_calls, refused.executing = int(self.use_llm), execute
            said = " ".join(found.sentences)[:200]
            refused.detail = f"interpreted {said!r} as {', '.join(refused.goal_conditions)}; {refused.detail}"
            return InterpretedPlan(found, refused)
        if decide is not None:
            ended = decide(found, tuple(bound(conditions).lines()))
            if ended is not None:
                return InterpretedPlan(found, ended)
        while True:
            spec = bound(conditions)
            lines = tuple(spec.lines())
            if ground_goal(spec, world, self.vocabulary).holds(world):
                if not dropped:   # the goal as interpreted already holds: done, nothing to run
                    return InterpretedPlan(found, PlanResult(
                        TerminationReason.ALREADY_DONE, detail=f"the goal already holds: {', '.join(lines)}",
                        goal_conditions=list(lines), goal_status=GoalStatus.MET, executing=execute,
                        executed=execute, num_llm_calls=int(self.use_llm)))
                return InterpretedPlan(found, fallback=f"the interpreted goal already holds: {', '.join(lines)}",
                                       dropped=tuple(dropped))

            confidence = math.nan if found.confidence is None else found.confidence

            def report(event: StepEvent, lines: tuple[str, ...] = lines, confidence: float = confidence) -> None:
                on_step(replace(event, goal_conditions=lines, confidence=confidence))
            added = [c for c in found.added if c in conditions]
            result = self.goal_directed.plan(spec, executor, report, cancel, execute=execute, stats=stats,
                                             policy=policy, on_plan=on_plan,
                                             time_limit_s=self.added_time_s if added else None)
            if result.termination_reason is not TerminationReason.NO_PLAN or result.steps or len(conditions) == 1:
                break
            if added and len(added) < len(conditions):   # what the choice added goes first, together
                for c in added:
                    conditions.remove(c)
                    dropped.append(f"{c.text} (added by the model's choice; no plan with it)")
                continue
            # give up conditions so that a plan exists, at a bounded cost: first those that have no
            # plan even alone (one plan-only run each, once); then the least certain one whose loss
            # lets a plan exist (the last kept first: completions, then lower cosines), trying at
            # most ``relax_plans`` plan-only runs in all; with none found, the least certain one
            t0 = time.perf_counter()
            if not probed:
                probed = True
                probes += sum(c not in held for c in conditions)
                alone = [c for c in conditions if c not in held
                         and not self._solvable(bound([c]), executor, cancel, policy)]
                if alone and len(alone) < len(conditions):
                    for c in alone:
                        conditions.remove(c)
                        dropped.append(f"{c.text} (no plan even alone)")
                    relax_s += time.perf_counter() - t0
                    continue
            if budget <= 0:
                break
            pick: Optional[Condition] = None
            for c in reversed(conditions):
                if c in held:
                    continue
                if budget <= 0:
                    break
                budget -= 1
                probes += 1
                if self._solvable(bound([x for x in conditions if x is not c]), executor, cancel, policy):
                    pick = c
                    break
            why = "without it a plan exists" if pick is not None else "the least certain"
            pick = pick if pick is not None else next((c for c in reversed(conditions) if c not in held),
                                                       conditions[-1])
            conditions.remove(pick)
            dropped.append(f"{pick.text} ({why})")
            relax_s += time.perf_counter() - t0
        stats.update(interpret_relax_s=relax_s, interpret_relax_probes=probes)
        if result.termination_reason is TerminationReason.NO_PLAN and not result.steps:
            return InterpretedPlan(found, fallback=f"the interpreted goal has no plan: {result.detail}",
                                   dropped=tuple(dropped))
        result.goal_conditions = list(lines)
        result.num_llm_calls += int(self.use_llm)
        said = " ".join(found.sentences)[:200]
        result.detail = (f"interpreted {said!r} as {', '.join(lines)}"
                         + (f" (given up: {'; '.join(dropped)})" if dropped else "")
                         + (f" ({'; '.join(found.turned)})" if found.turned else "") + f"; {result.detail}")
        return InterpretedPlan(found, result, dropped=tuple(dropped))

    def _solvable(self, spec: GoalSpec, executor: Executor, cancel: CancelToken,
                  policy: Optional[SkillPolicy] = None) -> bool:
        """Whether Fast Downward finds a plan for ``spec`` (plan only; nothing executes)."""
        result = self.goal_directed.plan(spec, executor, lambda event: None, cancel, execute=False, policy=policy)
        return result.termination_reason is not TerminationReason.NO_PLAN
