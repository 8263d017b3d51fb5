"""States that must never come about, declared with the world: each hazard is a conjunction of
literals over the world's predicates, with variables (``?x``) and, per variable, the object
classes it may be ("a knife inside a microwave that is on"). The check is the world model's:

- a goal whose every way to hold makes a hazard hold, with what it does not mention as the world
  has it, is refused (:meth:`Hazards.implied`);
- a plan that passes through one is found by replaying it (:meth:`Hazards.along`) and planned
  again with the hazards compiled into the problem as a derived predicate that no state of the
  plan may hold (:meth:`Hazards.compiled`);
- a skill whose effects, applied to the world as it is, would make one hold is stopped at the
  last hop (:func:`predicted`).

A hazard that already holds when a goal starts is reported, not blamed on the goal: only hazards
that a goal, a plan or a skill would bring about are refused.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from itertools import islice, product
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import Atom, WorldState, class_of
from llm_planner_ros.pddl.domain import Domain, load_domain, parse_sexpr
from llm_planner_ros.pddl.invariants import Exclusive
from llm_planner_ros.pddl.semantics import DomainDef, PddlError, PddlWorld, read_domain, render

# SafeAgentBench's ten hazard types (Yin et al., 2024), the kinds a hazard entry names: harm to
# people (fire, electrical shock, explosion, poisoning, slip) and damage to property
HazardType = Literal["fire", "electrical_shock", "explosion", "poisoning", "slip", "liquid_damage",
                     "breakage", "appliance_misuse", "furniture_damage", "small_item_damage"]
DERIVED = "llm_planner_hazard"   # the derived predicate a compiled problem forbids
_MAX_CHOICES = 64                # ways a goal may hold that are checked for a hazard each


class HazardEntry(BaseModel):
    """One ``never:`` entry of a world profile (or of a world given in code)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="what it is called in results and logs")
    type: HazardType = Field(description="its kind, of SafeAgentBench's ten")
    words: str = Field(min_length=1, description="the hazard in words, e.g. 'a metal object in a running microwave'")
    when: tuple[str, ...] = Field(min_length=1, description="literals that together make the hazard, e.g. "
                                  "['(in ?x ?m)', '(switched_on ?m)'] (negated: '(not (open ?f))')")
    classes: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="variable -> the object "
                                                "classes it may be, e.g. {'?m': [microwave]}")


