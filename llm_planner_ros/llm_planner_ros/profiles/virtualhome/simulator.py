"""Skill executor on VirtualHome's evolving-graph simulator (the copy in PyPI virtualhome-eval).

That copy is used rather than PyPI virtualhome 2.3.0: it installs on Python 3.11 and executes 516
of the 518 shipped human programs (virtualhome 2.3.0: 489, and it crashes on one).

Instance rule: a skill names object classes; the instance used is, in order of preference, one
the character holds (not for GRAB, which takes a new one), one it is close to, one in the
character's room, else the lowest id.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from llm_planner_ros.core import world
from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.profiles.virtualhome import bank as banks
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.graph import StateFacts, with_done
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, object_phrase

if TYPE_CHECKING:
    from llm_planner_ros.profiles.loader import WorldProfile


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern
    type: ErrorType
    cause: str   # format fields: a = first object, b = second object (else a), s = the (?P<s>...) group


def _rule(pattern: str, type_: ErrorType, cause: str) -> _Rule:
    return _Rule(re.compile(pattern.replace("OBJ", r"<[^>]+> \(\d+\)")), type_, cause)


# Simulator messages (execution.py ``info.error``) -> Raman et al.'s error types and a cause.
RULES = [
    _rule(r"OBJ is not close to OBJ", ErrorType.AGENT_PROXIMITY, "I am not close to the {b}"),
    _rule(r"OBJ is inside other closed thing", ErrorType.ENCLOSED_OBJECT, "the {a} is inside something closed"),
    _rule(r"OBJ is not open or is not openable", ErrorType.UNFLIPPED_BOOLEAN_STATE, "the {a} is closed"),
    _rule(r"OBJ is still (?P<s>on)", ErrorType.UNFLIPPED_BOOLEAN_STATE, "the {a} is still {s}"),
    _rule(r"OBJ is (?P<s>unplugged)", ErrorType.UNFLIPPED_BOOLEAN_STATE, "the {a} is {s}"),
    _rule(r"OBJ is not (?P<s>open|closed|on|off|plugged in|plugged out)\b", ErrorType.UNFLIPPED_BOOLEAN_STATE,
          "the {a} is not {s}"),
    _rule(r"OBJ is not holding OBJ", ErrorType.MISSING_OBJECT, "I am not holding the {b}"),
    _rule(r"OBJ not grabbed", ErrorType.MISSING_OBJECT, "I am not holding the {a}"),
    _rule(r"OBJ does not hold anything in hands", ErrorType.MISSING_OBJECT, "I am not holding anything"),
    _rule(r"OBJ does not have a free hand", ErrorType.OVER_OCCUPIED_AGENT, "I do not have a free hand"),
    _rule(r"OBJ does not face OBJ", ErrorType.FIELD_OF_VIEW, "I am not facing the {b}"),
    _rule(r"OBJ is not facing OBJ while sitting", ErrorType.FIELD_OF_VIEW, "I am not facing the {b}"),
    _rule(r"char room OBJ is not node room OBJ", ErrorType.ABSENT_FROM_ROOM, "I am not in the {b}"),
    _rule(r"No path between between OBJ and OBJ", ErrorType.ABSENT_FROM_ROOM, "I cannot reach the {b}"),
    _rule(r"OBJ does not have (?:a )?(?P<s>switch|plug)", ErrorType.INVALID_ACTION, "the {a} has no {s}"),
    _rule(r"OBJ can not be opened", ErrorType.INVALID_ACTION, "the {a} cannot be opened"),
    _rule(r"OBJ (?:is )?not (?P<s>clothes|eatable|sittable|recipient|readable|pourable or drinkable|person"
          r"|movable|lieable|grabbable|cuttable|lookable|drinkable or not recipient)\b", ErrorType.INVALID_ACTION,
          "the {a} is not {s}"),
    _rule(r"none of object on OBJ is eatable", ErrorType.INVALID_ACTION, "nothing on the {a} is eatable"),
    _rule(r"OBJ is not lying or sitting", ErrorType.OTHER_PRECONDITION, "I am not sitting or lying"),
    _rule(r"OBJ is not sitting", ErrorType.OTHER_PRECONDITION, "I am not sitting"),
    _rule(r"OBJ is sitting", ErrorType.OTHER_PRECONDITION, "I am sitting"),
    _rule(r"OBJ is lying", ErrorType.OTHER_PRECONDITION, "I am lying down"),
    _rule(r"OBJ already grabbed", ErrorType.OTHER_PRECONDITION, "I am already holding the {a}"),
    _rule(r"Too many things on OBJ", ErrorType.OTHER_PRECONDITION, "there is no room on the {a}"),
]
_NAME = re.compile(r"<([^>]+)> \(\d+\)")


def classify(message: str) -> tuple[ErrorType, str]:
    """Raman et al.'s error type and a first-person cause for a simulator message."""
    first = message.split(",")[0]
    for rule in RULES:
        m = rule.pattern.search(first)
        if m is None:
            continue
        names = [object_phrase(n) for n in _NAME.findall(m.group(0))]
        a = names[0] if names else ""
        b = names[1] if len(names) > 1 else a
        return rule.type, rule.cause.format(a=a, b=b, s=m.groupdict().get("s") or "")
    return ErrorType.OTHER_PRECONDITION, first.split(" when executing")[0] or "the simulator refused"


