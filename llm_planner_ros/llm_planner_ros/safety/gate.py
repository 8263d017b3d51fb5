"""An executor wrapper that refuses what the robot must not be commanded.

Checks, in order, before a skill reaches the wrapped executor:

1. the :class:`~llm_planner_ros.safety.policy.SkillPolicy`: admissible, instance ids of the named
   classes (the executor's ``instance_class``), and allowed by the skill and object allow/deny
   lists (the executor bridge checks the same policy again);
2. the world's hazards (:mod:`llm_planner_ros.safety.hazards`): a skill whose effects, applied to
   the world as the executor reports it, would make a declared hazard hold is stopped, and so is
   the goal (``hazard_stopped``); where the world's facts cannot be read, the policy's
   ``hazard_unknown`` says whether the skill is refused or sent with a warning;
3. approval (``approval: step``): each skill waits for a yes, a no or the timeout; with no
   approver, nobody can be asked, and the goal ends ``unconfirmed`` before the skill runs.

A refused skill never reaches the executor. Admissibility and list refusals come back as
failures the closed-loop planners can correct; a hazard, or a denied or unanswered approval,
stops the goal. A skill the executor bridge stops for a hazard stops the goal too.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import ClassVar, Optional, Protocol

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken, ExecutorError, HazardStopped, PlanningError
from llm_planner_ros.core.executor import ExecutionResult, Executor
from llm_planner_ros.core.types import ErrorType, Skill, TerminationReason
from llm_planner_ros.safety.hazards import Hazards, last_hop
from llm_planner_ros.safety.policy import ClassOf, SkillPolicy, SkillProblem

log = logging.getLogger(__name__)


class SafetySettings(BaseModel):
    """How the planner's gate runs; what it lets through is the :class:`SkillPolicy`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    LIVE: ClassVar[tuple[str, ...]] = ("approval", "approval_timeout_s", "gate_hazards")

    dry_run: bool = Field(False, description="plan and simulate in-process; nothing is sent to the bridge")
    approval: str = Field("none", pattern="^(none|step|plan)$",
                          description="none | step: each skill waits for approval | plan: the whole plan does")
    approval_timeout_s: float = Field(60.0, gt=0.0, le=3600.0, description="an unanswered approval aborts")
    gate_hazards: bool = Field(True, description="the planner's gate checks each skill against the world's hazards "
                               "before it is sent (it reads the world's facts first); false leaves that check to the "
                               "executor bridge alone")


class ApprovalDenied(PlanningError):
    reason = TerminationReason.APPROVAL_DENIED


class ApprovalTimeout(PlanningError):
    reason = TerminationReason.APPROVAL_TIMEOUT


class ApprovalUnavailable(PlanningError):
    """Approval is asked for, and there is no approver to ask: nothing is approved unasked."""
    reason = TerminationReason.UNCONFIRMED


# (skills to approve, what they are: "step" or "plan", the goal's stop) -> (approved, reason);
# None = no answer in time
class Approver(Protocol):
    """Asks an operator: (approved, reason), or None when no answer came in time. Kinds "step" and
    "plan" show ``skills``; kind "goal" (an interpreted goal to confirm) shows its conditions in
    words as ``skills``' texts, its lines as ``scripts``, ``alternatives`` in words, its
    ``confidence`` and ``why`` it is asked."""

    def __call__(self, skills: Sequence[Skill], kind: str, stop: CancelToken, scripts: Optional[Sequence[str]] = None,
                 alternatives: Sequence[str] = (), confidence: float = math.nan,
                 why: str = "") -> Optional[tuple[bool, str]]: ...


