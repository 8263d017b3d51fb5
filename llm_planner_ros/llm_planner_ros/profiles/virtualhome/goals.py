"""What goal conditions may say in VirtualHome: its domain's predicates, friendly relation
names (``(on cup table)``, ``(inside milk fridge)``, ``(close character tv)``, ``(holds
character cup)``: either hand), VirtualHome's synonyms for classes (``tv``), action goals as
EAI writes them (``LOOKAT|WATCH``), and EAI's goal conditions as a spec."""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from llm_planner_ros.core.world import WorldState, object_name
from llm_planner_ros.pddl.goals import GoalSpec, GoalVocabulary, Literal, predicate_types
from llm_planner_ros.pddl.invariants import pairs
from llm_planner_ros.profiles.virtualhome.resources import domain_text

# (friendly name, arity): resolved to domain predicates by what the arguments are
ALIASES = frozenset({("on", 2), ("inside", 2), ("in", 2), ("close", 2), ("holds", 2), ("facing", 2), ("near", 2)})
# Pairs of atoms that cannot hold together (a goal asking for both is contradictory)
MUTEX = (("on", "off"), ("open", "closed"), ("plugged_in", "plugged_out"), ("sitting", "lying"),
         ("holds_rh", "holds_lh"))
# verb -> properties its object needs (any of them); absent: any object
ACTION_OBJECTS = {
    "DRINK": ("drinkable", "recipient"), "WATCH": ("lookable",), "READ": ("readable",), "TYPE": ("typeable",),
    "SWITCHON": ("has_switch",), "SWITCHOFF": ("has_switch",), "EAT": ("eatable",), "PUTON": ("clothes",),
    "GRAB": ("grabbable",), "PUSH": ("movable",), "POUR": ("pourable", "drinkable"),
}


def resolve_alias(pred: str, args: tuple[str, ...], world: WorldState) -> tuple[str, ...]:
    """The domain predicates a friendly relation name means, by what its arguments are."""
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


def _name_equivalence() -> dict[str, list[str]]:
    try:
        from virtualhome_eval.simulation.evolving_graph import utils
        return utils.load_name_equivalence()
    except Exception:   # the synonyms are a convenience; classes still resolve without them
        return {}


def synonyms() -> dict[str, tuple[str, ...]]:
    """Word -> the classes it may name, from VirtualHome's name equivalence (both ways)."""
    out: dict[str, set[str]] = {}
    for name, others in _name_equivalence().items():
        for other in others:
            out.setdefault(name.lower(), set()).add(other.lower())
            out.setdefault(other.lower(), set()).add(name.lower())
    return {k: tuple(sorted(v)) for k, v in out.items()}


@lru_cache(maxsize=1)
def signature() -> dict[str, tuple[str, ...]]:
    """Predicate -> parameter types of VirtualHome's domain."""
    return predicate_types(domain_text())


@lru_cache(maxsize=1)
def vocabulary() -> GoalVocabulary:
    types = signature()
    return GoalVocabulary({p: len(t) for p, t in types.items()}, "", synonyms(), agent_type="character",
                          types=types, aliases=ALIASES, resolve=resolve_alias, action_objects=ACTION_OBJECTS,
                          mutex=pairs(MUTEX), room_predicate="is_room", location_predicate="inside_room")


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
