"""The core ``Executor`` protocol over ROS: the planner talks to the executor bridge through
``execute_skill`` / ``reset_scene`` / ``get_applicable_skills``, so a robot can replace the
simulator without code changes."""
from __future__ import annotations

from typing import Callable, Optional

from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetApplicableSkills, GetWorldState, ResetScene

from llm_planner_ros.core.errors import ExecutorError, PlanCanceled
from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.pddl.world import WorldState
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.wait import wait_for


class RosExecutor:
    def __init__(self, node: Node, skill_timeout_s: float = 60.0, wait_s: float = 5.0,
                 cancel_requested: Callable[[], bool] = lambda: False) -> None:
        """``cancel_requested()`` is polled while a skill runs (the planner node's goal cancel)."""
        self.cancel_requested = cancel_requested
        group = ReentrantCallbackGroup()
        self._action = ActionClient(node, ExecuteSkill, "execute_skill", callback_group=group)
        self._reset = node.create_client(ResetScene, "reset_scene", callback_group=group)
        self._applicable = node.create_client(GetApplicableSkills, "get_applicable_skills", callback_group=group)
        self._world = node.create_client(GetWorldState, "get_world_state", callback_group=group)
        self._domain = ""
        self.skill_timeout_s = skill_timeout_s
        self.wait_s = wait_s
        self.scene_id = ""
        self.objects: list[str] = []

    def _call(self, client, request, what: str):
        if not client.wait_for_service(timeout_sec=self.wait_s):
            raise ExecutorError(f"the executor bridge's '{client.srv_name}' service is not available")
        response = wait_for(client.call_async(request), self.skill_timeout_s)
        if response is None:
            raise ExecutorError(f"the executor bridge did not answer {what} within {self.skill_timeout_s:.0f}s")
        return response

    def reset(self, scene_id: str, graph: Optional[dict] = None, task: str = "") -> list[str]:
        response = self._call(self._reset, ResetScene.Request(scene_id=scene_id, task=task), "reset_scene")
        if not response.success:
            raise ExecutorError(f"the executor bridge could not reset: {response.message}")
        self.scene_id = scene_id
        self.objects = list(response.objects)
        return self.objects

    def execute(self, skill: Skill) -> ExecutionResult:
        if not self._action.wait_for_server(timeout_sec=self.wait_s):
            raise ExecutorError("the executor bridge's 'execute_skill' action is not available")
        handle = wait_for(self._action.send_goal_async(ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill),
                                                                         scene_id=self.scene_id)), self.wait_s)
        if handle is None or not handle.accepted:
            raise ExecutorError("the executor bridge did not accept the skill")
        future, waited = handle.get_result_async(), 0.0
        while (response := wait_for(future, 0.1)) is None:
            waited += 0.1
            if self.cancel_requested():   # cancel the running skill, not only the next one
                handle.cancel_goal_async()
                raise PlanCanceled(f"cancelled while the bridge ran {skill.script()}")
            if waited >= self.skill_timeout_s:
                handle.cancel_goal_async()
                raise ExecutorError(f"the skill did not finish within {self.skill_timeout_s:.0f}s")
        result = response.result
        failure = conversions.failure_from_msg(result.failure)
        if failure.type is ErrorType.EXECUTOR_ERROR:   # not a precondition: nothing to re-prompt on
            raise ExecutorError(failure.message)
        return ExecutionResult(result.success, failure, result.observation, skill.script())

    def state(self) -> dict:
        return {}

    def world_state(self) -> WorldState:
        response = self._call(self._world, GetWorldState.Request(), "get_world_state")
        if not response.success:
            raise ExecutorError(f"the executor cannot report its world: {response.message}")
        self._domain = response.domain
        return WorldState.from_lines(response.objects, response.facts)

    def domain_text(self) -> str:
        if not self._domain:
            self.world_state()
        return self._domain

    def applicable_skills(self, limit: Optional[int] = None) -> list[Skill]:
        if not self._applicable.wait_for_service(timeout_sec=self.wait_s):   # discovery, not a race
            return []
        response = self._call(self._applicable, GetApplicableSkills.Request(max_results=limit or 0),
                              "get_applicable_skills")
        return [conversions.skill_from_msg(s) for s in response.skills]

    def goal_met(self) -> Optional[bool]:
        if not self._applicable.wait_for_service(timeout_sec=self.wait_s):   # discovery, not a race
            return None
        return bool(self._call(self._applicable, GetApplicableSkills.Request(max_results=1),
                               "get_applicable_skills").goal_met)
