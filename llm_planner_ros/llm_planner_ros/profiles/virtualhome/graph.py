"""VirtualHome's world as PDDL facts: :func:`from_virtualhome_graph` reads an evolving-graph
state with the predicates of ``profiles/virtualhome/domain.pddl``; :class:`StateFacts` keeps them
up to date from one simulator state to the next; :func:`with_done` adds the action goals a script
has done."""
from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Optional

from llm_planner_ros.core.world import Atom, WorldState, object_name
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


NodeInfo = tuple[str, Optional[str], frozenset[str], frozenset[str]]   # class, category, properties, states
Edges = dict[tuple[int, str], frozenset[int]]                           # (from id, relation) -> to ids
_ANY = ("ON", "INSIDE", "BETWEEN", "CLOSE", "FACING", "HOLDS_RH", "HOLDS_LH", "SITTING")
_HOLDS = ("HOLDS_RH", "HOLDS_LH")


class _Graph:
    """A scene graph as the rules below read it: nodes, and edges both ways. ``base`` plus
    ``nodes`` and ``edges`` that replace its entries (an evolving-graph state's changes)."""

    def __init__(self, nodes: Mapping[int, NodeInfo], edges: Edges, base: Optional[_Graph] = None) -> None:
        self.changed_nodes, self.changed_edges = nodes, edges
        if base is None:
            self.nodes: Mapping[int, NodeInfo] = nodes
            self._out: Edges = edges
            self._in: dict[tuple[int, str], set[int]] = {}
            for (a, r), targets in edges.items():
                for b in targets:
                    self._in.setdefault((b, r), set()).add(a)
            self._in_added: dict[tuple[int, str], set[int]] = {}
            self._in_removed: dict[tuple[int, str], set[int]] = {}
        else:
            self.nodes = ChainMap(dict(nodes), base.nodes)  # type: ignore[arg-type]
            self._out = {**base._out, **edges}
            self._in = base._in
            self._in_added, self._in_removed = {}, {}
            for (a, r), targets in edges.items():
                was = base.out(a, r)
                for b in targets - was:
                    self._in_added.setdefault((b, r), set()).add(a)
                for b in was - targets:
                    self._in_removed.setdefault((b, r), set()).add(a)

    @classmethod
    def from_dict(cls, graph: Mapping) -> _Graph:
        """A recorded graph (``{"nodes": [...], "edges": [...]}``), its strings as they are."""
        nodes = {n["id"]: (n["class_name"], n.get("category"), frozenset(n.get("properties", ())),
                           frozenset(n.get("states", ()))) for n in graph["nodes"]}
        edges: dict[tuple[int, str], set[int]] = {}
        for e in graph["edges"]:
            edges.setdefault((e["from_id"], e["relation_type"]), set()).add(e["to_id"])
        return cls(nodes, {k: frozenset(v) for k, v in edges.items()})

    def out(self, a: int, r: str) -> frozenset[int]:
        return self._out.get((a, r), frozenset())

    def into(self, b: int, r: str) -> set[int]:
        key = (b, r)
        found = self._in.get(key, set())
        if key in self._in_added or key in self._in_removed:
            found = (found | self._in_added.get(key, set())) - self._in_removed.get(key, set())
        return found

    def edges(self) -> Iterable[tuple[int, str, int]]:
        for (a, r), targets in self._out.items():
            for b in targets:
                yield a, r, b


