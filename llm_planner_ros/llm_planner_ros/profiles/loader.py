"""A world profile: what a robot can do and what its world holds, as data.

A profile is a YAML file beside a plain PDDL domain (``profiles/<name>/profile.yaml``): for each
action the skill it becomes on the robot, the action parameters the skill takes and its words;
for each predicate a fact in words (and its negation); the object classes and the words people
use for them; which object is the agent; optional annotated example goals. The domain stays a
file that Fast Downward, unified-planning and PlanSys2 read unchanged; words, synonyms and
examples are lists and templates that PDDL comments would hold badly, and YAML gets pydantic's
field-named errors. A profile is validated once, against its domain, with clear errors.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import class_of, fill
from llm_planner_ros.core.yaml_files import load_yaml
from llm_planner_ros.pddl.domain import Domain, parse_domain, parse_sexpr
from llm_planner_ros.pddl.goals import GoalVocabulary
from llm_planner_ros.pddl.invariants import Exclusive, domain_invariants, pairs
from llm_planner_ros.pddl.problem import ReachableCut, RelevantObjects
from llm_planner_ros.pddl.semantics import DomainDef, PddlError, fact_problem, read_domain, read_problem
from llm_planner_ros.safety.hazards import HazardEntry, Hazards
from llm_planner_ros.safety.hazards import problems as hazard_problems

_SLOT = re.compile(r"\{(\d+)\}")
# a class's or a named instance's name, as a PDDL object is named; what people say, never blank
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")]
Words = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
MAX_PROFILE_BYTES = 1 << 20   # a profile's YAML, and its domain: words and examples, not a world
MAX_WORLD_BYTES = 16 << 20    # a reference world (a building's objects and facts)


class ProfileError(ValueError):
    """A profile that does not hold together; the message names the file and the entry."""


class ActionWords(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$", description="the skill the robot is sent, e.g. PICK")
    args: tuple[str, ...] = Field(description="the action's parameters the skill takes, in order, e.g. ['?i']")
    words: str = Field(min_length=1, description="the skill in words; {i} is the i-th of args")


class FactWords(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    words: str = Field(min_length=1, description="the fact in words; {i} is its i-th argument")
    negated: str = Field("", description="the fact's negation in words (default: 'not: <words>')")
    observed: bool = Field(True, description="the robot reports this fact (an effect it can check)")


class NamedInstance(BaseModel):
    """An instance with its own name (``bob_office``, ``alice``) rather than ``<class>_<id>``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    class_: str = Field(alias="class", description="its object class, a key of objects")
    words: tuple[Words, ...] = Field((), description="what people call it, e.g. [\"Bob's office\"] "
                                                   "(default: its name with spaces)")


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: Words
    goal: tuple[str, ...] = Field(min_length=1, description="goal literals over object classes")
    world: str = Field("", description="the world (scene) it is planned in, of those the profile offers; "
                                       "default: the reference world")


