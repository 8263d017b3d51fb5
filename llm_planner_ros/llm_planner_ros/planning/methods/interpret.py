"""Method interpret: the task text alone in. The LLM says what "done" means, the sentences are
translated to the world's goal conditions, and Fast Downward plans them; where the interpreted
goal is empty or has no plan, the configured LLM method plans instead. Before anything is
planned, the goal's calibrated confidence decides whether an operator confirms it
(``interpret_confirm``); a goal that already holds ends ``already_done``."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Optional

from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import NoteKind, PlanResult, Skill, TerminationReason
from llm_planner_ros.interpretation.confidence import raw_evidence
from llm_planner_ros.interpretation.interpreter import Interpretation
from llm_planner_ros.planning.interpreted import InterpretSettings, lacks
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts
from llm_planner_ros.safety.gate import SafetyGate


def confidence_text(confidence: Optional[float]) -> str:
    return "unknown" if confidence is None or math.isnan(confidence) else f"{confidence:.2f}"


def proposal(found: Interpretation, lines: tuple[str, ...]) -> str:
    """The interpreted goal in words and lines, its confidence and its alternatives."""
    words = " ".join(c.text for c in found.conditions)
    also = "; ".join(c.text for c in found.alternatives)
    return (f"proposed goal: {words!r} ({', '.join(lines)}), confidence {confidence_text(found.confidence)}"
            + (f"; alternatives: {also}" if also else ""))


class Interpret:
    def __init__(self, parts: MethodParts) -> None:
        self.settings = parts.settings_of(InterpretSettings)
        self.runner = parts.runner
        self.default_seed = parts.defaults.seed

    def fallback(self, goal: Goal) -> PlanRequest:
        """The request the fallback method plans (method None: no fallback). Plan-only goals fall
        back to ``translated``, since re-sampling and re-prompting correct executed steps. A world
        without demonstrations (a profile without examples) has no LLM method to fall back to, nor
        has one of more skills than they take (:meth:`plan` asks, when it would fall back)."""
        request, fallback = goal.request, self.settings.interpret_fallback
        if fallback == "none" or not goal.world.has_demonstrations:
            return request.model_copy(update={"method": None})
        return request.model_copy(update={"method": fallback if request.execute else "translated"})

    def check(self, goal: Goal) -> None:
        fallback = self.fallback(goal)
        if fallback.method is not None:
            goal.world.check_translated(fallback, goal.request.execute)

    def decide(self, run: GoalRun, found: Interpretation, lines: tuple[str, ...], given_up: tuple[str, ...],
               asked: dict, gate: Optional[SafetyGate]) -> Optional[PlanResult]:
        """Act, ask or stop, before anything is planned: under ``interpret_confirm`` unsure, a goal
        whose confidence is below ``interpret_confidence`` (or unknown) waits for an operator's
        confirmation; under always, every goal does; under never, none. ``gate``: the gate of the
        goal that executes (None: plan only, which runs nothing, so nobody is asked; its result
        says how sure it is). An empty goal (``lines``) is decided as the fallback that would
        plan it from the task text. ``given_up``: conditions given up for want of a plan; what is
        left (``found``) was never found sure nor confirmed, so it is decided as a goal of unknown
        confidence. ``asked`` records the outcome."""
        mode, confidence = self.settings.interpret_confirm, found.confidence
        sure = confidence is not None and confidence >= self.settings.interpret_confidence and not found.absent
        if not given_up:
            asked["sure"] = sure
        if mode == "never" or (mode == "unsure" and sure) or gate is None:
            return None
        fallback = self.fallback(run.goal).method
        if not lines and (fallback is None or run.goal.world.llm_steps_refused):
            return None   # nothing would run
        why = lacks(found) or (f"conditions of the goal had no plan and were given up ({'; '.join(given_up)}); "
                               "what is left was never confirmed" if given_up else
                               "every goal is confirmed (interpret_confirm always)" if mode == "always" else
                               "its confidence is unknown (nothing calibrates it)" if confidence is None else
                               f"its confidence {confidence:.3f} is below the threshold "
                               f"{self.settings.interpret_confidence:.2f}")
        why += "".join(f"; {a.text()}" for a in found.which)   # the instances it chose among several rooms'
        said = proposal(found, lines) if lines else \
            f"no goal was interpreted (said: {' '.join(found.sentences)[:200]!r}); {fallback} would plan the task"
        approver = gate.approver
        asked["asked"] = True
        if approver is None:
            return PlanResult(TerminationReason.UNCONFIRMED, ending=f"the goal needs an operator's confirmation "
                              f"({why}) and nobody can be asked (no approver): {said}", goal_conditions=list(lines))
        answer = approver([Skill("", (), (), c.text) for c in found.conditions], "goal", run.cancel,
                          scripts=list(lines), alternatives=[c.text for c in found.alternatives],
                          confidence=math.nan if confidence is None else confidence, why=why)
        if answer is None:
            return PlanResult(TerminationReason.CONFIRMATION_TIMEOUT, goal_conditions=list(lines),
                              ending=f"no operator confirmed the goal within "
                                     f"{gate.settings.approval_timeout_s:.0f} s ({why}): {said}")
        confirmed, reason = answer
        if not confirmed:
            return PlanResult(TerminationReason.GOAL_DECLINED, goal_conditions=list(lines),
                              ending="the operator declined the goal" + (f" ({reason})" if reason else "")
                                     + f", asked because {why}: {said}")
        asked["confirmed"], asked["confirmed_given_up"] = True, given_up
        return None

    def plan(self, run: GoalRun) -> PlanResult:
        return self._plan(run, run.gate)

    def plan_to_approve(self, run: GoalRun, gate: SafetyGate) -> PlanResult:
        """Plan only, for a goal that executes once its plan is approved (approval 'plan'): its
        interpreted goal is confirmed through ``gate``, as the executing goal's would be."""
        return self._plan(run, gate)

    def _plan(self, run: GoalRun, gate: Optional[SafetyGate]) -> PlanResult:
        request, world, report = run.request, run.goal.world, run.report
        asked: dict = {}
        t0 = time.perf_counter()
        seed = getattr(request.options, "seed", None)   # MethodOptions' fields are made from PlannerSettings'
        interpreted = world.interpreted()
        planned = interpreted.plan(request.task, run.world_source(), run.on_step, run.cancel,
                                   execute=request.execute, stats=report.stats,
                                   hold_out=list(request.options.hold_out_tasks),
                                   seed=seed if seed is not None else self.default_seed, policy=run.policy,
                                   on_plan=run.on_plan,
                                   decide=lambda found, lines, given_up: self.decide(run, found, lines, given_up,
                                                                                      asked, gate))
        found = planned.interpretation
        confidence = math.nan if found.confidence is None else found.confidence
        report.stats["confidence"] = None if found.confidence is None else round(found.confidence, 4)
        report.stats["condition_confidence"] = {text: round(p, 4) for text, p in found.judgement.conditions}
        report.stats["asked"] = bool(asked.get("asked"))
        if planned.dropped:   # given up for want of a plan: what is left is decided again (decide)
            report.stats["given_up"] = list(planned.dropped)
        if found.alternatives:
            report.stats["alternatives"] = [c.text for c in found.alternatives]
        if found.absent:
            report.stats["absent"] = list(found.absent)
        if found.which:   # the instances chosen among several rooms', and how sure each is
            report.stats["which"] = [a.text() for a in found.which]
            if found.judgement.goal is not None:
                report.stats["confidence_before_which"] = round(found.judgement.goal, 4)
        if found.evidence is not None:
            report.stats["evidence"] = {k: round(v, 4) for k, v in raw_evidence(found.evidence).items()}
        report.stats["interpreted"] = planned.interpretation.lines()
        report.stats["said"] = planned.interpretation.sentences
        if planned.interpretation.menu:   # the model's scores, best first: why the goal is what it is
            report.stats["menu"] = [s.why() for s in planned.interpretation.menu[:8]]
        if planned.interpretation.written:
            report.stats["written"] = planned.interpretation.written
        report.times.extra["interpret_s"] = time.perf_counter() - t0
        if world.zero_shot:
            planned.fallback = planned.fallback and f"{planned.fallback} ({world.zero_shot})"
            if planned.result is not None:
                planned.result.note(NoteKind.ZERO_SHOT, f"zero-shot ({world.zero_shot})")
        why = unvouched(found, asked, planned.dropped)
        if planned.result is not None:
            planned.result.confidence = confidence
            if why and planned.result.termination_reason in (
                    TerminationReason.GOAL_REACHED, TerminationReason.ALREADY_DONE):
                # the interpreted goal holds, but nobody vouched that it is the goal asked
                planned.result.termination_reason = TerminationReason.END_OF_PLAN
                planned.result.note(NoteKind.UNCONFIRMED, f"the interpreted goal holds, but it may not be the "
                                                          f"goal asked ({why})")
            return named(plan_only_unvouched(planned.result, why), found)
        fallback = self.fallback(run.goal)
        refused = fallback.method is not None and run.goal.world.llm_steps_refused   # a building's skills
        if fallback.method is None or refused:
            ending = f"{planned.fallback}; no fallback: {refused}" if refused else planned.fallback
            return named(PlanResult(termination_reason=TerminationReason.NO_PLAN, ending=ending,
                                    goal_conditions=planned.interpretation.lines(), confidence=confidence), found)
        result = self.runner(fallback.method).plan(
            GoalRun(replace(run.goal, request=fallback), run.on_step, run.cancel, run.gate, report, run.policy))
        result.num_llm_calls += int(interpreted.use_llm)
        result.note(NoteKind.GIVEN_UP, planned.fallback).note(NoteKind.FALLBACK, f"fell back to {fallback.method}")
        result.goal_conditions = planned.interpretation.lines()
        result.confidence = confidence
        return named(plan_only_unvouched(result, why), found)


