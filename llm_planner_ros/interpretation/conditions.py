"""Goal conditions as sentences: every condition a scene admits, rendered so that free text can be
translated to it by sentence embeddings, as Huang et al. translate free-form steps to skills.

A condition is over object classes (``(on television)``: any television), with the sentence a
person would write for it ("The television is on."). What a scene admits follows the domain's
affordance predicates: a state an object can take, a relation between plausible pairs, an action
goal on an object the action takes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from llm_planner_ros.pddl.goals import MUTEX, GoalSpec, Literal
from llm_planner_ros.pddl.world import WorldState

# (affordance predicate, the two states, sentences); "{o}" is the object's name
# (affordance predicate, the two states, per state: the sentence, then the act that brings it about)
_STATES = (
    ("has_switch", ("on", "off"), (("The {o} is on.", "I turn on the {o}."),
                                   ("The {o} is off.", "I turn off the {o}."))),
    ("can_open", ("open", "closed"), (("The {o} is open.", "I open the {o}."),
                                      ("The {o} is closed.", "I close the {o}."))),
    ("has_plug", ("plugged_in", "plugged_out"), (("The {o} is plugged in.", "I plug in the {o}."),
                                                  ("The {o} is unplugged.", "I unplug the {o}."))),
)
# action goal verb -> (affordance predicates its object needs (any), sentences: the first is shown)
_ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "WATCH": (("lookable",), ("I watch the {o}.", "I am watching the {o}.")),
    "LOOKAT": (("lookable", "readable"), ("I look at the {o}.", "I am looking at the {o}.")),
    "READ": (("readable",), ("I read the {o}.", "I am reading the {o}.")),
    "DRINK": (("drinkable", "recipient"), ("I drink from the {o}.", "I am drinking from the {o}.")),
    "TYPE": (("typeable",), ("I type on the {o}.", "I am typing on the {o}.")),
    "TOUCH": (("grabbable",), ("I touch the {o}.", "I am touching the {o}.")),
    "WASH": (("grabbable", "body_part"), ("I wash the {o}.", "I am washing the {o}.")),
    "RINSE": (("grabbable", "body_part"), ("I rinse the {o}.", "I am rinsing the {o}.")),
    "SCRUB": (("grabbable", "body_part"), ("I scrub the {o}.", "I am scrubbing the {o}.")),
    "WIPE": (("grabbable", "body_part"), ("I wipe the {o}.", "I am wiping the {o}.")),
    "EAT": (("eatable",), ("I eat the {o}.", "I am eating the {o}.")),
    "PUSH": (("movable",), ("I push the {o}.", "I am pushing the {o}.")),
    "POUR": (("pourable",), ("I pour the {o}.", "I am pouring the {o}.")),
}


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


# class names that do not read as English when their underscores become spaces
_PHRASES = {"hands_both": "hands", "coffe_maker": "coffee maker", "food_food": "food", "tooth_paste": "toothpaste",
            "home_office": "living room", "dining_room": "kitchen", "tv": "television"}


def phrase(class_name: str) -> str:
    return _PHRASES.get(class_name, class_name.replace("_", " "))


def render_conditions(world: WorldState, max_pairs: int = 6000) -> list[Condition]:
    """The conditions ``world`` admits, one per class (instances of a class read the same)."""
    by_pred: dict[str, set[str]] = {}
    for atom in world.facts:
        if len(atom) == 2 and atom[1] in world.classes:
            by_pred.setdefault(atom[0], set()).add(world.classes[atom[1]])
    classes = lambda *preds: sorted(set().union(*(by_pred.get(p, set()) for p in preds)))   # noqa: E731
    out: list[Condition] = [Condition("I am sitting.", ("(sitting character)",), aliases=("I sit down.",)),
                            Condition("I am lying down.", ("(lying character)",), aliases=("I lie down.",)),
                            Condition("I am asleep.", ("(lying character)",), ("SLEEP",), ("I go to sleep.",))]
    for pred, states, sentences in _STATES:
        for c in classes(pred):
            out += [Condition(t.format(o=phrase(c)), (f"({s} {c})",), aliases=(act.format(o=phrase(c)),))
                    for s, (t, act) in zip(states, sentences)]
    for c in classes("sittable"):
        out.append(Condition(f"I am sitting on the {phrase(c)}.", ("(sitting character)", f"(ontop character {c})"),
                             aliases=(f"I sit on the {phrase(c)}.",)))
    for c in classes("lieable"):
        out.append(Condition(f"I am lying on the {phrase(c)}.", ("(lying character)", f"(ontop character {c})"),
                             aliases=(f"I lie on the {phrase(c)}.",)))
    for c in classes("grabbable"):
        out.append(Condition(f"I am holding the {phrase(c)}.", (f"(holds_rh character {c})",),
                             aliases=(f"I pick up the {phrase(c)}.",)))
    seen = sorted(set(world.classes.values()) - {"character"})
    rooms = {world.classes[a[1]] for a in world.facts if a[0] == "is_room" and a[1] in world.classes}
    for c in seen:
        if c in rooms:
            out.append(Condition(f"I am in the {phrase(c)}.", (f"(inside character {c})",),
                                 aliases=(f"I go to the {phrase(c)}.",)))
            continue
        out.append(Condition(f"I am facing the {phrase(c)}.", (f"(facing character {c})",),
                             aliases=(f"I turn to the {phrase(c)}.",)))
        out.append(Condition(f"I am next to the {phrase(c)}.", (f"(next_to character {c})",),
                             aliases=(f"I walk to the {phrase(c)}.",)))
    pairs = 0
    for a in classes("grabbable"):
        for b in classes("surfaces"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is on the {phrase(b)}.", (f"(obj_ontop {a} {b})",),
                                     aliases=(f"I put the {phrase(a)} on the {phrase(b)}.",)))
                pairs += 1
        for b in classes("containers", "can_open"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is inside the {phrase(b)}.", (f"(obj_inside {a} {b})",),
                                     aliases=(f"I put the {phrase(a)} in the {phrase(b)}.",)))
                pairs += 1
    for verb, (affordances, templates) in _ACTIONS.items():   # done on that object: (did_watch television)
        for c in classes(*affordances):
            done_said = tuple(t.format(o=phrase(c)) for t in templates)
            out.append(Condition(done_said[0], (f"(did_{verb.lower()} {c})",), aliases=done_said[1:]))
    return out


@dataclass(frozen=True)
class Match:
    sentence: str
    condition: Optional[Condition]
    cosine: float


class ConditionIndex:
    """Embeddings of a scene's conditions, for nearest-condition translation."""

    def __init__(self, conditions: Sequence[Condition], embedder, cache: Optional[dict] = None) -> None:
        """``cache`` (sentence -> vector) is shared between scenes: only new sentences are embedded."""
        self.conditions = list(conditions)
        self.embedder = embedder
        cache = cache if cache is not None else {}
        rows = [(i, t) for i, c in enumerate(self.conditions) for t in c.texts]
        new = list(dict.fromkeys(t for _, t in rows if t not in cache))
        if new:
            cache.update(zip(new, embedder.embed(new)))
        self._row_condition = np.array([i for i, _ in rows], dtype=int)
        self.vectors = np.stack([cache[t] for _, t in rows]) if rows else np.zeros((0, 1))

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

    def nearest(self, text: str, k: int) -> list[tuple[Condition, float]]:
        """The ``k`` conditions nearest to ``text`` (the embedding-only baseline retrieves these)."""
        q = self.embedder.embed([text])[0]
        sims = self.vectors @ q
        best: dict[int, float] = {}
        for row in np.argsort(-sims):
            best.setdefault(int(self._row_condition[row]), float(sims[row]))
            if len(best) == k:
                break
        return [(self.conditions[i], cos) for i, cos in best.items()]


