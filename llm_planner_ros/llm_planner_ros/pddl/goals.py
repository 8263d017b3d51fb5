"""Goal conditions: PDDL literals and action goals, checked against a domain and grounded in a world.

A literal is ``(predicate arg ...)`` or ``(not (predicate arg ...))``. An argument is an instance
(``television_410``, ``television.410``), a class (``television``, or a word the world's
vocabulary gives for one, such as ``tv``: any one instance, the same one wherever the class
appears), or a word for the agent (``robot``, or the agent's type). A world's vocabulary may accept
friendly relation names (aliases it resolves to its predicates) and action goals: a verb, with
alternatives, e.g. ``LOOKAT|WATCH``, met by a ``did_<verb>`` fact.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.request import LITERAL as _LITERAL
from llm_planner_ros.core.request import check_syntax
from llm_planner_ros.core.world import Atom, WorldState
from llm_planner_ros.pddl.invariants import Exclusive, excluded

MAX_ALTERNATIVES = 64          # instance combinations a goal over classes may expand to
AGENT_WORDS = ("agent", "robot", "i", "me", "self")   # and the agent's type (GoalVocabulary.agent_type)


@dataclass(frozen=True)
class Literal:
    predicate: str
    args: tuple[str, ...]
    negated: bool = False

    def __str__(self) -> str:
        atom = f"({' '.join((self.predicate,) + self.args)})"
        return f"(not {atom})" if self.negated else atom


# (predicate or alias, its arguments, the world) -> the domain predicates it means (any of them)
AliasResolver = Callable[[str, tuple[str, ...], WorldState], tuple[str, ...]]


@dataclass(frozen=True)
class GoalVocabulary:
    """What goal conditions may name in a world: each predicate's number of arguments, the
    agent's instance, and the words people use for object classes (word -> classes). A world
    given in code may add friendly relation names that it resolves to its predicates, and
    action goals (``did_<verb>`` predicates); a profile's world has its predicates as they are."""

    arity: Mapping[str, int]
    agent: str = ""                                   # the agent's instance ("": see agent_type)
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    agent_type: str = ""                              # the type of the agent's instance, if any
    types: Mapping[str, tuple[str, ...]] = field(default_factory=dict)   # predicate -> parameter types
    aliases: frozenset[tuple[str, int]] = frozenset()  # (friendly name, arity)
    resolve: Optional[AliasResolver] = None
    # action goals: verb -> properties of the objects it is done on (any of them; () any object)
    action_objects: Optional[Mapping[str, tuple[str, ...]]] = None
    mutex: tuple[Exclusive, ...] = ()                # atoms that cannot hold together (pairs, the domain's invariants)
    room_predicate: str = ""                          # a fact that marks a room (not an object to act on)
    location_predicate: str = ""                      # (p instance room): the room an instance is in
    # a class in a literal means every instance of the literal's first class (its other classes:
    # any instance, per instance of the first); False: any one instance, the same in every literal
    every_instance: bool = False

    @property
    def action_verbs(self) -> frozenset[str]:
        """Verbs an action goal may name: those with a ``did_<verb>`` predicate."""
        if self.action_objects is None:
            return frozenset()
        return frozenset(p[4:].upper() for p in self.arity if p.startswith("did_"))

    def agent_of(self, world: WorldState) -> str:
        if self.agent or not self.agent_type:
            return self.agent
        return next((n for n, t in world.objects.items() if t == self.agent_type), "")

    def predicates(self, pred: str, args: tuple[str, ...], world: WorldState) -> tuple[str, ...]:
        """The domain predicates a literal's predicate means for these arguments."""
        if self.resolve is None or (pred in self.arity and self.arity[pred] == len(args)
                                    and (pred, len(args)) not in self.aliases):
            return (pred,)
        return self.resolve(pred, args, world)


@dataclass(frozen=True)
class GoalSpec:
    literals: tuple[Literal, ...] = ()
    actions: tuple[tuple[str, ...], ...] = ()     # one tuple of alternative verbs per action goal

    def __bool__(self) -> bool:
        return bool(self.literals or self.actions)

    def lines(self) -> list[str]:
        return [str(lit) for lit in self.literals] + ["|".join(a) for a in self.actions]


