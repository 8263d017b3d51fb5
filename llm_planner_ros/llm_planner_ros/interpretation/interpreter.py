"""Goal interpretation: the LLM says what "done" means in short sentences, and each sentence is
translated to the nearest condition the scene admits (Huang et al.'s translation, applied to
goals). The demonstrations are other tasks' annotated goals, which the world supplies, rendered
the same way; the query's own task is held out by its label. ``retrieve`` is the baseline
without an LLM: the conditions nearest to the task text itself."""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np

from llm_planner_ros.core.errors import CancelToken, LLMError
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.absent import AbsentWords
from llm_planner_ros.interpretation.conditions import (
    Condition,
    ConditionIndex,
    Match,
    contradicts,
    resolve,
    spec_of,
    turned_literal,
)
from llm_planner_ros.interpretation.confidence import Candidate, Evidence, Judgement
from llm_planner_ros.interpretation.menu import MenuSettings, Scored, candidates, choose, consistent, score
from llm_planner_ros.interpretation.relations import listed_relations, stated_relations, task_relations
from llm_planner_ros.interpretation.states import stated_states
from llm_planner_ros.llm.base import LLMBackend, SamplingParams, split_sentences
from llm_planner_ros.pddl.goals import GoalSpec, Literal
from llm_planner_ros.pddl.invariants import Exclusive
from llm_planner_ros.translation.onnx_embedder import cache_root
from llm_planner_ros.translation.vector_store import SentenceVectors


@dataclass(frozen=True)
class GoalDemo:
    task: str               # the task label, e.g. "Drink"
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class NamedInstances:
    """A world's instances that keep their own names (``alice_desk``, "Alice's desk"): those a
    task names, and the goal conditions on them (which join its classes' for that task)."""
    in_text: Callable[[str], tuple[str, ...]]
    conditions: Callable[[WorldState, tuple[str, ...]], list[Condition]]


@dataclass
class Interpretation:
    sentences: list[str]                       # what the LLM (or the task text) said
    matches: list[Match]
    conditions: list[Condition]                # translated and free of contradictions
    dropped: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    turned: list[str] = field(default_factory=list)   # relations turned or added, states added, or why not
    seconds: dict[str, float] = field(default_factory=dict)   # by stage: index_s, llm_s, orient_s, menu_s
    menu: list[Scored] = field(default_factory=list)   # the candidates the model scored, best first
    written: list[str] = field(default_factory=list)   # literals the model wrote under the world's grammar
    added: list[Condition] = field(default_factory=list)   # conditions the menu added to what was said
    evidence: Optional[Evidence] = None        # what the confidence weighs (see :mod:`.confidence`)
    judgement: Judgement = Judgement(None, ())   # the confidence: the goal's and each kept condition's
    alternatives: list[Condition] = field(default_factory=list)   # the likeliest candidates left out
    absent: list[str] = field(default_factory=list)   # words of the task that the world lacks (see .absent)
    named: tuple[str, ...] = ()                # the named instances the task names (a class binds to them)
    which: list[Ambiguity] = field(default_factory=list)   # classes bound to one of several rooms' instances

    @property
    def confidence(self) -> Optional[float]:
        """P(the goal is the one asked): the calibrated P(its conditions are), times how sure
        each instance chosen among several rooms' (or several, rooms unknown) is
        (:meth:`InstancePrior.ambiguity`)."""
        goal = self.judgement.goal
        return None if goal is None else goal * math.prod(a.share for a in self.which)

    @property
    def spec(self) -> GoalSpec:
        return spec_of(self.conditions)

    def lines(self) -> list[str]:
        return self.spec.lines()


def rooms(world: WorldState, located_by: str) -> dict[str, str]:
    """Instance -> the class of the room it is in, by the facts ``(located_by instance room)``."""
    return {a[1]: world.classes.get(a[2], a[2]) for a in world.facts if a[0] == located_by and len(a) == 3}


@dataclass(frozen=True)
class ProgramGoal:
    """One annotated program's goal: its task label, the goal as sentences, and the class and room
    of each object the goal names."""
    task: str
    sentences: tuple[str, ...]
    uses: tuple[tuple[str, str], ...]
    literals: tuple[str, ...] = ()      # class level, e.g. "(on television)"


