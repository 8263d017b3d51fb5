"""Validated planning requests: what a goal asks for, checked once at the boundary."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from llm_planner_ros.core.errors import InvalidGoal

MAX_TASK_CHARS = 500
MAX_DESCRIPTION_CHARS = 4000
MAX_SCENE_ID_CHARS = 200


class InvalidRequest(ValueError):
    """A goal that cannot be planned; the message names the offending field."""


def _check_text(value: str, name: str, max_chars: int, allow_newlines: bool) -> str:
    if len(value) > max_chars:
        raise ValueError(f"{name} is {len(value)} characters long; the limit is {max_chars}")
    for ch in value:
        if ch in "\n\t" and allow_newlines:
            continue
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise ValueError(f"{name} contains the control or unassigned character U+{ord(ch):04X}")
    return value


class GoalOnlyOptions(BaseModel):
    """Per-goal switches that have no node-wide default (ablations, PET, the heuristic's guide)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    no_translation: bool = False
    fixed_example: bool = False
    no_trajectory_correction: bool = False
    plan_subtasks: bool = False
    track_subtasks: bool = False
    eliminate_objects: bool = False
    guide: Optional[Literal["none", "high_level", "low_level"]] = None
    guide_info: Optional[Literal["none", "objects", "static", "dynamic"]] = None
    hold_out_tasks: tuple[str, ...] = ()   # never show demonstrations of these task labels
    time_limit_s: Optional[float] = Field(None, gt=0.0, le=86400.0)   # None: the node's goal_time_limit_s


# Planner settings a goal may override: the type, bounds and description come from
# PlannerSettings, declared once; ``None`` means the planner's configured value.
OVERRIDABLE = ("num_samples", "temperature", "top_p", "frequency_penalty", "presence_penalty", "max_steps",
               "ranking", "beta", "epsilon", "correction_level", "max_corrections_per_step",
               "max_corrections_per_plan", "seed")


def _overrides() -> dict:
    from llm_planner_ros.core.settings import PlannerSettings

    out = {}
    for name in OVERRIDABLE:
        info = PlannerSettings.model_fields[name]
        typ = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        out[name] = (Optional[typ], Field(None, description=info.description))
    return out


MethodOptions = create_model("MethodOptions", __base__=GoalOnlyOptions, __doc__=(
    "Per-goal options: overrides of the planner's settings (None = configured value) and switches."),
    **_overrides())


class PlanRequest(BaseModel):
    """A planning goal. Construct with :func:`parse_request` to get :class:`InvalidRequest`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    description: str = ""
    scene_id: str = ""
    method: Optional[str] = None      # a method's name in the planner's registry (planning.methods)
    options: MethodOptions = MethodOptions()
    execute: bool = False
    goal_conditions: tuple[str, ...] = ()
    action_goals: tuple[str, ...] = ()
    objects: tuple[str, ...] = ()     # method pddl: plan only with these (instances or classes)

    @field_validator("goal_conditions", "action_goals", "objects")
    @classmethod
    def _conditions(cls, v: tuple[str, ...], info) -> tuple[str, ...]:
        for item in v:
            _check_text(item, info.field_name, MAX_SCENE_ID_CHARS, allow_newlines=False)
        return tuple(x.strip() for x in v if x.strip())

    @field_validator("task")
    @classmethod
    def _task(cls, v: str) -> str:
        v = " ".join(_check_text(v, "task", MAX_TASK_CHARS, allow_newlines=True).split())
        if not v:
            raise ValueError("task is empty; give a task such as 'make breakfast'")
        if not re.search(r"[^\W_]", v):   # "!!!": whatever a model made of it, nobody asked for it
            raise ValueError(f"task {v[:40]!r} has no words (no letter or digit); give a task such as "
                             "'make breakfast'")
        return v

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_text(v, "description", MAX_DESCRIPTION_CHARS, allow_newlines=True).strip()

    @field_validator("scene_id")
    @classmethod
    def _scene(cls, v: str) -> str:
        return _check_text(v, "scene_id", MAX_SCENE_ID_CHARS, allow_newlines=False).strip()

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, v: object) -> object:
        if v == "":
            return None
        if isinstance(v, str) and not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", v):
            raise ValueError(f"{v!r} is not a method's name (lower-case letters, digits and '_')")
        return v


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem, each naming its field, e.g. ``options.temperature: ...``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "goal"
        msg = err["msg"].removeprefix("Value error, ")
        value = err.get("input")
        if isinstance(value, (str, int, float)) and err["type"] != "value_error":
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            msg += f" (got {shown})"
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def parse_request(**fields: object) -> PlanRequest:
    """Build a :class:`PlanRequest` or raise :class:`InvalidRequest` with a specific reason."""
    try:
        request = PlanRequest(**fields)
    except ValidationError as exc:
        raise InvalidRequest(describe_validation_error(exc)) from None
    try:
        check_syntax(request.goal_conditions, request.action_goals)
    except InvalidGoal as exc:
        raise InvalidRequest(str(exc)) from None
    return request


MAX_CONDITIONS = 64
LITERAL = re.compile(r"^\(\s*(not\s*\(\s*)?([A-Za-z_][\w-]*)((?:\s+[^\s()]+)*)\s*\)\s*(\))?$")


def check_syntax(conditions: Sequence[str], action_goals: Sequence[str] = ()) -> None:
    """The form of the goal conditions, before the world they name is known (a request is
    checked so when it arrives; its words are checked against the world's when it is resolved)."""
    if len(conditions) + len(action_goals) > MAX_CONDITIONS:
        raise InvalidGoal(f"goal_conditions: {len(conditions) + len(action_goals)} conditions; the limit is "
                          f"{MAX_CONDITIONS}")
    for text in conditions:
        m = LITERAL.match(text.strip())
        if m is None or bool(m.group(1)) != bool(m.group(4)):
            raise InvalidGoal(f"goal_conditions: {text!r} is not a literal; write '(predicate arg ...)' "
                              "or '(not (predicate arg ...))', e.g. '(on tv)'")
    for text in action_goals:
        if not any(v.strip() for v in text.split("|")):
            raise InvalidGoal(f"action_goals: {text!r} names no action")
