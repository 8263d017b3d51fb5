"""The relation the task's own words give between two things ("place the modem under the table"),
and the things it gives it to ("put the candle, the cheese and the bow into the basket").

Of the relations that cannot hold together between two things (the world's exclusive groups: in,
on, next to, under), the chosen goal may hold one that the task contradicts: the model chose "the
modem is on top of the table" where the task says "under the table". Each relation's words come
from the world's own sentences for it (what two sentences over the same two things do not share:
"on top of", "under"), and the task's from the words right before the thing's name there,
determiners and counts skipped ("on each table"). Where every mention of the thing in the task
reads as one relation, and another is chosen, the one the task says replaces it. Where the task
says a chosen relation of a list of things, each listed thing that the world has gets it too.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple, Optional

from llm_planner_ros.interpretation.absent import words_of
from llm_planner_ros.interpretation.conditions import Condition, contradicts, parse_literal
from llm_planner_ros.pddl.goals import Literal
from llm_planner_ros.pddl.invariants import Exclusive

# words between a relation's words and the thing's name
SKIPPED = frozenset("""a an the some any all each every both one two three four five six seven eight nine ten
this that these those its their his her my your our separate another other same""".split())  # noqa: SIM905
# words around a thing's name in the world's sentences that are not the name ("the cup is ...")
NOT_NAME = SKIPPED | {"is", "are"}
# words that say a relation is not to hold
NEGATIONS = frozenset({"not", "no", "never", "nor", "t"})   # "t": "isn't", split at the apostrophe
# words that join the things of a list ("the cup, the plate and the bowl"), a comma among them
JOINS = frozenset({",", "and", "or", "plus"})
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
    first = [w for w in split[0][:head] if w not in NOT_NAME]
    second = [w for w in split[0][len(split[0]) - tail:] if w not in SKIPPED]
    return tuple(first), [tuple(w[head:len(w) - tail]) for w in split], tuple(second)


class Mention(NamedTuple):
    """A mention of a relation's second thing in the task."""
    before: tuple[str, ...]     # the words before it, determiners and counts left out (at most 4)
    read: set[Condition]        # the relations they read as
    said_by: int                # how many of those words say them
    listed: list[str]           # the things of the list before those words (see _listed)


class Said(NamedTuple):
    """What the task says of a relation between two things."""
    first: tuple[str, ...]      # the first thing's name
    second: tuple[str, ...]     # the second thing's name
    mentions: list[Mention]


def _mentions(task: str, second: tuple[str, ...], first: tuple[str, ...], thing: str,
              phrases: dict[Condition, tuple[str, ...]], names: dict[tuple[str, ...], str],
              starts: set[str]) -> list[Mention]:
    """Each mention of ``second`` in ``task`` (a plural too) that says a relation of the first thing
    (``thing``, named ``first``), read by ``phrases`` (each relation's words), ``names`` (the things'
    names) and ``starts`` (words that begin a relation). The first thing is either named earlier in
    the same part of a sentence (between commas) with no other relation said between them ("the
    cup on the counter and the apple in the fridge" says nothing of the cup in the fridge) or one
    of the list before the relation's words."""
    out = []
    sentences = [re.findall(r"[a-z]+|,", s) for s in re.split(r"[.;:!?]", task.lower())]
    for at, tokens in enumerate(sentences):
        for k in range(len(tokens) - len(second) + 1):
            if not _said(tokens[k:k + len(second)], second):
                continue
            j = k
            while j > 0 and tokens[j - 1] in SKIPPED:
                j -= 1
            before = tuple(tokens[max(0, j - 4):j])
            before = before[max((x + 1 for x, w in enumerate(before) if w == ","), default=0):]
            read, n = _reads_as(before, phrases)
            head = tokens[:j - n]
            if head and head[-1] == "them" and not JOINS & set(head) and at > 0:
                head = sentences[at - 1] + [","] + head   # "... and the socks. Then place them on the table"
            listed = _antecedent(head[:-1], names, starts) if head[-1:] == ["them"] else _listed(head, names, starts)
            part = tokens[max((x + 1 for x in range(j) if tokens[x] == ","), default=0):j]
            start = _last_mention(part, first)
            near = (start is not None and sum(w in starts for w in _normal(part[start:])) <= 1
                    and not (_is_second(part[:start - len(first)], starts)
                             and JOINS.issuperset(part[start:len(part) - n])))
            if near or thing in listed:
                out.append(Mention(before, read, n, listed))
    return out