class ProfileFile(BaseModel):
    """The YAML file's schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    domain: str = Field(description="the PDDL domain, relative to the profile file")
    world: str = Field("", description="a reference world (PDDL problem), relative to the profile file")
    agent: Optional[str] = Field(None, description="the object that is the robot, if the domain has one")
    actions: dict[str, ActionWords]
    predicates: dict[str, FactWords]
    objects: dict[Name, tuple[Words, ...]] = Field(description="object class -> the words people use for it")
    instances: dict[Name, NamedInstance] = Field(
        {}, description="instances that keep their own names (bob_office: {class: office, words: [Bob's office]}, "
                        "or just bob_office: office); every other instance is named <class>_<id>")
    goal_classes: Literal["any", "every"] = Field(
        "any", description="what a class in a goal condition means: 'any' one instance (the same wherever the "
                           "class appears), or 'every' instance of the literal's first class (its other classes: "
                           "any instance, chosen per instance of the first), as in 'put the books in a box'")
    exclusive: tuple[tuple[str, str], ...] = Field(
        (), description="pairs of facts that cannot both hold of the same objects, e.g. [inside, ontop]: an "
                        "interpreted goal keeps the better matched (method interpret)")
    examples: tuple[Example, ...] = ()
    never: tuple[HazardEntry, ...] = Field(
        (), description="states that must never come about (docs/safety.md): each a conjunction of literals "
                        "over the domain's predicates, with variables and the object classes each may be")

    @field_validator("instances", mode="before")
    @classmethod
    def _class_alone(cls, value: object) -> object:
        """``bob_office: office`` is ``bob_office: {class: office}``."""
        if isinstance(value, dict):
            return {k: {"class": v} if isinstance(v, str) else v for k, v in value.items()}
        return value


@dataclass(frozen=True)
class WorldProfile:
    spec: ProfileFile
    domain_text: str
    domain: DomainDef
    world_text: str
    text: str = ""   # the profile file as written: what an executor sends over GetWorldState
    worlds: Mapping[str, str] = field(default_factory=dict)   # scene -> its problem text, where it offers several

    @property
    def name(self) -> str:
        return self.spec.name

    def planning_domain(self) -> Domain:
        """The domain as the goal-directed planner reads it: each action with its skill and words."""
        return _planning_domain(self.domain_text, tuple(
            (name, (a.skill, a.args, a.words)) for name, a in self.spec.actions.items()), tuple(
            (cls, self.phrase(cls)) for cls in (*self.spec.objects, *self.spec.instances)
            if self.phrase(cls) != cls.replace("_", " ")),
            frozenset(name for name, fact in self.spec.predicates.items() if not fact.observed))

    def goal_vocabulary(self) -> GoalVocabulary:
        return GoalVocabulary(dict(self.domain.predicates), self.spec.agent or "",
                              {word: (cls,) for word, cls in synonyms(self).items()},
                              every_instance=self.spec.goal_classes == "every", mutex=self.exclusive)

    @cached_property
    def exclusive(self) -> tuple[Exclusive, ...]:
        """What cannot hold together: the profile's ``exclusive`` pairs, and the invariants Fast
        Downward proves of its domain that its reference world (if any) keeps."""
        facts = read_problem(self.world_text).init if self.world_text else frozenset()
        return pairs(self.spec.exclusive) + tuple(x for x in domain_invariants(self.domain_text) if not x.broken(facts))

    @cached_property
    def relevant_objects(self) -> RelevantObjects:
        """What a goal's problem keeps of a large world: what the goal's objects and the agent
        reach through the world's facts (:class:`ReachableCut`); a world cheap to ground whole."""
        return ReachableCut(self.spec.agent or "", domain=self.domain)

    @cached_property
    def hazards(self) -> Hazards:
        """The states its ``never:`` entries forbid."""
        return Hazards(self.spec.never, self.domain)

    @cached_property
    def skill_names(self) -> frozenset[str]:
        """Every skill of this robot (the policy's lists name them)."""
        return frozenset(a.skill for a in self.spec.actions.values())

    @cached_property
    def object_names(self) -> frozenset[str]:
        """Every object class and named instance (the policy's lists name them)."""
        return frozenset(self.spec.objects) | frozenset(self.spec.instances)

    @cached_property
    def declared_classes(self) -> dict[str, str]:
        """Each named instance -> its class (``WorldState.from_lines``'s ``declared``)."""
        return {name: named.class_ for name, named in self.spec.instances.items()}

    def class_of(self, instance: str) -> str:
        """An instance's class: declared for a named instance, else read from ``<class>_<id>``."""
        named = self.spec.instances.get(instance)
        return named.class_ if named else class_of(instance)

    @cached_property
    def _instance_words(self) -> tuple[tuple[str, str], ...]:
        """(word, named instance), the longest words first."""
        pairs = {(w.lower(), n) for n, named in self.spec.instances.items()
                 for w in (*named.words, n.replace("_", " "))}
        return tuple(sorted(pairs, key=lambda p: (-len(p[0]), p)))

    def named_in(self, text: str) -> tuple[str, ...]:
        """The named instances ``text`` names by one of their words or their name, whole words,
        the longest first ("Alice's desk" is the desk, not Alice too)."""
        text = " " + re.sub(r"\s+", " ", text.lower()) + " "
        out: list[str] = []
        for word, name in self._instance_words:
            m = word in text and re.search(rf"(?<![\w']){re.escape(word)}(?![\w'])", text)
            if m and name not in out:
                out.append(name)
                text = text[:m.start()] + " \0 " + text[m.end():]
        return tuple(out)

    def phrase(self, cls: str) -> str:
        """How a class (or a named instance) is said: its name with spaces, or, for a name with
        numbers in it (``cup_n_01``), the first word the profile gives for it; a named instance's
        first word, where it has words."""
        named = self.spec.instances.get(cls)
        if named is not None:
            return named.words[0] if named.words else cls.replace("_", " ")
        words = self.spec.objects.get(cls, ())
        return words[0] if words and re.search(r"_\d", cls) else cls.replace("_", " ")

    def skill(self, action: str, classes: tuple[str, ...]) -> Skill:
        """The skill a domain action becomes on ``classes`` (its skill args), in the profile's words."""
        words = self.spec.actions[action]
        return Skill(words.skill, classes, text=fill(words.words, [self.phrase(c) for c in classes]))

    def skill_problem(self, skill: Skill) -> str:
        """Why ``skill`` is not one this robot has (its skill, its number of objects, object
        classes of this world), or "" when it is."""
        arities = sorted({len(a.args) for a in self.spec.actions.values() if a.skill == skill.action})
        if not arities:
            return (f"{skill.action or skill.text!r} is not a skill of the {self.name} profile; its skills: "
                    f"{', '.join(sorted({a.skill for a in self.spec.actions.values()}))}")
        if len(skill.objects) not in arities:
            return f"{skill.action} takes {' or '.join(map(str, arities))} object(s), got {len(skill.objects)}"
        unknown = [o for o in skill.objects if o not in self.spec.objects and o not in self.spec.instances]
        return f"{unknown[0]!r} is not an object class of the {self.name} profile" if unknown else ""

    def say(self, literal: str) -> str:
        """A ground literal in the profile's words: ``(holding robot_1 cup_1)`` -> "I am holding
        the cup"; ``(not (open fridge_1))`` -> "the fridge is closed"."""
        tree = parse_sexpr(literal)
        atom, negated = tree[0], False
        if isinstance(atom, list) and atom[:1] == ["not"]:
            atom, negated = atom[1], True
        if not (isinstance(atom, list) and atom and all(isinstance(x, str) for x in atom)):
            return literal
        facts = self.spec.predicates.get(atom[0])
        if facts is None:
            return literal
        names = [self.phrase(x if x in self.spec.objects or x in self.spec.instances else class_of(x))
                 for x in atom[1:]]
        if negated:
            return fill(facts.negated, names) if facts.negated else f"not: {fill(facts.words, names)}"
        return fill(facts.words, names)

    def why_not(self, missing: str) -> str:
        """What an unmet precondition means, in words: a missing ``(not X)`` is X holding."""
        tree = parse_sexpr(missing)
        atom = tree[0] if tree else None
        if isinstance(atom, list) and atom[:1] == ["not"] and isinstance(atom[1], list) \
                and all(isinstance(x, str) for x in atom[1]):
            return self.say(f"({' '.join(atom[1])})")
        if isinstance(atom, list) and all(isinstance(x, str) for x in atom):
            return self.say(f"(not ({' '.join(atom)}))")
        return f"{missing} does not hold"


