"""The contract every skill executor implements (simulator, robot bridge, test doubles)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Protocol

from llm_planner_ros.core.types import ErrorType, PreconditionFailure, Skill

if TYPE_CHECKING:
    from llm_planner_ros.core.world import WorldState


@dataclass(frozen=True)
class ExecutionResult:
    success: bool
    failure: PreconditionFailure = field(default_factory=PreconditionFailure)
    observation: str = ""   # short text of what changed (or why nothing did)
    script: str = ""        # the line actually executed, with instance ids

    @classmethod
    def failed(cls, type_: ErrorType, message: str, cause: str, script: str = "") -> ExecutionResult:
        return cls(False, PreconditionFailure(type_, message, cause), f"nothing changed: {cause}", script)


class Executor(Protocol):
    objects: list[str]   # object classes present since the last reset (the skill bank's objects)

    @property
    def profile(self) -> Optional[object]:
        """The world profile the executor declares (a ``profiles.loader.WorldProfile``: its skills,
        objects and words), read by the planning layer; None: it declares none."""
        ...

    def reset(self, scene_id: str, graph: Optional[dict] = None) -> list[str]:
        """Start from a scene's initial state (or the given graph); returns its object classes."""
        ...

    def execute(self, skill: Skill) -> ExecutionResult:
        """Execute one skill; never raises on a bad skill (that is a PARSE_ERROR failure)."""
        ...

    def applicable_skills(self, limit: Optional[int] = None) -> list[Skill]:
        """Skills whose preconditions hold now (Borro et al.'s f_a)."""
        ...

    def domain_text(self) -> str:
        """The PDDL domain the executor's world state is written in (goal-directed planning)."""
        ...

    def world_state(self) -> WorldState:
        """The current state as instances and facts over :meth:`domain_text`."""
        ...

    def instance_class(self, instance_id: int) -> Optional[str]:
        """The class of the instance with this id in the current world, or None when there is none."""
        ...

    def goal_met(self) -> Optional[bool]:
        """Whether the goal conditions hold, or None where the executor cannot tell."""
        ...
