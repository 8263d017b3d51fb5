"""VirtualHome's world as PDDL facts: :func:`from_virtualhome_graph` reads an evolving-graph
state with the predicates of ``profiles/virtualhome/domain.pddl``; :func:`with_done` adds the
action goals a script has done."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from llm_planner_ros.pddl.world import Atom, WorldState, object_name
from llm_planner_ros.profiles.virtualhome.goals import signature as goal_signature

# Affordance predicates: what the simulator's checks allow (node properties and its class
# exceptions) AND what the safety gate admits (vocabulary.py, by class), so a plan never
# holds a skill the gate would refuse. predicate -> (node properties, sim class exceptions, gate rule)
_AFFORDANCES = {
    "grabbable": ({"GRABBABLE"}, {"water", "child"}, ("GRAB", 0)),
    "can_open": ({"CAN_OPEN"}, {"desk", "window"}, ("OPEN", 0)),
    "has_switch": ({"HAS_SWITCH"}, set(), ("SWITCHON", 0)),
    "has_plug": ({"HAS_PLUG"}, set(), ("PLUGIN", 0)),
    "lookable": ({"LOOKABLE"}, set(), ("WATCH", 0)),
    "readable": ({"READABLE"}, set(), ("READ", 0)),
    "drinkable": ({"DRINKABLE"}, set(), ("DRINK", 0)),
    "recipient": ({"RECIPIENT"}, set(), ("DRINK", 0)),
    "pourable": ({"POURABLE", "DRINKABLE"}, set(), ("POUR", 0)),
    "pour_target": ({"RECIPIENT"}, {"hands_both", "sponge", "face"}, ("POUR", 1)),
    "sittable": ({"SITTABLE"}, set(), ("SIT", 0)),
    "lieable": ({"LIEABLE"}, set(), ("LIE", 0)),
    "clothes": ({"CLOTHES"}, set(), ("PUTON", 0)),
    "eatable": ({"EATABLE"}, set(), ("EAT", 0)),
    "surfaces": (None, set(), ("PUTBACK", 1)),           # the simulator puts on anything
    "containers": (None, set(), ("PUTIN", 1)),
    "movable": ({"MOVABLE"}, set(), ("PUSH", 0)),
    "typeable": ({"HAS_SWITCH"}, {"keyboard"}, ("TYPE", 0)),
    "body_part": ({"BODY_PART"}, set(), None),
}
_CLASS_PROPERTIES = {"water": ("is_water",)}


@lru_cache(maxsize=4096)
def _affordances(class_name: str, node_props: frozenset[str]) -> tuple[str, ...]:
    from llm_planner_ros.profiles.virtualhome import resources
    from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, admits

    class_props = resources.object_properties().get(class_name, frozenset(node_props))
    out = []
    for pred, (props, exceptions, gate) in _AFFORDANCES.items():
        sim_ok = props is None or bool(props & node_props) or class_name in exceptions
        gate_ok = gate is None or admits(ACTIONS[gate[0]], gate[1], class_name, class_props)
        if sim_ok and gate_ok:
            out.append(pred)
    return tuple(out)


_STATES = {"ON": "on", "OFF": "off", "OPEN": "open", "CLOSED": "closed",
           "PLUGGED_IN": "plugged_in", "PLUGGED_OUT": "plugged_out"}
STATE_NAMES = {pred: state for state, pred in _STATES.items()}   # predicate -> VirtualHome state
# Sit / lie occupancy limits of the simulator (SitExecutor / LieExecutor); other classes: 1
SIT_LIMITS = {"couch": 4, "bed": 4, "chair": 1, "loveseat": 2, "sofa": 4, "toilet": 1, "pianobench": 2, "bench": 2}
LIE_LIMITS = {"couch": 2, "bathtub": 2, "bed": 3, "loveseat": 2, "sofa": 2, "bench": 1}


def from_virtualhome_graph(graph: Mapping) -> WorldState:
    """The facts of an evolving-graph state (``EnvironmentState.to_dict()`` or a recorded graph).

    Held objects keep no CLOSE or room facts: the simulator drops them on the next walk, so the
    model claims neither (it never states a fact the simulator may not have)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    names = {i: object_name(n["class_name"], i) for i, n in nodes.items()}
    rooms = {i for i, n in nodes.items() if n.get("category") == "Rooms"}
    chars = {i for i, n in nodes.items() if n["class_name"] == "character"}
    objects = {names[i]: ("character" if i in chars else "object") for i in nodes}
    facts: set[Atom] = set()
    for i, n in nodes.items():
        if i in chars:
            for s in n.get("states", ()):
                if s in ("SITTING", "LYING"):
                    facts.add((s.lower(), names[i]))
            continue
        if i in rooms:
            facts.add(("is_room", names[i]))
        for p in _affordances(n["class_name"], frozenset(n.get("properties", ()))) if i not in rooms else ():
            facts.add((p, names[i]))
        for p in _CLASS_PROPERTIES.get(n["class_name"], ()):
            facts.add((p, names[i]))
        for s in n.get("states", ()):
            if s in _STATES:
                facts.add((_STATES[s], names[i]))
    held: set[int] = set()
    on_count: dict[int, int] = {}
    close_edges: dict[int, set[int]] = {}   # CLOSE: from -> to
    on_edges: dict[int, set[int]] = {}      # ON: support -> what lies on it
    for e in graph["edges"]:
        a, b, r = e["from_id"], e["to_id"], e["relation_type"]
        if r in ("HOLDS_RH", "HOLDS_LH") and a in chars:
            held.add(b)
        elif r == "ON":
            on_count[b] = on_count.get(b, 0) + 1
            on_edges.setdefault(b, set()).add(a)
        elif r == "CLOSE":
            close_edges.setdefault(a, set()).add(b)
    for e in graph["edges"]:
        a, b, r = e["from_id"], e["to_id"], e["relation_type"]
        if a not in nodes or b not in nodes:
            continue
        na, nb = names[a], names[b]
        if a in chars:
            if r == "INSIDE" and b in rooms:
                facts.add(("inside", na, nb))
            elif r == "CLOSE":
                facts.add(("next_to", na, nb))
            elif r == "FACING":
                facts.add(("facing", na, nb))
            elif r in ("HOLDS_RH", "HOLDS_LH"):
                facts.add((r.lower(), na, nb))
            elif r == "ON":
                facts.add(("ontop", na, nb))
        elif b in chars:
            if r == "ON":
                facts.add(("on_char", na, nb))
        elif r == "INSIDE":
            if b in rooms:
                if a not in held:
                    facts.add(("inside_room", na, nb))
            else:
                facts.add(("obj_inside", na, nb))
        elif r == "ON":
            facts.add(("obj_ontop", na, nb))
        elif r == "CLOSE" and a not in held and b not in held:
            facts.add(("obj_next_to", na, nb))
        elif r == "FACING":
            facts.add(("obj_facing", na, nb))
    for i in held:
        facts.add(("grabbed", names[i]))
    # reach_via(o, x): walking to o brings x within the loose rule through o's containers and surfaces
    holders: dict[int, set[int]] = {}
    for e in graph["edges"]:
        if e["relation_type"] in ("ON", "INSIDE") and e["to_id"] not in rooms and e["from_id"] not in chars \
                and e["to_id"] not in chars and e["from_id"] not in held:
            holders.setdefault(e["from_id"], set()).add(e["to_id"])
    for o, supports in holders.items():
        for sup in supports:
            for x in close_edges.get(sup, set()) | on_edges.get(sup, set()):
                if x != o and x in names and x not in chars and x not in held and x not in rooms:
                    facts.add(("reach_via", names[o], names[x]))
    for c in chars:   # the simulator's loose closeness rule (_is_character_close_to), edges as they are
        near = close_edges.get(c, set())
        reach = set(near)
        for n in near:
            reach |= close_edges.get(n, set()) | on_edges.get(n, set())
        facts.update(("reachable", names[c], names[x]) for x in reach if x in names and x not in chars)
    for i, count in on_count.items():
        cls = nodes[i]["class_name"]
        if count >= SIT_LIMITS.get(cls, 1):
            facts.add(("sit_full", names[i]))
        if count >= LIE_LIMITS.get(cls, 1):
            facts.add(("lie_full", names[i]))
    return WorldState(objects, frozenset(facts), {names[i]: n["class_name"] for i, n in nodes.items()},
                      {names[i]: i for i in nodes})


def with_done(world: WorldState, script: Iterable[str]) -> WorldState:
    """``world`` plus a ``did_<verb>`` fact per action of ``script`` (the lines executed since the
    reset, e.g. ``[WATCH] <television> (410)``): on its first object, where the verb takes one."""
    signature = goal_signature()
    by_id = world.by_id()
    done: set[tuple[str, ...]] = set()
    for line in script:
        m = re.match(r"\[(\w+)\]\s*(?:<[^>]+>\s*\((?:\d+\.)?(\d+)\))?", line.strip())
        if not m:
            continue
        pred = "did_" + m.group(1).lower()
        if pred not in signature:
            continue
        if not signature[pred]:
            done.add((pred,))
        elif m.group(2) and int(m.group(2)) in by_id:
            done.add((pred, by_id[int(m.group(2))]))
    return WorldState(world.objects, world.facts | done, world.classes, world.ids)
