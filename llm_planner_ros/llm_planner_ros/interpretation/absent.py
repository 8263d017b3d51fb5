"""What a task names that the world lacks ("Put the milk in the fridge" where there is no milk).

The world's words are those of its goal conditions: their sentences, aliases and arguments, rendered
from the objects the world holds. A word of the task is absent when neither it (or its singular) is
one of them nor any of them is as near as ``below`` in sentence-embedding cosine ("refrigerator" is
near "fridge"; "cat" is near nothing in a house without one), leaving out the world words that
WordNet makes it a narrower kind of, where a lexicon is given: "banana" is near "fruit" (0.73), but
a world's fruit need not be a banana, so that world lacks the banana (unless one of its objects'
class names is a banana in WordNet: "electric_refrigerator" is a "fridge"), and those it relates to
the task's word only distantly: "oven" is 0.61 from "kitchen", but an oven is an appliance and a
kitchen a room, 11 hypernym steps apart ("lamp" and "light" are 2), and foods that are not a kind of
it ("milk" is no "cheese"). A word that only leads another in the world's names (the "coffee" of
"coffee mug") stands for no other word, and said on its own ("a cup of coffee") is absent itself; a
plural that is a thing of its own ("glasses": spectacles) is not looked for as its singular. A part
of the body ("teeth", "hands") is the person's, never looked for among the world's things. The
task's leading verb, function words and generic verbs are not looked at. An absent word is not proof
that the task cannot be done (a person may say "internet" where the goal is the computer), so the
goal that names one waits for an operator, who is told the word."""
from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Optional

import numpy as np

from llm_planner_ros.interpretation.conditions import ConditionIndex, parse_literal
from llm_planner_ros.interpretation.lexicon import WordNetNouns

# leading words before the imperative verb ("please", "could you", "I")
LEAD = frozenset("please kindly i im we you could would can will shall let lets just now then".split())  # noqa: SIM905
# function words, generic verbs and quantities: not objects a world holds
STOP = frozenset("""a an the my your our their his her its me you him them us it this that these those some any all
every each no not and or but of to in on at into onto from with without for by up down out off over under
about after before again also just very really too more less there here where when what which who how
please could would can will shall should let lets i im we he she they is are be am was were been being
do does did done make get take put go come bring give hand have has had set turn switch start stop keep use
try want need like time now then one two three few little lot bit something anything thing things
myself yourself ready back away""".split())  # noqa: SIM905

# the words before a thing's name: determiners and prepositions
DETERMINERS = frozenset("""a an the some any my your our their his her its this that these those of to in on at
into onto from with for by under over""".split())  # noqa: SIM905


def words_of(text: str) -> list[str]:
    """The lower-case words of ``text`` (letters only: "isn't" is "isn", "t")."""
    return re.findall(r"[a-z]+", text.lower())


def _forms(word: str) -> tuple[str, ...]:
    """The word and its likely singulars ("dishes" -> "dish", "plants" -> "plant")."""
    return (word,) + ((word[:-2],) if word.endswith("es") else ()) + ((word[:-1],) if word.endswith("s") else ())


def _own_plural(lexicon: WordNetNouns, word: str, related_steps: int) -> bool:
    """Whether ``word``, though it reads as a plural, is a thing of its own and not more than one of
    its singular: WordNet has it as a noun whose first sense is an artifact, shares no sense with a
    singular and is more than ``related_steps`` hypernym steps from each ("glasses" are spectacles,
    not drinking glasses: 6 steps; "pliers" 11; not "clothes", 4 from "cloth", nor "windows", software)."""
    senses = lexicon.senses(word)
    if related_steps <= 0 or not senses or not lexicon.artifact(senses[0]):
        return False
    singulars = [f for f in _forms(word)[1:] if lexicon.synsets(f)]
    return bool(singulars) and all(not (lexicon.synsets(f) & set(senses))
                                   and (lexicon.steps(word, f, related_steps) or 0) > related_steps for f in singulars)


def _room(lexicon: WordNetNouns, word: str) -> bool:
    """Whether ``word``'s most frequent noun sense is a room ("kitchen", "bathroom"; not "cell")."""
    senses = lexicon.senses(word)
    return bool(senses) and bool(({senses[0]} | lexicon.above(senses[0])) & lexicon.synsets("room"))


