"""VirtualHome atomic actions and their two-way natural-language templates (Huang et al. A.4).

Each action has a template with ``{0}``/``{1}`` for its objects. Object names are rendered with
spaces ("coffee_table" -> "coffee table"); parsing maps them back through a known vocabulary.
The property rules say which object classes an action admits; they follow the affordance checks
of the evolving-graph simulator's executors (``virtualhome_eval.simulation.evolving_graph``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.core.types import Skill


@dataclass(frozen=True)
class ActionSpec:
    name: str
    template: str
    # One entry per argument: the object must have ANY of these properties (empty = any object).
    arg_properties: tuple[frozenset[str], ...] = ()
    # Properties the single argument must ALL have (used by CUT: EATABLE and CUTTABLE).
    arg_requires_all: frozenset[str] = frozenset()

    @property
    def arity(self) -> int:
        return self.template.count("{")


def _p(*names: str) -> frozenset[str]:
    return frozenset(names)


ANY = _p()
GRAB = _p("GRABBABLE")

ACTIONS: dict[str, ActionSpec] = {a.name: a for a in [
    ActionSpec("WALK", "walk to {0}", (ANY,)),
    ActionSpec("RUN", "run to {0}", (ANY,)),
    ActionSpec("FIND", "find {0}", (ANY,)),
    ActionSpec("TURNTO", "turn to {0}", (ANY,)),
    ActionSpec("LOOKAT", "look at {0}", (ANY,)),
    ActionSpec("LOOKAT_SHORT", "glance at {0}", (ANY,)),
    ActionSpec("LOOKAT_LONG", "stare at {0}", (ANY,)),
    ActionSpec("POINTAT", "point at {0}", (ANY,)),
    ActionSpec("TOUCH", "touch {0}", (ANY,)),
    ActionSpec("WIPE", "wipe {0}", (ANY,)),
    ActionSpec("WASH", "wash {0}", (ANY,)),
    ActionSpec("RINSE", "rinse {0}", (ANY,)),
    ActionSpec("SCRUB", "scrub {0}", (ANY,)),
    ActionSpec("GRAB", "grab {0}", (_p("GRABBABLE"),)),
    ActionSpec("RELEASE", "release {0}", (GRAB,)),
    ActionSpec("DROP", "drop {0}", (GRAB,)),
    ActionSpec("PUTOBJBACK", "put back {0}", (GRAB,)),
    ActionSpec("OPEN", "open {0}", (_p("CAN_OPEN"),)),
    ActionSpec("CLOSE", "close {0}", (_p("CAN_OPEN"),)),
    ActionSpec("SWITCHON", "switch on {0}", (_p("HAS_SWITCH"),)),
    ActionSpec("SWITCHOFF", "switch off {0}", (_p("HAS_SWITCH"),)),
    ActionSpec("TYPE", "type on {0}", (_p("HAS_SWITCH"),)),
    ActionSpec("PLUGIN", "plug in {0}", (_p("HAS_PLUG"),)),
    ActionSpec("PLUGOUT", "plug out {0}", (_p("HAS_PLUG"),)),
    ActionSpec("SIT", "sit on {0}", (_p("SITTABLE"),)),
    ActionSpec("LIE", "lie on {0}", (_p("LIEABLE"),)),
    ActionSpec("WATCH", "watch {0}", (_p("LOOKABLE"),)),
    ActionSpec("READ", "read {0}", (_p("READABLE"),)),
    ActionSpec("DRINK", "drink {0}", (_p("DRINKABLE", "RECIPIENT"),)),
    ActionSpec("EAT", "eat {0}", (_p("EATABLE"),)),
    ActionSpec("CUT", "cut {0}", (ANY,), arg_requires_all=_p("EATABLE", "CUTTABLE")),
    ActionSpec("PUTON", "put on {0}", (_p("CLOTHES"),)),
    ActionSpec("PUTOFF", "take off {0}", (_p("CLOTHES"),)),
    ActionSpec("SQUEEZE", "squeeze {0}", (_p("CLOTHES"),)),
    ActionSpec("PUSH", "push {0}", (_p("MOVABLE"),)),
    ActionSpec("PULL", "pull {0}", (_p("MOVABLE"),)),
    ActionSpec("MOVE", "move {0}", (_p("MOVABLE"),)),
    ActionSpec("GREET", "greet {0}", (_p("PERSON"),)),
    ActionSpec("PUTBACK", "put {0} on {1}", (GRAB, _p("SURFACES"))),
    ActionSpec("PUTIN", "put {0} in {1}", (GRAB, _p("CONTAINERS", "CAN_OPEN"))),
    ActionSpec("POUR", "pour {0} into {1}", (_p("POURABLE", "DRINKABLE"), _p("RECIPIENT"))),
    ActionSpec("STANDUP", "stand up"),
    ActionSpec("SLEEP", "sleep"),
    ActionSpec("WAKEUP", "wake up"),
]}

# (action, argument) -> classes admitted whatever their properties: the simulator's own class
# exceptions (GRAB, OPEN, CLOSE, TYPE, POUR), and the appliances EAI's goals put things ON
# (PUTBACK onto dishwasher, washing machine, coffee maker, oven; the simulator admits any target).
EXTRA_ADMITTED: dict[tuple[str, int], frozenset[str]] = {
    ("GRAB", 0): frozenset({"water", "child"}), ("OPEN", 0): frozenset({"desk", "window"}),
    ("CLOSE", 0): frozenset({"desk", "window"}), ("TYPE", 0): frozenset({"keyboard"}),
    ("POUR", 1): frozenset({"hands_both", "sponge", "face"}),
    ("PUTBACK", 1): frozenset({"dishwasher", "washing_machine", "coffe_maker", "oven"}),
}


def object_phrase(name: str) -> str:
    return name.replace("_", " ")


def skill_text(action: str, objects: Iterable[str]) -> str:
    """Natural-language form, e.g. ``skill_text("PUTIN", ["milk", "fridge"]) == "put milk in fridge"``."""
    spec = ACTIONS[action]
    objs = [object_phrase(o) for o in objects]
    if len(objs) != spec.arity:
        raise ValueError(f"{action} takes {spec.arity} objects, got {len(objs)}")
    return spec.template.format(*objs)


def make_skill(action: str, objects: Iterable[str] = (), object_ids: Iterable[int] = ()) -> Skill:
    objects = tuple(objects)
    return Skill(action=action, objects=objects, object_ids=tuple(object_ids),
                 text=skill_text(action, objects))


def admits(spec: ActionSpec, arg: int, name: str, properties: frozenset[str]) -> bool:
    """Whether ``spec`` admits an object with ``properties`` as argument ``arg``."""
    if name in EXTRA_ADMITTED.get((spec.name, arg), ()):
        return True
    if arg == 0 and spec.arg_requires_all and not spec.arg_requires_all <= properties:
        return False
    wanted = spec.arg_properties[arg]
    return not wanted or bool(wanted & properties)


class SkillParser:
    """Parse natural-language or script-syntax skills back into :class:`Skill` objects."""

    _SCRIPT = re.compile(r"^\s*\[(\w+)\]((?:\s*<[^>]+>\s*\([\d.]+\))*)\s*$")
    _ARG = re.compile(r"<([^>]+)>\s*\(([\d.]+)\)")

    def __init__(self, object_names: Iterable[str]) -> None:
        self._objects = {object_phrase(n).lower(): n for n in object_names}
        self._patterns = []
        for spec in ACTIONS.values():
            regex = re.escape(spec.template).replace(r"\{0\}", "(.+)").replace(r"\{1\}", "(.+)")
            self._patterns.append((spec, re.compile(f"^{regex}$")))

    def parse_text(self, text: str) -> Optional[Skill]:
        """``"put milk in fridge"`` -> ``Skill("PUTIN", ("milk", "fridge"))``; None if no match."""
        t = " ".join(text.lower().strip().rstrip(".").split())
        for spec, pattern in self._patterns:
            m = pattern.match(t)
            if m is None:
                continue
            names = [self._objects.get(g) for g in m.groups()]
            if all(n is not None for n in names):
                return make_skill(spec.name, [n for n in names if n is not None])
        return None

    @classmethod
    def parse_script(cls, line: str) -> Skill:
        """``"[PUTIN] <milk> (1.12) <fridge> (1.7)"`` -> Skill; raises ValueError when malformed."""
        m = cls._SCRIPT.match(line)
        if m is None:
            raise ValueError(f"not a script line: {line!r}")
        action = m.group(1).upper()
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r} in {line!r}")
        args = cls._ARG.findall(m.group(2))
        ids = tuple(int(float(i.split(".")[-1])) if "." in i else int(i) for _, i in args)
        return make_skill(action, [a.strip().lower().replace(" ", "_") for a, _ in args], ids)
