"""The states the task's own words give a thing ("clean the dusty windows": the windows are clean
of dust; "soak the rags": the rags are soaked).

A thing's states are the world's sentences of one thing ("The window is dusty.", "The window is
clean of dust."); each state's words are what those sentences do not share, function words left
out. A part of a sentence (between commas, with the list of things that follows it: "clean stains
off the toilet, the sink, and the floor") gives each thing it names the states with the most of
those words ("clean", "stains"), their forms alike ("dust" for "dusty", "soak" for "soaked"), of
those that would change the thing as it is now: a window that is dusty now is to be clean of
dust, a rag that is dry to be soaked. "Them" names what it stands for, as relations read it
("check every sweater, make sure none of them are dusty"). A part with a negation gives none.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.absent import STOP, words_of
from llm_planner_ros.interpretation.conditions import Condition, contradicts, parse_literal
from llm_planner_ros.interpretation.relations import JOINS, NEGATIONS, SAME, SKIPPED, _antecedent, _frame, _said
from llm_planner_ros.pddl.goals import Literal

# endings of a word's forms ("dusty", "stained", "soaking"); a stem keeps at least four letters
ENDINGS = ("ing", "ed", "es", "s", "y", "d", "e")


def _stems(word: str) -> set[str]:
    return {word} | {word[:-len(e)] for e in ENDINGS if word.endswith(e) and len(word) - len(e) >= 4}


def _alike(a: str, b: str) -> bool:
    """Two forms of one word ("dust" and "dusty", "slice" and "sliced")."""
    return bool(_stems(a) & _stems(b))


def _state(c: Condition) -> Literal | None:
    """``c``'s literal where it is one state of one thing (else None)."""
    if len(c.literals) != 1 or c.actions:
        return None
    lit = parse_literal(c.literals[0])
    return lit if len(lit.args) == 1 else None


def _changes(lit: Literal, world: WorldState) -> bool:
    """Whether ``lit`` would change its thing (a class: one of its instances) as it is now."""
    things = world.instances_of(lit.args[0]) or [lit.args[0]]
    have = [(lit.predicate, n) in world.facts for n in things]
    return any(have) if lit.negated else not all(have)


State = tuple[Condition, Literal, list[str]]   # a state, its literal and its words


def _states(admitted: Sequence[Condition]) -> dict[str, tuple[tuple[str, ...], list[State]]]:
    """Each thing's name and states, with each state's words, from the sentences of ``admitted``
    that say one thing's state the same way ("The window is ..."; not "I am holding the window")."""
    by_thing: dict[str, list[tuple[Condition, Literal]]] = {}
    for c in admitted:
        lit = _state(c)
        if lit is not None:
            by_thing.setdefault(lit.args[0], []).append((c, lit))
    out = {}
    for thing, group in by_thing.items():
        heads: dict[str, list[tuple[Condition, Literal]]] = {}
        for c, lit in group:
            heads.setdefault(words_of(c.text)[0], []).append((c, lit))
        same = max(heads.values(), key=len)
        if len(same) < 2:
            continue
        name, words, _ = _frame([c.text for c, _ in same])
        if name:
            out[thing] = (name, [(c, lit, [w for w in ws if w not in STOP and w not in NEGATIONS])
                                 for (c, lit), ws in zip(same, words)])
    return out


def stated_states(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                  world: WorldState) -> tuple[list[Condition], list[str], list[Condition]]:
    """``conditions`` with the states that the task's words give the things it names (of
    ``admitted``, the world's conditions; those that would change ``world``), unless one
    contradicts the goal; returns (conditions, what was added and why, the stated ones, chosen or
    not). The stated come first."""
    things = _states(admitted)
    by_name = {name: thing for thing, (name, _) in things.items()}
    names = list(by_name)
    starts = set(SAME) | {w.split()[0] for w in SAME.values()}   # words that begin a relation: a list ends there
    added: list[Condition] = []
    notes = []
    before: list[str] = []   # the task's words before the part, for what "them" stands for
    for sentence in re.split(r"[.;:!?]", task.lower()):
        parts = [re.findall(r"[a-z]+", p) for p in sentence.split(",")]
        for k, part in enumerate(parts):
            them = set(_antecedent(before + part[:part.index("them")], by_name, starts)) if "them" in part else set()
            before += part + [","]
            if NEGATIONS & set(part):
                continue
            span = list(part)
            for later in parts[k + 1:]:   # the list that follows: "..., the sink, and the floor"
                words = [w for w in later if w not in JOINS and w not in SKIPPED]
                if not any(len(words) == len(n) and _said(words, n) for n in names):
                    break
                span += later
            for thing, (name, states) in things.items():
                if thing not in them and not any(_said(span[i:i + len(name)], name)
                                                 for i in range(len(span) - len(name) + 1)):
                    continue
                scored = [(sum(any(_alike(w, t) for t in part) for w in ws), c, ws)
                          for c, lit, ws in states if ws and _changes(lit, world)]
                best = max((n for n, _, _ in scored), default=0)
                for n, c, ws in scored:
                    if not n or n != best or c in added:
                        continue
                    if c not in conditions:   # chosen already: only moved first
                        if any(contradicts(c, o) for o in [*added, *conditions]):
                            continue
                        said = [w for w in part if any(_alike(w, x) for x in ws)]
                        notes.append(f"{c.text!r} added (the task says {' '.join(said)!r} of {' '.join(name)!r})")
                    added.append(c)
    return added + [c for c in conditions if c not in added], notes, added
