"""What method interpret needs from a world profile: every goal condition its world admits, in
the profile's words, and its example goals said the same way.

A condition is a predicate over object classes whose types its parameters admit ("The milk is
on the dining table." is ``(on milk dining_table)``), and its negation where the profile has
words for it. The acts that bring a fact about (the domain's actions with it among their
effects, in the profile's words: "put the milk on the dining table") are other ways to say it.
"""
from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator

from llm_planner_ros.core.world import WorldState, fill
from llm_planner_ros.interpretation.conditions import Condition
from llm_planner_ros.interpretation.interpreter import GoalDemo
from llm_planner_ros.pddl.semantics import typed_list
from llm_planner_ros.profiles.loader import WorldProfile, class_of


def _sentence(words: str) -> str:
    words = words.strip().rstrip(".")
    return words[:1].upper() + words[1:] + "."


def _made(effect: object, types: dict[str, str], negated: bool = False) -> Iterator[tuple[bool, list[str], dict]]:
    """(negated, atom, the types of its variables) for each atom an effect adds or deletes, also
    under ``forall`` (its variables typed) and ``when`` (whatever the condition)."""
    if not isinstance(effect, list) or not effect:
        return
    head = effect[0]
    if head == "and":
        for part in effect[1:]:
            yield from _made(part, types, negated)
    elif head == "not" and len(effect) == 2:
        yield from _made(effect[1], types, not negated)
    elif head == "forall" and len(effect) == 3 and isinstance(effect[1], list):
        yield from _made(effect[2], {**types, **dict(typed_list(effect[1]))}, negated)
    elif head == "when" and len(effect) == 3:
        yield from _made(effect[2], types, negated)
    elif all(isinstance(x, str) for x in effect):
        yield negated, effect, types


def _acts(profile: WorldProfile, agent_type: str) -> dict[tuple[str, bool], list[tuple[tuple[int, ...], str]]]:
    """(predicate, negated) -> the acts that bring it about: (which of the fact's arguments fill
    the skill's words, in order; the words). The act's words and the fact must name the same
    objects (the agent aside): picking up the cup says that I hold it, not where it was."""
    out: dict[tuple[str, bool], list[tuple[tuple[int, ...], str]]] = {}
    for name, words in profile.spec.actions.items():
        types = dict(profile.domain.actions[name].parameters)
        for negated, atom, _ in _made(profile.domain.actions[name].effect, types):
            slots = atom[1:]
            if set(words.args) == {a for a in slots if types.get(a) != agent_type}:
                out.setdefault((atom[0], negated), []).append((tuple(slots.index(a) for a in words.args),
                                                               words.words))
    return out


def _makers(profile: WorldProfile) -> dict[tuple[str, bool], list[tuple[str, ...]]]:
    """(predicate, negated) -> the types that an action adding (or deleting) it gives each of the
    fact's arguments: ``place_onfloor`` makes ``onfloor`` of any object on a ``floor_n_01``."""
    out: dict[tuple[str, bool], list[tuple[str, ...]]] = {}
    for action in profile.domain.actions.values():
        for negated, atom, types in _made(action.effect, dict(action.parameters)):
            if all(a in types for a in atom[1:]):
                out.setdefault((atom[0], negated), []).append(tuple(types[a] for a in atom[1:]))
    return out


def profile_conditions(profile: WorldProfile, world: WorldState, named: Collection[str] = (),
                       max_conditions: int = 6000) -> list[Condition]:
    """The conditions ``world`` admits under ``profile``: each predicate on each combination of
    distinct object classes whose instances' types its parameters admit, and that some action can
    bring about (a fact no action makes is no goal to plan for; its negation, likewise). With
    ``named`` (instances that keep their own names, e.g. those a task names): instead, those on at
    least one of them, by its own name, the others classes or these (a building's thousands of
    named instances are never all combined)."""
    types: dict[str, set[str]] = {}
    named = frozenset(n for n in named if n in world.objects)
    for name, type_ in world.objects.items():
        types.setdefault(world.classes.get(name, class_of(name)), set()).add(type_)
        if name in named:   # a named instance is a condition's object by its own name too
            types.setdefault(name, set()).add(type_)
    acts = _acts(profile, world.objects.get(profile.spec.agent or "", ""))
    makers = _makers(profile)

    def made(pred: str, negated: bool, combo: tuple[str, ...]) -> bool:
        return any(all(any(profile.domain.is_a(t, want) for t in types[c]) for c, want in zip(combo, wanted))
                   for wanted in makers.get((pred, negated), ()))
    agent_class = profile.class_of(profile.spec.agent or "")
    out: list[Condition] = []
    for pred, params in profile.domain.predicate_types.items():
        words = profile.spec.predicates[pred]
        candidates = [[c for c, ts in sorted(types.items()) if any(profile.domain.is_a(t, p) for t in ts)]
                      for p in params]
        for combo in itertools.product(*candidates):
            if len(set(combo)) != len(combo) or len(out) >= max_conditions or named and not named & set(combo):
                continue
            names = [profile.phrase(c) for c in combo]
            atom = f"({' '.join((pred, *combo))})"
            said = [(negated, literal, template) for negated, literal, template in
                    [(False, atom, words.words), (True, f"(not {atom})", words.negated)]
                    if template and made(pred, negated, combo)]
            if not said:
                continue
            # the same with one object in a word people use for it ("the table" for the dining table)
            variants = [names] + [names[:i] + [word] + names[i + 1:] for i, c in enumerate(combo)
                                  for word in profile.spec.objects.get(c, ()) if c != agent_class]
            for negated, literal, template in said:
                texts = [_sentence(fill(template, v)) for v in variants]
                texts += [_sentence(fill(w, [v[i] for i in slots]))
                          for slots, w in acts.get((pred, negated), ()) for v in variants]
                unique = list(dict.fromkeys(texts))
                out.append(Condition(unique[0], (literal,), aliases=tuple(unique[1:])))
    return out


def profile_goal_demos(profile: WorldProfile, conditions: list[Condition]) -> tuple[GoalDemo, ...]:
    """The profile's examples as interpretation demonstrations: each task and its goal said in
    the profile's words (a literal with no condition of the world is said as the profile says it)."""
    text = {c.literals[0]: c.text for c in conditions if len(c.literals) == 1}
    return tuple(GoalDemo(example.task, tuple(text.get(lit) or _sentence(profile.say(lit)) for lit in example.goal))
                 for example in profile.spec.examples)