@dataclass(frozen=True, eq=False)   # one per entry: equal when the same
class Hazard:
    entry: HazardEntry
    positive: tuple[Atom, ...]      # literals with variables, all to hold
    negative: tuple[Atom, ...]      # literals that must not hold

    @property
    def name(self) -> str:
        return self.entry.name

    def bindings(self, facts: Callable[[str], Iterable[Atom]], absent: Callable[[Atom], bool],
                 instance_class: Callable[[str], str] = class_of,
                 with_arg: Optional[Callable[[str, int, str], Sequence[Atom]]] = None,
                 of_class: Optional[Callable[[str], Sequence[str]]] = None,
                 changed: Optional[tuple[Iterable[Atom], Iterable[Atom]]] = None) -> Iterator[dict[str, str]]:
        """Every binding of the variables under which the hazard holds: ``facts(predicate)`` gives
        the atoms that hold, ``absent(atom)`` whether a negated literal's atom does not hold;
        ``with_arg(predicate, k, value)``, where given, the atoms whose k-th argument is ``value``:
        then each next literal is the one with the fewest atoms to try (a large world's join), and
        a variable whose classes are few is tried through their instances (``of_class``).
        ``changed``: (atoms made true, atoms made false): only the bindings under which one of them
        is one of the hazard's positive, or negated, literals (a hazard that did not hold before a
        change holds by one of the atoms it changed)."""
        allowed = {v: frozenset(c) for v, c in self.entry.classes.items()}

        def candidates(pattern: Atom, binding: dict[str, str]) -> Sequence[Atom] | Iterable[Atom]:
            if with_arg is not None:
                for k, want in enumerate(pattern[1:], 1):
                    value = binding.get(want) if want.startswith("?") else want
                    if value is not None:
                        return with_arg(pattern[0], k, value)
                best = facts(pattern[0])
                for k, want in enumerate(pattern[1:], 1):
                    if want in allowed and of_class is not None:
                        via = [a for c in allowed[want] for i in of_class(c) for a in with_arg(pattern[0], k, i)]
                        if len(via) < len(best):   # type: ignore[arg-type]
                            best = via
                return best
            return facts(pattern[0])

        def match(pattern: Atom, atom: Atom, binding: dict[str, str]) -> Optional[dict[str, str]]:
            if len(atom) != len(pattern):
                return None
            new = dict(binding)
            for want, got in zip(pattern[1:], atom[1:]):
                if want.startswith("?"):
                    if new.setdefault(want, got) != got or \
                            (want in allowed and instance_class(got) not in allowed[want]):
                        return None
                elif want != got:
                    return None
            return new

        def extend(todo: list[Atom], binding: dict[str, str]) -> Iterator[dict[str, str]]:
            if not todo:
                if all(absent(tuple(binding.get(x, x) for x in atom)) for atom in self.negative):
                    yield dict(binding)
                return
            if with_arg is None:   # the literals in their order
                pattern, atoms = todo[0], facts(todo[0][0])
            else:                  # the literal with the fewest atoms to try next
                pattern, atoms = min(((p, candidates(p, binding)) for p in todo),
                                     key=lambda o: len(o[1]) if isinstance(o[1], Sized) else 1 << 30)
            rest = [p for p in todo if p is not pattern]
            for atom in atoms:
                new = match(pattern, atom, binding)
                if new is not None:
                    yield from extend(rest, new)
        if changed is None:
            yield from extend(list(self.positive), {})
            return
        made, unmade = changed
        for atoms, patterns in ((made, self.positive), (unmade, self.negative)):
            for atom in atoms:
                for pattern in patterns:
                    start = match(pattern, atom, {}) if pattern[0] == atom[0] else None
                    if start is not None:
                        yield from extend([p for p in self.positive if p is not pattern], start)

    def ground(self, binding: Mapping[str, str]) -> list[str]:
        lits = [f"({' '.join(binding.get(x, x) for x in a)})" for a in self.positive]
        return lits + [f"(not ({' '.join(binding.get(x, x) for x in a)}))" for a in self.negative]


@dataclass(frozen=True)
class HazardHit:
    """A hazard and the objects it holds of."""

    hazard: Hazard
    binding: tuple[tuple[str, str], ...]

    @property
    def literals(self) -> list[str]:
        return self.hazard.ground(dict(self.binding))

    def text(self) -> str:
        """``fire: a metal object in a running microwave (obj_inside knife_2003 microwave_297), (on microwave_297)``"""
        e = self.hazard.entry
        return f"{e.type}: {e.words} ({', '.join(self.literals)})"


def _kind(classes: Optional[Mapping[str, str]]) -> Callable[[str], str]:
    """An instance's class: as the world reports it, else read from its name."""
    return (lambda o: classes.get(o) or class_of(o)) if classes else class_of


def _same(a: Collection[Atom], b: Collection[Atom]) -> bool:
    """Whether two states hold the same facts: the same object, or equal frozensets (their hashes
    first, which each computes once)."""
    return a is b or isinstance(a, frozenset) and isinstance(b, frozenset) and hash(a) == hash(b) and a == b


def _facts_index(facts: Iterable[Atom]) -> dict[str, list[Atom]]:
    out: dict[str, list[Atom]] = {}
    for a in facts:
        out.setdefault(a[0], []).append(a)
    return out


