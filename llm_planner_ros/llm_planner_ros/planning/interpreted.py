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
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.types import GoalStatus, NoteKind, PlanResult, StepEvent, TerminationReason
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition, spec_of
from llm_planner_ros.interpretation.confidence import Calibration, Judgement, Labelled, read_labelled, write_labelled
from llm_planner_ros.interpretation.interpreter import (
    Ambiguity,
    GoalDemo,
    GoalInterpreter,
    InstancePrior,
    Interpretation,
)
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


# Before anything is planned: the interpretation and its goal's lines in (none: an empty goal, which
# the fallback would plan), None to go on, or the result that ends the goal (e.g. it waits for an
# operator's confirmation, who declines). Again before what is left of a goal whose conditions were
# given up is planned: what is left (its confidence unknown), its lines, and what was given up
Decide = Callable[[Interpretation, tuple[str, ...], tuple[str, ...]], Optional[PlanResult]]


def lacks(found: Interpretation) -> str:
    """What the task names that the world lacks, in words ("" when nothing)."""
    return f"the task names what this world lacks: {', '.join(repr(w) for w in found.absent)}" if found.absent else ""


class InterpretSettings(BaseModel):
    """Method interpret's settings (Fast Downward's are GoalDirectedSettings')."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interpret_from: Literal["llm_and_text", "llm", "text"] = Field(
        "llm_and_text", description="method interpret: conditions translated from what the LLM says the end "
                                    "state is, plus those nearest the task text (llm_and_text); or one of them")
    interpret_threshold: float = Field(0.55, ge=0.0, le=1.0,
                                       description="method interpret: least cosine of a sentence to its condition")
    interpret_text_margin: float = Field(
        1.0, ge=0.0, le=1.0, description="method interpret: a condition nearest the task text is kept only within "
                                         "this cosine of the nearest one (1: every one above the threshold)")
    interpret_examples: int = Field(3, ge=0, le=10, description="method interpret: other tasks' goals shown")
    interpret_orient: bool = Field(True, description="method interpret: the LLM judges which way a relation "
                                                     "between two objects goes (its likelier sentence)")
    interpret_choose: bool = Field(True, description="method interpret: the model adds to the conditions it said "
                                   "the best of the candidates (nearest the task text, of the nearest examples, "
                                   "written), each scored cos + beta * its mean token log-prob (with "
                                   "interpret_from llm_and_text)")
    interpret_choose_beta: float = Field(0.1, ge=0.0, le=10.0, description="method interpret: weight of the "
                                         "model's log-prob against the cosine (0: the embeddings alone)")
    interpret_choose_margin: float = Field(0.1, ge=0.0, le=10.0, description="method interpret: candidates "
                                           "within this score of the best may be added")
    interpret_choose_keep: float = Field(0.3, ge=0.0, le=10.0, description="method interpret: a condition the "
                                         "LLM said is kept within this score of the best candidate")
    interpret_choose_added: int = Field(2, ge=0, le=32, description="method interpret: candidates added at most")
    interpret_choose_text: int = Field(12, ge=0, le=200, description="method interpret: candidates nearest the "
                                       "task text")
    interpret_added_time_s: float = Field(2.0, gt=0.0, le=600.0, description="method interpret: Fast Downward's "
                                          "limit for a goal with conditions the model's choice added; without a "
                                          "plan in it, they are given up first")
    interpret_write_literals: int = Field(0, ge=0, le=16, description="method interpret: the model also writes up "
                                          "to this many literals under the world's grammar, which join the "
                                          "candidates (0: off)")
    interpret_written_bonus: float = Field(0.0, ge=0.0, le=10.0, description="method interpret: added to the "
                                           "score of a candidate the model wrote")
    interpret_relax_plans: int = Field(6, ge=0, le=50, description="method interpret: when the interpreted goal has "
                                       "no plan, plan-only runs at most, each without one condition, to find "
                                       "which to give up (besides one run per condition alone)")
    interpret_scenes_in_memory: int = Field(4, ge=1, le=256, description="method interpret: condition indexes kept, "
                                            "one per set of object classes")
    interpret_answers_in_memory: int = Field(256, ge=0, le=100_000, description="method interpret: the LLM's "
                                             "answers kept, one per prompt (a repeated task skips the LLM)")
    interpret_vectors_in_memory: int = Field(20000, ge=0, le=10_000_000,
                                             description="method interpret: condition sentence vectors kept in "
                                                         "memory (all stay on disk in the cache folder)")
    interpret_confirm: Literal["never", "unsure", "always"] = Field(
        "unsure", description="method interpret: when an operator confirms the interpreted goal before it "
                              "runs: never | unsure (its confidence is below interpret_confidence) | always; "
                              "with nobody to ask, such a goal ends 'unconfirmed' with the proposal in its detail")
    interpret_confidence: float = Field(0.5, ge=0.0, le=1.0, description="method interpret: the least "
                                        "confidence (calibrated P(the interpreted goal is the one asked)) at which a "
                                        "goal runs unasked under interpret_confirm unsure")
    interpret_absent_below: float = Field(0.6, ge=0.0, le=1.0, description="method interpret: a word of the task "
                                          "that none of the world's words is this near (embedding cosine) names "
                                          "something the world lacks: the goal never runs unasked, and its end names "
                                          "the word (0: no word is looked for)")
    interpret_absent_kinds: bool = Field(True, description="method interpret: a world word near a task's word "
                                         "does not stand for it where WordNet's nouns make the task's word a "
                                         "narrower kind of it ('banana' of 'fruit': the world lacks the banana), "
                                         "nor for another food it is not a kind of ('milk' for 'cheese'); and a "
                                         "word the world has only inside a thing's name is absent where the task "
                                         "says it alone ('a cup of coffee' beside the 'coffee mug')")
    interpret_absent_related_steps: int = Field(4, ge=0, le=40, description="method interpret, with "
                                                "interpret_absent_kinds: nor where WordNet relates the two only "
                                                "through a kind more than this many hypernym steps up from them "
                                                "('oven' and 'kitchen': 11; 'lamp' and 'light': 2; 0: any relation), "
                                                "and a plural further than this from its singular, an artifact of its "
                                                "own, is not looked for as the singular ('glasses': 6 from 'glass')")
    interpret_calibration_demos: int = Field(40, ge=0, le=10_000, description="method interpret: demonstrations "
                                             "interpreted, each with its task held out, to calibrate the "
                                             "confidence (once per model and world; kept in the cache folder)")
    interpret_fallback: Literal["none", "translated", "resample", "reprompt"] = Field(
        "reprompt", description="method interpret: the LLM method that plans when the interpreted goal is "
                                "empty or has no plan, or holds only once conditions were given up")


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
        index = self.interpreter.index(world, demo.task)
        asked_conditions = list(dict.fromkeys(c for c in map(index.by_text, demo.sentences) if c is not None))
        assert found.evidence is not None
        reached = self._reaches(found.conditions, asked_conditions, world, demo.task, found.named, cancel) \
            if asked_conditions and found.conditions else False
        return Labelled(demo.task, found.evidence, tuple(c.text for c in asked_conditions), reached)

    def _reaches(self, conditions: Sequence[Condition], asked: Sequence[Condition], world: WorldState, task: str,
                 named: Sequence[str], cancel: CancelToken) -> bool:
        """Whether the plan for ``conditions``, replayed on a fresh model of ``world``, leaves the
        ``asked`` goal holding (its action goals done by a step of the plan)."""
        assert self.reference is not None
        model = self.reference()
        result = self.goal_directed.plan(self.bound(conditions, world, [task], named), model, lambda event: None,
                                         cancel, execute=False)
        done: set[str] = set()
        for step in result.steps:
            if not model.execute(step.skill).success:
                return False
            done.add(step.skill.action)
        lines = self.bound(asked, world, [task], named).lines()
        literals = [x for x in lines if x.startswith("(")]
        actions = [x for x in lines if not x.startswith("(")]
        if any(not done & set(a.split("|")) for a in actions):
            return False
        return not literals or bool(self.goal_directed.holds(literals, model))

    def bound(self, chosen: Sequence[Condition], world: WorldState, hold_out: Sequence[str],
              named: Sequence[str] = ()) -> GoalSpec:
        """``chosen`` as a goal over ``world``: each class bound to the instance of it the task
        names (``named``), else to its first-ranked instance (:class:`InstancePrior`, ``hold_out``'s
        goals unseen), or, where a class means every instance, left as it is."""
        if self.vocabulary.every_instance:   # a class means every instance: nothing to choose
            return spec_of(chosen)
        return self.prior.bind(spec_of(chosen), world, hold_out, named)

    def judge(self, found: Interpretation, world: WorldState, hold_out: Sequence[str],
              cancel: Optional[CancelToken]) -> None:
        """``found``'s confidence, calibrated (the query's own task held out of the fit), and the
        classes whose instance it chose among several rooms (:meth:`which`)."""
        if found.evidence is not None:
            t0 = time.perf_counter()
            found.judgement = self.calibration(cancel).judge(found.evidence, hold_out)
            found.which = self.which(found, world, hold_out)
            found.seconds["confidence_s"] = time.perf_counter() - t0

    def which(self, found: Interpretation, world: WorldState, hold_out: Sequence[str]) -> list[Ambiguity]:
        """The classes of ``found``'s goal (but in facts of actions done, ``did_<verb>``) that are
        bound to one of instances in several rooms (rooms unknown: one of several instances); none
        where a class means every instance, or where the task names the instance."""
        if self.vocabulary.every_instance:
            return []
        named = {world.classes.get(n) for n in found.named}
        classes = {a for lit in found.spec.literals if not lit.predicate.startswith("did_") for a in lit.args
                   if a not in world.objects and a != self.prior.agent and a not in named}
        out = [self.prior.ambiguity(world, c, hold_out) for c in sorted(classes)]
        return [a for a in out if a is not None]

    def plan(self, task: str, executor: Executor, on_step: StepCallback, cancel: CancelToken,
             execute: bool = True, stats: Optional[dict] = None, hold_out: Sequence[str] = (),
             seed: int = 0, policy: Optional[SkillPolicy] = None,
             on_plan: PlanCallback = no_preview, decide: Optional[Decide] = None) -> InterpretedPlan:
        """``decide`` sees the interpreted goal before anything is planned (see :data:`Decide`)."""
        run = _InterpretRun(self, task, executor, on_step, cancel, execute, stats if stats is not None else {},
                            hold_out, seed, policy, on_plan)
        return run.run(decide)

    def _solvable(self, spec: GoalSpec, executor: Executor, cancel: CancelToken,
                  policy: Optional[SkillPolicy] = None) -> bool:
        """Whether Fast Downward finds a plan for ``spec`` (plan only; nothing executes)."""
        result = self.goal_directed.plan(spec, executor, lambda event: None, cancel, execute=False, policy=policy)
        return result.termination_reason is not TerminationReason.NO_PLAN


class _InterpretRun:
    """One interpreted goal as named steps: the task read as conditions, checked before anything
    is planned (:meth:`before_planning`), planned in rounds (:meth:`plan_round`) that give up
    conditions until a plan exists (:meth:`give_up`), and reported (:meth:`finish`)."""

    def __init__(self, planner: InterpretedGoalPlanner, task: str, executor: Executor, on_step: StepCallback,
                 cancel: CancelToken, execute: bool, stats: dict, hold_out: Sequence[str], seed: int,
                 policy: Optional[SkillPolicy], on_plan: PlanCallback) -> None:
        self.planner, self.executor, self.on_step, self.cancel = planner, executor, on_step, cancel
        self.execute, self.stats, self.hold_out, self.policy, self.on_plan = execute, stats, hold_out, policy, on_plan
        self.world = world = executor.world_state()
        if planner.use_llm:
            self.found = planner.interpreter.interpret(task, world, hold_out, cancel, seed)
            planner.judge(self.found, world, hold_out, cancel)
        else:
            self.found = planner.interpreter.retrieve(task, world, hold_out=hold_out)
        self.conditions = list(self.found.conditions)
        self.dropped: list[str] = []
        self.held: list[Condition] = []
        self.probed, self.probes, self.relax_s, self.budget = False, 0, 0.0, planner.relax_plans

    def bound(self, chosen: Sequence[Condition]) -> GoalSpec:
        return self.planner.bound(chosen, self.world, self.hold_out, self.found.named)

    def holds(self, spec: GoalSpec) -> bool:
        return ground_goal(spec, self.world, self.planner.vocabulary).holds(self.world)

    def run(self, decide: Optional[Decide]) -> InterpretedPlan:
        found, conditions = self.found, self.conditions
        if not conditions:   # the fallback would plan from the task text: decided first, as a goal is
            ended = decide(found, (), ()) if decide is not None else None
            if ended is not None:
                return InterpretedPlan(found, ended)
            return InterpretedPlan(found, fallback="the interpreted goal is empty "
                                   f"(said: {' '.join(found.sentences)[:200]!r})")
        self.held = [c for c in conditions if self.holds(self.bound([c]))]
        self.stats.update({f"interpret_{k}": v for k, v in found.seconds.items()})
        ended = self.before_planning(decide)
        if ended is not None:
            return InterpretedPlan(found, ended)
        decided: tuple[str, ...] = ()
        while True:
            spec = self.bound(conditions)
            lines = tuple(spec.lines())
            if self.holds(spec):
                return self.already_holds(lines)
            if self.dropped and decide is not None and tuple(self.dropped) != decided:
                # what was decided is the whole goal: what is left of it is decided again
                decided = tuple(self.dropped)
                left = replace(found, conditions=list(conditions), judgement=Judgement(None, ()), which=[])
                ended = decide(left, lines, decided)
                if ended is not None:
                    return InterpretedPlan(found, ended, dropped=decided)
            result = self.plan_round(spec, lines)
            if result.termination_reason is not TerminationReason.NO_PLAN or result.steps or len(conditions) == 1:
                break
            if not self.give_up():
                break
        self.stats.update(interpret_relax_s=self.relax_s, interpret_relax_probes=self.probes)
        return self.finish(result, lines)

    def before_planning(self, decide: Optional[Decide]) -> Optional[PlanResult]:
        """A goal whose every way makes a hazard hold is refused, never asked nor planned; then
        ``decide`` acts, asks or stops. None: plan it."""
        found = self.found
        refused = self.planner.goal_directed.hazardous(self.bound(self.conditions), self.executor, self.world)
        if refused is not None:   # the world forbids what it would bring about
            refused.num_llm_calls, refused.executing = int(self.planner.use_llm), self.execute
            said = " ".join(found.sentences)[:200]
            refused.note(NoteKind.CONDITIONS, f"interpreted {said!r} as {', '.join(refused.goal_conditions)}"
                         + (f"; {lacks(found)}" if found.absent else ""))
            return refused
        return decide(found, tuple(self.bound(self.conditions).lines()), ()) if decide is not None else None

    def already_holds(self, lines: tuple[str, ...]) -> InterpretedPlan:
        if not self.dropped:   # the goal as interpreted already holds: done, nothing to run
            return InterpretedPlan(self.found, PlanResult(
                TerminationReason.ALREADY_DONE, ending=f"the goal already holds: {', '.join(lines)}",
                goal_conditions=list(lines), goal_status=GoalStatus.MET, executing=self.execute,
                executed=self.execute, num_llm_calls=int(self.planner.use_llm)))
        return InterpretedPlan(self.found, fallback=f"the interpreted goal already holds: {', '.join(lines)}",
                               dropped=tuple(self.dropped))

    def plan_round(self, spec: GoalSpec, lines: tuple[str, ...]) -> PlanResult:
        """The goal as it stands, planned (and executed) by the goal-directed planner."""
        found, on_step = self.found, self.on_step
        confidence = math.nan if found.confidence is None else found.confidence

        def report(event: StepEvent) -> None:
            on_step(replace(event, goal_conditions=lines, confidence=confidence))
        added = [c for c in found.added if c in self.conditions]
        return self.planner.goal_directed.plan(spec, self.executor, report, self.cancel, execute=self.execute,
                                               stats=self.stats, policy=self.policy, on_plan=self.on_plan,
                                               time_limit_s=self.planner.added_time_s if added else None)

    def give_up(self) -> bool:
        """Give up conditions so that a plan exists, at a bounded cost: what the model's choice
        added, together, first; then those that have no plan even alone (one plan-only run each,
        once); then the least certain one whose loss lets a plan exist (the last kept first:
        completions, then lower cosines), trying at most ``relax_plans`` plan-only runs in all;
        with none found, the least certain one. False: nothing more is given up."""
        conditions = self.conditions
        added = [c for c in self.found.added if c in conditions]
        if added and len(added) < len(conditions):
            for c in added:
                conditions.remove(c)
                self.dropped.append(f"{c.text} (added by the model's choice; no plan with it)")
            return True
        t0 = time.perf_counter()
        if not self.probed and self.give_up_unplannable():
            self.relax_s += time.perf_counter() - t0
            return True
        if self.budget <= 0:
            return False
        self.give_up_least_needed()
        self.relax_s += time.perf_counter() - t0
        return True

    def give_up_unplannable(self) -> bool:
        """Once: drop the conditions that have no plan even alone (not all of them)."""
        conditions = self.conditions
        self.probed = True
        self.probes += sum(c not in self.held for c in conditions)
        alone = [c for c in conditions if c not in self.held
                 and not self.planner._solvable(self.bound([c]), self.executor, self.cancel, self.policy)]
        if not alone or len(alone) == len(conditions):
            return False
        for c in alone:
            conditions.remove(c)
            self.dropped.append(f"{c.text} (no plan even alone)")
        return True

    def give_up_least_needed(self) -> None:
        conditions, pick = self.conditions, None
        for c in reversed(conditions):
            if c in self.held:
                continue
            if self.budget <= 0:
                break
            self.budget -= 1
            self.probes += 1
            if self.planner._solvable(self.bound([x for x in conditions if x is not c]), self.executor, self.cancel,
                                      self.policy):
                pick = c
                break
        why = "without it a plan exists" if pick is not None else "the least certain"
        pick = pick if pick is not None else next((c for c in reversed(conditions) if c not in self.held),
                                                   conditions[-1])
        conditions.remove(pick)
        self.dropped.append(f"{pick.text} ({why})")

    def finish(self, result: PlanResult, lines: tuple[str, ...]) -> InterpretedPlan:
        found, dropped = self.found, self.dropped
        if result.termination_reason is TerminationReason.NO_PLAN and not result.steps:
            return InterpretedPlan(found, fallback=f"the interpreted goal has no plan: {result.detail}",
                                   dropped=tuple(dropped))
        result.goal_conditions = list(lines)
        result.num_llm_calls += int(self.planner.use_llm)
        said = " ".join(found.sentences)[:200]
        result.note(NoteKind.CONDITIONS, f"interpreted {said!r} as {', '.join(lines)}"
                    + (f" (given up: {'; '.join(dropped)})" if dropped else "")
                    + (f" ({'; '.join(found.turned)})" if found.turned else ""))
        return InterpretedPlan(found, result, dropped=tuple(dropped))