def _is_second(before: Sequence[str], starts: set[str]) -> bool:
    """Whether the thing said after ``before`` is the second thing of a relation: relation words
    come right before it. Where only a join follows it ("the carton on the floor or on the
    counter"), the next relation's words are said of another thing."""
    words = [w for w in before if w not in SKIPPED]
    return bool(words) and _normal(words[-1:])[0] in starts


def _reads_as(before: tuple[str, ...], phrases: dict[Condition, tuple[str, ...]]) -> tuple[set[Condition], int]:
    """The relations whose words ``before`` ends with, and how many of its words say them; else
    those whose first word is its last ("on the table" for "on top of"), said by one word; none
    where a negation comes before them ("make sure the umbrella is not inside the cabinet")."""
    if NEGATIONS & set(before) or not before:
        return set(), 0
    exact: set[Condition] = set()
    n = 0
    for m in range(1, len(before) + 1):
        hits = {c for c, p in phrases.items() if p and _normal(before[-m:]) == p}
        if hits:
            exact, n = exact | hits, m
    if exact:
        return exact, n
    return {c for c, p in phrases.items() if p and p[0] == _normal(before[-1:])[0]}, 1


def _listed(tokens: Sequence[str], names: dict[tuple[str, ...], str], starts: set[str]) -> list[str]:
    """The things (of ``names``: a name's thing) of the list that ``tokens`` end with, read back to
    where it begins: things joined by commas, "and" and "or", each its name after determiners and
    counts. The list begins at a thing said after other words ("put the cup") and before words that
    say a relation or a negation; it goes on past a short name that the world lacks ("the mug")
    and past words that end with "them" ("put them")."""
    items: list[list[str]] = [[]]
    for t in reversed(tokens):
        if t in JOINS:
            if items[-1]:
                items.append([])
        else:
            items[-1].insert(0, t)
    out = []
    for item in items:
        words = [w for w in item if w not in SKIPPED]
        if not words or starts & set(words) or NEGATIONS & set(words):
            break
        name = next((n for n in names if _said(words[-len(n):], n)), None)
        if name is not None:
            out.append(names[name])
            if len(words) > len(name):
                break
        elif words[-1] != "them" and len(words) > 1:
            break
    return out[::-1]


MANY = frozenset({"all", "every", "each", "both", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                  "ten"})


def _antecedent(tokens: Sequence[str], names: dict[tuple[str, ...], str], starts: set[str]) -> list[str]:
    """What "them" after ``tokens`` stands for: the nearest list before it (:func:`_listed`) of two
    things or more, or of one said as many ("the sweaters", "every sweater"); "use the rag and
    the towel to clean the stove, then leave them by the sink" leaves the rag and the towel."""
    for end in range(len(tokens), 0, -1):
        name = next((n for n in names if _said(tokens[max(0, end - len(n)):end], n)), None)
        if name is None:
            continue
        listed = _listed(tokens[:end], names, starts)
        many = tokens[end - 1] != name[-1] or MANY & set(tokens[max(0, end - len(name) - 2):end - len(name)])
        if len(listed) > 1 or (listed and many):
            return listed
    return []


