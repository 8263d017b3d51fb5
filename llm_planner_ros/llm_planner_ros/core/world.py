"""A world state as PDDL facts over a domain: what an executor reports and the planner plans from.

PlanSys2's split: the domain (a PDDL file, fixed per robot) and the problem's instances and
predicates (reported by the executor, live). :class:`WorldState` is the latter; each world's
executor reads its own (a world given in code reads it in its profile's folder).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

Atom = tuple[str, ...]   # ("on", "television_410"): predicate then arguments


@dataclass(frozen=True)
class WorldState:
    """Instances (name -> type), true ground atoms, and, per instance, its class and numeric id
    where the executor has them (``television``, 410)."""

    objects: Mapping[str, str]
    facts: frozenset[Atom]
    classes: Mapping[str, str] = field(default_factory=dict)
    ids: Mapping[str, int] = field(default_factory=dict)

    def by_id(self) -> dict[int, str]:
        return {i: name for name, i in self.ids.items()}

    def classes_by_id(self) -> dict[int, str]:
        """Instance id -> class, for the instances that have both."""
        return {i: self.classes[name] for name, i in self.ids.items() if name in self.classes}

    def instances_of(self, class_name: str) -> list[str]:
        return sorted((n for n, c in self.classes.items() if c == class_name), key=lambda n: self.ids.get(n, 0))

    def to_lines(self) -> tuple[list[str], list[str]]:
        """("name - type" lines, "(pred arg ...)" lines): the form the bridge sends over ROS."""
        return ([f"{n} - {t}" for n, t in sorted(self.objects.items())],
                [fact_line(a) for a in sorted(self.facts)])

    @classmethod
    def from_lines(cls, objects: Iterable[str], facts: Iterable[str],
                   declared: Mapping[str, str] = MappingProxyType({})) -> WorldState:
        """The inverse of :meth:`to_lines`; class and id come from names of the form ``class_id``,
        or, for an instance with its own name (``bob_office``), the class ``declared`` gives it
        (a profile's ``instances``; such an instance has no id)."""
        objs, classes, ids = {}, {}, {}
        for line in objects:
            name, _, type_ = (p.strip() for p in line.partition(" - "))
            objs[name] = type_ or "object"
            m = re.fullmatch(r"(.+)_(\d+)", name)
            if name in declared:
                classes[name] = declared[name]
            elif m:
                classes[name], ids[name] = m.group(1), int(m.group(2))
        atoms = frozenset(parse_fact(f) for f in facts if f.strip())
        return cls(objs, atoms, classes, ids)


def fact_line(atom: Atom) -> str:
    """``(pred arg ...)``: a fact as it travels over ROS."""
    return f"({' '.join(atom)})"


def parse_fact(line: str) -> Atom:
    """The inverse of :func:`fact_line`."""
    return tuple(line.strip().strip("()").split())


def class_of(instance: str) -> str:
    """``cup_1`` -> ``cup``: an instance is its class and a number (a profile's named instances
    have their class declared: ``WorldProfile.class_of``)."""
    m = re.fullmatch(r"(.+)_(\d+)", instance)
    return m.group(1) if m else instance


def fill(template: str, names: Sequence[str]) -> str:
    """``template`` with ``{i}`` the i-th of ``names``; a proper name (``Alice``, ``Bob's desk``)
    drops the article before it: "the {0} has the {1}" -> "Alice has the book"."""
    def one(m: re.Match) -> str:
        name = names[int(m.group(2))]
        return name if m.group(1) and name[:1].isupper() else (m.group(1) or "") + name
    return re.sub(r"(\b[Tt]he )?\{(\d+)\}", one, template)


def object_name(class_name: str, node_id: int) -> str:
    return f"{re.sub(r'[^a-z0-9_]', '_', class_name.lower())}_{node_id}"
