"""What the methods are built from, each part built on first use and kept: the LLM, the
embedder, the world given in code (and its demonstrations, skill indexes, PET, planners), and
the planners of each profile's world. The composition root (``wiring.compose``) makes one;
the service asks it for the world a goal plans in (:meth:`PlannerParts.world_for`)."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cached_property
from typing import Optional, Union

from llm_planner_ros.core.errors import ExecutorError, InvalidGoal, PlanningError
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import Skill
from llm_planner_ros.interpretation.interpreter import Completion, GoalInterpreter, InstancePrior, NamedInstances
from llm_planner_ros.interpretation.lexicon import wordnet_nouns
from llm_planner_ros.interpretation.literals import LiteralWriter
from llm_planner_ros.interpretation.menu import MenuSettings
from llm_planner_ros.llm.base import LLMBackend
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pet.judges import SubtaskJudge
from llm_planner_ros.pet.session import PetFactory, PetSettings
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner, GoalDirectedSettings
from llm_planner_ros.planning.heuristic import HeuristicPlanner, HeuristicSettings
from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner, InterpretSettings
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
from llm_planner_ros.translation.demonstrations import DemonstrationBank
from llm_planner_ros.translation.onnx_embedder import cache_root
from llm_planner_ros.translation.translator import Embedder, SkillIndex, bank_vectors
from llm_planner_ros.translation.vector_store import SentenceVectors


class PlannerParts:
    """The parts every goal's method is built from; thread-safe, each built once."""

    def __init__(self, llm: LLMBackend, embedder: Embedder, defaults: PlannerSettings,
                 world: Union[WorldPlugin, str] = "", demos: Optional[DemonstrationBank] = None,
                 pet_settings: PetSettings = PetSettings(), judge: Optional[SubtaskJudge] = None,
                 heuristic_settings: HeuristicSettings = HeuristicSettings(),
                 goal_directed: GoalDirectedSettings = GoalDirectedSettings(),
                 interpret: InterpretSettings = InterpretSettings()) -> None:
        """``world``: the world given in code that goals plan over when the executor declares no
        profile, or its name in ``WORLDS`` ("": the default; "none": none, so only an executor's
        profile is planned over); loaded, with what is built from it, when first needed: a robot
        stack never loads it. ``judge`` answers PET's subtask questions (e.g. the tracker node
        over ROS); by default the one ``pet_settings`` names."""
        self.llm, self.embedder, self.defaults = llm, embedder, defaults
        self._world, self._demos, self._judge = world, demos, judge
        self.pet_settings, self.heuristic_settings = pet_settings, heuristic_settings
        self.goal_directed_settings, self.interpret_settings = goal_directed, interpret
        self._indexes: dict[tuple[str, str, tuple[str, ...]], SkillIndex] = {}
        self._index_lock = threading.Lock()
        self._built_lock = threading.RLock()
        self._interpreted_lock = threading.Lock()
        self._interpreted: Optional[InterpretedGoalPlanner] = None
        self._profiles: dict[str, _ProfileParts] = {}   # by the profile's text

    # -- the world a goal plans in ---------------------------------------------------------
    def world_for(self, profile: object, robot: Optional[Executor]) -> WorldMethods:
        """The world of a goal: the profile the executor declares (its planners built once per
        profile and kept), or with none, the world given in code."""
        if profile is None or robot is None:
            return self.builtin
        if not isinstance(profile, WorldProfile):
            raise ExecutorError(f"the executor declares a world the planner cannot read: {type(profile).__name__}")
        with self._built_lock:
            if profile.text not in self._profiles:
                self._profiles[profile.text] = _ProfileParts(self)
            kept = self._profiles[profile.text]
        return ProfileWorld(profile, robot, kept.goal_directed(profile), lambda: kept.heuristic, kept.translated,
                            kept.interpreted, self.defaults.max_skills)

    def status(self) -> dict[str, str]:
        """The LLM, and the world given in code: its name, and whether it is loaded yet."""
        if not self.has_world:
            world = "none (only the executor's profile)"
        else:
            name = self._world if isinstance(self._world, str) else self._world.name
            world = f"{name or DEFAULT_WORLD}{'' if 'world' in self.__dict__ else ' (not loaded yet)'}"
        return {"llm": self.llm.name, "world given in code": world}

    # -- the world given in code and what is built from it ---------------------------------
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

    @cached_property
    def demos(self) -> DemonstrationBank:
        with self._built_lock:
            return self._demos or DemonstrationBank(self.world.demonstrations(), self.embedder)

    @cached_property
    def pet(self) -> PetFactory:
        with self._built_lock:
            return PetFactory(self.llm, self.embedder, self.demos, self.pet_settings, self.world.rooms(),
                              self.world.places(), self._judge)

    @cached_property
    def translated(self) -> TranslatedPlanner:
        with self._built_lock:
            return TranslatedPlanner(self.llm, self.demos, self.index_for, self.world, self.defaults, self.pet)

    @cached_property
    def heuristic(self) -> HeuristicPlanner:
        with self._built_lock:
            return HeuristicPlanner(self.llm, self.demos, self.world, self.heuristic_settings,
                                    seed=self.defaults.seed, embedder=self.embedder)

    @cached_property
    def goal_directed(self) -> GoalDirectedPlanner:
        """Method pddl's planner in the world given in code."""
        return GoalDirectedPlanner(self.world, self.goal_directed_settings)

    @cached_property
    def builtin(self) -> BuiltinWorld:
        with self._built_lock:
            return BuiltinWorld(self.world, self.goal_directed, lambda: self.translated, lambda: self.heuristic,
                                self.interpreted)

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

    def interpreted(self) -> InterpretedGoalPlanner:
        """Method interpret's parts over the world given in code, built on first use (its
        annotated goals are read once)."""
        with self._interpreted_lock:
            if self._interpreted is None:
                world = self.world
                demos, goals = world.annotated_goals()
                vocabulary = world.goal_vocabulary()
                scene = world.scenes[0]
                interpreter = self.interpreter(demos, world.conditions, vocabulary.mutex,
                                               Completion(goals, mutex=vocabulary.mutex, agent=vocabulary.agent_type))
                prior = InstancePrior(goals, vocabulary.location_predicate, vocabulary.agent_type)
                self._interpreted = InterpretedGoalPlanner(interpreter, prior, self.goal_directed, vocabulary,
                                                           reference=lambda: world.executor(scene, ""),
                                                           **self.interpreted_options())
            return self._interpreted

    def interpreted_options(self) -> dict:
        s = self.interpret_settings
        return dict(use_llm=s.interpret_from != "text", relax_plans=s.interpret_relax_plans,
                    added_time_s=s.interpret_added_time_s, calibration_demos=s.interpret_calibration_demos)

    def interpreter(self, demos, conditions, mutex, completion: Optional[Completion] = None,
                    named=None) -> GoalInterpreter:
        """A goal interpreter with the settings of method interpret."""
        s = self.interpret_settings
        menu = MenuSettings(beta=s.interpret_choose_beta, margin=s.interpret_choose_margin,
                            keep=s.interpret_choose_keep, added=s.interpret_choose_added,
                            text_candidates=s.interpret_choose_text, written_bonus=s.interpret_written_bonus)
        writer = LiteralWriter(self.llm, s.interpret_write_literals) if s.interpret_write_literals else None
        return GoalInterpreter(self.llm, self.embedder, demos, conditions, threshold=s.interpret_threshold,
                               num_examples=s.interpret_examples, completion=completion,
                               with_task_text=s.interpret_from == "llm_and_text", text_margin=s.interpret_text_margin,
                               mutex=mutex, orient=s.interpret_orient, store=self.sentence_vectors,
                               scenes=s.interpret_scenes_in_memory, answers=s.interpret_answers_in_memory,
                               menu=menu if s.interpret_choose and s.interpret_from == "llm_and_text" else None,
                               writer=writer, absent_below=s.interpret_absent_below, named=named,
                               lexicon=wordnet_nouns() if s.interpret_absent_kinds else None,
                               related_steps=s.interpret_absent_related_steps)

    @cached_property
    def sentence_vectors(self) -> SentenceVectors:
        """The condition sentences' vectors, one store for every interpreter, on disk in the cache."""
        return SentenceVectors.for_embedder(self.embedder, cache_root(),
                                            self.interpret_settings.interpret_vectors_in_memory)

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