def _names(world: Sequence[tuple[Condition, Literal]]) -> dict[tuple[str, ...], str]:
    """The names the world's sentences give the first things of ``world``'s relations (all over
    one second thing): of the sentences of one relation, what they do not share."""
    by_predicate: dict[str, list[tuple[Condition, Literal]]] = {}
    for c, lit in world:
        by_predicate.setdefault(lit.predicate, []).append((c, lit))
    names: dict[tuple[str, ...], str] = {}
    for group in by_predicate.values():
        if len(group) < 2:
            continue
        split = [words_of(c.text) for c, _ in group]
        tail = 0
        while tail < min(map(len, split)) - 1 and len({w[-1 - tail] for w in split}) == 1:
            tail += 1
        for (_, lit), words in zip(group, split):
            name = tuple(w for w in words[:len(words) - tail] if w not in NOT_NAME)
            if name:
                names.setdefault(name, lit.args[0])
    return names


def _last_mention(words: Sequence[str], name: tuple[str, ...]) -> Optional[int]:
    """Where the last mention of ``name`` in ``words`` ends (None: none)."""
    ends = [i + len(name) for i in range(len(words) - len(name) + 1) if _said(words[i:i + len(name)], name)]
    return ends[-1] if ends else None


def _said(words: Sequence[str], name: tuple[str, ...]) -> bool:
    last = words[-1] if words else ""
    return list(words[:-1]) == list(name[:-1]) and last in (name[-1], name[-1] + "s", name[-1] + "es")


def _relation(c: Condition) -> Optional[Literal]:
    """``c``'s literal where it is one relation between two things, not negated (else None)."""
    if len(c.literals) != 1 or c.actions:
        return None
    lit = parse_literal(c.literals[0])
    return lit if not lit.negated and len(lit.args) == 2 else None


def _around(pairs: Sequence[Literal], admitted: Sequence[Condition]) -> dict[str, list[tuple[Condition, Literal]]]:
    """The world's relations between two things (of ``admitted``) by their second thing, for the
    second things of ``pairs``: only literals that end with one are parsed."""
    ends = tuple(f" {lit.args[1]})" for lit in pairs)
    out: dict[str, list[tuple[Condition, Literal]]] = {}
    for c in admitted:
        lit = _relation(c) if c.literals and c.literals[0].endswith(ends) else None
        if lit is not None:
            out.setdefault(lit.args[1], []).append((c, lit))
    return out


def _said_of(c: Condition, lit: Literal, task: str, world: Sequence[tuple[Condition, Literal]],
             mutex: Sequence[Exclusive], known: Optional[dict[str, tuple[str, ...]]] = None) -> Optional[Said]:
    """What the task says of ``c``'s two things (``world``: the relations over its second thing);
    None where the world holds no other relation between them that excludes ``c`` (unless
    ``known`` gives the words of ``c``'s predicate, from other things), or their words cannot be
    told apart."""
    rivals = [s for s, x in world if x.args[0] == lit.args[0] and s != c and contradicts(c, s, mutex)]
    if rivals:
        first, relations, second = _frame([c.text] + [s.text for s in rivals])
        phrases = {x: _normal(r) for x, r in zip([c] + rivals, relations)}
    elif known and lit.predicate in known:
        phrases = {c: known[lit.predicate]}
        first, second = _split(c.text, phrases[c])
    else:
        return None
    if not first or not second or len(set(phrases.values())) < len(phrases):
        return None
    starts = {p[0] for p in phrases.values() if p} | set(SAME) | {p[0] for p in (known or {}).values() if p}
    return Said(first, second, _mentions(task, second, first, lit.args[0], phrases, _names(world), starts))


