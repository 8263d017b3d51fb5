"""The composition root: the one place that turns settings into a planning service, used by the
planner node, the command line, the evaluation and the bench scripts alike. It builds the
backends (a registry line each), the parts the methods are built from, each registered method's
runner, and the service; the caller passes its adapters in (a ROS executor, judge, approver).

Settings come as one flat mapping (a node's parameters, or the ``ros__parameters`` of
config/planner.yaml); each key belongs to exactly one settings model, and an unknown key is an
error."""
from __future__ import annotations

import difflib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Optional, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import describe_validation_error
from llm_planner_ros.core.settings import ManagedNodeParams, PlannerSettings, one_of
from llm_planner_ros.llm.base import LLMBackend, NoLLM
from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS, model_file
from llm_planner_ros.pet.judges import SubtaskJudge
from llm_planner_ros.pet.session import PetSettings
from llm_planner_ros.planning.goal_directed import GoalDirectedSettings
from llm_planner_ros.planning.heuristic import HeuristicSettings
from llm_planner_ros.planning.interpreted import InterpretSettings
from llm_planner_ros.planning.methods import DEFAULT_METHOD, METHODS, MethodParts, MethodRunner
from llm_planner_ros.planning.parts import PlannerParts
from llm_planner_ros.planning.service import PlanningService
from llm_planner_ros.planning.worlds import DEFAULT_WORLD, WORLDS, WorldPlugin
from llm_planner_ros.safety.gate import Approver, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.trace.log import RecordingLLM, TraceLog
from llm_planner_ros.translation.demonstrations import DemonstrationBank
from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder
from llm_planner_ros.translation.translator import Embedder

log = logging.getLogger(__name__)


class BackendSettings(BaseModel):
    """Which LLM and which translation model to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    llm_backend: Annotated[str, one_of(lambda: LLM_BACKENDS, "LLM backend")] = Field(
        "embedded", description="a line of LLM_BACKENDS (wiring.py): embedded, "
        "a GGUF model in-process; openai, any OpenAI-compatible server")
    llm_model: Annotated[str, one_of(lambda: MODELS, "model")] = Field(
        DEFAULT_MODEL, description="embedded model by its name in the registry "
        "(llm/models.py; `python -m llm_planner_ros model list`); "
        "llm_model_path, when set, wins")
    llm_model_path: str = Field("", description="GGUF file for the embedded backend; empty = the file of llm_model")
    llm_threads: int = Field(0, ge=0, le=64, description="CPU threads of the embedded LLM; 0 = the CPUs "
                                                          "other processes leave idle, asked at each call")
    llm_context: int = Field(2048, ge=256, le=32768,
                             description="context length of the embedded LLM; where no setting gives it, "
                                         "llm_model's own (2048 for the default model; a node and "
                                         "config/planner.yaml give every setting)")
    llm_prompt_cache_mb: int = Field(64, ge=0, le=65536,
                                     description="embedded LLM: memory for evaluated prompt lines reused by later "
                                                 "prompts; 0 = evaluate every prompt from its start")
    openai_base_url: str = Field("", description="e.g. http://127.0.0.1:8080/v1; empty = api.openai.com")
    openai_model: str = Field("", description="model name on the OpenAI-compatible server")
    openai_api: Literal["completions", "chat"] = Field("completions", description="completions has log-probs")
    openai_api_key_env: str = Field("OPENAI_API_KEY", description="environment variable holding the key")
    openai_timeout_s: float = Field(60.0, gt=0.0, le=3600.0)
    openai_max_retries: int = Field(2, ge=0, le=10)
    openai_concurrency: int = Field(4, ge=1, le=64,
                                    description="requests in flight for the k samples of a server that ignores n")
    embedding_model_dir: str = Field("", description="sentence-transformers folder; empty = all-MiniLM-L6-v2")
    embedding_precision: Literal["fp32", "int8"] = Field("fp32", description="int8 is faster, less faithful")
    embedding_threads: int = Field(1, ge=1, le=64)


def _openai(cfg: BackendSettings) -> LLMBackend:
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(cfg.openai_base_url, cfg.openai_model, api=cfg.openai_api,
                         api_key_env=cfg.openai_api_key_env, timeout_s=cfg.openai_timeout_s,
                         max_retries=cfg.openai_max_retries, concurrency=cfg.openai_concurrency)


def _embedded(cfg: BackendSettings) -> LLMBackend:
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend

    if cfg.llm_model_path:
        path, n_ctx = Path(cfg.llm_model_path), cfg.llm_context
    else:
        path = model_file(cfg.llm_model)
        n_ctx = cfg.llm_context if "llm_context" in cfg.model_fields_set else MODELS[cfg.llm_model].context
    return LlamaCppBackend(path, n_ctx=n_ctx, n_threads=cfg.llm_threads,
                           prompt_cache_mb=cfg.llm_prompt_cache_mb)


# llm_backend -> the backend built from the settings: a line each (llm_backend's choices)
LLM_BACKENDS: dict[str, Callable[[BackendSettings], LLMBackend]] = {"embedded": _embedded, "openai": _openai}


def build_llm(cfg: BackendSettings) -> LLMBackend:
    return LLM_BACKENDS[cfg.llm_backend](cfg)


def build_embedder(cfg: BackendSettings) -> OnnxSentenceEmbedder:
    return OnnxSentenceEmbedder(Path(cfg.embedding_model_dir) if cfg.embedding_model_dir else None,
                                int8=cfg.embedding_precision == "int8", threads=cfg.embedding_threads)


# every goal's settings; each method's own come from its registry line (MethodEntry.settings)
SHARED_MODELS: tuple[type[BaseModel], ...] = (BackendSettings, PlannerSettings, SafetySettings, SkillPolicy)
M = TypeVar("M", bound=BaseModel)


def service_models() -> tuple[type[BaseModel], ...]:
    """The settings models of a planning service: the shared ones, then each registered method's."""
    return tuple(dict.fromkeys((*SHARED_MODELS, *(m for e in METHODS.values() for m in e.settings))))


