"""Does the PDDL domain agree with the simulator? Replay human programs in both and compare.

Each step of a human program runs in the evolving-graph simulator and, through
unified-planning's sequential simulator, in the domain. Two kinds of disagreement are counted:

- **precondition**: the simulator executed a step that no matching domain action allows;
- **effect**: after a step the domain claims a fact the simulator does not have (soundness), or
  the two differ on a state or a hand (exactness for on/off, open/closed, plugged, sitting,
  lying, holds).

On a disagreement the domain is re-synchronised from the simulator's state, so one mismatch
is counted once. Facts are compared over the objects of the replayed problem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from llm_planner_ros.core.world import Atom, WorldState
from llm_planner_ros.pddl.domain import parse_domain
from llm_planner_ros.profiles.virtualhome.problem import character
from llm_planner_ros.profiles.virtualhome.resources import domain_path, domain_text

EXACT = {"on", "off", "open", "closed", "plugged_in", "plugged_out", "sitting", "lying", "holds_rh", "holds_lh"}
SOUND = EXACT | {"next_to", "facing", "inside", "obj_inside", "obj_ontop", "ontop", "on_char", "inside_room"}
_LINE = re.compile(r"\[(\w+)\]((?:\s*<[^>]+>\s*\([\d.]+\))*)")


@dataclass
class Disagreement:
    step: int
    line: str
    kind: str            # "precondition" | "effect"
    detail: str


@dataclass
class ReplayReport:
    program_id: str
    steps: int = 0
    checked: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    simulator_failed: Optional[str] = None   # the simulator itself refused a step (the replay stops)


def _objects_for(script: tuple[str, ...], world: WorldState) -> set[str]:
    by_id = world.by_id()
    named = {by_id[int(i)] for line in script for i in re.findall(r"\((?:\d+\.)?(\d+)\)", line) if int(i) in by_id}
    keep = named | {character(world)} | {a[1] for a in world.facts if a[0] == "is_room"}
    keep |= {a[2] for a in world.facts if a[0] in ("obj_next_to",) and a[1] in named}
    keep |= {a[2] for a in world.facts if a[0] in ("holds_rh", "holds_lh", "next_to", "facing", "ontop")}
    frontier = set(keep)
    while frontier:
        nxt = {a[2] for a in world.facts if a[0] in ("obj_inside", "obj_ontop") and a[1] in frontier} - keep
        keep |= nxt
        frontier = nxt
    return keep


def _problem_text(world: WorldState, objects: set[str]) -> str:
    facts = sorted(a for a in world.facts if all(x in objects for x in a[1:]))
    decl = " ".join(f"{o} - {world.objects[o]}" for o in sorted(objects))
    init = " ".join(f"({' '.join(a)})" for a in facts)
    return f"(define (problem replay) (:domain virtualhome) (:objects {decl}) (:init {init}) (:goal (and)))"


class _Model:
    """The domain's view of the world, over a fixed object set, through unified-planning."""

    def __init__(self, world: WorldState, objects: set[str]) -> None:
        import tempfile

        from unified_planning.io import PDDLReader
        from unified_planning.shortcuts import SequentialSimulator, get_environment

        get_environment().credits_stream = None
        with tempfile.NamedTemporaryFile("w", suffix=".pddl") as f:
            f.write(_problem_text(world, objects))
            f.flush()
            self.problem = PDDLReader().parse_problem(domain_path(), f.name)
        self.objects = objects
        self.sim = SequentialSimulator(self.problem)
        self.state = self.sim.get_initial_state()
        self.actions = {a.name: a for a in self.problem.actions}
        self.by_name = {o.name: o for o in self.problem.all_objects}

    def try_apply(self, name: str, args: tuple[str, ...]) -> bool:
        params = tuple(self.by_name[a] for a in args)
        action = self.actions[name]
        if not self.sim.is_applicable(self.state, action, params):
            return False
        self.state = self.sim.apply(self.state, action, params)
        return True

    def facts(self, predicates: set[str]) -> set[Atom]:
        out = set()
        for fluent in self.problem.fluents:
            if fluent.name not in predicates:
                continue
            for args in _groundings(fluent, self.problem):
                expr = self.problem.environment.expression_manager.FluentExp(fluent, args)
                if self.state.get_value(expr).bool_constant_value():
                    out.add((fluent.name,) + tuple(a.object().name for a in args))
        return out


