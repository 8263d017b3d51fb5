"""PET inside a planner run: the subtasks, the tracker and Eliminate for one goal."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.llm.base import LLMBackend
from llm_planner_ros.pet.eliminate import Elimination, Eliminator
from llm_planner_ros.pet.judges import (
    EmbeddingRelevanceScorer,
    EmbeddingSubtaskJudge,
    LLMRelevanceScorer,
    LLMSubtaskJudge,
    SubtaskJudge,
)
from llm_planner_ros.pet.plan import SubtaskPlanner
from llm_planner_ros.pet.track import SubtaskTracker, TrackUpdate
from llm_planner_ros.translation.demonstrations import DemonstrationBank
from llm_planner_ros.translation.translator import Embedder, SkillIndex


class PetSettings(BaseModel):
    """PET's settings (Wu et al.); the flags that switch each part on are per goal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pet_judge: Literal["embedding", "llm"] = Field(
        "embedding", description="who answers 'Did you finish the task of X?': the LLM's p(yes) > p(no) "
                                 "(the paper) or embedding similarity (the embedded 135M LLM cannot tell)")
    pet_completion_threshold: float = Field(0.65, ge=0.0, le=1.0, description="cosine for the embedding judge")
    pet_max_window: int = Field(3, ge=1, le=10, description="d <= this many recent observations (paper: 3)")
    pet_reopen_undone: bool = Field(False, description="move the pointer back when a finished subtask is undone")
    pet_relevance: Literal["embedding", "llm"] = Field("embedding", description="Eliminate's relevance scorer")
    pet_eliminate_threshold: float = Field(0.4, ge=0.0, le=1.0,
                                           description="llm relevance: drop objects with p(yes) below (paper: 0.4)")
    pet_relevance_cosine: float = Field(
        0.15, ge=-1.0, le=1.0, description="embedding relevance: drop objects whose cosine to the goal is below; "
                                           "0.15 keeps 95% of the objects the benchmark's human programs use, "
                                           "removing ~50% of the bank")
    pet_num_examples: int = Field(5, ge=1, le=20, description="question/answer examples for Plan (paper: 5)")


@dataclass
class PetSession:
    task: str
    subtasks: list[str]
    tracker: Optional[SubtaskTracker]
    eliminator: Optional[Eliminator]
    rooms: frozenset[str]
    places: frozenset[str]
    eliminations: list[Elimination] = field(default_factory=list)
    cancel: Optional[CancelToken] = None   # the goal's: Eliminate's LLM questions stop with it

    @property
    def pointer(self) -> int:
        return self.tracker.pointer if self.tracker else -1

    def active(self) -> str:
        return self.tracker.active() if self.tracker else self.task

    def description(self, base: str) -> str:
        """The query's description line, conditioned on the active subtask (or listing the plan)."""
        if self.tracker and self.subtasks:
            extra = (f"Now: {self.tracker.active()}." if not self.tracker.exhausted
                     else f"Subtasks done: {', '.join(self.subtasks)}.")
        elif self.subtasks:
            extra = f"Subtasks: {', '.join(self.subtasks)}."
        else:
            return base
        return f"{base} {extra}".strip()

    def index(self, index: Optional[SkillIndex]) -> Optional[SkillIndex]:
        if self.eliminator is None or index is None:
            return index
        elimination, sub = self.eliminator.apply(self.active(), index, self.rooms, self.places, self.cancel)
        if not self.eliminations or self.eliminations[-1].goal != elimination.goal:
            self.eliminations.append(elimination)
        return sub

    def observe(self, observation: str) -> Optional[TrackUpdate]:
        return self.tracker.observe(observation) if self.tracker else None


class PetFactory:
    """Builds a :class:`PetSession` for each goal that asks for Plan, Track or Eliminate."""

    def __init__(self, llm: LLMBackend, embedder: Embedder, demos: DemonstrationBank, settings: PetSettings,
                 rooms: frozenset[str], places: frozenset[str], judge: Optional[SubtaskJudge] = None) -> None:
        """``rooms`` and ``places`` (classes things are put on or in): what Eliminate keeps."""
        self.settings = settings
        self.planner = SubtaskPlanner(llm, demos, settings.pet_num_examples)
        self.judge = judge or (LLMSubtaskJudge(llm) if settings.pet_judge == "llm"
                               else EmbeddingSubtaskJudge(embedder, settings.pet_completion_threshold))
        scorer = LLMRelevanceScorer(llm) if settings.pet_relevance == "llm" else EmbeddingRelevanceScorer(embedder)
        self.eliminator = Eliminator(scorer, settings.pet_eliminate_threshold if settings.pet_relevance == "llm"
                                     else settings.pet_relevance_cosine)
        self.rooms, self.places = rooms, places   # kept whole by Eliminate

    def wanted(self, request: PlanRequest) -> bool:
        o = request.options
        return o.plan_subtasks or o.track_subtasks or o.eliminate_objects

    def session(self, request: PlanRequest, hold_out: bool, seed: int, cancel: CancelToken) -> PetSession:
        o = request.options
        held = ([request.task] if hold_out else []) + list(o.hold_out_tasks)
        subtasks = (self.planner.plan(request.task, held, seed, cancel)
                    if o.plan_subtasks or o.track_subtasks else [])
        tracker = (SubtaskTracker(self.judge, request.task, subtasks, self.settings.pet_max_window,
                                  self.settings.pet_reopen_undone, cancel=cancel) if o.track_subtasks else None)
        return PetSession(request.task, subtasks, tracker, self.eliminator if o.eliminate_objects else None,
                          self.rooms, self.places, cancel=cancel)
