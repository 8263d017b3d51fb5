"""An executor wrapper that refuses what the robot must not be commanded.

Checks, in order, before a skill reaches the wrapped executor:
1. admissible: a known action, its number of objects, objects of known classes whose
   properties the action admits (the same rules that build the skill banks);
2. the skill and object allow/deny lists;
3. approval, when an approver is set: each skill waits for a yes, a no or the timeout.
A refused skill never reaches the executor. Admissibility and list refusals come back as
failures the closed-loop planners can correct; a denied or unanswered approval stops the goal.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import ExecutorError, PlanningError
from llm_planner_ros.core.executor import ExecutionResult, Executor
from llm_planner_ros.core.types import ErrorType, Skill, TerminationReason
from llm_planner_ros.skills import resources
from llm_planner_ros.skills.vocabulary import ACTIONS, admits


class SafetySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    skill_allowlist: list[str] = Field([""], description="actions allowed (e.g. WALK, GRAB); [''] = all")
    skill_denylist: list[str] = Field([""], description="actions never sent, e.g. ['CUT', 'PLUGOUT']")
    object_allowlist: list[str] = Field([""], description="object classes allowed; [''] = all")
    object_denylist: list[str] = Field([""], description="object classes never touched, e.g. ['knife', 'stove']")
    dry_run: bool = Field(False, description="plan and simulate in-process; nothing is sent to the bridge")
    approval: str = Field("none", pattern="^(none|step|plan)$",
                          description="none | step: each skill waits for approval | plan: the whole plan does")
    approval_timeout_s: float = Field(60.0, gt=0.0, le=3600.0, description="an unanswered approval aborts")

    def names(self, field: str) -> set[str]:
        return {x.strip().upper() if "skill" in field else x.strip().lower() for x in getattr(self, field) if x.strip()}


class ApprovalDenied(PlanningError):
    reason = TerminationReason.APPROVAL_DENIED


class ApprovalTimeout(PlanningError):
    reason = TerminationReason.APPROVAL_TIMEOUT


# (skills to approve, what they are: "step" or "plan") -> (approved, reason); None = no answer in time
Approver = Callable[[Sequence[Skill], str], Optional[tuple[bool, str]]]


def admissibility_problem(skill: Skill) -> str:
    """Why ``skill`` is not admissible, or "" when it is."""
    spec = ACTIONS.get(skill.action)
    if spec is None:
        return f"{skill.action or skill.text!r} is not a known action"
    if len(skill.objects) != spec.arity:
        return f"{skill.action} takes {spec.arity} object(s), got {len(skill.objects)}"
    props = resources.object_properties()
    for i, name in enumerate(skill.objects):
        if name not in props:
            return f"{name!r} is not a known object class"
        if not admits(spec, i, name, props[name]):
            return f"{skill.action} does not apply to {name!r}"
    return ""


class SafetyGate:
    """Wraps an executor; ``approver`` is consulted per skill when approval is 'step'."""

    def __init__(self, inner: Executor, settings: SafetySettings, approver: Optional[Approver] = None) -> None:
        self.inner = inner
        self.settings = settings
        self.approver = approver
        self.refused: list[tuple[Skill, str]] = []
        self.sent: list[Skill] = []

    def __getattr__(self, name: str):   # reset, state, goal_met, applicable_skills, objects
        return getattr(self.inner, name)

    def refusal(self, skill: Skill) -> str:
        problem = admissibility_problem(skill)
        if problem:
            return f"not admissible: {problem}"
        s = self.settings
        allow, deny = s.names("skill_allowlist"), s.names("skill_denylist")
        if (allow and skill.action not in allow) or skill.action in deny:
            return f"the action {skill.action} is not allowed on this robot"
        allow, deny = s.names("object_allowlist"), s.names("object_denylist")
        for name in skill.objects:
            if (allow and name not in allow) or name in deny:
                return f"the object {name!r} is not allowed on this robot"
        return ""

    def execute(self, skill: Skill) -> ExecutionResult:
        why = self.refusal(skill)
        if why:
            self.refused.append((skill, why))
            return ExecutionResult.failed(ErrorType.INVALID_ACTION, f"refused by the safety gate: {why}",
                                          why.removeprefix("not admissible: "))
        if self.settings.approval == "step" and self.approver is not None:
            self.approve([skill], "step")
        self.sent.append(skill)
        try:
            return self.inner.execute(skill)
        except PlanningError:
            raise
        except Exception as exc:   # a simulator or driver bug ends this goal with the reason
            raise ExecutorError(f"the executor raised {type(exc).__name__} on {skill.script()}: {exc}") from exc

    def approve(self, skills: Sequence[Skill], kind: str) -> None:
        answer = self.approver(skills, kind) if self.approver else (True, "")
        what = skills[0].script() if kind == "step" else f"the plan of {len(skills)} steps"
        if answer is None:
            raise ApprovalTimeout(f"approval of {what} was not given within {self.settings.approval_timeout_s:.0f}s")
        ok, reason = answer
        if not ok:
            raise ApprovalDenied(f"approval of {what} was denied" + (f": {reason}" if reason else ""))
