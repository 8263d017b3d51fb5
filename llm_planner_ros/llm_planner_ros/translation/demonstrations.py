"""Dynamic example selection (Huang et al. 3.4): the demonstration whose task name is nearest
to the query, from the world's human programs, with tasks under test held out."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from llm_planner_ros.translation.translator import Embedder


@dataclass(frozen=True)
class Demonstration:
    task: str
    description: str
    steps: tuple[str, ...]   # natural-language steps
    program_id: str


def demonstrations_from_programs(programs: Iterable[tuple[str, str, tuple[str, ...], str]]) -> list[Demonstration]:
    """One demonstration per task, from (task, description, steps in words, program id): the
    program of median length among that task's programs."""
    by_task: dict[str, list[Demonstration]] = {}
    for p in programs:
        by_task.setdefault(p[0], []).append(Demonstration(*p))
    demos = []
    for _, group in sorted(by_task.items()):
        group = sorted(group, key=lambda d: (len(d.steps), d.program_id))
        demos.append(group[(len(group) - 1) // 2])
    return demos


class DemonstrationBank:
    def __init__(self, demos: Sequence[Demonstration], embedder: Embedder) -> None:
        if not demos:
            raise ValueError("the demonstration bank is empty")
        self.demos = list(demos)
        self.embedder = embedder
        self.matrix = embedder.embed([d.task for d in self.demos])

    def _allowed(self, exclude_tasks: Iterable[str]) -> list[int]:
        excluded = {t.strip().lower() for t in exclude_tasks}
        allowed = [i for i, d in enumerate(self.demos) if d.task.lower() not in excluded]
        if not allowed:
            raise ValueError("every demonstration is excluded")
        return allowed

    def nearest(self, query: str, k: int = 1, exclude_tasks: Iterable[str] = ()) -> list[Demonstration]:
        """The ``k`` demonstrations whose task names are most similar to ``query``."""
        allowed = self._allowed(exclude_tasks)
        sims = self.matrix[allowed] @ self.embedder.embed([query])[0]
        order = np.argsort(-sims, kind="stable")[:k]
        return [self.demos[allowed[i]] for i in order]

    def fixed(self, preferred: Sequence[str], exclude_tasks: Iterable[str] = ()) -> Demonstration:
        """The first of ``preferred`` tasks that is not excluded (the 'w/o dynamic example' ablation)."""
        allowed = {self.demos[i].task.lower(): self.demos[i] for i in self._allowed(exclude_tasks)}
        for name in preferred:
            if name.lower() in allowed:
                return allowed[name.lower()]
        raise ValueError(f"none of the fixed examples {list(preferred)} is available")

    def get(self, task: str) -> Optional[Demonstration]:
        return next((d for d in self.demos if d.task.lower() == task.lower()), None)
