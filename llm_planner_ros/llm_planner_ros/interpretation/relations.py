"""The relation the task's own words give between two things ("place the modem under the table").

Of the relations that cannot hold together between two things (the world's exclusive groups: in,
on, next to, under), the chosen goal may hold one that the task contradicts: the model chose "the
modem is on top of the table" where the task says "under the table". Each relation's words come
from the world's own sentences for it (what two sentences over the same two things do not share:
"on top of", "under"), and the task's from the words right before the thing's name there,
determiners and counts skipped ("on each table"). Where every mention of the thing in the task
reads as one relation, and another is chosen, the one the task says replaces it.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from llm_planner_ros.interpretation.absent import words_of
from llm_planner_ros.interpretation.conditions import Condition, contradicts, parse_literal
from llm_planner_ros.pddl.goals import Literal
from llm_planner_ros.pddl.invariants import Exclusive

# words between a relation's words and the thing's name
SKIPPED = frozenset("""a an the some any all each every both one two three four five six seven eight nine ten
this that these those its their his her my your our separate another other same""".split())  # noqa: SIM905
# words that say a relation is not to hold
NEGATIONS = frozenset({"not", "no", "never", "nor", "t"})   # "t": "isn't", split at the apostrophe
# one spelling for the prepositions that say the same relation
SAME = {"into": "in", "inside": "in", "within": "in", "onto": "on", "upon": "on", "beside": "next to",
        "underneath": "under", "beneath": "under", "below": "under"}


def _normal(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(" ".join(SAME.get(w, w) for w in words).split())


def _frame(texts: Sequence[str]) -> tuple[tuple[str, ...], list[tuple[str, ...]], tuple[str, ...]]:
    """Sentences that say two things' relations ("The modem is under the table."), split into
    the first thing's name, each sentence's relation words and the second thing's name: the words
    all of them share at the start and at the end, determiners and the verb left out."""
    split = [words_of(t) for t in texts]
    shortest = min(len(w) for w in split)
    head = 0
    while head < shortest and len({w[head] for w in split}) == 1:
        head += 1
    tail = 0
    while tail < shortest - head and len({w[-1 - tail] for w in split}) == 1:
        tail += 1
    first = [w for w in split[0][:head] if w not in SKIPPED and w not in ("is", "are")]
    second = [w for w in split[0][len(split[0]) - tail:] if w not in SKIPPED]
    return tuple(first), [tuple(w[head:len(w) - tail]) for w in split], tuple(second)


def _mentions(task: str, name: tuple[str, ...], after: tuple[str, ...],
              relation_words: set[str]) -> list[tuple[str, ...]]:
    """For each mention of ``name`` in ``task`` (a plural too) that follows a mention of ``after``
    in the same part of a sentence (between commas) with no other relation said between them
    ("the cup on the counter and the apple in the fridge" says nothing of the cup in the fridge),
    the words before it, those of :data:`SKIPPED` left out, the nearest last (at most four)."""
    out = []
    for part in re.split(r"[,.;:!?]", task):
        words = words_of(part)
        for i in range(len(words) - len(name) + 1):
            if not _said(words[i:i + len(name)], name):
                continue
            start = _last_mention(words[:i], after)
            if start is None:
                continue
            j = i
            while j > 0 and words[j - 1] in SKIPPED:
                j -= 1
            if sum(w in relation_words for w in _normal(words[start:j])) > 1:
                continue
            out.append(tuple(words[max(0, j - 4):j]))
    return out


def _last_mention(words: Sequence[str], name: tuple[str, ...]) -> Optional[int]:
    """Where the last mention of ``name`` in ``words`` ends (None: none)."""
    ends = [i + len(name) for i in range(len(words) - len(name) + 1) if _said(words[i:i + len(name)], name)]
    return ends[-1] if ends else None


def _said(words: Sequence[str], name: tuple[str, ...]) -> bool:
    last = words[-1] if words else ""
    return list(words[:-1]) == list(name[:-1]) and last in (name[-1], name[-1] + "s", name[-1] + "es")


def _reads_as(before: tuple[str, ...], phrases: dict[Condition, tuple[str, ...]]) -> set[Condition]:
    """The relations whose words ``before`` ends with; else those whose first word is its last
    ("on the table" for "on top of"); none where a negation comes before them ("make sure the
    umbrella is not inside the cabinet")."""
    if NEGATIONS & set(before):
        return set()
    said = _normal(before)
    exact = {c for c, p in phrases.items() if p and said[-len(p):] == p}
    if exact or not said:
        return exact
    return {c for c, p in phrases.items() if p and p[0] == said[-1]}


def _relation(c: Condition) -> Optional[Literal]:
    """``c``'s literal where it is one relation between two things, not negated (else None)."""
    if len(c.literals) != 1 or c.actions:
        return None
    lit = parse_literal(c.literals[0])
    return lit if not lit.negated and len(lit.args) == 2 else None


def task_relations(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                   mutex: Sequence[Exclusive]) -> tuple[list[Condition], list[str]]:
    """``conditions`` with each relation between two things that the task says otherwise replaced
    by the one it says (of ``admitted``, the world's conditions, those that ``mutex`` makes
    exclusive of it), unless that one contradicts another of ``conditions``; returns
    (conditions, what was turned and why)."""
    pairs: dict[int, tuple[str, ...]] = {}   # position in conditions -> the two things
    for i, c in enumerate(conditions):
        lit = _relation(c)
        if lit is not None:
            pairs[i] = lit.args
    if not pairs:
        return list(conditions), []
    # the world's relations between those pairs: only literals that end with one are parsed
    ends = tuple(f" {a} {b})" for a, b in set(pairs.values()))
    by_args: dict[tuple[str, ...], list[Condition]] = {}
    for c in admitted:
        lit = _relation(c) if c.literals and c.literals[0].endswith(ends) else None
        if lit is not None:
            by_args.setdefault(lit.args, []).append(c)
    out, notes = list(conditions), []
    for i, args in pairs.items():
        c = conditions[i]
        rivals = [s for s in by_args.get(args, ()) if s != c and contradicts(c, s, mutex)]
        if not rivals:
            continue
        first, relations, second = _frame([c.text] + [s.text for s in rivals])
        phrases = {x: _normal(r) for x, r in zip([c] + rivals, relations)}
        if not first or not second or len(set(phrases.values())) < len(phrases):
            continue
        starts = {p[0] for p in phrases.values() if p}
        read = [(before, _reads_as(before, phrases)) for before in _mentions(task, second, first, starts)]
        said = {x for _, r in read for x in r}
        if len(said) != 1 or not all(r for _, r in read) or c in said:
            continue
        (new,) = said
        if new in out or any(contradicts(new, o, mutex) for o in out if o != c):
            continue
        out[i] = new
        before, n = read[0][0], len(phrases[new])
        said_words = before[-n:] if _normal(before)[-n:] == phrases[new] else before[-1:]
        notes.append(f"{c.text!r} turned to {new.text!r} (the task says {' '.join(said_words)!r} "
                     f"before {' '.join(second)!r})")
    return out, notes