def _check(spec: ProfileFile, domain: DomainDef, world_text: str, where: str) -> None:
    problems = []
    missing = sorted(set(domain.actions) - set(spec.actions))
    extra = sorted(set(spec.actions) - set(domain.actions))
    if missing:
        problems.append(f"actions: no entry for the domain's action(s) {', '.join(missing)}")
    if extra:
        problems.append(f"actions: {', '.join(extra)} not in the domain")
    skills: dict[str, str] = {}
    for name, act in spec.actions.items():
        if act.skill in skills:
            problems.append(f"actions.{name}: skill {act.skill} is also actions.{skills[act.skill]}'s")
        skills[act.skill] = name
        params = {p for p, _ in domain.actions[name].parameters} if name in domain.actions else set()
        problems += [f"actions.{name}.args: {a} is not a parameter of {name}" for a in act.args if a not in params]
        problems += [f"actions.{name}.args: {a} is given twice" for a in sorted(set(act.args)) if act.args.count(a) > 1]
        problems += [f"actions.{name}.words: {{{i}}} but {len(act.args)} arg(s)"
                     for i in map(int, _SLOT.findall(act.words)) if i >= len(act.args)]
        problems += _template_problems(f"actions.{name}.words", act.words)
    missing = sorted(set(domain.predicates) - set(spec.predicates))
    if missing:
        problems.append(f"predicates: no words for {', '.join(missing)}")
    for name, facts in spec.predicates.items():
        arity = domain.predicates.get(name)
        if arity is None:
            problems.append(f"predicates.{name}: not in the domain")
            continue
        for key in ("words", "negated"):
            problems += [f"predicates.{name}.{key}: {{{i}}} but {name} has {arity} argument(s)"
                         for i in map(int, _SLOT.findall(getattr(facts, key))) if i >= arity]
            problems += _template_problems(f"predicates.{name}.{key}", getattr(facts, key))
    problems += [f"exclusive: {name} is not a predicate of the domain"
                 for pair in spec.exclusive for name in pair if name not in domain.predicates]
    objects = set(spec.instances) | ({spec.agent} if spec.agent is not None else set())
    if world_text:
        try:
            world = read_problem(world_text)
        except PddlError as exc:
            problems.append(f"world: {exc}")
        else:
            objects |= set(world.objects)
            ids: dict[str, str] = {}
            for o in world.objects:
                m = re.fullmatch(r"(.+)_(\d+)", o)
                if o in spec.instances:
                    continue
                if m is None:
                    problems.append(f"world: {o!r} is not named <class>_<id> (or declared in instances)")
                elif m.group(2) in ids:
                    problems.append(f"world: {o!r} and {ids[m.group(2)]!r} share the id {m.group(2)} (ids are unique)")
                else:
                    ids[m.group(2)] = o
            unknown = sorted({spec.instances[o].class_ if o in spec.instances else class_of(o)
                              for o in world.objects} - set(spec.objects))
            if unknown:
                problems.append(f"objects: no entry for the world's class(es) {', '.join(unknown)}")
            if spec.agent is not None and spec.agent not in world.objects:
                problems.append(f"agent: {spec.agent!r} is not an object of the world")
            problems += [f"world: the fact ({' '.join(atom)}): {why}"
                         for atom in sorted(world.init) if (why := fact_problem(domain, atom))]
    for name, named in spec.instances.items():
        if named.class_ not in spec.objects:
            problems.append(f"instances.{name}: its class {named.class_!r} is not an entry of objects")
        if name in spec.objects:
            problems.append(f"instances.{name}: also an object class (an instance's name must not be one)")
    for i, example in enumerate(spec.examples):
        for literal in example.goal:
            problems += [f"examples[{i}] ({example.task!r}): {p}" for p in _literal_problems(literal, spec, domain)]
    problems += hazard_problems(spec.never, domain, spec.objects, "never", objects)
    if problems:
        raise ProfileError(f"{where}: " + "; ".join(problems))