def resolve(matches: Sequence[Match]) -> tuple[list[Condition], list[str]]:
    """The matched conditions with contradictions removed (on/off, open/closed, plugged, sitting/
    lying, either hand): of two that contradict, the better-matched one stays. Returns (kept,
    what was dropped and why)."""
    kept: list[tuple[Condition, float]] = []
    dropped = []
    for m in sorted(matches, key=lambda m: -m.cosine):
        condition = m.condition
        if condition is None:
            continue
        clash = next((c for c, _ in kept if contradicts(c, condition)), None)
        if clash is not None:
            dropped.append(f"{condition.text!r} contradicts {clash.text!r}")
        elif all(c != condition for c, _ in kept):
            kept.append((condition, m.cosine))
    return [c for c, _ in kept], dropped


def contradicts(a: Condition, b: Condition) -> bool:
    """A literal and its negation, or two atoms of a mutually exclusive pair on the same objects."""
    la, lb = [_literal(x) for x in a.literals], [_literal(x) for x in b.literals]
    for x in la:
        for y in lb:
            if x.args != y.args:
                continue
            if x.predicate == y.predicate and x.negated != y.negated:
                return True
            if not x.negated and not y.negated and any({x.predicate, y.predicate} == {p, q} for p, q in MUTEX):
                return True
    return False


def _literal(text: str) -> Literal:
    """A literal as rendered here: ``(p a b)`` or ``(not (p a b))`` (no nesting beyond that)."""
    negated = text.startswith("(not ")
    parts = (text[5:-1] if negated else text).strip().strip("()").split()
    return Literal(parts[0], tuple(parts[1:]), negated)


def spec_of(conditions: Sequence[Condition]) -> GoalSpec:
    """The goal of rendered conditions (their literals are the world's own: nothing to check)."""
    literals = tuple(dict.fromkeys(_literal(lit) for c in conditions for lit in c.literals))
    actions = tuple(dict.fromkeys((a,) for c in conditions for a in c.actions))
    return GoalSpec(literals, actions)
