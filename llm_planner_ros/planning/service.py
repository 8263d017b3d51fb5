"""Wires the LLM, the embedder, the demonstrations and the skill banks into one planner that
serves every method; used by the planner node, the CLI and the benchmark alike."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken, ExecutorError, HazardStopped, InvalidGoal, PlanningError
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.settings import PlannerSettings, one_of
from llm_planner_ros.core.types import (
    ErrorType,
    GoalReport,
    GoalStatus,
    NoteKind,
    PlanPreview,
    PlanResult,
    PlanStep,
    PreconditionFailure,
    Skill,
    StepEvent,
    TerminationReason,
)
from llm_planner_ros.interpretation.interpreter import Completion, GoalInterpreter, InstancePrior
from llm_planner_ros.interpretation.literals import LiteralWriter
from llm_planner_ros.interpretation.menu import MenuSettings
from llm_planner_ros.llm.base import LLMBackend
from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS, model_file
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pet.judges import SubtaskJudge
from llm_planner_ros.pet.session import PetFactory, PetSettings
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner, GoalDirectedSettings
from llm_planner_ros.planning.heuristic import HeuristicPlanner, HeuristicSettings
from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner
from llm_planner_ros.planning.methods import METHODS, Goal, GoalRun, MethodParts, MethodRunner
from llm_planner_ros.planning.plan_check import check_plan
from llm_planner_ros.planning.resolve import resolve
from llm_planner_ros.planning.translated import TranslatedPlanner
from llm_planner_ros.planning.worlds import (
    DEFAULT_WORLD,
    BuiltinWorld,
    ProfileWorld,
    WorldMethods,
    WorldPlugin,
    load_world,
)
from llm_planner_ros.profiles.loader import WorldProfile
from llm_planner_ros.safety.gate import Approver, SafetyGate, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.trace.log import RecordingLLM, TraceLog
from llm_planner_ros.translation.demonstrations import DemonstrationBank
from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder, cache_root
from llm_planner_ros.translation.translator import Embedder, SkillIndex, bank_vectors
from llm_planner_ros.translation.vector_store import SentenceVectors

log = logging.getLogger(__name__)


class BackendSettings(BaseModel):
    """Which LLM and which translation model to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    llm_backend: Annotated[str, one_of(lambda: LLM_BACKENDS, "LLM backend")] = Field(
        "embedded", description="a line of LLM_BACKENDS (planning/service.py): embedded, "
        "a GGUF model in-process; openai, any OpenAI-compatible server")
    llm_model: Annotated[str, one_of(lambda: MODELS, "model")] = Field(
        DEFAULT_MODEL, description="embedded model by its name in the registry "
        "(llm/models.py; `python -m llm_planner_ros model list`); "
        "llm_model_path, when set, wins")
    llm_model_path: str = Field("", description="GGUF file for the embedded backend; empty = the file of llm_model")
    llm_threads: int = Field(1, ge=1, le=64, description="CPU threads of the embedded LLM")
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