def predicate_types(domain_text: str) -> dict[str, tuple[str, ...]]:
    """Predicate -> parameter types, read from a domain's ``:predicates`` section."""
    from llm_planner_ros.pddl.domain import parse_sexpr

    define = parse_sexpr(domain_text)[0]
    predicates = next(part for part in define if isinstance(part, list) and part[:1] == [":predicates"])
    out = {}
    for pred in predicates[1:]:
        types: list[str] = []
        pending = 0
        tokens = pred[1:]
        for i, tok in enumerate(tokens):
            if tok.startswith("?"):
                pending += 1
            elif tok == "-":
                types += [tokens[i + 1]] * pending
                pending = 0
        out[pred[0]] = tuple(types + ["object"] * pending)
    return out


def parse_goal(conditions: Sequence[str], action_goals: Sequence[str], vocabulary: GoalVocabulary) -> GoalSpec:
    """Syntax and the world's words only (no world state needed); raises :class:`InvalidGoal`
    naming the item."""
    check_syntax(conditions, action_goals)
    arity, aliases, verbs = vocabulary.arity, vocabulary.aliases, vocabulary.action_verbs
    literals = []
    for text in conditions:
        m = _LITERAL.match(text.strip())
        assert m is not None   # checked above
        pred, args = m.group(2).lower(), tuple(a.lower() for a in m.group(3).split())
        if pred not in arity and (pred, len(args)) not in aliases:
            raise InvalidGoal(f"goal_conditions: unknown predicate {pred!r} in {text.strip()!r}; known: "
                              f"{', '.join(sorted(set(arity) | {a for a, _ in aliases}))}")
        if pred in arity and arity[pred] != len(args) and (pred, len(args)) not in aliases:
            raise InvalidGoal(f"goal_conditions: {pred!r} takes {arity[pred]} argument(s), "
                              f"got {len(args)} in {text.strip()!r}")
        literals.append(Literal(pred, args, bool(m.group(1))))
    actions = []
    for text in action_goals:
        alternatives = tuple(v.strip().upper() for v in text.split("|") if v.strip())
        unknown = [v for v in alternatives if v not in verbs]
        if not alternatives or unknown:
            raise InvalidGoal(f"action_goals: {text!r} names no known action ({', '.join(unknown) or 'empty'}); "
                              + (f"known: {', '.join(sorted(verbs))}" if verbs else
                                 "this world has no action goals: say what must hold instead"))
        actions.append(alternatives)
    return GoalSpec(tuple(literals), tuple(actions))


@dataclass(frozen=True)
class GroundGoal:
    """A goal over instances: any one alternative (a conjunction of literals, each a disjunction
    of atoms) plus the action goals."""

    alternatives: tuple[tuple[tuple[bool, tuple[Atom, ...]], ...], ...]
    # per action goal, its alternatives: (verb, objects it may be done on; () = any object)
    actions: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
    objects: frozenset[str]                      # every instance the goal names
    nullary: frozenset[str] = frozenset()        # action-goal verbs done on nothing (did_sleep)

    def pddl(self) -> str:
        def lit(negated: bool, atoms: tuple[Atom, ...]) -> str:
            body = " ".join(f"({' '.join(a)})" for a in atoms)
            body = body if len(atoms) == 1 else f"(or {body})"
            return f"(not {body})" if negated else body

        alts = [" ".join(lit(n, a) for n, a in alt) for alt in self.alternatives]
        parts = [alts[0] if len(alts) == 1 else "(or " + " ".join(f"(and {a})" for a in alts) + ")"] if alts else []
        for group in self.actions:
            options = []
            for verb, objects in group:
                pred = "did_" + verb.lower()
                if verb in self.nullary:
                    options.append(f"({pred})")
                elif objects:
                    options += [f"({pred} {o})" for o in objects]
                else:
                    options.append(f"(exists (?o - object) ({pred} ?o))")
            parts.append("(or " + " ".join(options) + ")")
        return "(and " + " ".join(p for p in parts if p) + ")"

    def action_done(self, world: WorldState, verb: str, objects: tuple[str, ...]) -> bool:
        pred = "did_" + verb.lower()
        return any(a[0] == pred and (not objects or (len(a) > 1 and a[1] in objects)) for a in world.facts)

    def holds(self, world: WorldState) -> bool:
        """Whether the world meets the goal; action goals are ``did_<verb>`` facts of the world."""
        if not all(any(self.action_done(world, v, objs) for v, objs in group) for group in self.actions):
            return False
        return not self.alternatives or any(
            all(any(a in world.facts for a in atoms) != negated for negated, atoms in alt)
            for alt in self.alternatives)