class VirtualHomeExecutor:
    """Executes skills one by one on the evolving graph, carrying the state forward."""

    HOLDS = ("HOLDS_RH", "HOLDS_LH")
    profile: Optional[WorldProfile] = None   # the built-in world: VirtualHome's skills and object classes

    def __init__(self, scene_id: str = "TrimmedTestScene1", graph: Optional[dict] = None,
                 goal: Optional[dict] = None) -> None:
        from virtualhome_eval.simulation.evolving_graph import utils

        self._name_equivalence = utils.load_name_equivalence()
        self.reset(scene_id, graph)
        self.goal: Optional[dict] = goal

    # -- Executor API -----------------------------------------------------------------------
    def reset(self, scene_id: str = "TrimmedTestScene1", graph: Optional[dict] = None) -> list[str]:
        from virtualhome_eval.simulation.evolving_graph.environment import EnvironmentGraph, EnvironmentState
        from virtualhome_eval.simulation.evolving_graph.execution import ScriptExecutor

        self.scene_id = scene_id
        self.initial_graph = graph if graph is not None else resources.initial_graph(scene_id)
        self._graph = EnvironmentGraph(self.initial_graph)
        self._state = EnvironmentState(self._graph, self._name_equivalence, instance_selection=True)
        self._sim = ScriptExecutor(self._graph, self._name_equivalence)
        self._facts = StateFacts(self._graph)
        self._world: Optional[tuple[object, world.WorldState]] = None   # (a state, its world)
        self._char = next(n.id for n in self._graph.get_nodes() if n.class_name == "character")
        self._rooms = {n.id for n in self._graph.get_nodes() if n.category == "Rooms"}   # never change
        self._bank: Optional[banks.SkillBank] = None
        self.history: list[str] = []
        self.goal = None
        self.objects = sorted(banks.scene_properties(self.initial_graph))
        return self.objects

    def domain_text(self) -> str:
        """The PDDL domain whose predicates :meth:`world_state` reports (profiles/virtualhome/domain.pddl)."""
        return resources.domain_text()

    def world_state(self) -> world.WorldState:
        """The current state as facts over :meth:`domain_text`, with the actions done since the reset
        (a step's changes applied to the world before it)."""
        if self._world is None or self._world[0] is not self._state:
            self._world = (self._state, with_done(self._facts.world(self._state), self.history))
        return self._world[1]

    def instance_class(self, instance_id: int) -> Optional[str]:
        node = self._state.get_node(instance_id)
        return None if node is None else node.class_name

    def goal_met(self) -> Optional[bool]:
        """EAI-style goal conditions (``self.goal``): node states, relations between node ids
        (a HOLDS goal is met by either hand), and actions that must have been executed
        (``"LOOKAT|WATCH"``: one of them). None when no goal is set."""
        from virtualhome_eval.simulation.evolving_graph.environment import Relation, State

        if not self.goal:
            return None
        for cond in self.goal.get("goal", []):
            if "state" in cond:
                node = self._state.get_node(cond["id"])
                if node is None or State[cond["state"]] not in node.states:
                    return False
                continue
            relations = [cond["relation_type"]]
            if relations[0] in self.HOLDS:
                relations = list(self.HOLDS)
            if not any(cond["to_id"] in self._edges_from(cond["from_id"], r) for r in relations
                       if r in Relation.__members__):
                return False
        done = {line[1:line.index("]")] for line in self.history}
        return all(done & set(group.split("|")) for group in self.goal.get("actions", []))

    def execute(self, skill: Skill) -> ExecutionResult:
        from virtualhome_eval.simulation.evolving_graph.execution import ExecutionInfo

        grounded = self._ground(skill)
        if isinstance(grounded, ExecutionResult):
            return grounded
        ids, line = grounded
        before = self._snapshot(ids)
        self._sim.info = ExecutionInfo()
        try:
            ok, new_state = self._sim.execute_one_step(self._script(line), self._state)
        except Exception as exc:  # the simulator's own bugs must not end the plan
            return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION,
                                          f"simulator error {type(exc).__name__}: {exc}",
                                          "the simulator could not execute it", line)
        if not ok:
            message = self._sim.info.get_error_string() or f"cannot execute {line}"
            type_, cause = classify(message)
            return ExecutionResult.failed(type_, message, cause, line)
        self._state = new_state
        self.history.append(line)
        return ExecutionResult(True, observation=self._describe(before, self._snapshot(ids), skill), script=line)

    def predict(self, skill: Skill) -> Optional[world.WorldState]:
        """The world as it would be after ``skill``, by the simulator's own step on a copy of the
        state (nothing changes here); None when the skill would not run."""
        line = self._trial(skill)
        if line is None:
            return None
        try:
            ok, new_state = self._sim.execute_one_step(self._script(line), self._state)
        except Exception:
            return None
        return with_done(self._facts.world(new_state), [*self.history, line]) if ok else None

    def applicable_skills(self, limit: Optional[int] = None) -> list[Skill]:
        if self._bank is None:
            self._bank = banks.scene_bank(self.initial_graph)
        out = []
        for skill in self._bank.skills:
            if self.check(skill):
                out.append(skill)
                if limit and len(out) >= limit:
                    break
        return out

    def check(self, skill: Skill) -> bool:
        """Whether ``skill`` would execute now, without changing the state."""
        line = self._trial(skill)
        if line is None:
            return False
        try:
            return bool(self._sim.check_one_step(self._script(line), self._state))
        except Exception:
            return False

    def _trial(self, skill: Skill) -> Optional[str]:
        """The script line ``skill`` grounds to, the simulator's messages cleared for a trial step;
        None when it does not ground."""
        from virtualhome_eval.simulation.evolving_graph.execution import ExecutionInfo

        grounded = self._ground(skill)
        if isinstance(grounded, ExecutionResult):
            return None
        self._sim.info = ExecutionInfo()
        return grounded[1]

    # -- helpers ----------------------------------------------------------------------------
    def _ground(self, skill: Skill) -> tuple[tuple[int, ...], str] | ExecutionResult:
        """Instance ids and the script line for ``skill``, or the failure that prevents it."""
        problem = self._check_skill(skill)
        if problem is not None:
            return problem
        found: tuple[Optional[int], ...] = skill.object_ids or tuple(self._resolve(o, skill.action)
                                                                     for o in skill.objects)
        missing = [o for o, i in zip(skill.objects, found) if i is None]
        if missing:
            return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION,
                                          f"<{missing[0]}> is not in scene {self.scene_id}",
                                          f"there is no {object_phrase(missing[0])} here")
        ids = tuple(i for i in found if i is not None)
        return ids, "[{}]{}".format(skill.action, "".join(f" <{o}> ({i})" for o, i in zip(skill.objects, ids)))

    def _check_skill(self, skill: Skill) -> Optional[ExecutionResult]:
        if not skill.action:
            if not skill.text.strip():
                return ExecutionResult.failed(ErrorType.EMPTY_PROGRAM, "empty step", "the step is empty")
            return ExecutionResult.failed(ErrorType.PARSE_ERROR, f"not an admissible skill: {skill.text!r}",
                                          f"'{skill.text}' is not a skill I know")
        spec = ACTIONS.get(skill.action)
        if spec is None:
            return ExecutionResult.failed(ErrorType.PARSE_ERROR, f"unknown action {skill.action!r}",
                                          f"I do not know how to {skill.action.lower()}")
        if len(skill.objects) != spec.arity or (skill.object_ids and len(skill.object_ids) != spec.arity):
            return ExecutionResult.failed(ErrorType.PARSE_ERROR,
                                          f"{skill.action} takes {spec.arity} objects, got {len(skill.objects)}",
                                          f"'{skill.action.lower()}' needs {spec.arity} objects")
        for name, i in zip(skill.objects, skill.object_ids):
            node = self._state.get_node(i)
            if node is None:
                return ExecutionResult.failed(ErrorType.PARSE_ERROR, f"no node with id {i}",
                                              f"there is no object {i} here")
            if node.class_name != name:   # never act on another object than the one named
                return ExecutionResult.failed(ErrorType.INVALID_ACTION,
                                              f"node {i} is a {node.class_name}, not a {name}",
                                              f"the object {i} is a {object_phrase(node.class_name)}, "
                                              f"not a {object_phrase(name)}")
        return None

    @staticmethod
    def _script(line: str):
        from virtualhome_eval.simulation.evolving_graph.scripts import Script, parse_script_line

        return Script([parse_script_line(line, 0)])

    def _edges_from(self, node_id: int, relation: str) -> set[int]:
        from virtualhome_eval.simulation.evolving_graph.environment import Relation

        return set(self._state.get_node_ids_from(node_id, Relation[relation]))

    def _room_of(self, node_id: int) -> Optional[int]:
        inside = self._edges_from(node_id, "INSIDE") & self._rooms
        return min(inside) if inside else None

    def _phrase(self, node_id: int) -> str:
        return object_phrase(self._state.get_node(node_id).class_name)

    def _resolve(self, name: str, action: str) -> Optional[int]:
        candidates = sorted(n.id for n in self._state.get_nodes_by_attr("class_name", name))
        held = set().union(*(self._edges_from(self._char, r) for r in self.HOLDS))
        if action == "GRAB":
            candidates = [c for c in candidates if c not in held] or candidates
        if not candidates:
            return None
        close = self._edges_from(self._char, "CLOSE")
        room = self._room_of(self._char)
        for group in (held, close):
            hits = [c for c in candidates if c in group]
            if hits:
                return hits[0]
        same_room = [c for c in candidates if room is not None and self._room_of(c) == room]
        return (same_room or candidates)[0]

    def _snapshot(self, ids) -> dict:
        char = {r: self._edges_from(self._char, r) for r in ("CLOSE", "HOLDS_RH", "HOLDS_LH", "INSIDE", "FACING")}
        states = {i: set(self._state.get_node(i).states) for i in ids if i is not None}
        return {"char": char, "states": states, "char_states": set(self._state.get_node(self._char).states)}

    def _describe(self, before: dict, after: dict, skill: Skill) -> str:
        parts = []
        for i, states in after["states"].items():
            for s in sorted(states - before["states"].get(i, set())):
                parts.append(f"{self._phrase(i)} is now {s.name.lower()}")
        held_before = before["char"]["HOLDS_RH"] | before["char"]["HOLDS_LH"]
        held_after = after["char"]["HOLDS_RH"] | after["char"]["HOLDS_LH"]
        parts += [f"I am holding the {self._phrase(i)}" for i in sorted(held_after - held_before)]
        parts += [f"I put down the {self._phrase(i)}" for i in sorted(held_before - held_after)]
        entered = (after["char"]["INSIDE"] - before["char"]["INSIDE"]) & self._rooms
        parts += [f"I am in the {self._phrase(i)}" for i in sorted(entered)]
        new_close = [i for i in after["states"] if i in after["char"]["CLOSE"] - before["char"]["CLOSE"]]
        parts += [f"I am close to the {self._phrase(i)}" for i in new_close]
        for s in sorted(after["char_states"] - before["char_states"], key=lambda s: s.name):
            parts.append(f"I am {s.name.lower()}")
        return "; ".join(parts) if parts else f"I {skill.text}"