def named_instance(class_name: str, world: WorldState, named: Sequence[str]) -> Optional[str]:
    """The instance of ``class_name`` that a task names, where it names exactly one ("Lena's mug"
    for mug); None where it names none or several."""
    said = [n for n in named if world.classes.get(n) == class_name]
    return said[0] if len(said) == 1 else None


@dataclass(frozen=True)
class Ambiguity:
    """A class of the goal whose instances are in several rooms (or, where rooms are unknown, a
    class of several instances), bound to the first-ranked."""
    class_name: str
    share: float                           # P(the first is the one meant), by other tasks' goals
    choices: tuple[tuple[str, str], ...]   # (instance, its room or ""): the first-ranked of each room, in rank order
    counted: bool = True                   # the share is other tasks' uses (else: each alike, none used)

    def text(self) -> str:
        def where(n: str, r: str) -> str:
            return f"{n} in the {r}" if r else n
        (one, room), rest = self.choices[0], self.choices[1:]
        why = f"{self.share:.0%} of other tasks' goals" if self.counted else \
            f"1 of {len(self.choices)}: nothing says which"
        return (f"which {self.class_name}: {where(one, room)} ({why}), or "
                + ", ".join(where(n, r) for n, r in rest[:3]) + (" ..." if len(rest) > 3 else ""))


class InstancePrior:
    """Which instance a task means when the scene has several of a class: the one in the room
    where other tasks' annotated goals used that class most, else the room their objects are in
    most. Learned from the program goals, never from the query's own task label."""

    def __init__(self, goals: Sequence[ProgramGoal], located_by: str = "", agent: str = "") -> None:
        """``located_by``: the world's predicate ``(p instance room)`` ("": rooms unknown);
        ``agent``: the word goals use for the agent (never bound to another instance)."""
        self.goals = list(goals)
        self.located_by, self.agent = located_by, agent

    @lru_cache(maxsize=64)  # noqa: B019 (as above)
    def _counts(self, held: frozenset[str]) -> tuple[Counter, Counter]:
        """(class, room) -> uses and room -> uses, over the goals of tasks not ``held``."""
        by_class: Counter = Counter()
        by_room: Counter = Counter()
        for g in self.goals:
            if g.task.lower() not in held:
                by_class.update(g.uses)
                by_room.update(room for _, room in g.uses)
        return by_class, by_room

    def rank(self, world: WorldState, class_name: str, hold_out: Sequence[str] = (),
             room: Optional[dict[str, str]] = None) -> list[str]:
        """``class_name``'s instances, the likeliest meant first (``room``: :func:`rooms`, where read)."""
        by_class, by_room = self._counts(frozenset(h.strip().lower() for h in hold_out))
        if room is None:
            room = rooms(world, self.located_by) if self.located_by else {}
        return sorted(world.instances_of(class_name),
                      key=lambda n: (-by_class[class_name, room.get(n)], -by_room[room.get(n)], world.ids.get(n, 0)))

    def ambiguity(self, world: WorldState, class_name: str, hold_out: Sequence[str] = ()) -> Optional[Ambiguity]:
        """How sure the first-ranked instance of ``class_name`` is the one meant, where the class
        has instances in several rooms: the share of the other tasks' uses of the class that fall
        in its room, among those rooms (each alike where none is used); None where the class is in
        one room. Where rooms are unknown, each instance counts as a room of its own."""
        if not self.located_by:
            ranked = self.rank(world, class_name, hold_out, {})
            if len(ranked) < 2:
                return None
            return Ambiguity(class_name, 1 / len(ranked), tuple((n, "") for n in ranked), counted=False)
        room = rooms(world, self.located_by)
        first: dict[str, str] = {}   # room -> its first-ranked instance, the rooms in rank order
        for n in self.rank(world, class_name, hold_out, room):
            if room.get(n) is None:
                return None
            first.setdefault(room[n], n)
        if len(first) < 2:
            return None
        by_class, _ = self._counts(frozenset(h.strip().lower() for h in hold_out))
        uses = [by_class[class_name, r] for r in first]
        share = uses[0] / sum(uses) if sum(uses) else 1 / len(uses)
        return Ambiguity(class_name, share, tuple((n, r) for r, n in first.items()), counted=bool(sum(uses)))

    def bind(self, spec: GoalSpec, world: WorldState, hold_out: Sequence[str] = (),
             named: Sequence[str] = ()) -> GoalSpec:
        """``spec`` with each class argument replaced by the instance of it that the task names
        (``named``; of several, the first-ranked), else by its first-ranked instance."""
        def arg(a: str) -> str:
            if a in world.objects or a == self.agent:
                return a
            one = named_instance(a, world, named)
            if one is not None:
                return one
            said = [n for n in named if world.classes.get(n) == a]
            ranked = self.rank(world, a, hold_out)
            ranked = [n for n in ranked if n in said] or ranked   # several named: the first-ranked of them
            return ranked[0] if ranked else a
        literals = tuple(dict.fromkeys(Literal(lit.predicate, tuple(arg(a) for a in lit.args), lit.negated)
                                       for lit in spec.literals))
        return GoalSpec(literals, spec.actions)