def contradictions(goal: GroundGoal, mutex: Sequence[Exclusive] = (), facts: Iterable[Atom] = ()) -> list[str]:
    """Why each alternative of ``goal`` cannot hold, or [] if one can. ``mutex``: atoms that
    cannot hold together (the world's vocabulary names them), each used only where ``facts`` (the
    world now) keep it: an invariant the world already breaks proves nothing there."""
    out = []
    for alt in goal.alternatives:
        positive = {atoms[0] for negated, atoms in alt if not negated and len(atoms) == 1}
        negative = {atoms[0] for negated, atoms in alt if negated and len(atoms) == 1}
        why = [f"({' '.join(a)}) and (not ({' '.join(a)}))" for a in positive & negative]
        why += [f"({' '.join(a)}) and ({' '.join(b)})" for a, b in itertools.combinations(sorted(positive), 2)
                if excluded(a, b, mutex, facts)]
        if not why:
            return []
        out.append(why[0])
    return out


def _resolve_arg(arg: str, world: WorldState, text: str,
                 vocabulary: GoalVocabulary) -> tuple[str, tuple[str, ...]]:
    """("instance", (name,)) or ("class", instances)."""
    if arg in world.objects:
        return "instance", (arg,)
    agent = vocabulary.agent_of(world)
    if (arg in AGENT_WORDS or arg == vocabulary.agent_type) and agent:
        return "instance", (agent,)
    same_class = world.instances_of(arg)
    if same_class:   # a class (its name may end in digits: cup_n_01)
        return "class", tuple(same_class)
    m = re.fullmatch(r"(.+?)[._](\d+)|(\d+)", arg)
    if m:
        wanted = int(m.group(2) or m.group(3))
        hits = [n for n, i in world.ids.items() if i == wanted and (m.group(3) or world.classes.get(n) == m.group(1))]
        if hits:
            return "instance", (hits[0],)
        raise InvalidGoal(f"goal_conditions: no object {arg!r} in this scene (in {text})")
    words = vocabulary.synonyms.get(arg) or vocabulary.synonyms.get(arg.replace("_", " "), ())
    for cls in words:   # the word people use for a class (``arg`` itself names none, above)
        if cls in world.objects:   # or for a named instance ("Bob's office")
            return "instance", (cls,)
        instances = world.instances_of(cls)
        if instances:
            return "class", tuple(instances)
    known = sorted(set(world.classes.values()))
    close = [c for c in known if arg in c or c in arg][:8]
    raise InvalidGoal(f"goal_conditions: unknown object {arg!r} in {text}; "
                      + (f"did you mean {', '.join(close)}?" if close else f"{len(known)} classes are here, "
                         f"e.g. {', '.join(known[:10])}"))


def resolve_objects(names: Sequence[str], world: WorldState, vocabulary: GoalVocabulary) -> set[str]:
    """Instances named by ``names`` (instances or classes: every instance of a class)."""
    out: set[str] = set()
    for name in names:
        out |= set(_resolve_arg(name.strip().lower(), world, f"objects: {name!r}", vocabulary)[1])
    return out


