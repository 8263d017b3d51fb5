"""EAI's VirtualHome action-sequencing set (the ``virtualhome-eval`` package): its 342 programs,
each with its task, its human program and the scene graph and goal it starts from."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from llm_planner_ros.profiles.virtualhome import resources


@dataclass(frozen=True)
class EaiTask:
    """One program of EAI's VirtualHome action-sequencing set."""

    identifier: str                  # EAI's id, e.g. "27_2"
    program_id: str                  # the human program's id, e.g. "file27_2"
    task: str                        # e.g. "Turn on light"
    description: str                 # the human annotator's description
    script: tuple[str, ...]          # the human program
    references: tuple[tuple[str, ...], ...]   # every human program of the same task (for LCS)

    @property
    def graph(self) -> dict:
        return resources.scene_graphs(self.program_id)[0]

    @property
    def goal(self) -> dict:
        goal = resources.eai_goal(self.program_id)
        if goal is None:
            raise KeyError(f"EAI has no goal conditions for program {self.program_id}")
        return goal


@cache
def eai_tasks() -> tuple[EaiTask, ...]:
    """The 342 programs of EAI's set, ordered by task then id."""
    ids = json.loads((resources.package_root() / "resources" / "virtualhome" / "id2task.json").read_text())
    programs = resources.human_programs()
    by_id = {p.program_id: p for p in programs}
    refs: dict[str, list[tuple[str, ...]]] = {}
    for p in programs:
        refs.setdefault(p.task, []).append(p.script)
    out = []
    for identifier, task in ids.items():
        p = by_id[f"file{identifier}"]
        out.append(EaiTask(identifier, p.program_id, task, p.description, p.script, tuple(refs[p.task])))
    return tuple(sorted(out, key=lambda t: (t.task, t.identifier)))