def _template_problems(where: str, template: str) -> list[str]:
    """A brace that is not part of a ``{i}`` slot (``{x}``, ``{0``): said as written otherwise."""
    rest = _SLOT.sub("", template)
    return [f"{where}: {template!r} has a brace outside a slot such as {{0}}"] if "{" in rest or "}" in rest else []


def _literal_problems(literal: str, spec: ProfileFile, domain: DomainDef) -> list[str]:
    try:
        tree = parse_sexpr(literal)
    except ValueError as exc:
        return [f"{literal!r}: {exc}"]
    atom = tree[0] if len(tree) == 1 else None
    if isinstance(atom, list) and atom[:1] == ["not"] and len(atom) == 2:
        atom = atom[1]
    if not (isinstance(atom, list) and atom and all(isinstance(x, str) for x in atom)):
        return [f"{literal!r} is not a literal such as '(on cup table)'"]
    arity = domain.predicates.get(atom[0])
    if arity is None:
        return [f"{literal!r}: unknown predicate {atom[0]!r}"]
    if len(atom) - 1 != arity:
        return [f"{literal!r}: {atom[0]} takes {arity} argument(s)"]
    return [f"{literal!r}: {a!r} is not an object class of the profile" for a in atom[1:]
            if a not in spec.objects and class_of(a) not in spec.objects and a not in spec.instances]


@lru_cache(maxsize=16)
def _planning_domain(domain_text: str, skills: tuple, phrases: tuple, unobserved: frozenset[str]) -> Domain:
    """``unobserved``: the predicates the profile marks ``observed: false``, beside the domain's
    ``; unobserved:`` comment."""
    domain = parse_domain(domain_text, dict(skills))
    return replace(domain, phrases=dict(phrases), unobserved=domain.unobserved | unobserved)


def _spec(text: str, where: str) -> ProfileFile:
    try:
        return ProfileFile(**(load_yaml(text) or {}))
    except yaml.YAMLError as exc:
        raise ProfileError(f"{where}: {exc}") from None
    except ValidationError as exc:
        from llm_planner_ros.core.request import describe_validation_error

        raise ProfileError(f"{where}: {describe_validation_error(exc)}") from None
    except TypeError as exc:   # not a mapping
        raise ProfileError(f"{where}: not a profile (a YAML mapping): {exc}") from None


