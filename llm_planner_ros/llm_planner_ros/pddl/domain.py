"""What the planner reads from a domain file besides what Fast Downward reads: each action's
parameters, its unconditional effects (to compare with what the executor then observes), and
the skill it becomes: given by the world's profile (with its words), or read from
``; skill <action>: <VERB> ?param ... | <words>`` lines in the domain ("put {0} in {1}")."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Union

from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import Atom, WorldState, fill

SExpr = Union[str, list]


def parse_sexpr(text: str) -> list:
    """A PDDL text (comments dropped) as nested lists of lower-case tokens."""
    tokens = re.findall(r"\(|\)|[^\s()]+", re.sub(r";[^\n]*", "", text).lower())
    stack: list[list] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) < 2:
                raise ValueError("unbalanced ')' in PDDL")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise ValueError("unbalanced '(' in PDDL")
    return stack[0]


@dataclass(frozen=True)
class ActionSchema:
    name: str
    parameters: tuple[str, ...]                  # ?c ?o ...
    adds: tuple[tuple[str, ...], ...]            # unconditional positive effects, over parameters
    deletes: tuple[tuple[str, ...], ...]
    skill_verb: str = ""
    skill_args: tuple[str, ...] = ()
    skill_words: str = ""                        # the skill in words, "{0}" the first of skill_args


@dataclass(frozen=True)
class Domain:
    name: str
    text: str
    actions: dict[str, ActionSchema]
    unobserved: frozenset[str] = frozenset()
    phrases: Mapping[str, str] = field(default_factory=dict)   # class -> how it is said, where not its name

    def skill(self, action: tuple[str, ...], world: WorldState) -> Skill:
        """The executor's skill for a ground plan action, with instance ids where the world has them;
        an instance with its own name (no id) is named itself, its id ``Skill.NAMED``."""
        schema = self.actions[action[0]]
        binding = dict(zip(schema.parameters, action[1:]))
        names = [binding[p] for p in schema.skill_args]
        named = {n for n in names if n in world.classes and n not in world.ids}
        classes = [n if n in named else world.classes.get(n, n) for n in names]
        ids = [Skill.NAMED if n in named else world.ids[n] for n in names] \
            if all(n in world.ids or n in named for n in names) else []
        phrases = [self.phrases.get(c, c.replace("_", " ")) for c in classes]
        words = fill(schema.skill_words, phrases) if schema.skill_words else \
            " ".join([schema.skill_verb.lower(), *phrases])
        return Skill(schema.skill_verb, tuple(classes), tuple(ids), words)

    def without_skills(self, verbs: set[str]) -> Domain:
        """This domain without the actions that become one of ``verbs`` (skills the policy
        refuses), so that no plan holds them."""
        drop = {name for name, a in self.actions.items() if a.skill_verb in verbs}
        if not drop:
            return self
        text = self.text
        for name in drop:
            m = re.search(r"\(\s*:action\s+" + re.escape(name) + r"\b", text, re.IGNORECASE)
            if m is None:
                continue
            depth, end = 0, m.start()
            for end in range(m.start(), len(text)):   # to the parenthesis that closes the action
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            text = text[:m.start()] + text[end + 1:]
        return Domain(self.name, text, {n: a for n, a in self.actions.items() if n not in drop}, self.unobserved,
                      self.phrases)

    def expected(self, action: tuple[str, ...]) -> tuple[list[Atom], list[Atom]]:
        """(atoms that must hold, atoms that must not) after the action, by its unconditional effects."""
        schema = self.actions[action[0]]
        binding = dict(zip(schema.parameters, action[1:]))
        ground = lambda atom: tuple(binding.get(x, x) for x in atom)   # noqa: E731
        observed = lambda atoms: [ground(a) for a in atoms if a[0] not in self.unobserved]   # noqa: E731
        return observed(schema.adds), observed(schema.deletes)


def _params(items: list) -> tuple[str, ...]:
    return tuple(x for x in items if isinstance(x, str) and x.startswith("?"))


def _effects(effect: SExpr) -> tuple[list, list]:
    """Top-level literals of an effect; conditional and quantified parts are skipped."""
    if not isinstance(effect, list) or not effect:
        return [], []
    if effect[0] == "and":
        adds, dels = [], []
        for part in effect[1:]:
            a, d = _effects(part)
            adds += a
            dels += d
        return adds, dels
    if effect[0] == "not" and len(effect) == 2 and isinstance(effect[1], list) and \
            all(isinstance(x, str) for x in effect[1]):
        return [], [tuple(effect[1])]
    if effect[0] in ("when", "forall", "not"):
        return [], []
    if all(isinstance(x, str) for x in effect):
        return [tuple(effect)], []
    return [], []


# action -> (skill, the action's parameters it takes, its words)
SkillMap = Mapping[str, tuple[str, tuple[str, ...], str]]


def parse_domain(text: str, skills: Optional[SkillMap] = None) -> Domain:
    """The domain's actions with the skill each becomes: from ``skills`` (a world profile's),
    else from the domain's ``; skill`` lines."""
    if skills is None:
        skills = {m.group(1).lower(): (m.group(2).split()[0], tuple(m.group(2).split()[1:]), (m.group(3) or "").strip())
                  for m in re.finditer(r";\s*skill\s+([\w-]+)\s*:\s*([^\n|]*)(?:\|([^\n]*))?", text)
                  if m.group(2).split()}
    tree = parse_sexpr(text)
    if not tree or not isinstance(tree[0], list) or tree[0][:1] != ["define"]:
        raise ValueError("not a PDDL domain: it does not start with (define ...)")
    body = tree[0]
    name = next((x[1] for x in body if isinstance(x, list) and x[:1] == ["domain"]), "domain")
    actions = {}
    for part in body:
        if not (isinstance(part, list) and part[:1] == [":action"]):
            continue
        fields = {part[i]: part[i + 1] for i in range(2, len(part) - 1, 2)}
        params = _params(fields.get(":parameters", []))
        adds, dels = _effects(fields.get(":effect", []))
        mapping = skills.get(part[1])
        if mapping is None:
            raise ValueError(f"domain action {part[1]!r} has no '; skill {part[1]}: VERB ?param ...' line")
        verb, args, words = mapping
        actions[part[1]] = ActionSchema(part[1], params, tuple(adds), tuple(dels), verb.upper(),
                                        tuple(p.lower() for p in args), words)
    unobserved = frozenset(w for m in re.finditer(r";\s*unobserved\s*:([^\n]*)", text) for w in m.group(1).split())
    return Domain(name, text, actions, unobserved)


@lru_cache(maxsize=16)
def load_domain(text: str) -> Domain:
    return parse_domain(text)