class _ProfileParts:
    """The planners of one profile (by its text), each built on first use and kept: interpret's
    once (its demonstrations and calibration are the profile's, whatever world it is in), Fast
    Downward's per reference world, Algorithm 1's per skill bank."""

    KEPT_WORLDS = 16   # Fast Downward planners kept, the latest reference worlds'

    def __init__(self, parts: PlannerParts) -> None:
        self.parts = parts
        self._lock = threading.Lock()
        self._goal_directed: dict[str, GoalDirectedPlanner] = {}   # by the reference world's text
        self._translated: dict[tuple[str, str], TranslatedPlanner] = {}   # by that and the skill bank's digest
        self._interpreted: Optional[InterpretedGoalPlanner] = None

    def goal_directed(self, profile: WorldProfile) -> GoalDirectedPlanner:
        with self._lock:
            kept = self._goal_directed.pop(profile.world_text, None) or \
                GoalDirectedPlanner(profile, self.parts.goal_directed_settings)
            self._goal_directed[profile.world_text] = kept   # the latest last
            while len(self._goal_directed) > self.KEPT_WORLDS:
                self._goal_directed.pop(next(iter(self._goal_directed)))
            return kept

    @cached_property
    def heuristic(self) -> HeuristicPlanner:
        p = self.parts
        return HeuristicPlanner(p.llm, None, None, p.heuristic_settings, seed=p.defaults.seed, embedder=p.embedder)

    def translated(self, profile: WorldProfile, robot: Executor) -> TranslatedPlanner:
        """Algorithm 1 over the profile's world: its skill bank (the world's classes, the
        profile's words) and its examples as demonstrations; one per set of classes."""
        from llm_planner_ros.profiles.skills import profile_bank, profile_demonstrations

        p, world = self.parts, robot.world_state()
        bank = profile_bank(profile, world)
        key = (profile.world_text, bank.digest)
        with self._lock:
            if key not in self._translated:
                demos = profile_demonstrations(profile, world)
                if not demos:
                    raise InvalidGoal(f"method: the LLM methods show demonstrations, and the {profile.name} profile "
                                      "has none (example goals with a plan in its world)")
                index = SkillIndex(bank, p.embedder)
                self._translated[key] = TranslatedPlanner(
                    p.llm, DemonstrationBank(demos, p.embedder), lambda *_: index, ProfileSkills(profile), p.defaults)
            return self._translated[key]

    def interpreted(self, profile: WorldProfile, robot: Executor) -> InterpretedGoalPlanner:
        """Method interpret over the profile's world: its conditions in its words, its example
        goals as demonstrations (none: zero-shot)."""
        from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
        from llm_planner_ros.pddl.problem import world_problem
        from llm_planner_ros.profiles.conditions import profile_conditions, profile_goal_demos
        from llm_planner_ros.profiles.skills import reference_world

        with self._lock:
            if self._interpreted is None:
                p = self.parts
                world = reference_world(profile) if profile.world_text else robot.world_state()
                vocabulary = profile.goal_vocabulary()
                named = NamedInstances(profile.named_in, lambda w, names: profile_conditions(profile, w, names))
                interpreter = p.interpreter(profile_goal_demos(profile, profile_conditions(profile, world)),
                                            lambda w: profile_conditions(profile, w), vocabulary.mutex, named=named)
                domain = profile.planning_domain().name
                self._interpreted = InterpretedGoalPlanner(
                    interpreter, InstancePrior(()), GoalDirectedPlanner(profile, p.goal_directed_settings), vocabulary,
                    reference=lambda: PddlWorldExecutor(profile, world_problem(world, domain)),
                    **p.interpreted_options())
            return self._interpreted


class ProfileSkills:
    """A profile's skills as the LLM methods read them: its admissibility check; its skills are
    not parsed from free text (the LLM's steps are translated to its skill bank)."""

    def __init__(self, profile: WorldProfile) -> None:
        self.skill_problem = profile.skill_problem

    def parse_text(self, text: str) -> Optional[Skill]:
        return None

    def scene_classes(self, scene_id: str) -> Optional[set[str]]:
        return None