class _Rules:
    """The facts of one graph, by anchor: a node, an edge, the first object of ``reach_via``, or
    a character's ``reachable``. Every fact has one anchor, so a change recomputes only the
    anchors it touches."""

    def __init__(self, graph: _Graph) -> None:
        self.g = graph
        nodes = graph.nodes
        self.names = {i: _name(n[0], i) for i, n in nodes.items()}
        self.rooms = {i for i, n in nodes.items() if n[1] == "Rooms"}
        self.chars = {i for i, n in nodes.items() if n[0] == "character"}
        self.held = {b for c in self.chars for r in _HOLDS for b in graph.out(c, r)}

    def node(self, i: int) -> list[Atom]:
        cls, _, props, states = self.g.nodes[i]
        name = self.names[i]
        if i in self.chars:
            facts: list[Atom] = [(s.lower(), name) for s in states if s in ("SITTING", "LYING")]
        else:
            facts = [("is_room", name)] if i in self.rooms else [(p, name) for p in _affordances(cls, props)]
            facts += [(p, name) for p in _CLASS_PROPERTIES.get(cls, ())]
            facts += [(_STATES[s], name) for s in states if s in _STATES]
        if i in self.held:
            facts.append(("grabbed", name))
        count = len(self.g.into(i, "ON"))
        if count:
            if count >= SIT_LIMITS.get(cls, 1):
                facts.append(("sit_full", name))
            if count >= LIE_LIMITS.get(cls, 1):
                facts.append(("lie_full", name))
        return facts

    def edge(self, a: int, r: str, b: int) -> Optional[Atom]:
        if a not in self.names or b not in self.names:
            return None
        na, nb = self.names[a], self.names[b]
        if a in self.chars:
            if r == "INSIDE" and b in self.rooms:
                return ("inside", na, nb)
            return {"CLOSE": ("next_to", na, nb), "FACING": ("facing", na, nb), "HOLDS_RH": ("holds_rh", na, nb),
                    "HOLDS_LH": ("holds_lh", na, nb), "ON": ("ontop", na, nb)}.get(r)
        if b in self.chars:
            return ("on_char", na, nb) if r == "ON" else None
        if r == "INSIDE":
            if b in self.rooms:
                return None if a in self.held else ("inside_room", na, nb)
            return ("obj_inside", na, nb)
        if r == "ON":
            return ("obj_ontop", na, nb)
        if r == "CLOSE":
            return None if a in self.held or b in self.held else ("obj_next_to", na, nb)
        if r == "FACING":
            return ("obj_facing", na, nb)
        return None

    def reach_via(self, o: int) -> list[Atom]:
        """Walking to ``o`` brings x within the loose rule through o's containers and surfaces."""
        if o in self.chars or o in self.held or o not in self.names:
            return []
        out: set[int] = set()
        for r in ("ON", "INSIDE"):
            for sup in self.g.out(o, r):
                if sup in self.rooms or sup in self.chars:
                    continue
                out |= self.g.out(sup, "CLOSE") | self.g.into(sup, "ON")
        return [("reach_via", self.names[o], self.names[x]) for x in out
                if x != o and x in self.names and x not in self.chars and x not in self.held and x not in self.rooms]

    def reachable(self, c: int) -> list[Atom]:
        """The simulator's loose closeness rule (_is_character_close_to), edges as they are."""
        near = self.g.out(c, "CLOSE")
        reach = set(near)
        for n in near:
            reach |= self.g.out(n, "CLOSE") | self.g.into(n, "ON")
        return [("reachable", self.names[c], self.names[x]) for x in reach if x in self.names and x not in self.chars]

    def facts(self, anchor: tuple) -> tuple[Atom, ...]:
        kind = anchor[0]
        if kind == "node":
            return tuple(self.node(anchor[1]))
        if kind == "edge":
            a, r, b = anchor[1:]
            fact = self.edge(a, r, b) if b in self.g.out(a, r) else None
            return (fact,) if fact is not None else ()
        return tuple(self.reach_via(anchor[1]) if kind == "reach_via" else self.reachable(anchor[1]))

    def anchors(self) -> Iterable[tuple]:
        for i in self.g.nodes:
            yield ("node", i)
            yield ("reach_via", i)
        for a, r, b in self.g.edges():
            yield ("edge", a, r, b)
        for c in self.chars:
            yield ("reachable", c)

    def world(self, facts: Iterable[Atom]) -> WorldState:
        return WorldState({self.names[i]: ("character" if i in self.chars else "object") for i in self.g.nodes},
                          frozenset(facts), {self.names[i]: n[0] for i, n in self.g.nodes.items()},
                          {name: i for i, name in self.names.items()})


