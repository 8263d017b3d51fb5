"""Goal conditions: PDDL literals and action goals, checked against a domain and grounded in a world.

A literal is ``(predicate arg ...)`` or ``(not (predicate arg ...))``. An argument is an instance
(``television_410``, ``television.410``), a class (``television``, or a VirtualHome synonym such
as ``tv``: any one instance, the same one wherever the class appears), or ``character``.
Friendly relation names are accepted: ``(on cup table)``, ``(inside milk fridge)``,
``(close character tv)``, ``(holds character cup)`` (either hand).
An action goal is a verb, with alternatives as EAI writes them: ``LOOKAT|WATCH``.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Optional

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.pddl.world import Atom, WorldState, domain_text, object_name

MAX_CONDITIONS = 64
MAX_ALTERNATIVES = 64          # instance combinations a goal over classes may expand to
CHARACTER_WORDS = ("character", "char", "agent", "robot", "i", "me", "self")
_LITERAL = re.compile(r"^\(\s*(not\s*\(\s*)?([A-Za-z_][\w-]*)((?:\s+[^\s()]+)*)\s*\)\s*(\))?$")


@dataclass(frozen=True)
class Literal:
    predicate: str
    args: tuple[str, ...]
    negated: bool = False

    def __str__(self) -> str:
        atom = f"({' '.join((self.predicate,) + self.args)})"
        return f"(not {atom})" if self.negated else atom


@dataclass(frozen=True)
class GoalVocabulary:
    """What goal conditions may name in a world that a profile declares: each predicate's number
    of arguments, the words for the agent's instance, and the words people use for object
    classes (word -> class). Without one, the built-in domain's names and aliases apply."""

    arity: Mapping[str, int]
    agent: str = ""
    synonyms: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GoalSpec:
    literals: tuple[Literal, ...] = ()
    actions: tuple[tuple[str, ...], ...] = ()     # one tuple of alternative verbs per action goal

    def __bool__(self) -> bool:
        return bool(self.literals or self.actions)

    def lines(self) -> list[str]:
        return [str(lit) for lit in self.literals] + ["|".join(a) for a in self.actions]


@cache
def domain_signature(domain: str = "virtualhome") -> dict[str, tuple[str, ...]]:
    """Predicate -> parameter types, read from the domain's ``:predicates`` section."""
    from llm_planner_ros.pddl.domain import parse_sexpr

    define = parse_sexpr(domain_text(domain))[0]
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


@cache
def action_verbs(domain: str = "virtualhome") -> frozenset[str]:
    """Verbs an action goal may name: those with a ``did_<verb>`` predicate."""
    return frozenset(p[4:].upper() for p in domain_signature(domain) if p.startswith("did_"))


def check_syntax(conditions: Sequence[str], action_goals: Sequence[str] = ()) -> None:
    """The form of the goal conditions, before the world they name is known (a request is
    checked so when it arrives; its words are checked against the world's when it is resolved)."""
    if len(conditions) + len(action_goals) > MAX_CONDITIONS:
        raise InvalidGoal(f"goal_conditions: {len(conditions) + len(action_goals)} conditions; the limit is "
                          f"{MAX_CONDITIONS}")
    for text in conditions:
        m = _LITERAL.match(text.strip())
        if m is None or bool(m.group(1)) != bool(m.group(4)):
            raise InvalidGoal(f"goal_conditions: {text!r} is not a literal; write '(predicate arg ...)' "
                              "or '(not (predicate arg ...))', e.g. '(on tv)'")
    for text in action_goals:
        if not any(v.strip() for v in text.split("|")):
            raise InvalidGoal(f"action_goals: {text!r} names no action")


def parse_goal(conditions: Sequence[str], action_goals: Sequence[str] = (), domain: str = "virtualhome",
               vocabulary: Optional[GoalVocabulary] = None) -> GoalSpec:
    """Syntax and vocabulary only (no world needed); raises :class:`InvalidGoal` naming the item.
    ``vocabulary``: the predicates of a profile's world (no aliases, no action goals)."""
    check_syntax(conditions, action_goals)
    if vocabulary is not None:
        arity, aliases, verbs = dict(vocabulary.arity), frozenset[tuple[str, int]](), frozenset[str]()
    else:
        arity = {p: len(types) for p, types in domain_signature(domain).items()}
        aliases, verbs = frozenset(_ALIASES), action_verbs(domain)
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