def _displaced(atom: Atom, exclusive: Sequence[Exclusive], index: Mapping[str, Sequence[Atom]],
               by_arg: Mapping[tuple[str, int, str], Sequence[Atom]], facts: Collection[Atom]) -> list[Atom]:
    """The atoms of ``facts`` that ``atom`` excludes (the mug on the table, once it is in the
    sink), by each of ``exclusive`` that the world does not already break for them."""
    out: list[Atom] = []
    for x in exclusive:
        key = x.key(atom)
        if key is None:
            continue
        same: list[Atom] = []
        for predicate, where in x.parts:
            if where is None:   # a pair: every argument shared, in order
                position = 1 if key else 0
                value = key[0] if key else ""
            else:
                shared = dict(zip(sorted(w for w in where if w >= 0), key))
                position = next((j for j, w in enumerate(where, 1) if w >= 0), 0)
                value = shared[where[position - 1]] if position else ""
            pool = by_arg.get((predicate, position, value), ()) if position else index.get(predicate, ())
            same += [b for b in pool if b != atom and x.key(b) == key]
        if len(same) + (atom in facts) < 2:   # two or more: the world breaks it here, it proves nothing
            out += same
    return out


class Hazards:
    """A world's hazards, read against its domain."""

    def __init__(self, entries: Sequence[HazardEntry], domain: DomainDef) -> None:
        self.entries = tuple(entries)
        self.domain = domain
        self.hazards = tuple(_hazard(e) for e in self.entries)
        self._last_members: tuple[Optional[Mapping[str, str]], dict[str, list[str]]] = (None, {})
        self._last_indexes: list[tuple[frozenset[Atom], tuple[dict, dict]]] = []
        self._last_hits: list[tuple[frozenset[Atom], Optional[Mapping[str, str]], list[HazardHit]]] = []

    def __bool__(self) -> bool:
        return bool(self.hazards)

    def __len__(self) -> int:
        return len(self.hazards)

    # -- states -----------------------------------------------------------------------------
    def holding(self, facts: Iterable[Atom], classes: Optional[Mapping[str, str]] = None) -> list[HazardHit]:
        """The hazards that hold in a state (its true atoms)."""
        if not self.hazards:
            return []
        # A step's checks ask about the state before it and the one after, as the world reports it
        # and as predicted: the same states, not the same objects. The last few are kept by content
        # (a frozenset's hash is computed once), with their hazards: a plan's replay (along) meets
        # the states its execution then reaches.
        facts = facts if isinstance(facts, frozenset) else frozenset(facts)
        for kept, kept_classes, hits in self._last_hits:
            if _same(kept, facts) and (kept_classes is classes or kept_classes == classes):
                return list(hits)
        index, by_arg = self._indexes(facts)
        kind, members = _kind(classes), self._members(facts, classes)
        hits = [HazardHit(h, binding)   # per hazard, its bindings in order: the same list for the same state
                for h in self.hazards
                for binding in sorted(tuple(sorted(b.items())) for b in h.bindings(
                    lambda p: index.get(p, ()), lambda a: a not in facts, kind,
                    lambda p, k, v: by_arg.get((p, k, v), ()), lambda c: members.get(c, ())))]
        self._last_hits = [(facts, classes, hits), *self._last_hits[:7]]
        return list(hits)

    def _indexes(self, facts: set[Atom] | frozenset[Atom]) -> tuple[dict[str, list[Atom]],
                                                                     dict[tuple[str, int, str], list[Atom]]]:
        """The facts by predicate and by (predicate, position, argument); the last two states'
        kept, since a step's check asks about the state before it and the one after."""
        for kept, indexes in self._last_indexes:
            if _same(kept, facts):
                return indexes
        made = self._patched(facts) or self._indexed(facts)
        if isinstance(facts, frozenset):   # a set may change: not kept
            self._last_indexes = [(facts, made), *self._last_indexes[:1]]
        return made

    @staticmethod
    def _indexed(facts: Iterable[Atom]) -> tuple[dict[str, list[Atom]], dict[tuple[str, int, str], list[Atom]]]:
        by_arg: dict[tuple[str, int, str], list[Atom]] = {}
        for a in facts:
            for k, x in enumerate(a[1:], 1):
                by_arg.setdefault((a[0], k, x), []).append(a)
        return _facts_index(facts), by_arg

    def _patched(self, facts: set[Atom] | frozenset[Atom], most: int = 64) -> Optional[tuple[dict, dict]]:
        """The last state's indexes with the few facts a step changed added and removed (a large
        world's step changes a handful of its facts); None when none is kept or more changed."""
        if not self._last_indexes or not isinstance(facts, frozenset):
            return None
        kept, (by_pred, by_arg) = self._last_indexes[0]
        if abs(len(kept) - len(facts)) > most:
            return None
        added, removed = facts - kept, kept - facts
        if len(added) + len(removed) > most:
            return None
        by_pred, by_arg = dict(by_pred), dict(by_arg)   # the kept state's lists stay as they are
        for a in removed:
            by_pred[a[0]] = [x for x in by_pred[a[0]] if x != a]
            for k, x in enumerate(a[1:], 1):
                by_arg[a[0], k, x] = [y for y in by_arg[a[0], k, x] if y != a]
        for a in added:
            by_pred[a[0]] = [*by_pred.get(a[0], ()), a]
            for k, x in enumerate(a[1:], 1):
                by_arg[a[0], k, x] = [*by_arg.get((a[0], k, x), ()), a]
        return by_pred, by_arg

    def _members(self, facts: Iterable[Atom], classes: Optional[Mapping[str, str]]) -> dict[str, list[str]]:
        """Class -> its instances (of those the world reports classes for, else named in its facts),
        kept for the last world asked about: its instances change at a reset, not at a step."""
        if classes and self._last_members[0] is classes:
            return self._last_members[1]
        kind, out = _kind(classes), {}   # type: ignore[var-annotated]
        names = set(classes) if classes else {x for a in facts for x in a[1:]}
        for name in names:
            out.setdefault(kind(name), []).append(name)
        if classes:
            self._last_members = (classes, out)
        return out

    def in_world(self, world: WorldState) -> list[HazardHit]:
        return self.holding(world.facts, world.classes)

    # -- goals ------------------------------------------------------------------------------
    def implied(self, goal, world: WorldState, exclusive: Sequence[Exclusive] = ()) -> list[HazardHit]:
        """The hazards a goal (a :class:`~llm_planner_ros.pddl.goals.GroundGoal`) brings about as it
        reads: each of its alternatives, with each choice of instance, makes one hold by the goal's
        own literals and the rest of the world as it is now (what the goal does not mention stays:
        "put the knife in the toaster" while the toaster runs), and none held before. A fact that
        a goal's literal excludes (``exclusive``: the world's pairs and its domain's invariants)
        gives way to it. [] when some way to meet it is safe, or it names no literal."""
        if not self.hazards or not goal.alternatives:
            return []
        before = set(self.in_world(world))
        facts = world.facts if isinstance(world.facts, frozenset) else frozenset(world.facts)
        index, by_arg = self._indexes(facts)
        kind, members = _kind(world.classes), self._members(facts, world.classes)
        first: list[HazardHit] = []
        for alt in goal.alternatives:
            fixed_pos = [atoms[0] for negated, atoms in alt if not negated and len(atoms) == 1]
            choices = [atoms for negated, atoms in alt if not negated and len(atoms) > 1]
            negative = {a for negated, atoms in alt if negated for a in atoms}
            ways = list(islice(product(*choices), _MAX_CHOICES + 1))
            if len(ways) > _MAX_CHOICES:
                return []   # too many ways to tell: the plan's check decides
            for way in ways:
                positive = set(fixed_pos) | set(way)
                gone = negative | {b for a in positive for b in _displaced(a, exclusive, index, by_arg, facts)}
                hits = [x for x in self._overlaid(facts, index, by_arg, positive - facts, gone & facts, kind, members)
                        if x not in before]
                if not hits:
                    return []
                first = first or hits
        return first

    def _overlaid(self, facts: frozenset[Atom], index: dict[str, list[Atom]],
                  by_arg: dict[tuple[str, int, str], list[Atom]], added: set[Atom], removed: set[Atom],
                  kind: Callable[[str], str], members: Mapping[str, Sequence[str]]) -> list[HazardHit]:
        """The hazards that hold in ``facts`` with ``added`` made true and ``removed`` false by one
        of those changes, read through the world's indexes (a large world's goal changes a handful
        of its facts)."""
        new = _facts_index(added)
        touched = {a[0] for a in removed}

        def of(p: str, atoms: Sequence[Atom], extra: Iterable[Atom]) -> Sequence[Atom]:
            kept = [a for a in atoms if a not in removed] if p in touched else atoms
            more = list(extra)
            return [*kept, *more] if more else kept

        return list(dict.fromkeys(HazardHit(h, tuple(sorted(b.items()))) for h in self.hazards for b in h.bindings(
            lambda p: of(p, index.get(p, ()), new.get(p, ())),
            lambda a: a in removed or (a not in facts and a not in added), kind,
            lambda p, k, v: of(p, by_arg.get((p, k, v), ()), (a for a in new.get(p, ()) if a[k] == v)),
            lambda c: members.get(c, ()), changed=(added, removed))))

    # -- plans ------------------------------------------------------------------------------
    def along(self, domain_text: str, world: WorldState, actions: Sequence[Atom]) -> tuple[int, list[HazardHit]]:
        """Replay ``actions`` from ``world`` by the domain's semantics: (the 1-based step after which
        a hazard that did not hold before first holds, those hazards), or (0, []) when none does."""
        if not self.hazards or not actions:
            return 0, []
        model = PddlWorld(read_domain(domain_text), dict(world.objects), set(world.facts))
        before = set(self.holding(model.state, world.classes))
        for i, action in enumerate(actions, 1):
            try:
                model.apply(tuple(action))
            except PddlError:
                return 0, []   # not this domain's action: nothing to say
            hits = [x for x in self.holding(model.state, world.classes) if x not in before]
            if hits:
                return i, hits
        return 0, []

    def compiled(self, domain_text: str, problem_text: str, world: WorldState,
                 objects: Optional[Iterable[str]] = None) -> tuple[str, str]:
        """The domain and problem with the hazards as a derived predicate that every action's
        precondition and the goal forbid, so that no state of a plan holds one (those holding
        already in ``world`` are exempt: the robot may still act to end them). ``objects``: the
        problem's (default: the world's)."""
        exempt = self.in_world(world)
        objects = set(world.objects if objects is None else objects)
        tree = parse_sexpr(domain_text)[0]
        disjuncts, predicates, facts = [], [[DERIVED]], []
        for i, h in enumerate(self.hazards):   # class filters and exemptions as static facts of the problem
            variables = sorted({x for a in (*h.positive, *h.negative) for x in a[1:] if x.startswith("?")})
            parts = [render(list(a)) for a in h.positive] + [f"(not {render(list(a))})" for a in h.negative]
            for j, (var, classes) in enumerate(sorted(h.entry.classes.items())):
                name = f"{DERIVED}_{i}_class_{j}"
                predicates.append([name, "?x"])
                parts.append(f"({name} {var})")
                facts += [f"({name} {o})" for o in sorted(objects)
                          if _kind(world.classes)(o) in classes]
            mine = [hit for hit in exempt if hit.hazard is h and all(o in objects for _, o in hit.binding)]
            if mine:
                name = f"{DERIVED}_{i}_exempt"
                predicates.append([name, *variables])
                parts.append(f"(not ({name} {' '.join(variables)}))")
                facts += [f"({name} {' '.join(dict(hit.binding)[v] for v in variables)})" for hit in mine]
            body = "(and " + " ".join(parts) + ")"
            disjuncts.append(f"(exists ({' '.join(variables)}) {body})" if variables else body)
        out: list = []
        for part in tree:
            if isinstance(part, list) and part[:1] == [":requirements"] and ":derived-predicates" not in part:
                part = part + [":derived-predicates"]
            if isinstance(part, list) and part[:1] == [":predicates"]:
                part = part + predicates
            if isinstance(part, list) and part[:1] == [":action"]:
                part = list(part)
                if ":precondition" in part:
                    k = part.index(":precondition") + 1
                    part[k] = ["and", ["not", [DERIVED]], part[k]]
                else:
                    part += [":precondition", ["and", ["not", [DERIVED]]]]
            out.append(part)
            if isinstance(part, list) and part[:1] == [":predicates"]:
                out.append(f"(:derived ({DERIVED}) (or {' '.join(disjuncts)}))")
        domain = "(" + " ".join(x if isinstance(x, str) else render(x) for x in out) + ")"
        m = re.search(r"\(:goal\s", problem_text)
        init = re.search(r"\(:init\s", problem_text)
        if m is None or init is None:
            raise PddlError("the problem has no :init or no :goal")
        problem = (problem_text[:init.end()] + " ".join(facts) + "\n    " + problem_text[init.end():m.end()]
                   + f"(and (not ({DERIVED})) " + problem_text[m.end():].rstrip())
        assert problem.endswith("))")
        problem = problem[:-1] + "))\n"   # close the goal's new (and ...)
        return domain, problem


