"""The one place that turns settings into a planning service: used by the planner node, the
command line and the benchmark. Settings come as one flat mapping (a node's parameters, or the
``ros__parameters`` of config/planner.yaml); each key belongs to exactly one settings model,
and an unknown key is an error."""
from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import describe_validation_error
from llm_planner_ros.core.settings import PlannerSettings, one_of
from llm_planner_ros.pet.session import PetSettings
from llm_planner_ros.planning.goal_directed import GoalDirectedSettings
from llm_planner_ros.planning.heuristic import HeuristicSettings
from llm_planner_ros.planning.methods import DEFAULT_METHOD, METHODS
from llm_planner_ros.planning.service import BackendSettings, PlanningService
from llm_planner_ros.planning.worlds import DEFAULT_WORLD, WORLDS
from llm_planner_ros.safety.gate import Approver, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.trace.log import TraceLog

# every goal's settings; each method's own come from its registry line (MethodEntry.settings)
SHARED_MODELS: tuple[type[BaseModel], ...] = (BackendSettings, PlannerSettings, SafetySettings, SkillPolicy)
M = TypeVar("M", bound=BaseModel)


def service_models() -> tuple[type[BaseModel], ...]:
    """The settings models of a planning service: the shared ones, then each registered method's."""
    return tuple(dict.fromkeys((*SHARED_MODELS, *(m for e in METHODS.values() for m in e.settings))))


class PlannerNodeParams(BaseModel):
    """ROS parameters of the planner node (see config/planner.yaml)."""

    model_config = ConfigDict(extra="forbid")
    LIVE: ClassVar[tuple[str, ...]] = ("goal_policy", "max_queued_goals", "goal_time_limit_s")

    goal_policy: Literal["queue", "reject"] = Field(
        "queue", description="a goal arriving while one runs: 'queue' it, or 'reject' it")
    max_queued_goals: int = Field(16, ge=0, le=1000,
                                  description="goals waiting beyond this are rejected")
    default_method: Annotated[str, one_of(lambda: METHODS, "method")] = Field(
        DEFAULT_METHOD, description="method used when a goal leaves 'method' empty: "
        "a name in the registry (planning/methods)")
    default_scene: str = Field("", description="scene used when a goal leaves 'scene_id' empty "
                                               "('' = the world's first)")
    world: str = Field("", description="the world given in code that goals plan in when the executor declares "
                                       "no profile: '' = the default world; 'none' = none (a robot that declares "
                                       "its profile), and nothing of one is loaded")
    executor_mode: Literal["bridge", "in_process"] = Field(
        "bridge", description="execute skills through the executor bridge over ROS, or in-process")
    skill_timeout_s: float = Field(60.0, gt=0.0, le=3600.0, description="limit for one skill on the bridge")
    bridge_wait_s: float = Field(5.0, gt=0.0, le=600.0, description="wait for the bridge's servers")
    trace_log: str = Field("default",
                           description="JSONL trace of every goal (prompts, samples, scores, skills, errors); "
                                       "'default' = $ROS_HOME (~/.ros)/llm_planner_ros/<namespace>.<node>.jsonl; "
                                       "empty = off")
    tracker_mode: Literal["ros", "in_process"] = Field(
        "in_process", description="PET's subtask questions: the tracker node's check_subtask, or in-process")
    tracker_timeout_s: float = Field(30.0, gt=0.0, le=600.0, description="limit for one check_subtask call")
    goal_time_limit_s: float = Field(600.0, gt=0.0, le=86400.0,
                                     description="a goal still running after this ends with 'time_limit'; "
                                                 "a goal's options.time_limit_s overrides it")
    cancel_wait_s: float = Field(5.0, gt=0.0, le=600.0,
                                 description="wait for the bridge to confirm that a cancelled skill stopped")
    shutdown_wait_s: float = Field(10.0, gt=0.0, le=600.0,
                                   description="on SIGINT/SIGTERM, wait this long for the active goal to end")


    @field_validator("world")
    @classmethod
    def _known_world(cls, name: str) -> str:
        if name not in ("", "none", *WORLDS):
            raise ValueError(f"unknown world {name!r}; known: '' (the default, {DEFAULT_WORLD}), 'none', "
                             f"{', '.join(sorted(WORLDS))}")
        return name


class SettingsError(ValueError):
    """An unknown key or an invalid value; the message names it."""


@dataclass(frozen=True)
class ServiceConfig:
    """One instance of each of :func:`service_models`, by model (a model left out: its defaults)."""

    parts: Mapping[type[BaseModel], BaseModel] = field(default_factory=dict)

    def get(self, model: type[M]) -> M:
        found = self.parts.get(model)
        return found if isinstance(found, model) else model()

    @property
    def backend(self) -> BackendSettings:
        return self.get(BackendSettings)

    @property
    def planner(self) -> PlannerSettings:
        return self.get(PlannerSettings)

    @property
    def pet(self) -> PetSettings:
        return self.get(PetSettings)

    @property
    def heuristic(self) -> HeuristicSettings:
        return self.get(HeuristicSettings)

    @property
    def goal_directed(self) -> GoalDirectedSettings:
        return self.get(GoalDirectedSettings)

    @property
    def safety(self) -> SafetySettings:
        return self.get(SafetySettings)

    @property
    def policy(self) -> SkillPolicy:
        return self.get(SkillPolicy)

    @classmethod
    def from_flat(cls, flat: Mapping[str, Any], also_known: Iterable[str] = ()) -> ServiceConfig:
        """Split ``flat`` over the settings models; keys in ``also_known`` belong to someone else
        (e.g. the node's own parameters) and are skipped; any other unknown key is an error."""
        models = service_models()
        known = {name for m in models for name in m.model_fields} | set(also_known)
        unknown = sorted(set(flat) - known)
        if unknown:
            hints = [f"{u!r}" + (f" (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, known, 1))
                                 else "") for u in unknown]
            raise SettingsError(f"unknown setting(s): {', '.join(hints)}")
        parts: dict[type[BaseModel], BaseModel] = {}
        for model in models:
            values = {k: (tuple(v) if isinstance(v, list) and k == "fixed_examples" else v)
                      for k, v in flat.items() if k in model.model_fields}
            try:
                parts[model] = model(**values)
            except ValidationError as exc:
                raise SettingsError(describe_validation_error(exc)) from None
        return cls(parts)


def build_service(config: ServiceConfig, executor_factory: Optional[Callable[[str, str], Executor]] = None,
                  judge=None, approver: Optional[Approver] = None, trace: Optional[TraceLog] = None,
                  robot_world: Optional[Callable[[bool], Optional[Executor]]] = None,
                  world: str = "") -> PlanningService:
    return PlanningService.build(config.backend, config.planner, executor_factory=executor_factory,
                                 pet_settings=config.pet, judge=judge, heuristic_settings=config.heuristic,
                                 safety=config.safety, approver=approver, trace=trace,
                                 goal_directed=config.goal_directed, policy=config.policy,
                                 robot_world=robot_world, world=world, method_settings=config.parts)
