"""Yes/no judges for PET's questions: an LLM's p(Yes) > p(No) (the paper's rule) or, where the
LLM cannot tell yes from no, the similarity of embeddings.

Measured with the embedded SmolLM2-135M (see the tests): p(yes) stays within 0.17-0.56 whatever
the observations say, so the default judges for the embedded model are embedding-based; the LLM
judges are the paper's method and work with any backend that returns log-probs.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

import numpy as np

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.llm.base import LLMBackend, user_turn, yes_probability
from llm_planner_ros.translation.translator import Embedder


@dataclass(frozen=True)
class Answer:
    done: bool
    probability: float     # p(yes) normalised over yes/no, or the calibrated similarity
    source: str            # "llm" or "embedding"


class SubtaskJudge(Protocol):
    def ask(self, task: str, subtask: str, observations: Sequence[str], subtasks: Sequence[str] = (),
            pointer: int = -1) -> Answer:
        """Did the agent finish ``subtask`` of ``task``, given its last observations? ``subtasks``
        and ``pointer`` say where the question stands in the plan (for judges that publish it)."""
        ...


def completion_question(subtask: str, observations: Sequence[str]) -> str:
    """concat(O^{t-d}, ..., O^{t-1}, "Did you finish the task of s_p?") as a chat turn."""
    context = "\n".join(o.strip() for o in observations if o.strip())
    return f"{context}\nDid you finish the task of {subtask}? Answer yes or no."


class LLMSubtaskJudge:
    """PET's Track: advance when p(Yes) > p(No) (Wu et al. use Macaw-11b)."""

    def __init__(self, llm: LLMBackend) -> None:
        self.llm = llm

    def ask(self, task: str, subtask: str, observations: Sequence[str], subtasks: Sequence[str] = (),
            pointer: int = -1) -> Answer:
        p = yes_probability(self.llm, user_turn(self.llm, completion_question(subtask, observations)))
        return Answer(p > 0.5, p, "llm")


def _calibrated(similarity: float, threshold: float, scale: float = 0.05) -> float:
    return 1.0 / (1.0 + math.exp(-(similarity - threshold) / scale))


_NAVIGATION_CLAUSE = ("i am close to", "i am in the", "i am facing", "i am next to")
_NAVIGATION_SUBTASK = ("walk to", "go to", "run to", "find", "turn to", "look at")


def evidence(subtask: str, observations: Sequence[str]) -> list[str]:
    """The observation clauses that can show ``subtask`` done: where the agent went counts only
    for a navigation subtask (otherwise 'I am close to the microwave' reads like 'open the microwave')."""
    navigation = subtask.strip().lower().startswith(_NAVIGATION_SUBTASK)
    clauses = [c.strip() for o in observations for c in o.split(";") if c.strip()]
    return [c for c in clauses if navigation or not c.lower().startswith(_NAVIGATION_CLAUSE)]


class EmbeddingSubtaskJudge:
    """Done when an observation clause (see :func:`evidence`) is as close to the subtask as
    ``threshold`` (cosine of sentence embeddings); the probability is that margin through a logistic."""

    def __init__(self, embedder: Embedder, threshold: float = 0.65) -> None:
        self.embedder = embedder
        self.threshold = threshold

    def ask(self, task: str, subtask: str, observations: Sequence[str], subtasks: Sequence[str] = (),
            pointer: int = -1) -> Answer:
        texts = evidence(subtask, observations)
        if not texts:
            return Answer(False, 0.0, "embedding")
        m = self.embedder.embed([subtask, *texts])
        best = float(np.max(m[1:] @ m[0]))
        return Answer(best >= self.threshold, _calibrated(best, self.threshold), "embedding")


class RelevanceScorer(Protocol):
    def scores(self, goal: str, objects: Sequence[str], places: Sequence[str],
               cancel: Optional[CancelToken] = None) -> dict[str, float]:
        """Relevance in [0, 1] of each object and place to ``goal`` (a task or subtask); a
        stopped ``cancel`` raises its error."""
        ...


class LLMRelevanceScorer:
    """PET's Eliminate questions, asked per object: "Which objects will be relevant?" and, for
    places, "Where should you go to?"; the score is p(yes)."""

    def __init__(self, llm: LLMBackend) -> None:
        self.llm = llm

    def scores(self, goal: str, objects: Sequence[str], places: Sequence[str],
               cancel: Optional[CancelToken] = None) -> dict[str, float]:
        out = {}
        for name in objects:   # a question per name: ~30 s for a scene on the 135M model
            if cancel is not None:
                cancel.check()
            out[name] = yes_probability(self.llm, user_turn(self.llm, (
                f"Your task is to: {goal}. Which objects will be relevant? Is the {name} relevant? "
                "Answer yes or no.")), cancel)
        for name in places:
            if cancel is not None:
                cancel.check()
            out[name] = yes_probability(self.llm, user_turn(self.llm, (
                f"Your task is to: {goal}. Where should you go to? Should you go to the {name}? "
                "Answer yes or no.")), cancel)
        return out


class EmbeddingRelevanceScorer:
    """Cosine between the goal and each object's or place's name."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def scores(self, goal: str, objects: Sequence[str], places: Sequence[str],
               cancel: Optional[CancelToken] = None) -> dict[str, float]:
        names = list(dict.fromkeys([*objects, *places]))
        if not names:
            return {}
        m = self.embedder.embed([goal, *[n.replace("_", " ") for n in names]])
        return {n: float(s) for n, s in zip(names, m[1:] @ m[0])}
