"""Goal conditions as sentences: every condition a world admits (its world renders them), so that
free text can be translated to one by sentence embeddings, as Huang et al. translate free-form
steps to skills. A condition is over object classes (``(on television)``: any television), with
the sentence a person would write for it ("The television is on.")."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from llm_planner_ros.pddl.goals import GoalSpec, Literal
from llm_planner_ros.pddl.invariants import Exclusive, excluded
from llm_planner_ros.translation.vector_store import SentenceVectors


@dataclass(frozen=True)
class Condition:
    text: str
    literals: tuple[str, ...] = ()      # goal literals, e.g. "(on television)"
    actions: tuple[str, ...] = ()       # action goals, e.g. "WATCH"
    aliases: tuple[str, ...] = ()       # other ways to say it ("I am watching the television.")

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text,) + self.aliases

    def spec(self) -> GoalSpec:
        return spec_of([self])

    def renamed(self, rename: Callable[[str], str]) -> Condition:
        """The same condition with each object of its literals renamed (a class to an instance)."""
        lits = [parse_literal(x) for x in self.literals]
        return replace(self, literals=tuple(str(Literal(x.predicate, tuple(map(rename, x.args)), x.negated))
                                            for x in lits))


@dataclass(frozen=True)
class Match:
    sentence: str
    condition: Optional[Condition]
    cosine: float


class ConditionIndex:
    """Embeddings of a scene's conditions, for nearest-condition translation."""

    def __init__(self, conditions: Sequence[Condition], embedder, store: Optional[SentenceVectors] = None) -> None:
        """``store`` is shared between scenes (and, on disk, between processes): only sentences it
        has never seen are embedded."""
        self.conditions = list(conditions)
        self.embedder = embedder
        self.store = store if store is not None else SentenceVectors(embedder)
        rows = [(i, t) for i, c in enumerate(self.conditions) for t in c.texts]
        self._row_condition = np.array([i for i, _ in rows], dtype=int)
        self.vectors = self.store.vectors([t for _, t in rows]) if rows else np.zeros((0, 1))
        self._by_literal = {c.literals[0]: c for c in self.conditions if len(c.literals) == 1 and not c.actions}
        self._by_text = {t: c for c in self.conditions for t in c.texts}
        self._position = {c: i for i, c in enumerate(self.conditions)}

    def translate(self, sentences: Sequence[str], threshold: float) -> list[Match]:
        """Each sentence's nearest condition, or None below ``threshold``."""
        sentences = [s.strip() for s in sentences if s.strip()]
        if not sentences or not self.conditions:
            return [Match(s, None, 0.0) for s in sentences]
        q = self.embedder.embed(sentences)
        sims = q @ self.vectors.T
        out = []
        for i, s in enumerate(sentences):
            j = int(np.argmax(sims[i]))
            cos = float(sims[i, j])
            out.append(Match(s, self.conditions[self._row_condition[j]] if cos >= threshold else None, cos))
        return out

    def by_literal(self, literal: str) -> Optional[Condition]:
        """The condition that is ``literal`` alone, if the scene admits it."""
        return self._by_literal.get(literal)

    def by_text(self, text: str) -> Optional[Condition]:
        """The condition said by ``text`` word for word, if the scene admits it."""
        return self._by_text.get(text)

    def similarity(self, text: str, conditions: Sequence[Condition]) -> list[float]:
        """The cosine of ``text`` to each of ``conditions`` (the best of its sentences)."""
        if not self.conditions:
            return [0.0] * len(conditions)
        best = np.full(len(self.conditions), -1.0)
        np.maximum.at(best, self._row_condition, self.vectors @ self.embedder.embed([text])[0])
        return [float(best[self._position[c]]) if c in self._position else 0.0 for c in conditions]

    def nearest(self, text: str, k: int) -> list[tuple[Condition, float]]:
        """The ``k`` conditions nearest to ``text`` (the embedding-only baseline retrieves these)."""
        if not self.conditions:   # a world that admits no condition
            return []
        q = self.embedder.embed([text])[0]
        sims = self.vectors @ q
        best: dict[int, float] = {}
        for row in np.argsort(-sims):
            best.setdefault(int(self._row_condition[row]), float(sims[row]))
            if len(best) == k:
                break
        return [(self.conditions[i], cos) for i, cos in best.items()]


def resolve(matches: Sequence[Match], mutex: Sequence[Exclusive] = ()) -> tuple[list[Condition], list[str]]:
    """The matched conditions with contradictions removed (a literal and its negation, or a pair
    of ``mutex`` atoms, e.g. on/off): of two that contradict, the better-matched one stays.
    Returns (kept, what was dropped and why)."""
    kept: list[tuple[Condition, float]] = []
    dropped = []
    for m in sorted(matches, key=lambda m: -m.cosine):
        condition = m.condition
        if condition is None:
            continue
        clash = next((c for c, _ in kept if contradicts(c, condition, mutex)), None)
        if clash is not None:
            dropped.append(f"{condition.text!r} contradicts {clash.text!r}")
        elif all(c != condition for c, _ in kept):
            kept.append((condition, m.cosine))
    return [c for c, _ in kept], dropped


def contradicts(a: Condition, b: Condition, mutex: Sequence[Exclusive] = ()) -> bool:
    """A literal and its negation, or two atoms that cannot hold together (``mutex``: on/off on
    the same object, an item on two places)."""
    la, lb = [parse_literal(x) for x in a.literals], [parse_literal(x) for x in b.literals]
    for x in la:
        for y in lb:
            if x.args == y.args and x.predicate == y.predicate and x.negated != y.negated:
                return True
            if not x.negated and not y.negated and excluded((x.predicate, *x.args), (y.predicate, *y.args), mutex):
                return True
    return False


def implied(c: Condition, by: Sequence[Condition], mutex: Sequence[Exclusive]) -> bool:
    """Whether ``c`` says only what ``by`` already says: each of its literals negates an atom that
    one of ``by``'s atoms excludes ("the apple is not in the fridge" beside "the person has the apple")."""
    atoms = [(x.predicate, *x.args) for b in by for x in map(parse_literal, b.literals) if not x.negated]
    lits = [parse_literal(x) for x in c.literals]
    return bool(lits) and not c.actions and all(
        x.negated and any(excluded(a, (x.predicate, *x.args), mutex) for a in atoms) for x in lits)


def parse_literal(text: str) -> Literal:
    """A literal as rendered here: ``(p a b)`` or ``(not (p a b))`` (no nesting beyond that)."""
    negated = text.startswith("(not ")
    parts = (text[5:-1] if negated else text).strip().strip("()").split()
    return Literal(parts[0], tuple(parts[1:]), negated)


def turned_literal(text: str) -> str:
    """``(inside a b)`` -> ``(inside b a)``, negation kept; "" unless over two objects."""
    lit = parse_literal(text)
    if len(lit.args) != 2 or lit.args[0] == lit.args[1]:
        return ""
    atom = f"({lit.predicate} {lit.args[1]} {lit.args[0]})"
    return f"(not {atom})" if lit.negated else atom


def spec_of(conditions: Sequence[Condition]) -> GoalSpec:
    """The goal of rendered conditions (their literals are the world's own: nothing to check)."""
    literals = tuple(dict.fromkeys(parse_literal(lit) for c in conditions for lit in c.literals))
    actions = tuple(dict.fromkeys((a,) for c in conditions for a in c.actions))
    return GoalSpec(literals, actions)
