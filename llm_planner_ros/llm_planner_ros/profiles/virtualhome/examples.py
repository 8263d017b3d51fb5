"""The built-in world's example goals: the goal of each of EAI's 342 annotated VirtualHome
programs, said as the sentences of :func:`~llm_planner_ros.interpretation.conditions.render_conditions`
(class level), which method interpret shows as demonstrations and learns its instance prior and
completion rules from."""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition
from llm_planner_ros.interpretation.interpreter import GoalDemo, ProgramGoal, rooms
from llm_planner_ros.pddl.goals import GoalSpec
from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
from llm_planner_ros.profiles.virtualhome.goals import eai_goal_spec
from llm_planner_ros.profiles.virtualhome.graph import from_virtualhome_graph


def class_level(literal: str, world: WorldState) -> str:
    """``(on television_410)`` -> ``(on television)``; the character stays ``character``."""
    parts = literal.strip("()").split()
    return "(" + " ".join([parts[0]] + ["character" if world.objects.get(a) == "character"
                                        else world.classes.get(a, a) for a in parts[1:]]) + ")"


def goal_sentences(goal: dict, graph: dict, script: Sequence[str] = ()) -> tuple[str, ...]:
    """An EAI goal as the sentences of :func:`render_conditions` (class level). An action goal is
    said of the object the annotator's ``script`` did it to ("I wash the hands."), else of one of
    the goal's objects."""
    world = from_virtualhome_graph(graph)
    return _sentences(eai_goal_spec(goal, graph), world, render_conditions(world), script)


def _sentences(spec: GoalSpec, world: WorldState, conditions: Sequence[Condition],
               script: Sequence[str]) -> tuple[str, ...]:
    wanted = {class_level(str(lit), world) for lit in spec.literals}
    wanted |= {class_level(str(lit), world).replace("(holds_lh ", "(holds_rh ", 1)
               for lit in spec.literals if lit.predicate == "holds_lh"}
    objects = [world.classes.get(a) for lit in spec.literals for a in lit.args if world.classes.get(a) != "character"]
    out: list = []
    covered: set = set()
    for cond in sorted(conditions, key=lambda c: -len(c.literals)):
        lits = set(cond.literals)
        if cond.literals and lits <= wanted and not lits <= covered:
            out.append(cond.text)
            covered |= lits
    texts = {c.literals: c.text for c in conditions if len(c.literals) == 1}
    done = [(m.group(1), m.group(2)) for m in (re.match(r"\[(\w+)\] <([^>]+)>", line) for line in script) if m]
    for group in spec.actions:
        candidates = [(v, o) for v, o in done if v in group] + [(v, o) for v in group for o in objects]
        said = next((texts[(f"(did_{v.lower()} {o})",)] for v, o in candidates
                     if (f"(did_{v.lower()} {o})",) in texts), None)
        if said:
            out.append(said)
    return tuple(out)


def program_goal(task) -> ProgramGoal:
    """``task``: an :class:`~llm_planner_ros.profiles.virtualhome.tasks.EaiTask`."""
    graph = task.graph
    world = from_virtualhome_graph(graph)
    room = rooms(world, "inside_room")
    spec = eai_goal_spec(task.goal, graph)
    uses = tuple(dict.fromkeys((world.classes[a], room[a]) for lit in spec.literals for a in lit.args
                               if a in room and a in world.classes))
    conditions = render_conditions(world)
    sentences = _sentences(spec, world, conditions, task.script)
    by_text = {c.text: c for c in conditions}
    literals = tuple(dict.fromkeys(lit for t in sentences for lit in by_text[t].literals))
    return ProgramGoal(task.task, sentences, uses, literals)


@lru_cache(maxsize=1)
def eai_program_goals() -> tuple[ProgramGoal, ...]:
    """The goal of each of EAI's 342 programs (about 20 s to derive; kept on disk, keyed by the
    code and data that derive them)."""
    from importlib.metadata import version

    from llm_planner_ros.profiles.virtualhome.resources import domain_text
    from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks
    from llm_planner_ros.translation.onnx_embedder import cache_root

    package = Path(__file__).parents[2]
    key = hashlib.sha256("".join([version("virtualhome-eval"), domain_text()] + [
        (package / f).read_text() for f in ("interpretation/conditions.py", "interpretation/interpreter.py",
                                            "profiles/virtualhome/conditions.py", "profiles/virtualhome/goals.py",
                                            "profiles/virtualhome/examples.py")]).encode()).hexdigest()[:16]
    path = cache_root() / f"eai_program_goals-{key}.json"
    if path.exists():
        return tuple(ProgramGoal(g["task"], tuple(g["sentences"]), tuple(map(tuple, g["uses"])), tuple(g["literals"]))
                     for g in json.loads(path.read_text()))
    goals = tuple(program_goal(t) for t in eai_tasks())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps([asdict(g) for g in goals]))
    tmp.replace(path)
    return goals


def eai_goal_demos(goals: Sequence[ProgramGoal] = ()) -> tuple[GoalDemo, ...]:
    """One demonstration per task: its programs' most common goal (the first on a tie)."""
    by_task: dict[str, Counter] = {}
    for g in goals or eai_program_goals():
        if g.sentences:
            by_task.setdefault(g.task, Counter())[g.sentences] += 1
    return tuple(GoalDemo(task, counts.most_common(1)[0][0]) for task, counts in by_task.items())