def _noun(lexicon: WordNetNouns, word: str) -> str:
    """``word`` or the first of its singulars that WordNet has as a noun."""
    return next((f for f in _forms(word) if lexicon.synsets(f)), word)


def _stands_for(lexicon: WordNetNouns, world: str, task: str, related_steps: int) -> bool:
    """Whether a near world word may stand for the task's word: not where the task's word is a
    narrower kind of it, nor where both are foods or drinks and the world's is not a kind of the
    task's, nor (``related_steps`` > 0) where WordNet relates them more distantly than
    that; where WordNet lacks either word, the cosine alone decides."""
    if lexicon.narrower(task, world):
        return False
    if lexicon.food(task) and lexicon.food(world) and not lexicon.is_a(world, task):
        return False        # one food is not another ("milk" is no "cheese"), but it is a "drink"
    steps = lexicon.steps(task, world, related_steps) if related_steps > 0 else None
    return steps is None or steps <= related_steps


def _named(words: list[str]) -> Iterator[tuple[str, ...]]:
    """The things a sentence names: the words after each "the" up to a function word or the end
    ("I put the coffee mug on the table." -> ("coffee", "mug"), ("table",))."""
    for i, w in enumerate(words):
        if w == "the":
            name = tuple(itertools.takewhile(lambda x: x not in STOP, words[i + 1:]))
            if name:
                yield name