def eai_goal_spec(goal: Mapping, graph: Mapping) -> GoalSpec:
    """EAI's goal conditions (``{"goal": [...], "actions": [...]}``, node ids of ``graph``) as a
    spec over instance names. Hands are kept as EAI writes them (its scorer checks the hand)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    name = {i: object_name(n["class_name"], i) for i, n in nodes.items()}
    is_char = {i for i, n in nodes.items() if n["class_name"] == "character"}
    is_room = {i for i, n in nodes.items() if n.get("category") == "Rooms"}
    literals = []
    for g in goal.get("goal", []):
        if "state" in g:
            literals.append(Literal(g["state"].lower(), (name[g["id"]],)))
            continue
        a, b, r = g["from_id"], g["to_id"], g["relation_type"]
        if r == "ON":
            pred = "ontop" if a in is_char else "on_char" if b in is_char else "obj_ontop"
        elif r == "INSIDE":
            pred = "inside" if a in is_char else "inside_room" if b in is_room else "obj_inside"
        elif r == "CLOSE":
            pred = "next_to" if a in is_char else "obj_next_to"
        elif r == "FACING":
            pred = "facing" if a in is_char else "obj_facing"
        else:
            pred = r.lower()
        literals.append(Literal(pred, (name[a], name[b])))
    actions = tuple(tuple(v.strip().upper() for v in group.split("|")) for group in goal.get("actions", []))
    return GoalSpec(tuple(dict.fromkeys(literals)), actions)


# An action goal on an object is done on one of the goal's objects that the action takes
# (watch the TV the goal switches on, not any TV); with none that fits, on any object.
# verb -> properties its object needs (any of them); absent: any object
ACTION_OBJECTS = {
    "DRINK": ("drinkable", "recipient"), "WATCH": ("lookable",), "READ": ("readable",), "TYPE": ("typeable",),
    "SWITCHON": ("has_switch",), "SWITCHOFF": ("has_switch",), "EAT": ("eatable",), "PUTON": ("clothes",),
    "GRAB": ("grabbable",), "PUSH": ("movable",), "POUR": ("pourable", "drinkable"),
}


# (friendly name, arity) -> resolver of (arg kinds) to domain predicates (a disjunction)
_ALIASES = {("on", 2), ("inside", 2), ("in", 2), ("close", 2), ("holds", 2), ("facing", 2), ("near", 2)}


def _resolve_predicate(pred: str, args: tuple[str, ...], world: WorldState) -> tuple[str, ...]:
    signature = domain_signature()
    if pred in signature and len(signature[pred]) == len(args) and (pred, len(args)) not in _ALIASES:
        return (pred,)
    char = world.objects.get(args[0]) == "character"
    second_char = world.objects.get(args[1]) == "character"
    second_room = ("is_room", args[1]) in world.facts
    if pred == "on":
        return ("ontop",) if char else ("on_char",) if second_char else ("obj_ontop",)
    if pred in ("inside", "in"):
        return ("inside",) if char else ("inside_room",) if second_room else ("obj_inside",)
    if pred in ("close", "near"):
        return ("next_to",) if char else ("obj_next_to",)
    if pred == "holds":
        return ("holds_rh", "holds_lh")
    if pred == "facing":
        return ("facing",) if char else ("obj_facing",)
    return (pred,)


@dataclass(frozen=True)
class GroundGoal:
    """A goal over instances: any one alternative (a conjunction of literals, each a disjunction
    of atoms) plus the action goals."""

    alternatives: tuple[tuple[tuple[bool, tuple[Atom, ...]], ...], ...]
    # per action goal, its alternatives: (verb, objects it may be done on; () = any object)
    actions: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
    objects: frozenset[str]                      # every instance the goal names

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
                if not domain_signature().get(pred):
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


# Pairs of atoms that cannot hold together (a goal asking for both is contradictory)
MUTEX = (("on", "off"), ("open", "closed"), ("plugged_in", "plugged_out"), ("sitting", "lying"),
         ("holds_rh", "holds_lh"))


def contradictions(goal: GroundGoal) -> list[str]:
    """Why each alternative of ``goal`` cannot hold, or [] if one can."""
    out = []
    for alt in goal.alternatives:
        positive = {atoms[0] for negated, atoms in alt if not negated and len(atoms) == 1}
        negative = {atoms[0] for negated, atoms in alt if negated and len(atoms) == 1}
        why = [f"({' '.join(a)}) and (not ({' '.join(a)}))" for a in positive & negative]
        for p, q in MUTEX:
            for a in positive:
                if a[0] == p and (q,) + a[1:] in positive:
                    why.append(f"({' '.join(a)}) and ({' '.join((q,) + a[1:])})")
        if not why:
            return []
        out.append(why[0])
    return out


def _name_equivalence() -> dict[str, list[str]]:
    try:
        from virtualhome_eval.simulation.evolving_graph import utils
        return utils.load_name_equivalence()
    except Exception:   # the synonyms are a convenience; classes still resolve without them
        return {}


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for name, others in _name_equivalence().items():
        for other in others:
            out.setdefault(name.lower(), set()).add(other.lower())
            out.setdefault(other.lower(), set()).add(name.lower())
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _resolve_arg(arg: str, world: WorldState, text: str,
                 vocabulary: Optional[GoalVocabulary] = None) -> tuple[str, tuple[str, ...]]:
    """("instance", (name,)) or ("class", instances)."""
    if arg in world.objects:
        return "instance", (arg,)
    agent = vocabulary.agent if vocabulary is not None else world.character
    if arg in CHARACTER_WORDS and agent:
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
    words = (vocabulary.synonyms.get(arg.replace("_", " "), arg),) if vocabulary is not None \
        else _synonyms().get(arg, ())
    for cls in words:   # the word people use for a class (``arg`` itself names none, above)
        instances = world.instances_of(cls)
        if instances:
            return "class", tuple(instances)
    known = sorted(set(world.classes.values()))
    close = [c for c in known if arg in c or c in arg][:8]
    raise InvalidGoal(f"goal_conditions: unknown object {arg!r} in {text}; "
                      + (f"did you mean {', '.join(close)}?" if close else f"{len(known)} classes are here, "
                         f"e.g. {', '.join(known[:10])}"))


def resolve_objects(names: Sequence[str], world: WorldState,
                    vocabulary: Optional[GoalVocabulary] = None) -> set[str]:
    """Instances named by ``names`` (instances or classes: every instance of a class)."""
    out: set[str] = set()
    for name in names:
        out |= set(_resolve_arg(name.strip().lower(), world, f"objects: {name!r}", vocabulary)[1])
    return out


def ground_goal(spec: GoalSpec, world: WorldState, prefer: Optional[Sequence[str]] = None,
                vocabulary: Optional[GoalVocabulary] = None) -> GroundGoal:
    """Ground a spec in a world. A class stands for any one of its instances, the same one in every
    literal; combinations beyond MAX_ALTERNATIVES keep the instances listed first (``prefer``
    orders them, e.g. nearest first). ``vocabulary``: a profile's world (its predicates as they are)."""
    signature = domain_signature() if vocabulary is None else {}
    classes: dict[str, tuple[str, ...]] = {}
    resolved = []
    for lit in spec.literals:
        kinds = [_resolve_arg(a, world, str(lit), vocabulary) for a in lit.args]
        for arg, (kind, names) in zip(lit.args, kinds):
            if kind == "class":
                classes[arg] = names
        resolved.append((lit, [(a, k, n) for a, (k, n) in zip(lit.args, kinds)]))
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
            if vocabulary is not None:
                alt.append((lit.negated, ((lit.predicate,) + ground,)))
                continue
            preds = _resolve_predicate(lit.predicate, ground, world)
            for p in preds:
                types = signature[p]
                bad = [g for g, t in zip(ground, types) if (t == "character") != (world.objects.get(g) == "character")]
                if bad:
                    raise InvalidGoal(f"goal_conditions: in {lit}, {bad[0]!r} cannot be an argument of {p!r} "
                                      f"(it takes {', '.join(types)})")
            alt.append((lit.negated, tuple((p,) + ground for p in preds)))
        alternatives.append(tuple(alt))
    objects = frozenset(a for alt in alternatives for _, atoms in alt for atom in atoms for a in atom[1:])
    things = sorted(o for o in objects if world.objects.get(o) != "character" and ("is_room", o) not in world.facts)
    actions: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
    for group in spec.actions:
        options: list[tuple[str, tuple[str, ...]]] = []
        for verb in group:
            if not signature.get("did_" + verb.lower()):   # done on nothing (SLEEP, WAKEUP)
                options.append((verb, ()))
                continue
            props = ACTION_OBJECTS.get(verb)
            fit = tuple(o for o in things if props is None or any((p, o) in world.facts for p in props))
            options.append((verb, fit))
        actions.append(tuple(options))
    return GroundGoal(tuple(alternatives), tuple(actions), objects | {o for g in actions for _, os in g for o in os})