def ground_goal(spec: GoalSpec, world: WorldState, vocabulary: GoalVocabulary,
                prefer: Optional[Sequence[str]] = None) -> GroundGoal:
    """Ground a spec in a world, with the world's words. A class stands for any one of its
    instances, the same one in every literal; combinations beyond MAX_ALTERNATIVES keep the
    instances listed first (``prefer`` orders them, e.g. nearest first)."""
    agent_type = vocabulary.agent_type
    classes: dict[str, tuple[str, ...]] = {}
    resolved = []
    for lit in spec.literals:
        kinds = [_resolve_arg(a, world, str(lit), vocabulary) for a in lit.args]
        for arg, (kind, names) in zip(lit.args, kinds):
            if kind == "class":
                classes[arg] = names
        resolved.append((lit, [(a, k, n) for a, (k, n) in zip(lit.args, kinds)]))
    if vocabulary.every_instance:
        return _every_instance(resolved, spec)
    rank = {n: i for i, n in enumerate(prefer or ())}
    for cls, names in classes.items():
        classes[cls] = tuple(sorted(names, key=lambda n: (rank.get(n, len(rank)), world.ids.get(n, 0))))
    order = sorted(classes)
    combos = list(itertools.islice(itertools.product(*(classes[c] for c in order)), MAX_ALTERNATIVES))
    alternatives = []
    for combo in combos:
        binding = dict(zip(order, combo))
        alt: list[tuple[bool, tuple[Atom, ...]]] = []
        for lit, args in resolved:
            ground = tuple(binding[a] if k == "class" else n[0] for a, k, n in args)
            preds = vocabulary.predicates(lit.predicate, ground, world)
            for p in preds:
                types = vocabulary.types.get(p, ()) if agent_type else ()
                bad = [g for g, t in zip(ground, types) if (t == agent_type) != (world.objects.get(g) == agent_type)]
                if bad:
                    raise InvalidGoal(f"goal_conditions: in {lit}, {bad[0]!r} cannot be an argument of {p!r} "
                                      f"(it takes {', '.join(types)})")
            alt.append((lit.negated, tuple((p,) + ground for p in preds)))
        alternatives.append(tuple(alt))
    objects = frozenset(a for alt in alternatives for _, atoms in alt for atom in atoms for a in atom[1:])
    things = sorted(o for o in objects if (not agent_type or world.objects.get(o) != agent_type)
                    and (vocabulary.room_predicate, o) not in world.facts)
    actions: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
    nullary = set()
    # An action goal on an object is done on one of the goal's objects that the action takes
    # (watch the TV the goal switches on, not any TV); with none that fits, on any object.
    for group in spec.actions:
        options: list[tuple[str, tuple[str, ...]]] = []
        for verb in group:
            if not vocabulary.arity.get("did_" + verb.lower()):   # done on nothing (SLEEP, WAKEUP)
                options.append((verb, ()))
                nullary.add(verb)
                continue
            props = (vocabulary.action_objects or {}).get(verb)
            fit = tuple(o for o in things if props is None or any((p, o) in world.facts for p in props))
            options.append((verb, fit))
        actions.append(tuple(options))
    return GroundGoal(tuple(alternatives), tuple(actions), objects | {o for g in actions for _, os in g for o in os},
                      frozenset(nullary))


def _every_instance(resolved: list, spec: GoalSpec) -> GroundGoal:
    """One conjunction: per literal, one conjunct for each instance of its first class argument,
    a disjunction over the instances of its other class arguments ((not ...): none of them)."""
    if spec.actions:
        raise InvalidGoal("action_goals: this world has no action goals: say what must hold instead")
    alt: list[tuple[bool, tuple[Atom, ...]]] = []
    for lit, args in resolved:
        first = next((i for i, (_, kind, _) in enumerate(args) if kind == "class"), None)
        heads = args[first][2] if first is not None else (None,)
        for head in heads:
            choices = [(head,) if i == first else names for i, (_, _, names) in enumerate(args)]
            atoms = tuple((lit.predicate,) + combo for combo in itertools.islice(itertools.product(*choices),
                                                                                 MAX_ALTERNATIVES))
            alt.append((lit.negated, atoms))
    alt = list(dict.fromkeys(alt))
    objects = frozenset(a for _, atoms in alt for atom in atoms for a in atom[1:])
    return GroundGoal((tuple(alt),), (), objects)