def unvouched(found: Interpretation, asked: dict, dropped: Sequence[str]) -> str:
    """Why the goal planned may not be the goal asked ("": it is vouched for): nobody was sure of
    it nor confirmed it, or conditions were given up after it was confirmed or found sure (what
    was vouched for is the whole goal, not what is left of it)."""
    if not asked.get("sure") and not asked.get("confirmed"):
        return f"{lacks(found) or f'confidence {confidence_text(found.confidence)}'}; unconfirmed"
    if dropped and tuple(dropped) != asked.get("confirmed_given_up"):   # the operator confirmed another goal
        by = "the operator confirmed it" if asked.get("confirmed") else \
            f"it was found sure (confidence {confidence_text(found.confidence)})"
        return f"given up after {by}: {'; '.join(dropped)}"
    return ""


def plan_only_unvouched(result: PlanResult, why: str) -> PlanResult:
    """A plan handed back unexecuted (plan only, or awaiting approval 'plan') for a goal nobody
    vouched for says so, as an executed one that reaches it does."""
    if why and not result.executing and result.termination_reason.is_success \
            and not result.noted(NoteKind.UNCONFIRMED):
        result.note(NoteKind.UNCONFIRMED, f"the plan is for a goal that may not be the goal asked ({why})")
    return result


def named(result: PlanResult, found: Interpretation) -> PlanResult:
    """Whatever the end, its detail names what the task names that the world lacks."""
    if found.absent and lacks(found) not in result.detail:
        result.note(NoteKind.CONDITIONS, lacks(found))
    return result
