"""Goal conditions as sentences: every condition a scene admits, rendered so that free text can be
translated to it by sentence embeddings, as Huang et al. translate free-form steps to skills.

A condition is over object classes (``(on television)``: any television), with the sentence a
person would write for it ("The television is on."). What a scene admits follows the domain's
affordance predicates: a state an object can take, a relation between plausible pairs, an action
goal on an object the action takes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from llm_planner_ros.pddl.goals import MUTEX, GoalSpec, Literal, parse_goal
from llm_planner_ros.pddl.world import WorldState

# (affordance predicate, the two states, sentences); "{o}" is the object's name
_STATES = (
    ("has_switch", ("on", "off"), ("The {o} is on.", "The {o} is off.")),
    ("can_open", ("open", "closed"), ("The {o} is open.", "The {o} is closed.")),
    ("has_plug", ("plugged_in", "plugged_out"), ("The {o} is plugged in.", "The {o} is unplugged.")),
)
# action goal verb -> (affordance predicates its object needs (any), sentence)
_ACTIONS = {
    "WATCH": (("lookable",), "I watch the {o}."), "LOOKAT": (("lookable", "readable"), "I look at the {o}."),
    "READ": (("readable",), "I read the {o}."), "DRINK": (("drinkable", "recipient"), "I drink from the {o}."),
    "TYPE": (("typeable",), "I type on the {o}."), "TOUCH": (("grabbable",), "I touch the {o}."),
    "WASH": (("grabbable", "body_part"), "I wash the {o}."), "RINSE": (("grabbable", "body_part"), "I rinse the {o}."),
    "SCRUB": (("grabbable", "body_part"), "I scrub the {o}."), "EAT": (("eatable",), "I eat the {o}."),
    "PUSH": (("movable",), "I push the {o}."), "POUR": (("pourable",), "I pour the {o}."),
}


@dataclass(frozen=True)
class Condition:
    text: str
    literals: tuple[str, ...] = ()      # goal literals, e.g. "(on television)"
    actions: tuple[str, ...] = ()       # action goals, e.g. "WATCH"

    def spec(self) -> GoalSpec:
        return parse_goal(self.literals, self.actions)


def phrase(class_name: str) -> str:
    return class_name.replace("_", " ")


def render_conditions(world: WorldState, max_pairs: int = 6000) -> list[Condition]:
    """The conditions ``world`` admits, one per class (instances of a class read the same)."""
    by_pred: dict[str, set[str]] = {}
    for atom in world.facts:
        if len(atom) == 2 and atom[1] in world.classes:
            by_pred.setdefault(atom[0], set()).add(world.classes[atom[1]])
    classes = lambda *preds: sorted(set().union(*(by_pred.get(p, set()) for p in preds)))   # noqa: E731
    out: list[Condition] = [Condition("I am sitting.", ("(sitting character)",)),
                            Condition("I am lying down.", ("(lying character)",)),
                            Condition("I am asleep.", ("(lying character)",), ("SLEEP",))]
    for pred, states, sentences in _STATES:
        for c in classes(pred):
            out += [Condition(t.format(o=phrase(c)), (f"({s} {c})",)) for s, t in zip(states, sentences)]
    for c in classes("sittable"):
        out.append(Condition(f"I am sitting on the {phrase(c)}.", ("(sitting character)", f"(ontop character {c})")))
    for c in classes("lieable"):
        out.append(Condition(f"I am lying on the {phrase(c)}.", ("(lying character)", f"(ontop character {c})")))
    for c in classes("grabbable"):
        out.append(Condition(f"I am holding the {phrase(c)}.", (f"(holds_rh character {c})",)))
    seen = sorted(set(world.classes.values()) - {"character"})
    rooms = {world.classes[a[1]] for a in world.facts if a[0] == "is_room" and a[1] in world.classes}
    for c in seen:
        if c in rooms:
            out.append(Condition(f"I am in the {phrase(c)}.", (f"(inside character {c})",)))
            continue
        out.append(Condition(f"I am facing the {phrase(c)}.", (f"(facing character {c})",)))
        out.append(Condition(f"I am next to the {phrase(c)}.", (f"(next_to character {c})",)))
    pairs = 0
    for a in classes("grabbable"):
        for b in classes("surfaces"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is on the {phrase(b)}.", (f"(obj_ontop {a} {b})",)))
                pairs += 1
        for b in classes("containers", "can_open"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is inside the {phrase(b)}.", (f"(obj_inside {a} {b})",)))
                pairs += 1
    for verb, (preds, sentence) in _ACTIONS.items():   # done on that object: (did_watch television)
        for c in classes(*preds):
            out.append(Condition(sentence.format(o=phrase(c)), (f"(did_{verb.lower()} {c})",)))
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
        new = list(dict.fromkeys(c.text for c in self.conditions if c.text not in cache))
        if new:
            cache.update(zip(new, embedder.embed(new)))
        self.vectors = np.stack([cache[c.text] for c in self.conditions]) if self.conditions else np.zeros((0, 1))

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
            out.append(Match(s, self.conditions[j] if cos >= threshold else None, cos))
        return out

    def nearest(self, text: str, k: int) -> list[tuple[Condition, float]]:
        """The ``k`` conditions nearest to ``text`` (the embedding-only baseline retrieves these)."""
        q = self.embedder.embed([text])[0]
        sims = self.vectors @ q
        order = np.argsort(-sims)[:k]
        return [(self.conditions[i], float(sims[i])) for i in order]


def resolve(matches: Sequence[Match]) -> tuple[list[Condition], list[str]]:
    """The matched conditions with contradictions removed (on/off, open/closed, plugged, sitting/
    lying, either hand): of two that contradict, the better-matched one stays. Returns (kept,
    what was dropped and why)."""
    kept: list[tuple[Condition, float]] = []
    dropped = []
    for m in sorted((m for m in matches if m.condition is not None), key=lambda m: -m.cosine):
        clash = next((c for c, _ in kept if _contradicts(c, m.condition)), None)
        if clash is not None:
            dropped.append(f"{m.condition.text!r} contradicts {clash.text!r}")
        elif all(c != m.condition for c, _ in kept):
            kept.append((m.condition, m.cosine))
    return [c for c, _ in kept], dropped


def _contradicts(a: Condition, b: Condition) -> bool:
    la, lb = [_literal(x) for x in a.literals], [_literal(x) for x in b.literals]
    for p, q in MUTEX:
        for x in la:
            for y in lb:
                if x.args == y.args and {x.predicate, y.predicate} == {p, q}:
                    return True
    return False


def _literal(text: str) -> Literal:
    """One of the literals rendered above (no negation, no nesting)."""
    parts = text.strip("()").split()
    return Literal(parts[0], tuple(parts[1:]))


def spec_of(conditions: Sequence[Condition]) -> GoalSpec:
    literals = tuple(dict.fromkeys(lit for c in conditions for lit in c.literals))
    actions = tuple(dict.fromkeys(a for c in conditions for a in c.actions))
    return parse_goal(literals, actions)
