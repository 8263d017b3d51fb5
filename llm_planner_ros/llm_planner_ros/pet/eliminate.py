"""PET's Eliminate: drop objects whose relevance to the current subtask is below a threshold
(0.4 in the paper) from the admissible skills before translation."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.pet.judges import RelevanceScorer
from llm_planner_ros.translation.translator import SkillIndex


@dataclass(frozen=True)
class Elimination:
    goal: str
    kept: frozenset[str]
    removed: frozenset[str]
    skills_before: int
    skills_after: int

    @property
    def bank_reduction(self) -> float:
        return 1.0 - self.skills_after / self.skills_before if self.skills_before else 0.0

    def recall(self, used: Iterable[str]) -> float:
        """Share of the objects a reference program uses that survive elimination."""
        used = set(used)
        return len(used & self.kept) / len(used) if used else 1.0


class Eliminator:
    """Rooms are kept: a robot navigates through them (an adaptation; PET scores
    receptacles with "Where should you go to?", which this scorer asks of the other places)."""

    KEPT = 16   # eliminations kept, the last used: each holds its own index (MBs of embeddings)

    def __init__(self, scorer: RelevanceScorer, threshold: float = 0.4) -> None:
        self.scorer = scorer
        self.threshold = threshold
        self._cache: OrderedDict[tuple[str, str], tuple[Elimination, Optional[SkillIndex]]] = OrderedDict()

    def apply(self, goal: str, index: SkillIndex, rooms: Iterable[str] = (),
              places: Iterable[str] = (), cancel: Optional[CancelToken] = None) -> tuple[Elimination, SkillIndex]:
        """The index restricted to skills whose objects are all kept for ``goal``; the whole
        index when nothing would be left. A stopped ``cancel`` raises its error while it scores."""
        key = (goal, index.bank.digest)
        if key in self._cache:
            self._cache.move_to_end(key)
            e, sub = self._cache[key]
            return e, sub or index
        rooms, places = set(rooms), set(places)
        objects = sorted(index.bank.objects() - rooms - places)
        scores = self.scorer.scores(goal, objects, sorted(places - rooms), cancel)
        kept = {n for n, s in scores.items() if s >= self.threshold} | rooms
        rows = [i for i, sk in enumerate(index.bank.skills) if all(o in kept for o in sk.objects)]
        useful = any(index.bank.skills[i].objects for i in rows)
        sub = index.subset(np.asarray(rows)) if useful and len(rows) < len(index.bank) else None
        e = Elimination(goal, frozenset(kept), frozenset(index.bank.objects() - kept), len(index.bank),
                        len(rows) if sub is not None else len(index.bank))
        self._cache[key] = (e, sub)
        while len(self._cache) > self.KEPT:
            self._cache.popitem(last=False)
        return e, sub or index
