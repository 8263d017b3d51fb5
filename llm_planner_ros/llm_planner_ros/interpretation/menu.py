"""The model chooses the goal from a menu of the world's own conditions (SayCan- and Huang-style):
the embeddings shortlist candidates, the model scores each one as the end state of the task (its
mean token log-probability after the same prompt, all candidates from one evaluated prompt
state), and by ``cos(task, candidate) + beta * logprob`` the best join what the free-text route said, and
what it said that scores far below the best is left out. A better model scores better (on the benchmark's
26 tasks the mean log-prob alone ranks the annotated conditions above the rest with AUC 0.751,
0.770 and 0.840 for the 135M, 0.5B and 1.5B models; the score at beta 0.1, 0.836, 0.836 and
0.872; the cosine alone 0.72-0.74), so the goal gets better with the model; with ``beta`` 0 the
embeddings alone choose.

The candidates: the conditions the free-text route kept, those nearest the task text, those of
the nearest demonstrations' goals that the scene has, and literals the model wrote under the
world's grammar (:mod:`llm_planner_ros.interpretation.literals`)."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from llm_planner_ros.core.errors import LLMError
from llm_planner_ros.interpretation.conditions import Condition, ConditionIndex, contradicts, implied
from llm_planner_ros.pddl.invariants import Exclusive

_ATOM = re.compile(r"\(([^()]*)\)")   # the innermost parentheses of a literal: predicate and objects


@dataclass(frozen=True)
class Scored:
    condition: Condition
    cosine: float          # to the task text (plus the bonus of a written candidate)
    logprob: float         # the model's mean token log-prob of the condition's sentence as the end state
    score: float           # cosine + beta * logprob
    sources: tuple[str, ...]   # why it is a candidate: said, text, example, written

    def why(self) -> str:
        return (f"{self.condition.text!r} {self.score:.2f} (cos {self.cosine:.2f}, logprob {self.logprob:.2f}; "
                f"{'+'.join(self.sources)})")


@dataclass(frozen=True)
class MenuSettings:
    beta: float = 0.1            # weight of the model's log-prob against the cosine
    margin: float = 0.1          # added: within this score of the best candidate
    keep: float = 0.3            # what was said is kept within this score of the best candidate
    added: int = 2               # candidates added at most
    text_candidates: int = 12    # candidates nearest the task text
    first: int = 6               # the nearest candidates scored first (the rest only where within reach)
    written_bonus: float = 0.0   # added to a candidate the model also wrote as a literal (agreement)


def candidates(said: Sequence[Condition], index: ConditionIndex, task: str, k_text: int,
               examples: Sequence[Sequence[str]], written: Sequence[Condition]) -> dict[Condition, list[str]]:
    """Each candidate with where it came from, in a fixed order (said, text, example, written)."""
    out: dict[Condition, list[str]] = {}

    def add(c: Optional[Condition], source: str) -> None:
        if c is not None and source not in out.setdefault(c, []):
            out[c].append(source)
    for c in said:
        add(c, "said")
    for c, _ in index.nearest(task, k_text):
        add(c, "text")
    for sentences in examples:
        for s in sentences:
            add(index.by_text(s), "example")
    for c in written:
        add(c, "written")
    return out


def score(menu: dict[Condition, list[str]], index: ConditionIndex, task: str,
          logprobs_of: Callable[[list[str]], list[tuple[float, ...]]], settings: MenuSettings
          ) -> tuple[list[Scored], str]:
    """Every candidate scored, best first, and "" or why the model could not score them;
    ``logprobs_of``: the model's token log-probs of each sentence as the end state. A backend
    without them scores by the cosine alone. A score is at most the cosine (plus the bonus), so
    the model scores the ``first`` nearest candidates, then only those that could still come within
    reach of the best; the rest stay unscored (-inf: neither kept nor added)."""
    conditions = list(menu)
    bound = {c: cos + settings.written_bonus * ("written" in menu[c])
             for c, cos in zip(conditions, index.similarity(task, conditions))}
    order = sorted(conditions, key=lambda c: -bound[c])
    reach = max(settings.keep, settings.margin)
    scores: dict[Condition, tuple[float, float]] = {}   # condition -> (logprob, score)
    why_not = ""

    def rate(batch: list[Condition]) -> None:
        nonlocal why_not
        try:
            said = [float(np.mean(lp)) if lp else 0.0 for lp in logprobs_of([" " + c.text for c in batch])]
        except LLMError as exc:
            said = [0.0] * len(batch)
            why_not = f"candidates scored by the cosine alone: {exc}"
        scores.update((c, (lp, bound[c] + settings.beta * lp)) for c, lp in zip(batch, said))
    rate(order[:settings.first])
    top = max((sc for _, sc in scores.values()), default=0.0)
    rate([c for c in order[settings.first:] if bound[c] >= top - reach])
    out = [Scored(c, bound[c], *scores.get(c, (math.nan, -math.inf)), tuple(menu[c])) for c in conditions]
    return sorted(out, key=lambda s: -s.score), why_not


def consistent(conditions: Sequence[Condition], score: Callable[[Condition], float],
               clash: Callable[[Condition, Condition], bool]) -> tuple[list[Condition], list[str]]:
    """``conditions`` less the lower scored of each two that clash (the earlier of two scored the
    same), in their order; and what went and why."""
    kept: list[Condition] = []
    dropped: list[str] = []
    for c in sorted(conditions, key=lambda c: -score(c)):
        other = next((k for k in kept if clash(c, k)), None)
        if other is None:
            kept.append(c)
        else:
            dropped.append(f"{c.text!r} contradicts {other.text!r}")
    return [c for c in conditions if c in kept], dropped


def objects_of(condition: Condition) -> frozenset[str]:
    """The objects a condition's literals are about (``(not (in mug cupboard))``: mug, cupboard)."""
    return frozenset(w for lit in condition.literals for atom in _ATOM.findall(lit) for w in atom.split()[1:])


