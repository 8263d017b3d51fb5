"""VirtualHome as the planner's world given in code (:class:`~llm_planner_ros.profiles.WorldPlugin`):
its skills and the object properties each admits, its scenes and their objects, its domain with
the words for each skill, what goals may say, its goal conditions in words, the human programs
shown as demonstrations and EAI's annotated goals that ``interpret`` learns from. The planning
layers know VirtualHome only through this object."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Optional

from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition
from llm_planner_ros.interpretation.interpreter import GoalDemo, ProgramGoal
from llm_planner_ros.pddl.domain import Domain, load_domain
from llm_planner_ros.pddl.goals import GoalVocabulary
from llm_planner_ros.pddl.semantics import read_domain
from llm_planner_ros.profiles.virtualhome import bank as banks
from llm_planner_ros.profiles.virtualhome import goals, problem, resources
from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
from llm_planner_ros.profiles.virtualhome.graph import STATE_NAMES
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, SkillParser, admits
from llm_planner_ros.safety.hazards import Hazards, read_hazards
from llm_planner_ros.skills.bank import SkillBank
from llm_planner_ros.translation.demonstrations import Demonstration

# object properties that make a class a place to put things (PET keeps them)
PLACE_PROPERTIES = frozenset({"CONTAINERS", "SURFACES"})


class VirtualHomeWorld:
    name = "virtualhome"
    scenes: tuple[str, ...] = resources.SCENES
    state_names: Mapping[str, str] = STATE_NAMES      # predicate -> the state it says ("on", "open")
    # tasks whose human programs the heuristic's guide prompt shows (Borro et al.'s few shots)
    guide_examples = ("Turn on light", "Drink", "Go to toilet", "Browse internet")
    relevant_objects = staticmethod(problem.relevant_objects)

    # -- skills and objects ---------------------------------------------------------------
    def object_properties(self) -> Mapping[str, frozenset[str]]:
        return resources.object_properties()

    def actions(self) -> list[tuple[str, int]]:
        """(verb, number of objects) of each skill."""
        return [(a.name, a.arity) for a in ACTIONS.values()]

    @cached_property
    def _parser(self) -> SkillParser:
        return SkillParser(resources.object_properties())

    def parse_text(self, text: str) -> Optional[Skill]:
        """A skill said as its words ("put milk in fridge"), or None."""
        return self._parser.parse_text(text)

    def skill_problem(self, skill: Skill) -> str:
        """Why ``skill`` is not admissible (a known action, its number of objects, known classes
        whose properties the action admits: the rules that build the skill banks), or ""."""
        spec = ACTIONS.get(skill.action)
        if spec is None:
            return f"{skill.action or skill.text!r} is not a known action"
        if len(skill.objects) != spec.arity:
            return f"{skill.action} takes {spec.arity} object(s), got {len(skill.objects)}"
        props = resources.object_properties()
        for i, name in enumerate(skill.objects):
            if name not in props:
                return f"{name!r} is not a known object class"
            if not admits(spec, i, name, props[name]):
                return f"{skill.action} does not apply to {name!r}"
        return ""

    def full_bank(self) -> SkillBank:
        return banks.full_bank()

    def scene_bank(self, scene_id: str) -> SkillBank:
        return banks.scene_bank(resources.initial_graph(scene_id))

    def scene_classes(self, scene_id: str) -> set[str]:
        return {n["class_name"] for n in resources.initial_graph(scene_id)["nodes"]}

    def rooms(self) -> frozenset[str]:
        return frozenset(n["class_name"] for n in resources.initial_graph()["nodes"] if n.get("category") == "Rooms")

    def places(self) -> frozenset[str]:
        return frozenset(n for n, p in resources.object_properties().items() if p & PLACE_PROPERTIES)

    def executor(self, scene_id: str, task: str) -> Executor:
        """The in-process simulator, started from the task's EAI scene graph and goal where it has one."""
        from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

        graph, goal = resources.scene_for_task(scene_id, task)
        return VirtualHomeExecutor(scene_id, graph, goal)

    @cached_property
    def hazards(self) -> Hazards:
        """The states that must never come about here (``hazards.yaml``, a profile's ``never:`` schema)."""
        return read_hazards(Path(__file__).with_name("hazards.yaml"), read_domain(resources.domain_text()),
                            resources.object_properties())

    # -- goals ----------------------------------------------------------------------------
    def planning_domain(self) -> Domain:
        """The domain its simulator reports, as the goal-directed planner reads it."""
        return load_domain(resources.domain_text())

    def goal_vocabulary(self) -> GoalVocabulary:
        return goals.vocabulary()

    def conditions(self, world: WorldState) -> list[Condition]:
        return render_conditions(world)

    # -- examples -------------------------------------------------------------------------
    def demonstrations(self) -> list[Demonstration]:
        """One human program per task, its steps in words."""
        from llm_planner_ros.translation.demonstrations import demonstrations_from_programs

        return demonstrations_from_programs(
            (p.task, p.description, tuple(SkillParser.parse_script(line).text for line in p.script), p.program_id)
            for p in resources.human_programs())

    def annotated_goals(self) -> tuple[Sequence[GoalDemo], Sequence[ProgramGoal]]:
        """EAI's annotated goals: one demonstration per task, and each program's goal."""
        from llm_planner_ros.profiles.virtualhome.examples import eai_goal_demos, eai_program_goals

        program_goals = eai_program_goals()
        return eai_goal_demos(program_goals), program_goals