class PlannerNodeParams(ManagedNodeParams):
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
    def interpret(self) -> InterpretSettings:
        return self.get(InterpretSettings)

    @property
    def safety(self) -> SafetySettings:
        return self.get(SafetySettings)

    @property
    def policy(self) -> SkillPolicy:
        return self.get(SkillPolicy)

    @classmethod
    def of(cls, *settings: BaseModel) -> ServiceConfig:
        """A configuration of these settings (the other models: their defaults)."""
        return cls({type(s): s for s in settings})

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


class _FromSettings:
    """``compose``'s default LLM: the one the settings' backend names."""


FROM_SETTINGS = _FromSettings()


def compose(config: ServiceConfig = ServiceConfig(), *,
            llm: Union[LLMBackend, None, _FromSettings] = FROM_SETTINGS, embedder: Optional[Embedder] = None,
            demos: Optional[DemonstrationBank] = None,
            executor_factory: Optional[Callable[[str, str], Executor]] = None,
            judge: Optional[SubtaskJudge] = None, approver: Optional[Approver] = None,
            trace: Optional[TraceLog] = None, robot_world: Optional[Callable[[bool], Optional[Executor]]] = None,
            world: Union[WorldPlugin, str] = "") -> PlanningService:
    """The planning service of ``config``. ``llm`` and ``embedder``: given ones (a test's, or one
    the bench shares between services), else built from ``config.backend``; ``llm=None``: none
    (``NoLLM``: a method that asks it fails). ``demos``: the demonstrations shown, else the world's own.
    The adapters (``executor_factory``, ``judge``, ``approver``, ``trace``, ``robot_world``) and
    ``world`` are described at :class:`PlanningService` and :class:`PlannerParts`."""
    t0 = time.perf_counter()
    model = build_llm(config.backend) if isinstance(llm, _FromSettings) else llm if llm is not None else NoLLM()
    if trace is not None:
        model = RecordingLLM(model, trace)
    parts = PlannerParts(model, embedder if embedder is not None else build_embedder(config.backend), config.planner,
                         world=world, demos=demos, pet_settings=config.pet, judge=judge,
                         heuristic_settings=config.heuristic, goal_directed=config.goal_directed,
                         interpret=config.interpret)
    runners: dict[str, MethodRunner] = {}
    lent = MethodParts(config.planner, lambda name: runners[name], dict(config.parts))
    runners.update({name: entry.runner(lent) for name, entry in METHODS.items()})
    service = PlanningService(parts, runners, config.safety, config.policy, approver=approver, trace=trace,
                              robot_world=robot_world, executor_factory=executor_factory)
    log.info("planning service composed in %.1fs (llm %s)", time.perf_counter() - t0, model.name)
    return service