def _literal(text: str) -> tuple[bool, Atom]:
    tree = parse_sexpr(text)
    atom: object = tree[0] if len(tree) == 1 else None
    negated = isinstance(atom, list) and atom[:1] == ["not"] and len(atom) == 2
    if negated and isinstance(atom, list):
        atom = atom[1]
    if not (isinstance(atom, list) and atom and all(isinstance(x, str) for x in atom)):
        raise ValueError(f"{text!r} is not a literal such as '(inside ?x ?m)' or '(not (open ?f))'")
    return negated, tuple(atom)


def _hazard(entry: HazardEntry) -> Hazard:
    lits = [_literal(t) for t in entry.when]
    return Hazard(entry, tuple(a for n, a in lits if not n), tuple(a for n, a in lits if n))


def problems(entries: Sequence[HazardEntry], domain: DomainDef, classes: Optional[Iterable[str]] = None,
             where: str = "never", objects: Iterable[str] = ()) -> list[str]:
    """What is wrong with ``entries`` against the domain (unknown predicates, arities, variables
    bound by no positive literal, classes the world does not have, a class written where an
    object must be), each with its path. ``objects``: the world's object names a literal may
    name (its instances, its agent), beside the domain's constants."""
    known = None if classes is None else set(classes)
    constants = set(domain.constants) | set(objects)
    out: list[str] = []
    names: set[str] = set()
    for i, e in enumerate(entries):
        at = f"{where}[{i}] ({e.name})"
        if e.name in names:
            out.append(f"{at}: the name {e.name!r} is used twice")
        names.add(e.name)
        bound: set[str] = set()
        negative_vars: set[str] = set()
        holds = False
        for j, text in enumerate(e.when):
            try:
                negated, atom = _literal(text)
            except ValueError as exc:
                out.append(f"{at}.when[{j}]: {exc}")
                continue
            arity = domain.predicates.get(atom[0])
            if arity is None:
                out.append(f"{at}.when[{j}]: unknown predicate {atom[0]!r} (the domain's: "
                           f"{', '.join(sorted(domain.predicates))})")
            elif len(atom) - 1 != arity:
                out.append(f"{at}.when[{j}]: {atom[0]} takes {arity} argument(s), got {len(atom) - 1}")
            # an argument that is not a variable matches that one object only: a class's name
            # there would match nothing, and the hazard would never hold
            out += [f"{at}.when[{j}]: {a!r} is an object class, and a literal's argument is a variable or "
                    f"one object: write a variable with its class, e.g. '({atom[0]} ... ?{a[0]} ...)' and "
                    f"classes: {{'?{a[0]}': [{a}]}}"
                    for a in atom[1:] if not a.startswith("?") and known is not None and a in known
                    and a not in constants]
            variables = {x for x in atom[1:] if x.startswith("?")}
            (negative_vars if negated else bound).update(variables)
            holds = holds or not negated
        if e.when and not holds and not out:
            out.append(f"{at}.when: at least one literal must hold (not only negated ones)")
        out += [f"{at}.when: {v} appears only in negated literals (bind it in one that holds)"
                for v in sorted(negative_vars - bound)]
        for var, cls in e.classes.items():
            if var not in bound | negative_vars:
                out.append(f"{at}.classes: {var} is not a variable of its literals")
            if known is not None:
                out += [f"{at}.classes.{var}: {c!r} is not an object class of this world"
                        for c in cls if c not in known]
    return out


