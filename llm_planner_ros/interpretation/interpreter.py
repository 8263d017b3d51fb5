"""Goal interpretation: the LLM says what "done" means in short sentences, and each sentence is
translated to the nearest condition the scene admits (Huang et al.'s translation, applied to
goals). The demonstrations are other tasks' annotated goals (EAI), rendered the same way; the
query's own task is held out by its label. ``retrieve`` is the baseline without an LLM: the
conditions nearest to the task text itself."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.interpretation.conditions import (
    Condition, ConditionIndex, Match, render_conditions, resolve, spec_of,
)
from llm_planner_ros.llm.base import LLMBackend, SamplingParams
from llm_planner_ros.pddl.goals import GoalSpec, eai_goal_spec
from llm_planner_ros.pddl.world import WorldState, from_virtualhome_graph


@dataclass(frozen=True)
class GoalDemo:
    task: str               # the task label, e.g. "Drink"
    sentences: tuple[str, ...]


@dataclass
class Interpretation:
    sentences: list[str]                       # what the LLM (or the task text) said
    matches: list[Match]
    conditions: list[Condition]                # translated and free of contradictions
    dropped: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)

    @property
    def spec(self) -> GoalSpec:
        return spec_of(self.conditions)

    def lines(self) -> list[str]:
        return self.spec.lines()


def _class_level(literal: str, world: WorldState) -> str:
    parts = literal.strip("()").split()
    return "(" + " ".join([parts[0]] + ["character" if world.objects.get(a) == "character"
                                        else world.classes.get(a, a) for a in parts[1:]]) + ")"


def goal_sentences(goal: dict, graph: dict) -> tuple[str, ...]:
    """An EAI goal as the sentences of :func:`render_conditions` (class level)."""
    world = from_virtualhome_graph(graph)
    spec = eai_goal_spec(goal, graph)
    wanted = {_class_level(str(lit), world) for lit in spec.literals}
    wanted |= {f"({lit.predicate.replace('holds_lh', 'holds_rh')} " + " ".join(
        "character" if world.objects.get(a) == "character" else world.classes.get(a, a) for a in lit.args) + ")"
        for lit in spec.literals if lit.predicate == "holds_lh"}
    objects = [world.classes.get(a) for lit in spec.literals for a in lit.args if world.classes.get(a) != "character"]
    out, covered = [], set()
    for cond in sorted(render_conditions(world), key=lambda c: -len(c.literals)):
        lits = set(cond.literals)
        if cond.literals and lits <= wanted and not lits <= covered:
            out.append(cond.text)
            covered |= lits
    texts = {c.literals: c.text for c in render_conditions(world) if len(c.literals) == 1}
    for group in spec.actions:   # the first alternative done on one of the goal's objects
        said = next((texts[(f"(did_{v.lower()} {o})",)] for v in group for o in objects
                     if (f"(did_{v.lower()} {o})",) in texts), None)
        out.append(said or f"I {group[-1].lower()}.")
    return tuple(out)


@lru_cache(maxsize=1)
def eai_goal_demos() -> tuple[GoalDemo, ...]:
    """One annotated goal per EAI task, as sentences (the first program with a goal)."""
    from llm_planner_ros.evaluation.eai import eai_tasks

    out: dict[str, GoalDemo] = {}
    for t in eai_tasks():
        if t.task in out or not (t.goal.get("goal") or t.goal.get("actions")):
            continue
        sentences = goal_sentences(t.goal, t.graph)
        if sentences:
            out[t.task] = GoalDemo(t.task, sentences)
    return tuple(out.values())


class GoalInterpreter:
    def __init__(self, llm: Optional[LLMBackend], embedder, demos: Sequence[GoalDemo] = (),
                 threshold: float = 0.55, num_examples: int = 3, max_tokens: int = 48) -> None:
        self.llm = llm
        self.embedder = embedder
        self.demos = list(demos) or list(eai_goal_demos())
        self.threshold = threshold
        self.num_examples = num_examples
        self.max_tokens = max_tokens
        self._demo_vectors = embedder.embed([d.task for d in self.demos])
        self._indexes: dict[frozenset, ConditionIndex] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def index(self, world: WorldState) -> ConditionIndex:
        """The conditions of ``world``'s object classes, embedded once per set of classes."""
        key = frozenset(world.classes.values())
        with self._lock:
            if key not in self._indexes:
                self._indexes[key] = ConditionIndex(render_conditions(world), self.embedder, self._vectors)
            return self._indexes[key]

    def examples(self, task: str, hold_out: Sequence[str] = ()) -> list[GoalDemo]:
        """The demonstrations nearest to ``task``, never of a held-out task label."""
        held = {h.strip().lower() for h in hold_out}
        q = self.embedder.embed([task])[0]
        order = np.argsort(-(self._demo_vectors @ q))
        return [self.demos[i] for i in order if self.demos[i].task.lower() not in held][:self.num_examples]

    def prompt(self, task: str, examples: Sequence[GoalDemo]) -> str:
        parts = ["Describe the end state of each household task in short sentences.\n"]
        parts += [f"Task: {d.task}\nEnd state: {' '.join(d.sentences)}\n" for d in reversed(examples)]
        parts.append(f"Task: {task}\nEnd state:")
        return "\n".join(parts)

    def interpret(self, task: str, world: WorldState, hold_out: Sequence[str] = (),
                  cancel: Optional[CancelToken] = None, seed: int = 0) -> Interpretation:
        if self.llm is None:
            return self.retrieve(task, world)
        examples = self.examples(task, hold_out)
        params = SamplingParams(temperature=0.0, max_tokens=self.max_tokens, stop=("\n", "Task:"), seed=seed)
        text = self.llm.complete(self.prompt(task, examples), 1, params, cancel or CancelToken())[0].text
        sentences = [s.strip() + "." for s in re.split(r"[.;]", text) if len(s.strip()) > 2]
        matches = self.index(world).translate(sentences, self.threshold)
        kept, dropped = resolve(matches)
        return Interpretation(sentences, matches, kept, dropped, [d.task for d in examples])

    def retrieve(self, task: str, world: WorldState, k: int = 3) -> Interpretation:
        """The baseline: the ``k`` conditions nearest to the task text, contradictions resolved."""
        near = self.index(world).nearest(task, k)
        matches = [Match(task, c, cos) for c, cos in near if cos >= self.threshold] or \
            [Match(task, near[0][0], near[0][1])] if near else []
        kept, dropped = resolve(matches)
        return Interpretation([task], matches, kept, dropped)