def _bounded(what: str, size: int, limit: int, where: str) -> None:
    """A profile is untrusted input: one too large to validate quickly is refused unread."""
    if size > limit:
        raise ProfileError(f"{where}: its {what} is {size:,} bytes; the limit is {limit:,} "
                           "(a profile holds words and example goals; a world's facts come with its state)")


def load_profile(path: Path | str) -> WorldProfile:
    """Read and validate a profile file (raises :class:`ProfileError` naming what is wrong)."""
    path = Path(path)
    try:
        _bounded("profile", path.stat().st_size, MAX_PROFILE_BYTES, str(path))
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: {exc}") from None
    spec = _spec(text, str(path))
    try:
        _bounded("domain", (path.parent / spec.domain).stat().st_size, MAX_PROFILE_BYTES, str(path))
        domain_text = (path.parent / spec.domain).read_text(encoding="utf-8")
        world_text = ""
        if spec.world:
            _bounded("world", (path.parent / spec.world).stat().st_size, MAX_WORLD_BYTES, str(path))
            world_text = (path.parent / spec.world).read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: {exc}") from None
    return profile_from_texts(text, domain_text, world_text, str(path))


def profile_from_texts(text: str, domain_text: str, world_text: str = "", where: str = "profile",
                       worlds: Optional[Mapping[str, str]] = None) -> WorldProfile:
    """A profile from its file's text and its domain's (what a robot sends over GetWorldState).
    ``worlds``: the scenes it offers (name -> problem text), which examples may name."""
    for what, part, limit in (("profile", text, MAX_PROFILE_BYTES), ("domain", domain_text, MAX_PROFILE_BYTES),
                              ("world", world_text, MAX_WORLD_BYTES)):
        _bounded(what, len(part.encode("utf-8", "surrogatepass")), limit, where)
    spec = _spec(text, where)
    try:
        domain = read_domain(domain_text)
    except (PddlError, ValueError) as exc:
        raise ProfileError(f"{where}: {exc}") from None
    _check(spec, domain, world_text, where)
    unknown = sorted({e.world for e in spec.examples if e.world and e.world not in (worlds or {})})
    if unknown:
        raise ProfileError(f"{where}: examples name worlds the profile does not offer: {', '.join(unknown[:5])}")
    return WorldProfile(spec, domain_text, domain, world_text, text, dict(worlds or {}))


def validated_profile(text: str, domain_text: str, where: str = "profile") -> WorldProfile:
    """:func:`profile_from_texts` of a robot's reply, validated once per text: the same texts give
    the same profile, or raise the same :class:`ProfileError`, without validating them again."""
    key = hashlib.sha256(f"{len(text)}:{text}{domain_text}{where}".encode("utf-8", "surrogatepass")).digest()
    with _validated_lock:
        known = _validated.get(key)
    if known is None:
        try:
            known = profile_from_texts(text, domain_text, where=where)
        except ProfileError as exc:
            known = exc
        with _validated_lock:
            _validated[key] = known
            while len(_validated) > 8:
                _validated.pop(next(iter(_validated)))
    if isinstance(known, ProfileError):
        raise ProfileError(str(known))
    return known


_validated: dict[bytes, WorldProfile | ProfileError] = {}
_validated_lock = threading.Lock()


def find_profile(name_or_path: str) -> WorldProfile:
    """A shipped profile by name (``mobile_manipulator``), or a profile file by path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return load_profile(path)
    candidate = shipped(name_or_path)
    if not candidate.exists():
        root = Path(str(resources.files("llm_planner_ros.profiles")))
        names = sorted(p.parent.name for p in root.glob("*/profile.yaml"))
        raise ProfileError(f"profile {name_or_path!r}: no such file, and no shipped profile of that name; "
                           f"shipped: {', '.join(names)}")
    return load_profile(candidate)


def shipped(name: str) -> Path:
    """The profile file of a profile shipped with the package (e.g. ``mobile_manipulator``)."""
    return Path(str(resources.files("llm_planner_ros.profiles") / name / "profile.yaml"))


def synonyms(profile: WorldProfile) -> Mapping[str, str]:
    """Every word for an object class -> the class (the class's own name too); a named
    instance's words -> the instance."""
    out: dict[str, str] = {}
    for cls, words in profile.spec.objects.items():
        for word in (cls.replace("_", " "), profile.phrase(cls), *words):
            out.setdefault(word.lower(), cls)
    for name, named in profile.spec.instances.items():
        for word in (name.replace("_", " "), *named.words):
            out.setdefault(word.lower(), name)
    return out