def _groundings(fluent, problem):
    import itertools

    em = problem.environment.expression_manager
    pools = [[em.ObjectExp(o) for o in problem.objects(p.type)] for p in fluent.signature]
    return itertools.product(*pools)


def _sim_walks_to_find(executor, node_id: int) -> bool:
    """The simulator's FIND walks first unless the character already reaches the object."""
    from virtualhome_eval.simulation.evolving_graph.execution import _is_character_close_to

    state = executor._state
    return not _is_character_close_to(state, state.get_node(node_id), 0)


def _candidates(domain, verb: str, names: list[str], world: WorldState, objects: set[str]):
    """Ground domain actions for a script step: those whose skill is ``verb`` on ``names``;
    the character and any room parameter are filled in. ``FIND+WALK`` is a FIND the simulator
    runs as a walk."""
    rooms = sorted(o for o in objects if ("is_room", o) in world.facts)
    verbs = {"FIND+WALK": ("WALK",), "RUN": ("WALK",)}.get(verb, (verb,))
    for v in verbs:
        for schema in domain.actions.values():
            if schema.skill_verb != v or len(schema.skill_args) != len(names):
                continue
            binding = dict(zip(schema.skill_args, names))
            free = [p for p in schema.parameters if p not in binding]
            if free[:1] == ["?c"]:
                binding["?c"] = character(world)
                free = free[1:]
            if len(free) > 1:
                continue
            for room in (rooms if free else [None]):
                if free:
                    binding[free[0]] = room
                yield schema.name, tuple(binding[p] for p in schema.parameters)


def replay(program_id: str, script: tuple[str, ...], graph: dict) -> ReplayReport:
    from llm_planner_ros.core.types import Skill
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

    domain = parse_domain(domain_text())
    executor = VirtualHomeExecutor(graph=graph)
    report = ReplayReport(program_id, steps=len(script))
    world = executor.world_state()
    objects = _objects_for(script, world)
    model = _Model(world, objects)
    for n, line in enumerate(script, 1):
        m = _LINE.match(line.strip())
        if m is None:
            continue
        verb = m.group(1).upper()
        pairs = re.findall(r"<([^>]+)>\s*\((?:\d+\.)?(\d+)\)", m.group(2))
        by_id = world.by_id()
        names = [by_id.get(int(i), "") for _, i in pairs]
        if verb == "FIND" and pairs and _sim_walks_to_find(executor, int(pairs[0][1])):
            verb = "FIND+WALK"
        result = executor.execute(Skill(verb.split("+")[0], tuple(c for c, _ in pairs),
                                        tuple(int(i) for _, i in pairs)))
        if not result.success:
            report.simulator_failed = f"step {n} {line}: {result.failure.message}"
            break
        new_world = executor.world_state()
        if any(not x or x not in objects for x in names) or verb in ("SQUEEZE", "CUT", "GREET", "PUTOFF",
                                                                    "PUTOBJBACK", "PULL", "MOVE", "POINTAT"):
            # outside the domain's actions or objects: skip the check, re-synchronise
            world, objects = new_world, _objects_for(script, new_world)
            model = _Model(world, objects)
            continue
        report.checked += 1
        applied = next((c for c in _candidates(domain, verb, names, world, objects) if model.try_apply(*c)), None)
        if applied is None:
            report.disagreements.append(Disagreement(n, line, "precondition",
                                                     f"no {verb} action of the domain applies"))
        else:
            predicted = model.facts(SOUND)
            actual = {a for a in new_world.facts if a[0] in SOUND and all(x in objects for x in a[1:])}
            unsound = sorted(predicted - actual)
            missed = sorted(a for a in actual - predicted if a[0] in EXACT)
            if unsound or missed:
                report.disagreements.append(Disagreement(
                    n, line, "effect", f"{applied[0]}: domain only {unsound[:4]}; simulator only {missed[:4]}"))
            else:
                world = new_world
                continue
        world, objects = new_world, _objects_for(script, new_world)
        model = _Model(world, objects)
    return report