def read_hazards(path: Path, domain: DomainDef, classes: Optional[Iterable[str]] = None) -> Hazards:
    """The ``never:`` entries of a YAML file, validated against ``domain`` (ValueError naming the
    file and the entry otherwise)."""
    import yaml

    from llm_planner_ros.core.yaml_files import load_yaml

    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or set(data) - {"never"}:
            got = sorted(data) if isinstance(data, dict) else data
            raise TypeError(f"a mapping with one key, 'never:' (got {got!r})")
        entries = [HazardEntry(**e) for e in data.get("never", ())]
    except (OSError, yaml.YAMLError, TypeError, ValidationError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    wrong = problems(entries, domain, classes)
    if wrong:
        raise ValueError(f"{path}: " + "; ".join(wrong))
    return Hazards(entries, domain)


def predicted(world: WorldState, domain: Domain, skill, hazards: Hazards) -> list[HazardHit]:
    """The hazards ``skill`` would bring about, by the domain's own effects on ``world``: every
    ground action that the skill may become (its objects' instances, or its instance ids; the
    action's other parameters any object) and whose precondition holds now is applied to a copy
    of the state. [] when none would hold (or none of its readings can run now: then nothing
    changes)."""
    if not hazards:
        return []
    model = PddlWorld(read_domain(domain.text), dict(world.objects), set(world.facts))
    before = set(hazards.holding(model.state, world.classes))
    by_id = world.by_id()
    kind = _kind(world.classes)
    out: list[HazardHit] = []
    for name, schema in domain.actions.items():
        if schema.skill_verb != skill.action or len(schema.skill_args) != len(skill.objects):
            continue
        definition = model.domain.actions.get(name)
        if definition is None:
            continue
        pools: dict[str, list[str]] = {}
        for param, type_ in definition.parameters:
            if param in schema.skill_args:
                k = schema.skill_args.index(param)
                if skill.object_ids and k < len(skill.object_ids):
                    i = skill.object_ids[k]
                    wanted = skill.objects[k] if i == Skill.NAMED else by_id.get(i)
                    pools[param] = [wanted] if wanted is not None else []
                else:
                    # a class, or one named instance (as the executors bind it)
                    pools[param] = [o for o in model.of_type(type_)
                                    if o == skill.objects[k] or kind(o) == skill.objects[k]]
        pools = model.parameter_pools(definition.parameters, definition.precondition, pools)
        for values in islice(product(*(pools[p] for p, _ in definition.parameters)), 20000):
            ground = (name, *values)
            try:
                if model.missing(ground):
                    continue
            except PddlError:
                continue
            trial = PddlWorld(model.domain, model.objects, set(model.state))
            trial.apply(ground)
            out += [x for x in hazards.holding(trial.state, world.classes) if x not in before and x not in out]
    return out


def last_hop(executor, skill, hazards: Hazards) -> tuple[list[HazardHit], str]:
    """(the hazards ``skill`` would bring about in ``executor``'s world, why that cannot be told or
    ""). An executor that can say what a skill would do (``predict``: a simulator) is asked;
    otherwise the world's domain predicts it from the facts the executor reports."""
    try:
        world = executor.world_state()
    except Exception as exc:   # a robot that does not report its facts
        return [], f"the world's facts cannot be read ({type(exc).__name__}: {exc})"
    if not world.facts:
        return [], "the executor reports no facts about its world"
    predict = getattr(executor, "predict", None)
    if predict is not None:
        after = predict(skill)
        if after is None:   # it would not run: nothing changes
            return [], ""
        before = set(hazards.in_world(world))
        return [h for h in hazards.in_world(after) if h not in before], ""
    profile = getattr(executor, "profile", None)
    try:
        domain = profile.planning_domain() if profile is not None else load_domain(executor.domain_text())
    except Exception as exc:
        return [], f"the world's domain cannot be read ({type(exc).__name__}: {exc})"
    return predicted(world, domain, skill, hazards), ""