def choose(said: Sequence[Condition], ranked: Sequence[Scored], settings: MenuSettings,
           mutex: Sequence[Exclusive] = (), scope: Optional[frozenset[str]] = None,
           from_text: frozenset[Condition] = frozenset()) -> list[Condition]:
    """What the free-text route said, less what scores more than ``keep`` below the best
    candidate and the worse of two that contradict, and up to ``added`` other candidates within
    ``margin`` of the best, each replacing what it contradicts where that scores lower (else left
    out); none that the others imply (a negation that ``mutex``
    makes true).

    Given a ``scope`` (the instances the task names), neither an added candidate nor one of
    ``said`` that only the task text's nearest conditions gave (``from_text``, not the model's
    sentences) is kept when it is about an object outside the scope and what the model's kept
    conditions are about: in a building the conditions near a task grow with the world ("Put
    Bianca's mug on Mallory's desk" drew the mug on kitchen_counter_3 too; "Turn on Dmitri's lamp"
    the robot at the lamp), and a condition on an object the task never names is one of those."""
    if not ranked:
        return list(said)
    top = ranked[0].score
    scores = {s.condition: s.score for s in ranked}
    kept = [c for c in said if scores.get(c, top) >= top - settings.keep]
    kept, _ = consistent(kept, lambda c: scores.get(c, top), lambda a, b: contradicts(a, b, mutex))
    if scope is not None:
        scope = scope.union(*(objects_of(c) for c in kept if c not in from_text))
        kept = [c for c in kept if c not in from_text or objects_of(c) <= scope]
    kept = [c for c in kept if not implied(c, kept, mutex)]
    added = 0
    for s in ranked:
        if added >= settings.added or s.score < top - settings.margin:
            break
        if s.condition in kept or implied(s.condition, kept, mutex) or \
                (scope is not None and not objects_of(s.condition) <= scope):
            continue
        clashes = [k for k in kept if contradicts(s.condition, k, mutex)]
        if all(scores.get(k, top) < s.score for k in clashes):   # it replaces what it contradicts, scored lower
            kept = [k for k in kept if k not in clashes] + [s.condition]
            added += 1
    return kept