class WorldWords:
    """The words of a world's conditions, with their sentence vectors (made once per index)."""

    def __init__(self, index: ConditionIndex, embedder) -> None:
        words: set[str] = set()
        things: set[str] = set()   # class names whole: "electric_refrigerator_n_01_5" -> "electric_refrigerator"
        names: set[tuple[str, ...]] = set()   # the things' names as words: ("coffee", "mug"), ("kitchen", "counter")
        for c in index.conditions:
            for text in c.texts:
                said = words_of(text)
                words.update(said)
                names.update(_named(said))
            for literal in c.literals:   # its objects' words, not its predicate's (even where negated)
                for arg in parse_literal(literal).args:
                    words.update(w for w in re.split(r"[^a-z]+", arg.lower()) if w)
                    things.add(re.sub(r"(_n)?(_\d+)+$", "", arg.lower()))
        names.update(tuple(w for w in t.split("_") if w) for t in things)
        self.words = sorted(words - STOP)
        self.things = things
        # a word that only ever leads another in a thing's name (with the words it leads): the
        # "coffee" of "coffee mug" ({"mug"}) names no thing of the world, though it is one of its words
        heads = {n[-1] for n in names if n}
        self.modifiers: dict[str, set[str]] = {}
        for n in names:
            for w in n[:-1]:
                if w not in heads:
                    self.modifiers.setdefault(w, set()).add(n[-1])
        # through the index's store: a building's worlds differ by the instances a task names, not by most words
        self.vectors = index.store.vectors(self.words) if self.words else np.zeros((0, 1))
        self.known = set(self.words)
        self.embedder = embedder

    def _names_a_thing(self, word: str, lexicon: Optional[WordNetNouns]) -> bool:
        """Whether a world word names a thing of the world: not one that only leads other words in
        its names ("coffee" of "coffee mug"), unless WordNet makes what it leads a kind of it (the
        "food" of a class named "food_apple")."""
        led = self.modifiers.get(word)
        return led is None or (lexicon is not None and any(lexicon.is_a(h, word) for h in led))

    def _said_alone(self, form: str, word: str, said: Sequence[str], lexicon: Optional[WordNetNouns]) -> bool:
        """Whether the task says ``word`` (``form``, a world word that only leads other words in the
        world's names) as a thing on its own: after a determiner, a preposition or another noun's
        word ("a cup of coffee", "video games"; not a verb, "... and then scrub the sink"), with
        none of the words it leads said, nor a verb they are made from ("make" for "coffee maker",
        "boil" for "water boiler"). Then the task names what the world lacks (a cup of coffee where
        the only coffee is the "coffee mug"). Needs WordNet, which tells where the word alone is the
        whole name ("remote" is a "remote control"), or what it leads is a kind of it ("food_apple"),
        or the word is a room, which says where the thing it leads is ("the kitchen" of the "kitchen
        counter")."""
        led = self.modifiers.get(form)
        if lexicon is None or not led or self._names_a_thing(form, lexicon) or _room(lexicon, form):
            return False
        if not any(i > 0 and (said[i - 1] in DETERMINERS or said[i - 1] not in STOP)
                   for i, w in enumerate(said) if w == word):
            return False
        if any(lexicon.synsets(form) & (lexicon.synsets(f"{form}_{h}") | lexicon.synsets(form + h)) for h in led):
            return False
        return not any(h in _forms(t) or (len(t) >= 3 and t != form and h.startswith(t))
                       for h in led for t in said)

    @staticmethod
    def _forms_to_find(word: str, lexicon: Optional[WordNetNouns], related_steps: int) -> tuple[str, ...]:
        """The forms of a task's word to look for among the world's: its singulars too, unless it
        is a plural of its own (:func:`_own_plural`)."""
        if lexicon is not None and _own_plural(lexicon, word, related_steps):
            return (word,)
        return _forms(word)

    def absent(self, task: str, below: float, lexicon: Optional[WordNetNouns] = None,
               related_steps: int = 0) -> list[tuple[str, float, str]]:
        """The task's words the world lacks: (word, its nearest world word's cosine, that word). A
        world word within ``below`` stands for the task's word unless ``lexicon`` makes the task's
        word a narrower kind of it, or (``related_steps`` > 0) relates the two only through a kind
        more than ``related_steps`` hypernym steps up ("oven" and "kitchen": 11). With ``lexicon``, a
        part of the body is never absent."""
        words = words_of(task)
        while words and words[0] in LEAD:
            words = words[1:]
        asked = [w for w in dict.fromkeys(words[1:]) if w not in STOP and len(w) >= 3
                 and not any(f in self.known and not self._said_alone(f, w, words, lexicon)
                             for f in self._forms_to_find(w, lexicon, related_steps))]
        if lexicon is not None:   # the person's own body is not among a world's things ("Brush teeth")
            asked = [w for w in asked if not any(lexicon.body_part(f) for f in _forms(w))]
        if not asked:
            return []
        if not self.words:
            return [(w, 0.0, "") for w in asked]
        cos = self.embedder.embed(asked) @ self.vectors.T
        out = []
        for w, row in zip(asked, cos):
            near = [int(i) for i in np.flatnonzero(row >= below) if self._names_a_thing(self.words[int(i)], lexicon)]
            if lexicon is not None and near:
                form = _noun(lexicon, w)
                near = [i for i in near if _stands_for(lexicon, _noun(lexicon, self.words[i]), form, related_steps)]
                if not near and any(lexicon.is_a(thing, form) for thing in self.things):
                    continue        # a thing of the world is one ("electric_refrigerator" for "fridge")
            if not near:
                out.append((w, float(row.max()), self.words[int(row.argmax())]))
        return out


class AbsentWords:
    """:class:`WorldWords` per condition index (an index stands for one world's set of classes)."""

    def __init__(self, embedder, keep: int = 8, lexicon: Optional[WordNetNouns] = None,
                 related_steps: int = 0) -> None:
        self.embedder = embedder
        self.lexicon = lexicon
        self.related_steps = related_steps
        self.keep = keep
        self._by_index: dict[int, tuple[ConditionIndex, WorldWords]] = {}
        self._lock = threading.Lock()

    def __call__(self, task: str, index: ConditionIndex, below: float) -> Sequence[tuple[str, float, str]]:
        if below <= 0.0:
            return []
        with self._lock:
            kept = self._by_index.get(id(index))
            if kept is None or kept[0] is not index:
                kept = (index, WorldWords(index, self.embedder))
                self._by_index[id(index)] = kept
                while len(self._by_index) > self.keep:
                    self._by_index.pop(next(iter(self._by_index)))
        return kept[1].absent(task, below, self.lexicon, self.related_steps)
