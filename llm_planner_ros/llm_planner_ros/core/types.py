"""Plain data types shared by every planning method, the ROS nodes and the benchmark.

Nothing here imports ROS. The field names mirror ``llm_planner_msgs`` so that the
conversion in :mod:`llm_planner_ros.ros.conversions` is mechanical.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any, ClassVar


class ErrorType(IntEnum):
    """Precondition error types of Raman et al. (App. A.1) plus two of this project's."""

    NONE = 0
    UNFLIPPED_BOOLEAN_STATE = 1
    FIELD_OF_VIEW = 2
    EMPTY_PROGRAM = 3
    ABSENT_FROM_ROOM = 4
    MISSING_OBJECT = 5
    ENCLOSED_OBJECT = 6
    INVALID_ACTION = 7
    OVER_OCCUPIED_AGENT = 8
    AGENT_PROXIMITY = 9
    OTHER_PRECONDITION = 10
    PARSE_ERROR = 11
    EXECUTOR_ERROR = 12
    HAZARD = 13


class TerminationReason(str, Enum):
    """Why a plan ended; values equal the ``PlanTask.Result.REASON_*`` constants."""

    END_OF_PLAN = "end_of_plan"
    LOW_SCORE = "low_score"
    MAX_STEPS = "max_steps"
    GOAL_REACHED = "goal_reached"
    CORRECTIONS_EXHAUSTED = "corrections_exhausted"
    INVALID_GOAL = "invalid_goal"
    LLM_ERROR = "llm_error"
    EXECUTOR_ERROR = "executor_error"
    CANCELED = "canceled"
    APPROVAL_DENIED = "approval_denied"
    APPROVAL_TIMEOUT = "approval_timeout"
    INTERNAL_ERROR = "internal_error"
    NO_PLAN = "no_plan"
    REPLAN_LIMIT = "replan_limit"
    TIME_LIMIT = "time_limit"
    SHUTDOWN = "shutdown"
    REJECTED = "rejected"
    TRACKER_ERROR = "tracker_error"
    NO_PROGRESS = "no_progress"
    ALREADY_DONE = "already_done"
    UNCONFIRMED = "unconfirmed"
    CONFIRMATION_TIMEOUT = "confirmation_timeout"
    GOAL_DECLINED = "goal_declined"
    HAZARDOUS_GOAL = "hazardous_goal"
    HAZARD_STOPPED = "hazard_stopped"

    @property
    def is_success(self) -> bool:
        return self in (TerminationReason.END_OF_PLAN, TerminationReason.LOW_SCORE,
                        TerminationReason.MAX_STEPS, TerminationReason.GOAL_REACHED,
                        TerminationReason.ALREADY_DONE)


class GoalStatus(IntEnum):
    UNKNOWN = -1
    NOT_MET = 0
    MET = 1


@dataclass(frozen=True)
class Skill:
    """One atomic action on 0-2 objects, e.g. ``Skill("PUTIN", ("milk", "fridge"))``. An object is
    a class, or an instance with its own name (a profile's ``instances``: ``bob_office``), whose id
    is ``NAMED`` where ids are given."""

    action: str
    objects: tuple[str, ...] = ()
    object_ids: tuple[int, ...] = ()
    text: str = ""

    NAMED: ClassVar[int] = -1   # the id of an object that names its instance (``bob_office``)

    def script(self) -> str:
        """The skill as a script line, ``[VERB] <object> (id)`` (Huang et al.'s program syntax);
        ids default to 1. An untranslated free-text step (``action == ""``) is returned as its text."""
        if not self.action:
            return self.text
        ids = self.object_ids or (1,) * len(self.objects)
        args = "".join(f" <{o}> ({i})" for o, i in zip(self.objects, ids))
        return f"[{self.action}]{args}"


@dataclass(frozen=True)
class PreconditionFailure:
    type: ErrorType = ErrorType.NONE
    message: str = ""
    cause: str = ""


@dataclass
class PlanStep:
    index: int
    generated_text: str
    skill: Skill
    score: float = 0.0
    similarity: float = 0.0
    mean_logprob: float = math.nan
    executed: bool = False
    error: PreconditionFailure = field(default_factory=PreconditionFailure)
    corrections: int = 0
    subtask_index: int = -1


class NoteKind(str, Enum):
    """What a layer above the method adds to a goal's account (see :class:`Note`); ``detail``
    writes them in this order, the weightiest first."""

    DRY_RUN = "dry_run"             # executed in-process, nothing sent to a robot
    UNTRUSTED = "untrusted"         # the plan failed its check on a model of the world
    WITHHELD = "withheld"           # a step the policy refuses: the plan stops before it
    GOAL_UNKNOWN = "goal_unknown"   # steps ran, and nothing checks the goal
    UNCONFIRMED = "unconfirmed"     # method interpret: its goal is met, but may not be the goal asked
    ZERO_SHOT = "zero_shot"         # ... read without demonstrations
    GIVEN_UP = "given_up"           # ... gave its goal up
    FALLBACK = "fallback"           # another method planned instead
    CONDITIONS = "conditions"       # method interpret: the goal it read from the task
    UNTRANSLATED = "untranslated"   # lines that are no admissible skill