class SafetyGate:
    """Wraps an executor; ``approver`` is consulted per skill when approval is 'step' (and for the
    whole plan, :meth:`approve`, under 'plan')."""

    def __init__(self, inner: Executor, policy: SkillPolicy, settings: SafetySettings, skill_problem: SkillProblem,
                 approver: Optional[Approver] = None, cancel: Optional[CancelToken] = None,
                 hazards: Optional[Hazards] = None, class_of: Optional[ClassOf] = None) -> None:
        """``skill_problem``: the world's admissibility check (its skills and objects); ``hazards``:
        the states it must never bring about; ``class_of``: the class of an object a skill names
        (None: names are classes)."""
        self.inner = inner
        self.class_of = class_of
        self.hazards = hazards
        self.warnings: list[str] = []
        self.policy = policy
        self.skill_problem = skill_problem
        self.settings = settings
        self.approver = approver
        self.cancel = cancel or CancelToken()
        self.refused: list[tuple[Skill, str]] = []
        self.sent: list[Skill] = []

    def __getattr__(self, name: str):   # reset, state, goal_met, applicable_skills, objects
        return getattr(self.inner, name)

    def execute(self, skill: Skill) -> ExecutionResult:
        why = self.policy.refusal(skill, self.skill_problem, getattr(self.inner, "instance_class", None), self.class_of)
        if why:
            self.refused.append((skill, why))
            return ExecutionResult.failed(ErrorType.INVALID_ACTION, f"refused by the safety gate: {why}",
                                          why.removeprefix("not admissible: "))
        self.check_hazards(skill)
        if self.settings.approval == "step":
            self.approve([skill], "step")
        self.sent.append(skill)
        try:
            result = self.inner.execute(skill)
        except PlanningError as exc:   # stopped or lost while the skill ran: the goal's result names it
            exc.interrupted_skill = exc.interrupted_skill or skill
            raise
        except Exception as exc:   # a simulator or driver bug ends this goal with the reason
            error = ExecutorError(f"the executor raised {type(exc).__name__} on {skill.script()}: {exc}")
            error.interrupted_skill = skill
            raise error from exc
        if not result.success and result.failure.type is ErrorType.HAZARD:   # the bridge stopped it
            stopped = HazardStopped(f"stopped at the last hop by the executor: {result.failure.message}",
                                    [result.failure.cause])
            stopped.interrupted_skill = skill
            raise stopped
        return result

    def check_hazards(self, skill: Skill) -> None:
        """Raise :class:`HazardStopped` when ``skill`` would make a hazard hold (or, under
        ``hazard_unknown: refuse``, when the world's facts cannot be read to tell)."""
        if not self.hazards or not self.settings.gate_hazards:
            return
        hits, unknown = last_hop(self.inner, skill, self.hazards)
        if unknown:
            note = f"{skill.script() or skill.text!r}: the hazards cannot be checked: {unknown}"
            if self.policy.hazard_unknown == "warn":
                self.warnings.append(note)
                log.warning("%s; sent anyway (hazard_unknown: warn)", note)
                return
            stopped = HazardStopped(f"stopped at the last hop by the planner's gate: {note} (hazard_unknown: refuse)")
            stopped.interrupted_skill = skill
            raise stopped
        if hits:
            texts = [h.text() for h in hits]
            self.refused.append((skill, "; ".join(texts)))
            stopped = HazardStopped(f"stopped at the last hop by the planner's gate: {skill.script() or skill.text} "
                                    f"would make a hazard hold: {'; '.join(texts)}", texts)
            stopped.interrupted_skill = skill
            raise stopped

    def approve(self, skills: Sequence[Skill], kind: str) -> None:
        what = skills[0].script() if kind == "step" else f"the plan of {len(skills)} steps"
        if self.approver is None:   # never approved unasked
            raise ApprovalUnavailable(f"{what} needs an operator's approval (approval: {kind}) "
                                      f"and nobody can be asked (no approver)")
        answer = self.approver(skills, kind, self.cancel)
        if answer is None:
            raise ApprovalTimeout(f"approval of {what} was not given within {self.settings.approval_timeout_s:.0f}s")
        ok, reason = answer
        if not ok:
            raise ApprovalDenied(f"approval of {what} was denied" + (f": {reason}" if reason else ""))