class PlanningService:
    """One planner for all methods; dispatches on ``request.method``."""

    def __init__(self, llm: LLMBackend, embedder: Embedder, defaults: PlannerSettings,
                 demos: Optional[DemonstrationBank] = None,
                 executor_factory: Optional[Callable[[str, str], Executor]] = None,
                 pet_settings: PetSettings = PetSettings(), judge: Optional[SubtaskJudge] = None,
                 heuristic_settings: HeuristicSettings = HeuristicSettings(),
                 safety: SafetySettings = SafetySettings(), approver: Optional[Approver] = None,
                 trace: Optional[TraceLog] = None,
                 goal_directed: GoalDirectedSettings = GoalDirectedSettings(),
                 policy: SkillPolicy = SkillPolicy(),
                 robot_world: Optional[Callable[[bool], Optional[Executor]]] = None,
                 world: Union[WorldPlugin, str] = "",
                 method_settings: Mapping[type[BaseModel], BaseModel] = {}) -> None:
        """``method_settings``: each method's settings by model (``MethodEntry.settings``).
        ``world``: the world given in code that goals plan over when the executor declares no
        profile, or its name in ``profiles.WORLDS`` ("": the default world; "none": none, so only
        an executor's profile is planned over). It is loaded, with everything built from it, when
        a goal or :meth:`warm` first needs it: a robot stack never loads it.
        ``executor_factory(scene_id, task)`` gives the executor, reset, for goals with
        ``execute=True``; by default that world's in-process one. ``judge`` answers PET's
        subtask questions (e.g. the tracker node over ROS); by default the one ``pet_settings`` names.
        ``robot_world(executes)`` gives the executor as it is now, not reset, when its world is a
        profile's (its skills, objects and words; None: the built-in world): goals are checked
        against it, and plan-only goals plan from its state."""
        self.trace = trace
        self._world = world
        llm = RecordingLLM(llm, trace) if trace is not None else llm
        self.llm = llm
        self.safety = safety   # safety and policy may be replaced while the node runs; each goal
        self.policy = policy   # reads them once, when its gate is built
        self.approver = approver
        self._executor_factory = None if safety.dry_run else executor_factory
        self.embedder = embedder
        self.defaults = defaults
        self._demos = demos
        self._pet_settings, self._judge, self._heuristic_settings = pet_settings, judge, heuristic_settings
        self.goal_directed_settings = goal_directed
        self._indexes: dict[tuple[str, str, tuple[str, ...]], SkillIndex] = {}
        self._profile_planners: dict[tuple[str, str, str], TranslatedPlanner] = {}
        self._index_lock = threading.Lock()
        self._built_lock = threading.RLock()
        self._interpreted: Optional[InterpretedGoalPlanner] = None
        self._interpreted_lock = threading.Lock()
        self._profile_interpreters: dict[str, InterpretedGoalPlanner] = {}
        self._vectors: Optional[SentenceVectors] = None
        self.robot_world = robot_world
        parts = MethodParts(goal_directed, defaults, lambda name: self.runners[name], dict(method_settings))
        self.runners: dict[str, MethodRunner] = {m: entry.runner(parts) for m, entry in METHODS.items()}

    # -- the world given in code and what is built from it, on first use ---------------------
    @cached_property
    def world(self) -> WorldPlugin:
        if not isinstance(self._world, str):
            return self._world
        if self._world == "none":
            raise InvalidGoal("the executor declares no world profile, and this planner has no world given in "
                              "code to plan in (world: none)")
        return load_world(self._world or DEFAULT_WORLD)

    @property
    def has_world(self) -> bool:
        """Whether goals may plan in a world given in code (else only in an executor's profile)."""
        return self._world != "none"

    @property
    def executor_factory(self) -> Callable[[str, str], Executor]:
        return self._executor_factory or self.world.executor

    @cached_property
    def demos(self) -> DemonstrationBank:
        with self._built_lock:
            return self._demos or DemonstrationBank(self.world.demonstrations(), self.embedder)

    @cached_property
    def pet(self) -> PetFactory:
        with self._built_lock:
            return PetFactory(self.llm, self.embedder, self.demos, self._pet_settings, self.world.rooms(),
                              self.world.places(), self._judge)

    @cached_property
    def translated(self) -> TranslatedPlanner:
        with self._built_lock:
            return TranslatedPlanner(self.llm, self.demos, self.index_for, self.world, self.defaults, self.pet)

    @cached_property
    def heuristic(self) -> HeuristicPlanner:
        with self._built_lock:
            return HeuristicPlanner(self.llm, self.demos, self.world, self._heuristic_settings,
                                    seed=self.defaults.seed)

    @cached_property
    def goal_directed(self) -> GoalDirectedPlanner:
        """Method pddl's planner in the world given in code."""
        return GoalDirectedPlanner(self.world, self.goal_directed_settings)

    @cached_property
    def builtin(self) -> BuiltinWorld:
        with self._built_lock:
            return BuiltinWorld(self.world, self.goal_directed, lambda: self.translated, lambda: self.heuristic,
                                self.interpreted)

    @classmethod
    def build(cls, backend: BackendSettings, defaults: PlannerSettings,
              executor_factory: Optional[Callable[[str, str], Executor]] = None,
              pet_settings: PetSettings = PetSettings(), judge: Optional[SubtaskJudge] = None,
              heuristic_settings: HeuristicSettings = HeuristicSettings(),
              safety: SafetySettings = SafetySettings(), approver: Optional[Approver] = None,
              trace: Optional[TraceLog] = None,
              goal_directed: GoalDirectedSettings = GoalDirectedSettings(),
              policy: SkillPolicy = SkillPolicy(),
              robot_world: Optional[Callable[[bool], Optional[Executor]]] = None,
              world: Union[WorldPlugin, str] = "",
              method_settings: Mapping[type[BaseModel], BaseModel] = {}) -> PlanningService:
        t0 = time.perf_counter()
        service = cls(build_llm(backend), build_embedder(backend), defaults, executor_factory=executor_factory,
                      pet_settings=pet_settings, judge=judge, heuristic_settings=heuristic_settings,
                      safety=safety, approver=approver, trace=trace, goal_directed=goal_directed,
                      policy=policy, robot_world=robot_world, world=world, method_settings=method_settings)
        log.info("planning service built in %.1fs (llm %s)", time.perf_counter() - t0, service.llm.name)
        return service

    def index_for(self, scene_id: str, kind: str, objects: Optional[Sequence[str]] = None) -> SkillIndex:
        """The skill index for a goal: all objects (``full``), or the scene's, narrowed to the
        ``objects`` the executor reports after its reset when it reports any. A narrowed index
        takes its rows from the full one: nothing is embedded twice."""
        known = self.world.object_properties()
        key = ("*" if kind == "full" else scene_id, kind,
               tuple(sorted(o for o in objects if o in known)) if objects and kind == "scene" else ())
        with self._index_lock:
            if key not in self._indexes:
                try:
                    if kind == "full":
                        self._indexes[key] = SkillIndex(self.world.full_bank(), self.embedder)
                    elif key[2]:
                        self._indexes[key] = self._narrowed(set(key[2]))
                    else:
                        self._indexes[key] = SkillIndex(self.world.scene_bank(scene_id), self.embedder)
                except KeyError as exc:
                    raise PlanningError(str(exc.args[0])) from None
            return self._indexes[key]

    def _narrowed(self, objects: set[str]) -> SkillIndex:
        """The full bank's skills whose objects are all among ``objects`` (the bank
        ``build_bank`` makes for them, in the same order), with their cached vectors: read from
        the full index when one is built, else only their rows from the full bank's file (which
        :meth:`warm` leaves on disk)."""
        full = self._indexes.get(("*", "full", ()))
        bank = full.bank if full is not None else self.world.full_bank()
        matrix = full.matrix if full is not None else bank_vectors(bank, self.embedder, mapped=True)
        rows = [i for i, skill in enumerate(bank.skills) if set(skill.objects) <= objects]
        return SkillIndex.rows_of(bank, matrix, rows, self.embedder)

    def profile_translated(self, profile: WorldProfile, robot: Executor) -> TranslatedPlanner:
        """Algorithm 1 over a profile's world: its skill bank (the world's classes, the profile's
        words) and its examples as demonstrations; built once per profile and set of classes."""
        from llm_planner_ros.profiles.skills import profile_bank, profile_demonstrations

        world = robot.world_state()
        bank = profile_bank(profile, world)
        key = (profile.text, profile.world_text, bank.digest)
        with self._index_lock:
            if key not in self._profile_planners:
                demos = profile_demonstrations(profile, world)
                if not demos:
                    raise InvalidGoal(f"method: the LLM methods show demonstrations, and the {profile.name} profile "
                                      "has none (example goals with a plan in its world)")
                index = SkillIndex(bank, self.embedder)
                self._profile_planners[key] = TranslatedPlanner(
                    self.llm, DemonstrationBank(demos, self.embedder), lambda *_: index, ProfileSkills(profile),
                    self.defaults)
            return self._profile_planners[key]

    def interpreted(self) -> InterpretedGoalPlanner:
        """Method interpret's parts over the world given in code, built on first use (its
        annotated goals are read once)."""
        with self._interpreted_lock:
            if self._interpreted is None:
                s = self.goal_directed_settings
                world = self.world
                demos, goals = world.annotated_goals()
                vocabulary = world.goal_vocabulary()
                scene = world.scenes[0]
                interpreter = self._interpreter(demos, world.conditions, vocabulary.mutex,
                                                Completion(goals, mutex=vocabulary.mutex, agent=vocabulary.agent_type))
                self._interpreted = InterpretedGoalPlanner(interpreter, InstancePrior(
                    goals, vocabulary.location_predicate, vocabulary.agent_type), self.goal_directed,
                                                           vocabulary, use_llm=s.interpret_from != "text",
                                                           relax_plans=s.interpret_relax_plans,
                                                           added_time_s=s.interpret_added_time_s,
                                                           reference=lambda: world.executor(scene, ""),
                                                           calibration_demos=s.interpret_calibration_demos)
            return self._interpreted

    def warm(self, scene_id: str = "", bank: str = "scene") -> None:
        """Embed, before the node serves, what a goal in the built-in world's ``scene_id`` ("": its
        first) would otherwise embed: the skill index of ``bank``, the full bank's vectors that
        narrowed indexes take their rows from (kept on disk, not in memory), and method interpret's
        conditions of the scene; after the first time (or ``python -m llm_planner_ros warm`` at
        set-up) all of it comes from the cache. Starts Fast Downward's warm translator too. A
        planner without a world given in code (world: none) only starts the translator."""
        fast_downward.TRANSLATOR.start()
        if not self.has_world:
            return
        scene_id = scene_id or self.world.scenes[0]
        self.index_for(scene_id, bank)
        if bank == "scene":
            bank_vectors(self.world.full_bank(), self.embedder, mapped=True)
        self.interpreted().interpreter.index(self.world.executor(scene_id, "").world_state())

    def _interpreter(self, demos, conditions, mutex, completion: Optional[Completion] = None) -> GoalInterpreter:
        """A goal interpreter with the settings of method interpret."""
        s = self.goal_directed_settings
        menu = MenuSettings(beta=s.interpret_choose_beta, margin=s.interpret_choose_margin,
                            keep=s.interpret_choose_keep, added=s.interpret_choose_added,
                            text_candidates=s.interpret_choose_text, written_bonus=s.interpret_written_bonus)
        writer = LiteralWriter(self.llm, s.interpret_write_literals) if s.interpret_write_literals else None
        return GoalInterpreter(self.llm, self.embedder, demos, conditions, threshold=s.interpret_threshold,
                               num_examples=s.interpret_examples, completion=completion,
                               with_task_text=s.interpret_from == "llm_and_text", text_margin=s.interpret_text_margin,
                               mutex=mutex, orient=s.interpret_orient, store=self._sentence_vectors(),
                               scenes=s.interpret_scenes_in_memory, answers=s.interpret_answers_in_memory,
                               menu=menu if s.interpret_choose and s.interpret_from == "llm_and_text" else None,
                               writer=writer, absent_below=s.interpret_absent_below)

    def _sentence_vectors(self) -> SentenceVectors:
        """The condition sentences' vectors, one store for every interpreter, on disk in the cache."""
        if self._vectors is None:
            self._vectors = SentenceVectors.for_embedder(self.embedder, cache_root(),
                                                         self.goal_directed_settings.interpret_vectors_in_memory)
        return self._vectors

    def profile_interpreted(self, profile: WorldProfile, robot: Executor) -> InterpretedGoalPlanner:
        """Method interpret over a profile's world: its conditions in its words, its example goals
        as demonstrations (none: zero-shot); built once per profile."""
        from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
        from llm_planner_ros.pddl.problem import world_problem
        from llm_planner_ros.profiles.conditions import profile_conditions, profile_goal_demos
        from llm_planner_ros.profiles.skills import reference_world

        with self._interpreted_lock:
            if profile.text not in self._profile_interpreters:
                s = self.goal_directed_settings
                world = reference_world(profile) if profile.world_text else robot.world_state()
                vocabulary = profile.goal_vocabulary()
                interpreter = self._interpreter(profile_goal_demos(profile, profile_conditions(profile, world)),
                                                lambda w: profile_conditions(profile, w), vocabulary.mutex)
                planning_domain = profile.planning_domain().name
                self._profile_interpreters[profile.text] = InterpretedGoalPlanner(
                    interpreter, InstancePrior(()), GoalDirectedPlanner(profile, s), vocabulary,
                    use_llm=s.interpret_from != "text", relax_plans=s.interpret_relax_plans,
                    added_time_s=s.interpret_added_time_s,
                    reference=lambda: PddlWorldExecutor(profile, world_problem(world, planning_domain)),
                    calibration_demos=s.interpret_calibration_demos)
            return self._profile_interpreters[profile.text]

    def record_unplanned(self, goal_id: str, request: dict, termination: str, detail: str) -> None:
        """Trace a goal that the node ended before it reached :meth:`plan` (see ``TraceLog.unplanned``)."""
        if self.trace is not None:
            self.trace.unplanned(goal_id, request, termination, detail)

    def live_settings(self) -> list[tuple[type, Callable]]:
        """Settings a running node may change: each goal reads them once, when its gate is built."""
        return [(SafetySettings, lambda s: setattr(self, "safety", s)),
                (SkillPolicy, lambda p: setattr(self, "policy", p))]

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
             goal_id: str = "", on_plan: PlanCallback = no_preview) -> PlanResult:
        return self.plan_with_report(request, on_step, cancel, goal_id=goal_id, on_plan=on_plan)[0]

    def plan_with_report(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
                         executor: Optional[Executor] = None, goal_id: str = "",
                         on_plan: PlanCallback = no_preview) -> tuple[PlanResult, GoalReport]:
        """The result and this goal's report (time per stage, what the method did). ``executor``,
        already reset, replaces the configured factory for this goal (the benchmark starts each
        program from its own graph). ``goal_id`` (the ROS goal id) names the goal in the trace,
        which records each step as it is decided, so a goal that ends early loses none.
        ``on_plan`` gets the whole plan where the method makes one before it executes."""
        report = GoalReport()
        steps: dict[int, PlanStep] = {}
        if self.trace is not None:
            self.trace.begin(request, goal_id)
        trace, outer = self.trace, on_step

        def recorded(event: StepEvent) -> None:
            steps[event.step.index] = event.step
            if trace is not None:
                trace.step(event)
            outer(event)
        on_step = recorded
        t0 = time.perf_counter()
        try:
            with cancel.active():   # long loops below that take no token stop with the goal too
                result = self._plan(request, on_step, cancel, report, executor, on_plan)
        except HazardStopped as exc:   # a result like any other: the stopped skill is its last step
            stopped = exc.interrupted_skill
            if stopped is not None:
                on_step(StepEvent(step=PlanStep(
                    index=max(steps, default=0) + 1, generated_text=stopped.text, skill=stopped, executed=False,
                    error=PreconditionFailure(ErrorType.HAZARD, str(exc), "; ".join(exc.hazards) or str(exc))),
                    num_corrections=0))
            result = PlanResult(TerminationReason.HAZARD_STOPPED, ending=str(exc),
                                steps=[steps[i] for i in sorted(steps)], executing=request.execute,
                                hazards=exc.hazards)
        except BaseException as exc:
            skill = getattr(exc, "interrupted_skill", None)
            if skill is not None:   # the skill that ran when the goal ended is one of its steps
                on_step(StepEvent(step=PlanStep(
                    index=max(steps, default=0) + 1, generated_text=skill.text, skill=skill, executed=False,
                    error=PreconditionFailure(ErrorType.EXECUTOR_ERROR, str(exc), "it was stopped while it ran")),
                    num_corrections=0))
            if self.trace is not None:
                reason = exc.reason if isinstance(exc, PlanningError) else TerminationReason.INTERNAL_ERROR
                self.trace.end(None, error=f"{type(exc).__name__}: {exc}", termination=reason.value,
                               timings={"wall_s": time.perf_counter() - t0}, steps=list(steps.values()))
            raise
        report.times.extra["wall_s"] = time.perf_counter() - t0
        if self.trace is not None:
            self.trace.end(result, timings=report.timings())
        return result, report

    def _plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
              report: GoalReport, given: Optional[Executor] = None, on_plan: PlanCallback = no_preview) -> PlanResult:
        robot = self.robot_world(request.execute) if self.robot_world is not None else None
        profile = robot.profile if robot is not None else None
        if profile is not None and not isinstance(profile, WorldProfile):
            raise ExecutorError(f"the executor declares a world the planner cannot read: {type(profile).__name__}")
        world: WorldMethods = self.builtin if profile is None or robot is None else \
            ProfileWorld(profile, robot, GoalDirectedPlanner(profile, self.goal_directed_settings),
                         lambda: HeuristicPlanner(self.llm, None, None, self._heuristic_settings,
                                                  seed=self.defaults.seed),
                         self.profile_translated, self.profile_interpreted)
        goal = resolve(request, world, self.runners, self.safety.approval)
        req = goal.request
        executor = given
        if req.execute and executor is None:
            t0 = time.perf_counter()
            try:
                executor = self.executor_factory(req.scene_id, req.task)
            except PlanningError:
                raise
            except Exception as exc:
                raise ExecutorError(f"cannot start the executor for scene {req.scene_id!r}: {exc}") from exc
            report.times.extra["reset_s"] = time.perf_counter() - t0
        policy = self.policy   # one policy for the whole goal: its gate and what its plan may use
        gate = SafetyGate(executor, policy, self.safety, world.skill_problem, self.approver, cancel,
                          world.hazards) if executor is not None else None
        if goal.spec.literals and goal.method != "pddl":   # pddl checks it as it plans
            refused = world.goal_directed.hazardous(goal.spec, gate if gate is not None else
                                                   world.plan_only_world(req))
            if refused is not None:   # a given goal that makes a hazard hold: whatever the method, nothing runs
                refused.executing = req.execute
                return refused
        if gate is not None and self.safety.approval == "plan":
            return self._approved_plan(goal, on_step, cancel, gate, report, policy, on_plan)
        result = self.runners[goal.method].plan(GoalRun(goal, on_step, cancel, gate, report, policy, on_plan))
        if req.execute and result.steps and result.termination_reason.is_success \
                and result.goal_status is GoalStatus.UNKNOWN:   # steps ran: that is all that is known
            result.note(NoteKind.GOAL_UNKNOWN, "whether the task's goal holds is unknown (nothing in this world "
                                               "checks it)")
        if not req.execute:
            t0 = time.perf_counter()
            result = withhold_refused(result, policy)
            result = check_plan(result, lambda: world.plan_model(req), world.hazards)
            report.times.extra["check_s"] = time.perf_counter() - t0
        if self.safety.dry_run and request.execute:
            result.note(NoteKind.DRY_RUN, "dry run: executed in the in-process simulator, nothing sent to the bridge")
        return result

    def _approved_plan(self, goal: Goal, on_step: StepCallback, cancel: CancelToken, gate: SafetyGate,
                       report: GoalReport, policy: SkillPolicy, on_plan: PlanCallback) -> PlanResult:
        """approval 'plan': the goal's method plans the whole program without executing, the
        program waits for approval, then it executes as approved; a failed step ends the goal."""
        plan_only = replace(goal, request=goal.request.model_copy(update={"execute": False}))
        planned = self.runners[goal.method].plan(GoalRun(plan_only, lambda event: None, cancel, None, report, policy))
        skills = [st.skill for st in planned.steps]
        if not skills:
            return planned
        on_plan(PlanPreview(tuple(skills), tuple(planned.goal_conditions)))
        gate.approve(skills, "plan")
        for step in planned.steps:
            cancel.check()
            result = gate.execute(step.skill)
            step.executed, step.error = result.success, result.failure
            on_step(StepEvent(step=step, num_corrections=0))
            if not result.success:
                planned.steps = planned.steps[:step.index]
                planned.termination_reason = TerminationReason.CORRECTIONS_EXHAUSTED
                planned.ending = f"step {step.index} failed after approval: {result.failure.message}"
                break
        planned.executing = True
        planned.executed = all(st.executed for st in planned.steps)
        # the goal is judged as the method judges it without approval: its own conditions where
        # it has them (given or interpreted), else the executor's
        lines = planned.goal_conditions
        met = goal.world.goal_directed.holds(lines, gate) if lines else gate.goal_met()
        planned.goal_status = GoalStatus.UNKNOWN if met is None else (GoalStatus.MET if met else GoalStatus.NOT_MET)
        if planned.termination_reason is not TerminationReason.CORRECTIONS_EXHAUSTED:
            ran = f"{len(planned.steps)} approved steps executed"
            planned.termination_reason = TerminationReason.GOAL_REACHED if met else TerminationReason.END_OF_PLAN
            said = {True: f"{ran}; the goal holds", False: f"{ran}, but the goal does not hold after them",
                    None: f"{ran}; whether the goal holds is unknown"}[met]
            planned.ending = f"{said} (planned: {planned.ending.replace('; not executed', '')})"
        elif met:
            planned.termination_reason = TerminationReason.GOAL_REACHED
        return planned


def withhold_refused(result: PlanResult, policy: SkillPolicy) -> PlanResult:
    """A plan-only answer passes the policy's lists as an executed one does: a skill on an action
    or object the policy refuses is never handed back as the plan. The plan ends before it, and
    the goal ends ``no_plan`` naming it (admissibility is the plan check's: ``check_plan``)."""
    for step in result.steps:
        why = policy.list_refusal(step.skill)
        if why:
            result.steps = result.steps[:step.index - 1]
            result.termination_reason = TerminationReason.NO_PLAN
            result.note(NoteKind.WITHHELD, f"step {step.index} {step.skill.script() or step.skill.text!r} is withheld: "
                                           f"{why}; the plan stops before it")
            break
    return result


class ProfileSkills:
    """A profile's skills as the LLM methods read them: its admissibility check; its skills are
    not parsed from free text (the LLM's steps are translated to its skill bank)."""

    def __init__(self, profile: WorldProfile) -> None:
        self.skill_problem = profile.skill_problem

    def parse_text(self, text: str) -> Optional[Skill]:
        return None

    def scene_classes(self, scene_id: str) -> Optional[set[str]]:
        return None