def _split(text: str, phrase: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The first and second things' names in a relation's sentence, split at its words ``phrase``
    (empty names where they are not in it)."""
    words = _normal(words_of(text))
    at = next((i for i in range(len(words) - len(phrase), 0, -1) if words[i:i + len(phrase)] == phrase), None)
    if at is None:
        return (), ()
    return (tuple(w for w in words[:at] if w not in NOT_NAME),
            tuple(w for w in words[at + len(phrase):] if w not in SKIPPED))


def _predicate_words(relations: Sequence[tuple[Condition, Literal]],
                     mutex: Sequence[Exclusive]) -> dict[str, tuple[str, ...]]:
    """Each predicate's words ("next to"), from two things that the world relates in several ways
    that exclude each other."""
    by_pair: dict[tuple[str, ...], list[tuple[Condition, Literal]]] = {}
    for c, lit in relations:
        by_pair.setdefault(tuple(lit.args), []).append((c, lit))
    out: dict[str, tuple[str, ...]] = {}
    for group in by_pair.values():
        if len(group) < 2 or all(lit.predicate in out for _, lit in group):
            continue
        c, _ = group[0]
        rivals = [(s, x) for s, x in group[1:] if contradicts(c, s, mutex)]
        if not rivals:
            continue
        _, words, _ = _frame([c.text] + [s.text for s, _ in rivals])
        if len({_normal(w) for w in words}) == len(words):
            for (_, lit), w in zip([group[0]] + rivals, words):
                out.setdefault(lit.predicate, _normal(w))
    return out


def _said_relations(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                    mutex: Sequence[Exclusive]) -> list[tuple[int, Literal, list[tuple[Condition, Literal]], Said]]:
    """For each relation between two things of ``conditions`` whose words the world tells apart:
    its position, its literal, the world's relations over its second thing (of ``admitted``) and
    what the task says of it (:func:`_said_of`)."""
    pairs = {i: lit for i, c in enumerate(conditions) if (lit := _relation(c)) is not None}
    around = _around(list(pairs.values()), admitted) if pairs else {}
    out = []
    for i, lit in pairs.items():
        world = around.get(lit.args[1], [])
        said = _said_of(conditions[i], lit, task, world, mutex)
        if said is not None:
            out.append((i, lit, world, said))
    return out


def task_relations(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                   mutex: Sequence[Exclusive]) -> tuple[list[Condition], list[str]]:
    """``conditions`` with each relation between two things that the task says otherwise replaced
    by the one it says (of ``admitted``, the world's conditions, those that ``mutex`` makes
    exclusive of it), unless that one contradicts another of ``conditions``; returns
    (conditions, what was turned and why)."""
    out, notes = list(conditions), []
    for i, _, _, said in _said_relations(conditions, task, admitted, mutex):
        c = conditions[i]
        readings = {x for m in said.mentions for x in m.read}
        if len(readings) != 1 or not all(m.read for m in said.mentions) or c in readings:
            continue
        (new,) = readings
        if new in out or any(contradicts(new, o, mutex) for o in out if o != c):
            continue
        out[i] = new
        m = said.mentions[0]
        notes.append(f"{c.text!r} turned to {new.text!r} (the task says {' '.join(m.before[-m.said_by:])!r} "
                     f"before {' '.join(said.second)!r})")
    return out, notes


def listed_relations(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                     mutex: Sequence[Exclusive]) -> tuple[list[Condition], list[str]]:
    """``conditions`` with, for each relation between two things that the task says of a list that
    names the first ("put the candle, the cheese and the bow into the basket" for "the candle is in
    the basket"), the same relation for each other thing of the list, of ``admitted`` (the world's
    conditions), unless it contradicts one of ``conditions``; returns (conditions, what was added
    and why). Each added condition follows the one it comes from, as certain as that one where
    conditions are given up for a plan (the last first)."""
    added: dict[int, list[Condition]] = {}
    kept, notes = list(conditions), []
    for i, lit, world, said in _said_relations(conditions, task, admitted, mutex):
        same = {x.args[0]: s for s, x in world if x.predicate == lit.predicate}
        for m in said.mentions:
            if m.read != {conditions[i]} or lit.args[0] not in m.listed:
                continue
            for thing in m.listed:
                s = same.get(thing)
                if s is None or s in kept or any(contradicts(s, o, mutex) for o in kept):
                    continue
                kept.append(s)
                added.setdefault(i, []).append(s)
                notes.append(f"{s.text!r} added (the task lists it with {' '.join(said.first)!r} "
                             f"before {' '.join(said.second)!r})")
    return [x for i, c in enumerate(conditions) for x in [c] + added.get(i, [])], notes


def stated_relations(conditions: Sequence[Condition], task: str, admitted: Sequence[Condition],
                     mutex: Sequence[Exclusive]) -> tuple[list[Condition], list[str], list[Condition]]:
    """``conditions`` with each relation between two things that the task states ("place the
    receptacle next to the refrigerator", "put all balls and plates inside the cartons") added, of
    ``admitted`` (the world's conditions): where every mention of the second thing with the first
    reads as that one relation. A chosen relation it contradicts, or one that puts its first thing
    elsewhere by a relation that excludes it (:func:`_elsewhere`), gives way where the task never
    names that relation's second thing ("the cookie is on the table" for "put one cookie into each
    basket"); a contradicted one that it names keeps the stated one out, as do two stated ones
    that contradict each other. Of alternatives ("on the desk or on the sofa"), the first is
    stated. Returns (conditions, what was added and why, the stated ones); the stated come first,
    as the most certain: where a plan needs conditions given up, the last go first."""
    said_words = set(words_of(task))

    def named(words: Sequence[str]) -> bool:
        content = [w for w in words if w not in NOT_NAME]
        return bool(content) and all(w in said_words or w + "s" in said_words or w + "es" in said_words
                                     for w in (content[0], content[-1]))

    around: dict[str, list[tuple[Condition, Literal]]] = {}
    pairs: dict[tuple[str, str], tuple[Condition, Literal]] = {}
    for c in admitted:
        lit = _relation(c)
        if lit is None:
            continue
        around.setdefault(lit.args[1], []).append((c, lit))
        if (lit.args[0], lit.args[1]) not in pairs and named(words_of(c.text)):
            pairs[(lit.args[0], lit.args[1])] = (c, lit)
    known = _predicate_words([x for group in around.values() for x in group], mutex) if pairs else {}
    stated: list[tuple[Condition, Said]] = []
    for c, lit in pairs.values():
        said = _said_of(c, lit, task, around[lit.args[1]], mutex, known)
        reads = [m.read for m in said.mentions] if said is not None else []
        if said is not None and reads and all(len(r) == 1 and r == reads[0] for r in reads):
            stated.append((next(iter(reads[0])), said))
    kept, added, notes = list(conditions), [], []
    for new, said in stated:
        chosen = new in kept
        if not chosen and any(contradicts(new, o, mutex) for o, _ in stated if o != new):
            continue
        hard = [o for o in kept if o != new and contradicts(new, o, mutex)]
        soft = [o for o in kept if o != new and o not in hard and _elsewhere(new, o, mutex)]
        gone = [o for o in hard + soft if not named(words_of(o.text)[-1:])]
        if not chosen and any(o not in gone for o in hard):
            continue
        kept = [o for o in kept if o not in gone and o != new]
        added.append(new)
        if not chosen or gone:
            notes.append(f"{new.text!r} {'kept' if chosen else 'added'} (the task says it of {' '.join(said.first)!r} "
                         f"and {' '.join(said.second)!r})" + "".join(f", instead of {o.text!r}" for o in gone))
    return added + kept, notes, added


def _elsewhere(new: Condition, other: Condition, mutex: Sequence[Exclusive]) -> bool:
    """Whether ``other`` relates ``new``'s first thing to another thing in a way that the world's
    exclusive relations forbid beside ``new`` between one pair ("on the table" against "in the
    basket")."""
    a, b = _relation(new), _relation(other)
    if a is None or b is None or a.args[0] != b.args[0] or a.args[1] == b.args[1] or a.predicate == b.predicate:
        return False
    return contradicts(new, Condition(other.text, (f"({b.predicate} {a.args[0]} {a.args[1]})",)), mutex)
