"""The ten ProgPrompt household tasks Borro et al. evaluate, as far as VirtualHome's
TrimmedTestScene1 (the scene whose graphs EAI ships) allows.

Borro et al.'s goal conditions are unpublished (their Appendix A is empty), so the goals below
are this project's, written in EAI's format on the node ids of the chosen recorded graph. Six
tasks cannot run here: their key objects do not exist in any of the scene's 518 recorded graphs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.profiles.virtualhome.tasks import EaiTask


@dataclass(frozen=True)
class GoalTask(EaiTask):
    """An EaiTask with its own goal instead of EAI's."""

    own_goal: Optional[dict] = None

    @property
    def goal(self) -> dict:
        return self.own_goal if self.own_goal is not None else super().goal


def _task(name: str, program_id: str, goal: dict) -> GoalTask:
    return GoalTask(identifier=f"progprompt:{name}", program_id=program_id, task=name, description="",
                    script=(), references=(), own_goal=goal)


PROGPROMPT_TASKS = (
    # the living-room television (248 is on in 1021_1; in 1003_2 both are off); facing it as well
    _task("watch tv", "file1003_2", {"goal": [{"id": 248, "class_name": "television", "state": "ON"},
                                              {"from_id": 65, "relation_type": "FACING", "to_id": 248}],
                                     "actions": []}),
    # the lights are all on initially; the one of the home office (411) must go off
    _task("turn off light", "file1003_2", {"goal": [{"id": 411, "class_name": "light", "state": "OFF"}],
                                           "actions": []}),
    # bread (2009) in the toaster, toaster on (it is off in 102_2)
    _task("make toast", "file102_2", {"goal": [{"from_id": 2009, "relation_type": "INSIDE", "to_id": 292},
                                                {"id": 292, "class_name": "toaster", "state": "ON"}],
                                       "actions": []}),
    # the plate (in the closed dishwasher) is already clean in the recorded graph: washing it is the goal
    _task("wash the plate", "file1021_1", {"goal": [], "actions": ["WASH"]}),
)

NOT_RUNNABLE = {
    "throw away apple": "no apple in any TrimmedTestScene1 graph (the bin exists as 'trashcan')",
    "eat chips on the sofa": "no chips in any TrimmedTestScene1 graph (the sofa exists as 'couch')",
    "put salmon in the fridge": "no salmon and no fridge (only a freezer) in TrimmedTestScene1",
    "brush teeth": "no toothpaste in TrimmedTestScene1 (EAI's own 'Brush teeth' task is in the EAI rows)",
    "microwave salmon": "no salmon in any TrimmedTestScene1 graph",
    "bring coffeepot and cupcake to the coffee table": "no cupcake in any TrimmedTestScene1 graph",
}