def _template(literal: str, agent: str = "") -> Optional[tuple[str, str]]:
    """("(on {x})", "television") for a literal over one object (and maybe the ``agent``)."""
    parts = literal.strip("()").split()
    objects = [a for a in parts[1:] if a != agent]
    if len(objects) != 1:
        return None
    return "(" + " ".join([parts[0]] + ["{x}" if a == objects[0] else a for a in parts[1:]]) + ")", objects[0]


class Completion:
    """Conditions that other tasks' goals state together about one object, learned from their
    annotations (held out by task label): a goal that has A of an object gets B of it where B
    came with A in at least ``min_ratio`` of them, e.g. "(did_watch {x})" -> "(on {x})". Each task
    weighs one, whatever its number of programs."""

    def __init__(self, goals: Sequence[ProgramGoal], min_ratio: float = 0.5, min_support: float = 1.0,
                 mutex: Sequence[Exclusive] = (), agent: str = "") -> None:
        """``mutex``: atoms that cannot hold together (no rule adds one against the
        other); ``agent``: the word goals use for the agent (not an object of a rule)."""
        self.goals = list(goals)
        self.agent = agent
        self.mutex = tuple(mutex)
        self.min_ratio = min_ratio
        self.min_support = min_support

    @lru_cache(maxsize=64)  # noqa: B019 (one instance per planning service, which lives as long as the process)
    def rules(self, hold_out: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
        held = {h.strip().lower() for h in hold_out}
        per_task: dict[str, list[ProgramGoal]] = {}
        for g in self.goals:
            if g.task.lower() not in held:
                per_task.setdefault(g.task, []).append(g)
        alone: dict = Counter()
        together: dict = Counter()
        for goals in per_task.values():
            for g in goals:
                by_object: dict[str, set[str]] = {}
                for lit in g.literals:
                    t = _template(lit, self.agent)
                    if t:
                        by_object.setdefault(t[1], set()).add(t[0])
                for templates in by_object.values():
                    for a in templates:
                        alone[a] += 1 / len(goals)
                        for b in templates - {a}:
                            together[a, b] += 1 / len(goals)
        out: dict[str, list[str]] = {}
        for (a, b), n in together.items():
            if alone[a] >= self.min_support and n / alone[a] >= self.min_ratio:
                out.setdefault(a, []).append(b)
        return {a: tuple(sorted(bs)) for a, bs in out.items()}

    def complete(self, conditions: Sequence[Condition], admitted: Sequence[Condition],
                 hold_out: Sequence[str] = ()) -> list[Condition]:
        """``conditions`` and what the rules add to them, among the ``admitted`` conditions of the
        scene; an added condition never contradicts one already there."""
        rules = self.rules(tuple(sorted(h.strip().lower() for h in hold_out)))
        single = {c.literals[0]: c for c in admitted if len(c.literals) == 1 and not c.actions}
        out = list(conditions)
        for cond in conditions:
            for lit in cond.literals:
                t = _template(lit, self.agent)
                if t is None:
                    continue
                for b in rules.get(t[0], ()):
                    extra = single.get(b.format(x=t[1]))
                    if extra is not None and extra not in out and \
                            not any(contradicts(extra, c, self.mutex) for c in out):
                        out.append(extra)
        return out


# the code a calibration's labels come from: the model's prompts and scores, the conditions, the
# planner and the executors that label them (not the nodes, the console or the records)
CALIBRATED_BY = ("core", "executors", "interpretation", "llm", "pddl", "planning", "profiles", "safety",
                 "skills", "translation")


@lru_cache(maxsize=1)
def calibrating_code() -> str:
    """A digest of :data:`CALIBRATED_BY`'s sources: a calibration made by other code is made
    again, not read (one kept across a change once gave a benchmark another code's confidence)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for d in CALIBRATED_BY for p in (root / d).rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class GoalInterpreter:
    def __init__(self, llm: Optional[LLMBackend], embedder, demos: Sequence[GoalDemo],
                 conditions: Callable[[WorldState], list[Condition]],
                 threshold: float = 0.55, num_examples: int = 3, max_tokens: int = 48,
                 completion: Optional[Completion] = None,
                 with_task_text: bool = False, retrieved: int = 3,
                 mutex: Sequence[Exclusive] = (), orient: bool = False, text_margin: float = 1.0,
                 store: Optional[SentenceVectors] = None, scenes: int = 4, answers: int = 256,
                 menu: Optional[MenuSettings] = None, writer=None, absent_below: float = 0.0,
                 named: Optional[NamedInstances] = None, lexicon=None, related_steps: int = 0) -> None:
        """``demos``: annotated goals shown as examples (none: zero-shot); ``conditions``: what a
        world admits as goal conditions, in words (its world renders them); ``mutex``: atoms
        that cannot hold together (the world's vocabulary names them); ``orient``: the
        LLM judges which way each relation between two objects goes (:meth:`oriented`); ``store``:
        the conditions' sentence vectors (None: in memory only); ``scenes``: condition indexes kept,
        one per set of object classes and of named instances a task names, the least recently used
        going first; ``answers``: the LLM's
        answers kept, one per prompt; ``absent_below``: a word of the task is absent from the world
        when none of the world's words is this near it (:mod:`.absent`; 0: none is looked for),
        leaving out those that ``lexicon`` (a :class:`.lexicon.WordNetNouns`) makes it a narrower
        kind of, or relates to it only through a kind more than ``related_steps`` steps up (0: any);
        ``named``: the world's named instances (None: it has none)."""
        self.llm = llm
        self.embedder = embedder
        self.demos = list(demos)
        self.conditions = conditions
        self.mutex = tuple(mutex)
        self.threshold = threshold
        self.num_examples = num_examples
        self.max_tokens = max_tokens
        self.completion = completion
        self.with_task_text = with_task_text
        self.retrieved = retrieved
        self.orient = orient
        self.text_margin = text_margin
        self.menu = menu
        self.writer = writer
        self._demo_vectors = embedder.embed([d.task for d in self.demos]) if self.demos else np.zeros((0, 1))
        self._indexes: OrderedDict[tuple[frozenset, tuple[str, ...]], ConditionIndex] = OrderedDict()
        self.store = store if store is not None else SentenceVectors(embedder)
        self.scenes = scenes
        self.answers = answers
        self._answers: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._scores: OrderedDict[tuple[str, str], tuple[float, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.absent_below = absent_below
        self._absent = AbsentWords(embedder, lexicon=lexicon, related_steps=related_steps)
        self.named = named

    def absent(self, task: str, index: ConditionIndex) -> list[str]:
        """The words of ``task`` that the world of ``index`` lacks."""
        return [w for w, _, _ in self._absent(task, index, self.absent_below)]

    def index(self, world: WorldState, task: str = "", names: Optional[tuple[str, ...]] = None) -> ConditionIndex:
        """The conditions of ``world``'s object classes, and those on the named instances ``task``
        names (``names``, where the caller has read them); indexed once per set of classes and
        names (their vectors stay in the store)."""
        names = self.names_in(task) if names is None else names
        extra = self.named.conditions(world, names) if self.named is not None and names else []
        key = (frozenset(world.classes.values()), tuple(c.text for c in extra))
        with self._lock:
            if key in self._indexes:
                self._indexes.move_to_end(key)
            else:
                self._indexes[key] = ConditionIndex(self.conditions(world) + extra, self.embedder, self.store)
                while len(self._indexes) > self.scenes:
                    self._indexes.popitem(last=False)
            return self._indexes[key]

    def names_in(self, task: str) -> tuple[str, ...]:
        """The named instances ``task`` names."""
        return self.named.in_text(task) if self.named is not None and task else ()

    def examples(self, task: str, hold_out: Sequence[str] = ()) -> list[GoalDemo]:
        """The demonstrations nearest to ``task``, never of a held-out task label."""
        return [d for d, _ in self._nearest_demos(task, hold_out)][:self.num_examples]

    def _nearest_demos(self, task: str, hold_out: Sequence[str] = ()) -> list[tuple[GoalDemo, float]]:
        held = {h.strip().lower() for h in hold_out}
        if not self.demos or self.num_examples == 0:
            return []
        q = self.embedder.embed([task])[0]
        cos = self._demo_vectors @ q
        return [(self.demos[i], float(cos[i])) for i in np.argsort(-cos) if self.demos[i].task.lower() not in held]

    def prompt(self, task: str, examples: Sequence[GoalDemo]) -> str:
        parts = ["Describe the end state of each household task in short sentences.\n"]
        parts += [f"Task: {d.task}\nEnd state: {' '.join(d.sentences)}\n" for d in reversed(examples)]
        parts.append(f"Task: {task}\nEnd state:")
        return "\n".join(parts)

    def interpret(self, task: str, world: WorldState, hold_out: Sequence[str] = (),
                  cancel: Optional[CancelToken] = None, seed: int = 0) -> Interpretation:
        if self.llm is None:
            return self.retrieve(task, world, hold_out=hold_out)
        t0 = time.perf_counter()
        near = self._nearest_demos(task, hold_out)
        examples = [d for d, _ in near][:self.num_examples]
        params = SamplingParams(temperature=0.0, max_tokens=self.max_tokens, stop=("\n", "Task:"), seed=seed,
                                stop_at_repeat=True)
        named = self.names_in(task)
        index = self.index(world, task, named)
        prompt = self.prompt(task, examples)
        t1 = time.perf_counter()
        text = self._answer(prompt, params, cancel)
        t2 = time.perf_counter()
        sentences = split_sentences(text)
        matches = index.translate(sentences, self.threshold)
        if self.with_task_text:   # the task text's own nearest conditions join what the LLM said
            matches += self._nearest_matches(task, index, self.retrieved)
        turned: list[str] = []
        t3 = time.perf_counter()
        if self.orient:
            matches, turned = self.oriented(matches, index, prompt, cancel)
        # with the menu, the model's score settles the domain's invariants among what was said (below),
        # not the cosine of each sentence's match
        kept, dropped = resolve(matches, self.mutex if self.menu is None else [m for m in self.mutex if m.is_pair])
        seconds = {"index_s": t1 - t0, "llm_s": t2 - t1, "orient_s": time.perf_counter() - t3}
        found = Interpretation(sentences, matches, kept, dropped, [d.task for d in examples], turned, seconds)
        if self.menu is not None:
            self._choose(found, task, index, examples, prompt, cancel, named)
        if named:
            self._named_consistent(found, world, named)
        if self.menu is not None:   # the relation the task's own words give between two things
            found.conditions, turned = task_relations(found.conditions, task, index.conditions, self.mutex)
            found.conditions, listed = listed_relations(found.conditions, task, index.conditions, self.mutex)
            found.conditions, states, in_states = stated_states(found.conditions, task, index.conditions, world)
            found.conditions, stated, in_relations = stated_relations(found.conditions, task, index.conditions,
                                                                     self.mutex)
            found.turned += turned + listed + stated + states
            # what the task states is no addition of the model's choice, given up first for a plan
            found.added = [c for c in found.added if c not in in_states and c not in in_relations]
        found.conditions = self._complete(found.conditions, index, hold_out)
        found.evidence = self._evidence(found, task, near[0][1] if near else 0.0)
        found.absent = self.absent(task, index)
        found.named = named
        found.alternatives = [s.condition for s in found.menu if s.condition not in found.conditions
                              and math.isfinite(s.score)
                              and not any(contradicts(s.condition, c, self.mutex) for c in found.conditions)][:3]
        return found

    def _evidence(self, found: Interpretation, task: str, demonstration: float) -> Evidence:
        """What the confidence weighs: every candidate (the menu's, else the translated matches),
        the nearest demonstration's cosine to the task, and how far the free-text route and the
        choice agree."""
        kept = set(found.conditions)
        if found.menu:
            top = found.menu[0].score
            cands = tuple(Candidate(s.condition.text, s.cosine, s.logprob, top - s.score, s.sources,
                                    s.condition in kept) for s in found.menu)
        else:
            best: dict[Condition, float] = {}
            for m in found.matches:
                if m.condition is not None:
                    best[m.condition] = max(best.get(m.condition, -1.0), m.cosine)
            top = max(best.values(), default=0.0)
            cands = tuple(Candidate(c.text, cos, math.nan, top - cos, ("said",), c in kept) for c, cos in best.items())
        said = {m.condition for m in found.matches if m.condition is not None and m.sentence != task}
        chosen = [c for c in cands if c.kept]
        agreement = sum(c.text in {x.text for x in said} for c in chosen) / len(chosen) if chosen else 0.0
        return Evidence(cands, demonstration, agreement)

    def calibration_file(self, world: WorldState, demos: Sequence[GoalDemo]) -> Path:
        """Where the calibration of this interpreter's confidence in ``world`` over ``demos`` is kept:
        by model, settings, demonstrations and world."""
        key = json.dumps([getattr(self.llm, "name", type(self.llm).__name__), self.threshold, self.num_examples,
                          self.max_tokens, self.with_task_text, self.retrieved, self.orient, self.text_margin,
                          repr(self.menu), self.writer is not None and repr(getattr(self.writer, "max_literals", 0)),
                          [(d.task, d.sentences) for d in demos], sorted(map(list, world.facts)),
                          sorted(world.classes.items()), calibrating_code()])
        return cache_root() / "calibration" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"

    def _choose(self, found: Interpretation, task: str, index: ConditionIndex, examples: Sequence[GoalDemo],
                prompt: str, cancel: Optional[CancelToken], named: tuple[str, ...] = ()) -> None:
        """``found``'s conditions chosen by the model from the menu (see :mod:`.menu`); where the
        task names instances, what the menu adds and what the task text alone gave stay about them
        and what the model said."""
        assert self.menu is not None and self.llm is not None
        t0 = time.perf_counter()
        written: list[Condition] = []
        if self.writer is not None:
            found.written, written = self.writer.write(task, index, examples, cancel)
            found.seconds["written_s"] = time.perf_counter() - t0
        menu = candidates(found.conditions, index, task, self.menu.text_candidates,
                          [d.sentences for d in examples], written)
        found.menu, why_not = score(menu, index, task, lambda texts: self._logprobs(prompt, texts, cancel), self.menu)
        if why_not:
            found.turned.append(why_not)
        # without demonstrations a model's free text has no form to follow (the 135M model writes
        # "100%."): what it said is a candidate like any other, kept only as the best
        settings = self.menu if self.demos else replace(self.menu, keep=0.0)
        said = set(found.conditions)
        by_model = {m.condition for m in found.matches if m.sentence != task}
        found.conditions = choose(found.conditions, found.menu, settings, self.mutex,
                                  frozenset(named) if named else None, frozenset(said - by_model))
        found.added = [c for c in found.conditions if c not in said]
        found.seconds["menu_s"] = time.perf_counter() - t0

    def _named_consistent(self, found: Interpretation, world: WorldState, named: tuple[str, ...]) -> None:
        """Of two conditions that cannot hold together once a class is read as the instance of it
        the task names ("the mug is on Farah" for Lena's mug, beside "Farah has Lena's mug"), the
        one the menu scored lower (else the later one) goes."""
        def as_named(c: Condition) -> Condition:
            return c.renamed(lambda a: named_instance(a, world, named) or a)
        score = {s.condition: s.score for s in found.menu}
        found.conditions, dropped = consistent(found.conditions, lambda c: score.get(c, -math.inf),
                                               lambda a, b: contradicts(as_named(a), as_named(b), self.mutex))
        found.dropped += dropped

    def _logprobs(self, prompt: str, texts: list[str], cancel: Optional[CancelToken]) -> list[tuple[float, ...]]:
        """The LLM's token log-probs of each of ``texts`` after ``prompt``, those of a repeated
        prompt kept (as :meth:`_answer` keeps answers)."""
        assert self.llm is not None
        with self._lock:
            known = {t: self._scores[prompt, t] for t in texts if (prompt, t) in self._scores}
        new = [t for t in texts if t not in known]
        if new:
            known.update(zip(new, self.llm.continuation_logprobs(prompt, new, cancel)))
            with self._lock:
                for t in new:
                    self._scores[prompt, t] = known[t]
                while len(self._scores) > 64 * self.answers:
                    self._scores.popitem(last=False)
        return [known[t] for t in texts]

    def _answer(self, prompt: str, params: SamplingParams, cancel: Optional[CancelToken]) -> str:
        """The LLM's greedy answer to ``prompt``, kept for the next goal that asks the same (greedy
        decoding gives the same answer, whatever ran before): a repeated task skips the LLM."""
        key = (prompt, params.max_tokens)
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]
        assert self.llm is not None
        text = self.llm.complete(prompt, 1, params, cancel or CancelToken())[0].text
        with self._lock:
            self._answers[key] = text
            while len(self._answers) > self.answers:
                self._answers.popitem(last=False)
        return text

    def oriented(self, matches: list[Match], index: ConditionIndex, prompt: str,
                 cancel: Optional[CancelToken] = None) -> tuple[list[Match], list[str]]:
        """``matches`` with each relation between two objects turned the way round the LLM finds
        likelier after ``prompt`` (summed log-probability as the end state): sentence embeddings
        hardly tell "the candle is in the basket" from "the basket is in the candle". (Which
        relation, in or on, stays the embeddings' choice: a small model tells those apart no
        better.) Returns (the matches, what was turned)."""
        pairs: dict[Condition, Condition] = {}
        for c in (m.condition for m in matches):
            if c is not None and len(c.literals) == 1 and not c.actions:
                other = index.by_literal(turned_literal(c.literals[0]))
                if other is not None:
                    pairs[c] = other
        if not pairs:
            return matches, []
        texts = list(dict.fromkeys(t for c, r in pairs.items() for t in (c.text, r.text)))
        assert self.llm is not None
        try:
            scored = self.llm.continuation_logprobs(prompt, [" " + t for t in texts], cancel)
        except LLMError as exc:   # a backend that cannot score: the embeddings' way round stands
            return matches, [f"relations not turned: {exc}"]
        scores = dict(zip(texts, (sum(x) for x in scored)))
        turn = {c: r for c, r in pairs.items() if scores[r.text] > scores[c.text]}
        return ([replace(m, condition=turn[m.condition]) if m.condition in turn else m for m in matches],
                [f"{c.text!r} turned to {r.text!r} (LLM {scores[r.text]:.1f} against {scores[c.text]:.1f})"
                 for c, r in turn.items()])

    def _nearest_matches(self, task: str, index: ConditionIndex, k: int) -> list[Match]:
        """The ``k`` conditions nearest to the task text above the threshold and within ``text_margin``
        of the nearest (at least the nearest)."""
        near = index.nearest(task, k)
        return [Match(task, c, cos) for c, cos in near
                if cos >= self.threshold and cos >= near[0][1] - self.text_margin] or \
            ([Match(task, near[0][0], near[0][1])] if near else [])

    def _complete(self, kept: list[Condition], index: ConditionIndex, hold_out: Sequence[str]) -> list[Condition]:
        return self.completion.complete(kept, index.conditions, hold_out) if self.completion else kept

    def retrieve(self, task: str, world: WorldState, k: int = 3, hold_out: Sequence[str] = ()) -> Interpretation:
        """The baseline: the ``k`` conditions nearest to the task text, contradictions resolved."""
        t0 = time.perf_counter()
        named = self.names_in(task)
        index = self.index(world, task, named)
        seconds = {"index_s": time.perf_counter() - t0}
        matches = self._nearest_matches(task, index, k)
        kept, dropped = resolve(matches, self.mutex)
        found = Interpretation([task], matches, self._complete(kept, index, hold_out), dropped, seconds=seconds)
        found.absent = self.absent(task, index)
        found.named = named
        return found
