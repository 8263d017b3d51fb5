"""Mechanical conversions between ``llm_planner_msgs`` and the core's plain types."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import MethodOptions as MethodOptionsMsg
from llm_planner_msgs.msg import PlanStep as PlanStepMsg
from llm_planner_msgs.msg import PreconditionFailure as FailureMsg
from llm_planner_msgs.msg import Skill as SkillMsg
from llm_planner_ros.core.request import InvalidRequest, MethodOptions, PlanRequest, parse_request
from llm_planner_ros.core.secrets import redact, secrets
from llm_planner_ros.core.types import (
    ErrorType,
    PlanResult,
    PlanStep,
    PreconditionFailure,
    Skill,
    StepEvent,
    TerminationReason,
)


def options_from_msg(msg: MethodOptionsMsg) -> dict:
    """The options a goal set, by the message's "use the default" sentinels: false, 0, a negative
    number, an empty string. Generated from the fields of :class:`MethodOptions`."""
    out: dict = {}
    for name in MethodOptions.model_fields:
        value = getattr(msg, name)
        if isinstance(value, float) and math.isnan(value):
            raise InvalidRequest(f"options.{name}: NaN is not a number; use a negative value for the default")
        if isinstance(value, bool):
            if value:
                out[name] = True
        elif isinstance(value, float):
            if value >= 0.0:
                out[name] = value
        elif value:
            out[name] = value
    return out


def request_from_goal(goal: PlanTask.Goal) -> PlanRequest:
    """Raises :class:`~llm_planner_ros.core.request.InvalidRequest` naming the bad field."""
    return parse_request(task=goal.task, description=goal.description, scene_id=goal.scene_id,
                         method=goal.method, options=options_from_msg(goal.options),
                         execute=goal.execute, goal_conditions=tuple(goal.goal_conditions),
                         action_goals=tuple(goal.action_goals), objects=tuple(goal.objects))


def skill_to_msg(skill: Skill) -> SkillMsg:
    return SkillMsg(action=skill.action, objects=list(skill.objects),
                    object_ids=list(skill.object_ids), text=skill.text)


def skill_from_msg(msg: SkillMsg) -> Skill:
    return Skill(action=msg.action, objects=tuple(msg.objects),
                 object_ids=tuple(msg.object_ids), text=msg.text)


def failure_to_msg(failure: PreconditionFailure) -> FailureMsg:
    return FailureMsg(type=int(failure.type), message=failure.message, cause=failure.cause)


def failure_from_msg(msg: FailureMsg) -> PreconditionFailure:
    return PreconditionFailure(type=ErrorType(msg.type), message=msg.message, cause=msg.cause)


def step_to_msg(step: PlanStep) -> PlanStepMsg:
    return PlanStepMsg(index=step.index, generated_text=step.generated_text,
                       skill=skill_to_msg(step.skill), script=step.skill.script(),
                       score=float(step.score), similarity=float(step.similarity),
                       mean_logprob=float(step.mean_logprob), executed=step.executed,
                       error=failure_to_msg(step.error), corrections=step.corrections,
                       subtask_index=step.subtask_index)


def feedback_from_event(event: StepEvent) -> PlanTask.Feedback:
    s = event.step
    return PlanTask.Feedback(step_index=s.index, generated_text=s.generated_text,
                             skill=skill_to_msg(s.skill), script=s.skill.script(),
                             score=float(s.score), executed=s.executed,
                             num_corrections=event.num_corrections, subtask_index=s.subtask_index,
                             subtask=event.subtask, last_error=failure_to_msg(s.error),
                             goal_conditions=list(event.goal_conditions), confidence=float(event.confidence))


def error_code(result: PlanResult) -> int:
    """The result's ``PlanTask.Result`` error code: NONE on success; for a plan that ended normally
    without succeeding, PLAN_INCOMPLETE; else the code named as its reason."""
    if result.success:
        return PlanTask.Result.NONE
    if result.termination_reason.is_success:
        return PlanTask.Result.PLAN_INCOMPLETE
    return getattr(PlanTask.Result, result.termination_reason.name, PlanTask.Result.UNKNOWN)


def result_to_msg(result: PlanResult) -> PlanTask.Result:
    success = result.success
    return PlanTask.Result(success=success,
                           termination_reason=result.termination_reason.value,
                           error_code=error_code(result), error_msg="" if success else result.detail,
                           detail=result.detail, program=result.program,
                           program_nl=result.program_nl,
                           steps=[step_to_msg(s) for s in result.steps],
                           subtasks=list(result.subtasks), executed=result.executed,
                           goal_conditions=list(result.goal_conditions),
                           goal_status=int(result.goal_status),
                           num_corrections=result.num_corrections,
                           num_llm_calls=result.num_llm_calls, wall_time_s=result.wall_time_s,
                           confidence=float(result.confidence), hazards=list(result.hazards))


def failed_result(reason: TerminationReason, detail: str, wall_time_s: float = 0.0,
                  steps: Sequence[PlanStep] = ()) -> PlanTask.Result:
    """The result of a goal that ended early, with the ``steps`` decided before it did."""
    return result_to_msg(PlanResult(termination_reason=reason, ending=detail, wall_time_s=wall_time_s,
                                    steps=list(steps)))


def to_plain(msg: Any) -> Any:
    """A ROS message as plain data (dicts, lists, numbers, strings), for JSON; NaN becomes None."""
    if hasattr(msg, "get_fields_and_field_types"):
        return {name: to_plain(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple)) or type(msg).__name__ in ("ndarray", "array"):
        return [to_plain(v) for v in msg]
    if isinstance(msg, float) and msg != msg:
        return None
    if isinstance(msg, bytes):
        return msg.hex()
    if hasattr(msg, "item"):   # a numpy scalar
        return to_plain(msg.item())
    return msg


MsgT = TypeVar("MsgT")


def each_string(msg: Any, change: Callable[[str, str], str], prefix: str = "") -> None:
    """Call ``change(where, text)`` on every string of a ROS message (nested messages and
    sequences too; ``where`` names it, e.g. ``goal_conditions[1]``) and keep what it returns."""
    for name in msg.get_fields_and_field_types():
        value = getattr(msg, name)
        where = prefix + name
        if isinstance(value, str):
            setattr(msg, name, change(where, value))
        elif isinstance(value, list) and value and isinstance(value[0], str):
            setattr(msg, name, [change(f"{where}[{i}]", v) for i, v in enumerate(value)])
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if hasattr(item, "get_fields_and_field_types"):
                    each_string(item, change, f"{where}[{i}].")
        elif hasattr(value, "get_fields_and_field_types"):
            each_string(value, change, where + ".")


def redacted(msg: MsgT) -> MsgT:
    """``msg`` with every string in it (nested messages and sequences too) redacted, in place:
    what a node publishes, returns or sends leaves the process without a secret in it, however
    the secret got in (an LLM server that echoes its key into a completion, a pasted task)."""
    known = secrets()
    each_string(msg, lambda _where, text: redact(text, known) if text else text)
    return msg


def nul_field(msg: Any) -> str:
    """The first string of a ROS message that holds a NUL character, named as
    ``goal_conditions[1]``; "" when none does."""
    found: list[str] = []

    def check(where: str, text: str) -> str:
        if "\0" in text and not found:
            found.append(where)
        return text
    each_string(msg, check)
    return found[0] if found else ""