def from_virtualhome_graph(graph: Mapping) -> WorldState:
    """The facts of an evolving-graph state (``EnvironmentState.to_dict()`` or a recorded graph).

    Held objects keep no CLOSE or room facts: the simulator drops them on the next walk, so the
    model claims neither (it never states a fact the simulator may not have)."""
    rules = _Rules(_Graph.from_dict(graph))
    return rules.world(f for anchor in rules.anchors() for f in rules.facts(anchor))


class StateFacts:
    """The facts of an evolving-graph simulator's states, kept up to date from one state to the
    next: a state is its scene graph plus changes, so only the anchors of the nodes and edges
    that changed are computed again (the first state, or one with new nodes, is read whole)."""

    def __init__(self, graph) -> None:
        """``graph``: the ``EnvironmentGraph`` that every state of this scene changes."""
        nodes = {n.id: _node_info(n) for n in graph.get_nodes()}
        edges = {(a, r.name): frozenset(graph.get_node_ids_from(a, r)) for a, r in graph.get_from_pairs()}
        self.scene = _Graph(nodes, edges)
        self._last: Optional[tuple[_Rules, dict[tuple, tuple[Atom, ...]], WorldState]] = None

    def _graph(self, state) -> _Graph:
        keys = set(state._new_edges_from) | set(state._removed_edges_from)
        edges = {(a, r.name): frozenset(state.get_node_ids_from(a, r)) for a, r in keys}
        return _Graph({i: _node_info(n) for i, n in state._new_nodes.items()}, edges, self.scene)

    def world(self, state) -> WorldState:
        graph = self._graph(state)
        rules = _Rules(graph)
        last = self._last
        if last is None or any(self.scene.nodes.get(i, ("",))[:2] != n[:2] for i, n in graph.changed_nodes.items()):
            anchors = {a: rules.facts(a) for a in rules.anchors()}   # the first state, or nodes came or changed kind
            world = rules.world(f for facts in anchors.values() for f in facts)
        else:
            before, anchors, was = last
            anchors = dict(anchors)
            gone: set[Atom] = set()
            added: set[Atom] = set()
            for anchor in _touched(before, rules):
                gone.update(anchors.get(anchor, ()))
                anchors[anchor] = rules.facts(anchor)
                added.update(anchors[anchor])
            world = replace(was, facts=(was.facts - gone) | added)
        self._last = (rules, anchors, world)
        return world


@lru_cache(maxsize=65536)
def _name(class_name: str, node_id: int) -> str:
    return object_name(class_name, node_id)


def _node_info(node) -> NodeInfo:
    return (node.class_name, node.category, frozenset(p.name for p in node.properties),
            frozenset(s.name for s in node.states))


def _touched(was: _Rules, now: _Rules) -> set[tuple]:
    """The anchors whose facts may differ between two states of one scene graph."""
    before, after = was.g, now.g
    nodes = {i for i in set(before.changed_nodes) | set(after.changed_nodes)
             if before.nodes.get(i) != after.nodes.get(i)}
    edges = {(a, r, b) for a, r in set(before.changed_edges) | set(after.changed_edges)
             for b in before.out(a, r) ^ after.out(a, r)}
    held = was.held ^ now.held
    touched: set[tuple] = {("reachable", c) for c in now.chars}
    touched |= {("node", i) for i in nodes | held} | {("node", b) for _, r, b in edges if r == "ON"}
    touched |= {("edge", *e) for e in edges}
    supports: set[int] = set()
    for g in (before, after):
        for h in held:   # edges of an object taken or put down, and the supports it counts on
            touched |= {("edge", h, r, b) for r in _ANY for b in g.out(h, r)}
            touched |= {("edge", a, r, h) for r in _ANY for a in g.into(h, r)}
            supports |= g.into(h, "CLOSE") | g.out(h, "ON")
    supports |= {a for a, r, _ in edges if r == "CLOSE"} | {b for _, r, b in edges if r == "ON"}
    firsts = {a for a, r, _ in edges if r in ("ON", "INSIDE")} | held | nodes
    for g in (before, after):
        for sup in supports:
            firsts |= g.into(sup, "ON") | g.into(sup, "INSIDE")
    touched |= {("reach_via", o) for o in firsts}
    return touched


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
