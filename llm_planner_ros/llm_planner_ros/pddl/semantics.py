"""A PDDL world by its domain's own semantics: which preconditions an action misses in a state,
and the state after it. The ADL a household domain uses is covered: typed objects (with a type
hierarchy and constants), preconditions with ``and``, ``or``, ``not``, ``imply``, ``exists``,
``forall`` and ``=``, effects with ``and``, ``not``, ``forall`` and ``when`` (conditions read in the
state before the action; deletes before adds). Numeric fluents and durative actions are not.

It answers what a simulator answers for a robot that has none: whether a skill would run now,
and, when not, the literals that stop it, so a planner can be told why in words.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import product
from types import MappingProxyType
from typing import Optional

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl.domain import parse_sexpr

Atom = tuple[str, ...]


class PddlError(ValueError):
    """A domain, problem or action this module cannot read, with what is wrong."""


def typed_list(items: list) -> list[tuple[str, str]]:
    """``a b - t c`` -> [(a, t), (b, t), (c, object)]."""
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    i = 0
    while i < len(items):
        tok = items[i]
        if tok == "-":
            if i + 1 >= len(items) or not isinstance(items[i + 1], str):
                raise PddlError(f"a '-' without a type after {pending}")
            out += [(name, items[i + 1]) for name in pending]
            pending, i = [], i + 2
            continue
        if not isinstance(tok, str):
            raise PddlError(f"not a name in a typed list: {tok}")
        pending.append(tok)
        i += 1
    return out + [(name, "object") for name in pending]


def _section(body: list, key: str) -> list:
    return next((part[1:] for part in body if isinstance(part, list) and part[:1] == [key]), [])


@dataclass(frozen=True)
class ActionDef:
    name: str
    parameters: tuple[tuple[str, str], ...]   # (?var, type)
    precondition: object
    effect: object


@dataclass(frozen=True)
class DomainDef:
    name: str
    parents: Mapping[str, str]                 # type -> its parent type
    constants: Mapping[str, str]
    predicates: Mapping[str, int]              # name -> arity
    actions: Mapping[str, ActionDef]
    predicate_types: Mapping[str, tuple[str, ...]] = field(default_factory=dict)   # name -> parameter types

    def is_a(self, type_: str, wanted: str) -> bool:
        seen = set()
        while type_ not in seen:
            if type_ == wanted or wanted == "object":
                return True
            seen.add(type_)
            type_ = self.parents.get(type_, "object")
        return False


def _define(text: str, kind: str) -> tuple[list, str]:
    """The body of a ``(define (<kind> name) ...)`` text and its name."""
    try:
        tree = parse_sexpr(text)
    except ValueError as exc:   # unbalanced parentheses
        raise PddlError(f"not a PDDL {kind}: {exc}") from None
    if not tree or not isinstance(tree[0], list) or tree[0][:1] != ["define"]:
        raise PddlError(f"not a PDDL {kind}: it does not start with (define ...)")
    body = tree[0]
    return body, next((x[1] for x in body if isinstance(x, list) and x[:1] == [kind]), kind)


@lru_cache(maxsize=16)
def read_domain(text: str) -> DomainDef:
    body, name = _define(text, "domain")
    parents = {t: p for t, p in typed_list(_section(body, ":types")) if t != p}
    constants = dict(typed_list(_section(body, ":constants")))
    predicate_types = {p[0]: tuple(t for _, t in typed_list(p[1:])) for p in _section(body, ":predicates")
                       if isinstance(p, list) and p}
    predicates = {name: len(types) for name, types in predicate_types.items()}
    actions = {}
    for part in body:
        if not (isinstance(part, list) and part[:1] == [":action"]):
            continue
        fields = {part[i]: part[i + 1] for i in range(2, len(part) - 1, 2)}
        precondition = fields.get(":precondition", ["and"])
        actions[part[1]] = ActionDef(part[1], tuple(typed_list(fields.get(":parameters", []))),
                                     precondition if precondition != [] else ["and"],   # "()": no condition
                                     fields.get(":effect", ["and"]))
    domain = DomainDef(name, parents, constants, predicates, actions, predicate_types)
    for action in actions.values():
        _check_action(domain, action)
    return domain


_CONNECTIVES = {"and": None, "or": None, "not": 1, "imply": 2, "exists": 2, "forall": 2}   # arguments (None: any)


def _check_action(domain: DomainDef, action: ActionDef) -> None:
    """What Fast Downward's translator refuses in an action, refused here too, naming it: a predicate
    the domain does not declare, or with another number of arguments, a variable no parameter or
    quantifier binds, a name that is no constant, a connective with a wrong number of parts."""
    def term(x: object, scope: set[str], where: str) -> None:
        if not isinstance(x, str):
            raise PddlError(f"{where}: {render(x)} where a variable or constant must be")
        if x.startswith("?") and x not in scope:
            raise PddlError(f"{where}: the variable {x} is not a parameter of {action.name} or bound by a quantifier")
        if not x.startswith("?") and x not in domain.constants:
            raise PddlError(f"{where}: {x!r} is neither a variable nor a constant of the domain")

    def atom(cond: list, scope: set[str], where: str) -> None:
        pred = cond[0]
        if not isinstance(pred, str) or pred not in domain.predicates:
            raise PddlError(f"{where}: {render(cond)} names no predicate of the domain")
        if len(cond) - 1 != domain.predicates[pred]:
            raise PddlError(f"{where}: {render(cond)}: {pred} takes {domain.predicates[pred]} argument(s)")
        for x in cond[1:]:
            term(x, scope, where)

    def bound(variables: object, scope: set[str], where: str) -> set[str]:
        if not isinstance(variables, list):
            raise PddlError(f"{where}: {render(variables)} is not a list of variables")
        typed = typed_list(variables)
        for v, t in typed:
            if not v.startswith("?"):
                raise PddlError(f"{where}: {v!r} where a variable (?name) must be")
            if t not in types:
                raise PddlError(f"{where}: {v} is of type {t!r}, which the domain does not declare")
        return scope | {v for v, _ in typed}

    def condition(cond: object, scope: set[str], where: str) -> None:
        if not isinstance(cond, list) or not cond:
            raise PddlError(f"{where}: {render(cond)} is not a condition")
        head = cond[0]
        if head == "=":
            if len(cond) != 3:
                raise PddlError(f"{where}: {render(cond)}: '=' takes 2 arguments")
            for x in cond[1:]:
                term(x, scope, where)
        elif isinstance(head, str) and head in _CONNECTIVES:
            wanted = _CONNECTIVES[head]
            if wanted is not None and len(cond) - 1 != wanted:
                raise PddlError(f"{where}: {render(cond)}: {head} takes {wanted} part(s)")
            if head in ("exists", "forall"):
                condition(cond[2], bound(cond[1], scope, where), where)
            else:
                for part in cond[1:]:
                    condition(part, scope, where)
        else:
            atom(cond, scope, where)

    def effect(eff: object, scope: set[str], where: str) -> None:
        if not isinstance(eff, list) or not eff:
            return
        head = eff[0]
        if head == "and":
            for part in eff[1:]:
                effect(part, scope, where)
        elif head == "not":
            if len(eff) != 2 or not isinstance(eff[1], list) or not eff[1]:
                raise PddlError(f"{where}: {render(eff)}: not takes one atom")
            atom(eff[1], scope, where)
        elif head in ("forall", "when"):
            if len(eff) != 3:
                raise PddlError(f"{where}: {render(eff)}: {head} takes 2 parts")
            if head == "forall":
                effect(eff[2], bound(eff[1], scope, where), where)
            else:
                condition(eff[1], scope, where)
                effect(eff[2], scope, where)
        elif all(isinstance(x, str) for x in eff):
            atom(eff, scope, where)
        # anything else (numeric effects such as action costs): an error where it is applied

    types = {"object", *domain.parents, *domain.parents.values()}
    params = bound([x for v, t in action.parameters for x in (v, "-", t)], set(), f"the parameters of {action.name}")
    condition(action.precondition, params, f"the precondition of {action.name}")
    effect(action.effect, params, f"the effect of {action.name}")


@dataclass(frozen=True)
class ProblemDef:
    name: str
    objects: Mapping[str, str]
    init: frozenset[Atom]
    goal: object


def read_problem(text: str) -> ProblemDef:
    body, name = _define(text, "problem")
    init = set()
    for atom in _section(body, ":init"):
        if isinstance(atom, list) and atom and all(isinstance(x, str) for x in atom):
            init.add(tuple(atom))
        elif isinstance(atom, list) and atom[:1] == ["not"]:
            continue   # closed world: a negative initial fact says nothing
        else:
            raise PddlError(f"an initial fact this module cannot read: {atom}")
    goal = _section(body, ":goal")
    return ProblemDef(name, dict(typed_list(_section(body, ":objects"))), frozenset(init), goal[0] if goal else ["and"])


def render(literal: object) -> str:
    if isinstance(literal, list):
        return "(" + " ".join(render(x) for x in literal) + ")"
    return str(literal)


def fact_problem(domain: DomainDef, atom: Atom) -> str:
    """Why the domain cannot state ``atom`` (no such predicate, another number of arguments), or ""."""
    if atom[0] not in domain.predicates:
        return f"{atom[0]} is no predicate of the domain"
    arity = domain.predicates[atom[0]]
    return f"{atom[0]} takes {arity} argument(s)" if arity != len(atom) - 1 else ""


@dataclass
class PddlWorld:
    """A domain, its objects and a state (the true ground atoms; everything else is false)."""

    domain: DomainDef
    objects: dict[str, str]
    state: set[Atom] = field(default_factory=set)
    _naming: Optional[tuple[Mapping[str, str], WorldState]] = field(default=None, repr=False,
                                                                    compare=False)   # names read once
    _last: list[tuple[set[Atom], WorldState]] = field(default_factory=list, repr=False, compare=False)
    _typed: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)   # type -> objects

    @classmethod
    def from_texts(cls, domain_text: str, problem_text: str) -> tuple[PddlWorld, ProblemDef]:
        domain, problem = read_domain(domain_text), read_problem(problem_text)
        objects = {**domain.constants, **problem.objects}
        types = {"object", *domain.parents, *domain.parents.values()}
        for name, type_ in objects.items():
            if type_ not in types:
                raise PddlError(f"the object {name} is of type {type_!r}, which the domain does not declare")
        # a fact over an undeclared object is kept (a shipped profile's problems have one)
        for atom in sorted(problem.init):
            wrong = fact_problem(domain, atom)
            if wrong:
                raise PddlError(f"the initial fact {render(list(atom))}: {wrong}")
        return cls(domain, objects, set(problem.init)), problem

    def of_type(self, type_: str) -> Iterator[str]:
        """The objects of ``type_`` (or a subtype), listed once per type: a world's objects are
        fixed (a new set of them is a new world)."""
        found = self._typed.get(type_)
        if found is None:
            found = self._typed[type_] = tuple(o for o, t in self.objects.items() if self.domain.is_a(t, type_))
        return iter(found)

    def parameter_pools(self, parameters: Sequence[tuple[str, str]], precondition: object,
                        given: Mapping[str, list[str]]) -> dict[str, list[str]]:
        """The values each of an action's ``parameters`` may take: ``given`` where the caller knows
        them (a skill's objects, the robot), the rest what the precondition's facts allow
        (``held_values``), else every object of the parameter's type."""
        pools = dict(given)
        for param, type_ in parameters:
            if param not in pools:
                pools[param] = self.held_values(precondition, param, pools) or list(self.of_type(type_))
        return pools

    def held_values(self, precondition: object, param: str, pools: Mapping[str, Sequence[str]]) -> list[str]:
        """The values of ``param`` that make one of the facts of ``precondition``'s conjunction hold,
        with their other arguments known (one value each): ``(at ?r ?p)`` and ``(on ?i ?p)`` give
        where the robot stands and where the item lies, not every place of a building (of those,
        the caller keeps the reading that misses least). [] where no such fact tells (the caller
        tries every object, so that a skill that cannot run still says what it misses)."""
        atoms = precondition[1:] if isinstance(precondition, list) and precondition[:1] == ["and"] else [precondition]
        out: set[str] = set()
        for atom in atoms:
            if not (isinstance(atom, list) and len(atom) > 1 and all(isinstance(x, str) for x in atom)
                    and param in atom[1:] and atom[0] not in ("not", "or", "and", "=")):
                continue
            others = [x for x in atom[1:] if x != param]
            if all(not x.startswith("?") or len(pools.get(x, ())) == 1 for x in others):
                ground = [pools[x][0] if x.startswith("?") and x != param else x for x in atom[1:]]
                k = ground.index(param)
                found = [f[k + 1] for f in self.state if f[0] == atom[0] and len(f) == len(atom)
                         and all(g in (param, v) for g, v in zip(ground, f[1:]))]
                out.update(found)
        return sorted(out)

    def world_state(self, declared: Mapping[str, str] = MappingProxyType({})) -> WorldState:
        """The state as the planner reads a world: instances with their types, true atoms (and
        the classes of named instances, ``declared``). The instances' names are read once."""
        naming = self._naming
        if naming is None or naming[0] is not declared:
            naming = self._naming = (declared, WorldState.from_lines(
                [f"{n} - {t}" for n, t in self.objects.items()], (), declared))
        for state, world in self._last:   # a step replaces the state, never changes it in place
            if state is self.state and world.classes is naming[1].classes:
                return world
        world = replace(naming[1], facts=frozenset(self.state))
        self._last = [(self.state, world), *self._last[:1]]   # now and before a step (or a prediction)
        return world

    # -- conditions --------------------------------------------------------------------------
    def holds(self, cond: object, binding: Mapping[str, str] | None = None,
              state: set[Atom] | frozenset[Atom] | None = None) -> bool:
        return not self.unmet(cond, binding or {}, self.state if state is None else state, first=True)

    def unmet(self, cond: object, binding: Mapping[str, str], state: set[Atom] | frozenset[Atom],
              first: bool = False) -> list[str]:
        """The ground literals of ``cond`` (a conjunction's parts one by one) that do not hold;
        ``first``: stop at the first."""
        if not isinstance(cond, list) or not cond:
            raise PddlError(f"not a condition: {cond}")
        head = cond[0]
        if head == "and":
            out: list[str] = []
            for part in cond[1:]:
                out += self.unmet(part, binding, state, first)
                if out and first:
                    break
            return out
        if self._value(cond, binding, state):
            return []
        return [render(self._ground(cond, binding))]

    def why(self, literal: str) -> list[str]:
        """What makes an unmet ``(not (exists (vars) body))`` false: ``body``'s literals, ground
        with the first binding under which it holds (``(inside tray_1 fridge_2)``, ``(not (open
        fridge_2))``); [] for any other literal."""
        cond = parse_sexpr(literal)[0]
        if not (isinstance(cond, list) and cond[:1] == ["not"] and isinstance(cond[1], list)
                and cond[1][:1] == ["exists"] and len(cond[1]) == 3):
            return []
        _, variables, body = cond[1]
        for b in self._bindings(variables):
            if self._value(body, b, self.state):
                parts = body[1:] if body[:1] == ["and"] else [body]
                return [render(self._ground(part, b)) for part in parts]
        return []

    def _value(self, cond: list, binding: Mapping[str, str], state) -> bool:
        head = cond[0]
        if head == "and":
            return all(self._value(c, binding, state) for c in cond[1:])
        if head == "or":
            return any(self._value(c, binding, state) for c in cond[1:])
        if head == "not":
            return not self._value(cond[1], binding, state)
        if head == "imply":
            return not self._value(cond[1], binding, state) or self._value(cond[2], binding, state)
        if head in ("exists", "forall"):
            test = any if head == "exists" else all
            return test(self._value(cond[2], {**binding, **b}, state) for b in self._bindings(cond[1]))
        if head == "=":
            a, b = (binding.get(x, x) for x in cond[1:3])
            return a == b
        if all(isinstance(x, str) for x in cond):
            return tuple(binding.get(x, x) for x in cond) in state
        raise PddlError(f"a condition this module cannot read: {render(cond)}")

    def _bindings(self, variables: list) -> Iterator[dict[str, str]]:
        typed = typed_list(variables)
        for values in product(*(list(self.of_type(t)) for _, t in typed)):
            yield dict(zip((v for v, _ in typed), values))

    @staticmethod
    def _ground(cond: object, binding: Mapping[str, str]) -> object:
        if isinstance(cond, list):
            return [PddlWorld._ground(x, binding) for x in cond]
        return binding.get(cond, cond) if isinstance(cond, str) else cond

    # -- actions -----------------------------------------------------------------------------
    def binding(self, action: Atom) -> tuple[ActionDef, dict[str, str]]:
        """The action's definition and parameter binding, or PddlError naming what is wrong."""
        schema = self.domain.actions.get(action[0])
        if schema is None:
            raise PddlError(f"unknown action {action[0]!r}")
        if len(action) - 1 != len(schema.parameters):
            raise PddlError(f"{action[0]} takes {len(schema.parameters)} argument(s), got {len(action) - 1}")
        for (var, type_), obj in zip(schema.parameters, action[1:]):
            if obj not in self.objects:
                raise PddlError(f"there is no object {obj!r}")
            if not self.domain.is_a(self.objects[obj], type_):
                raise PddlError(f"{obj} is a {self.objects[obj]}, not a {type_} ({var} of {action[0]})")
        return schema, dict(zip((v for v, _ in schema.parameters), action[1:]))

    def missing(self, action: Atom) -> list[str]:
        """The action's precondition literals that do not hold now (empty: it may run)."""
        schema, binding = self.binding(action)
        return self.unmet(schema.precondition, binding, self.state)

    def apply(self, action: Atom) -> tuple[set[Atom], set[Atom]]:
        """Run ``action`` (its preconditions must hold: see :meth:`missing`); returns (added, deleted)."""
        schema, binding = self.binding(action)
        adds: set[Atom] = set()
        dels: set[Atom] = set()
        self._effect(schema.effect, binding, adds, dels)
        before = set(self.state)
        self.state = (self.state - dels) | adds
        return self.state - before, before - self.state

    def _effect(self, eff: object, binding: Mapping[str, str], adds: set[Atom], dels: set[Atom]) -> None:
        if not isinstance(eff, list) or not eff:
            return
        head = eff[0]
        if head == "and":
            for part in eff[1:]:
                self._effect(part, binding, adds, dels)
        elif head == "not":
            dels.add(tuple(binding.get(x, x) for x in eff[1]))
        elif head == "forall":
            for b in self._bindings(eff[1]):
                self._effect(eff[2], {**binding, **b}, adds, dels)
        elif head == "when":
            if self._value(eff[1], binding, self.state):
                self._effect(eff[2], binding, adds, dels)
        elif all(isinstance(x, str) for x in eff):
            adds.add(tuple(binding.get(x, x) for x in eff))
        else:
            raise PddlError(f"an effect this module cannot read: {render(eff)}")


def replay(world: PddlWorld, actions: Iterable[Atom]) -> tuple[int, list[str]]:
    """Run ``actions`` in order until one misses a precondition: (how many ran, what the first
    that could not run missed)."""
    ran = 0
    for action in actions:
        missing = world.missing(action)
        if missing:
            return ran, [f"{render(list(action))}: {m}" for m in missing]
        world.apply(action)
        ran += 1
    return ran, []