@dataclass(frozen=True)
class Note:
    """One structured remark on a result; :func:`describe` writes them into its ``detail``."""

    kind: NoteKind
    text: str


@dataclass
class PlanResult:
    termination_reason: TerminationReason
    ending: str = ""          # the method's own words on how it ended; see ``detail`` for the whole account
    steps: list[PlanStep] = field(default_factory=list)
    subtasks: list[str] = field(default_factory=list)
    executed: bool = False
    goal_status: GoalStatus = GoalStatus.UNKNOWN
    num_corrections: int = 0
    num_llm_calls: int = 0
    wall_time_s: float = 0.0
    executing: bool = False   # the goal asked for execution
    goal_conditions: list[str] = field(default_factory=list)   # what "done" meant: given or interpreted
    checked: bool = False     # plan-only: the plan was run on a model of the world (see planning.plan_check)
    confidence: float = math.nan   # method interpret: P(the interpreted goal is the one asked); nan: unknown
    hazards: list[str] = field(default_factory=list)   # hazards refused, avoided or stopped, in words
    notes: list[Note] = field(default_factory=list)      # what the layers above the method added, in order
    seeks_goal: bool = False  # the method runs until its own goal check holds (pddl, heuristic)

    def note(self, kind: NoteKind, text: str) -> PlanResult:
        self.notes.append(Note(kind, text))
        return self

    def noted(self, kind: NoteKind) -> list[str]:
        return [n.text for n in self.notes if n.kind is kind]

    @property
    def detail(self) -> str:
        return describe(self)

    @property
    def success(self) -> bool:
        """The goal was reached, or a plan ended normally and has steps; when executing, every
        step executed and, for a method that runs until its goal holds, the goal is not found
        unmet; when only planning, the plan is trusted: it was run on a model of the world, no
        step failed there, and the goal, where the model knows it, held after it."""
        if self.termination_reason in (TerminationReason.GOAL_REACHED, TerminationReason.ALREADY_DONE) \
                and self.goal_status is not GoalStatus.NOT_MET:
            return True
        if not (self.termination_reason.is_success and self.steps):
            return False
        if self.executing:
            return self.executed and not (self.seeks_goal and self.goal_status is GoalStatus.NOT_MET)
        return self.checked and self.goal_status is not GoalStatus.NOT_MET \
            and all(s.error.type is ErrorType.NONE for s in self.steps)

    @property
    def shortfall(self) -> str:
        """Why a plan that ended normally is not a success ("" when it is, or did not end so)."""
        if self.success or not self.termination_reason.is_success:
            return ""
        if not self.steps:
            return "the plan is empty"
        if self.executing:
            return "not every step executed" if not self.executed else "the goal does not hold after the steps"
        return "" if self.checked else "the plan was not checked on a model of the world"

    @property
    def program(self) -> list[str]:
        return [s.skill.script() for s in self.steps]

    @property
    def program_nl(self) -> list[str]:
        return [s.skill.text for s in self.steps]


def describe(result: PlanResult) -> str:
    """The one writer of a result's ``detail``: why it falls short, then the notes in the order
    of :class:`NoteKind`, then the method's own ending; joined by "; "."""
    order = list(NoteKind)
    notes = sorted(result.notes, key=lambda n: order.index(n.kind))
    parts = [result.shortfall, *(n.text for n in notes), result.ending]
    return "; ".join(p for p in parts if p)


@dataclass
class StepEvent:
    """Progress report sent after every decided step (becomes action feedback)."""

    step: PlanStep
    num_corrections: int
    subtask: str = ""
    goal_conditions: tuple[str, ...] = ()
    confidence: float = math.nan   # method interpret: the interpreted goal's confidence


@dataclass(frozen=True)
class PlanPreview:
    """The whole plan as it stands, sent when a plan is made (before its first skill, so an
    operator approving that skill sees where it leads), after each step and on each re-plan."""

    skills: tuple[Skill, ...]                 # from the first step: the steps taken, then those to come
    goal_conditions: tuple[str, ...] = ()
    conditions_met: tuple[bool, ...] = ()     # per goal condition, whether it holds now (empty: unknown)


@dataclass
class StageTimes:
    """Wall time per stage of one goal."""

    llm_s: float = 0.0
    translation_s: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


@dataclass
class GoalReport:
    """What one goal measured besides its result: time per stage, and what the method did
    (``stats``: e.g. the PET session, the heuristic search's trace, the goal-directed planner's
    problem sizes). The caller passes one in; planners keep nothing per goal on themselves."""

    times: StageTimes = field(default_factory=StageTimes)
    stats: dict[str, Any] = field(default_factory=dict)

    def timings(self) -> dict[str, float]:
        out = {"llm_s": self.times.llm_s, "translation_s": self.times.translation_s, **self.times.extra}
        out.update({k: v for k, v in self.stats.items() if isinstance(v, (int, float))})
        return out
