"""Reference robot-side skill server for any world profile: the PDDL world executor behind the
robot's ``execute_skill`` (ExecuteSkill), ``get_world_state`` (GetWorldState, with the profile)
and ``reset_scene`` (ResetScene). What ``sim_robot`` is for a world given in code, this is for a profile:
put the executor bridge (``backend:=robot``) in front of it, or your robot's own servers in its
place.

Parameters: ``profile`` (a shipped profile's name, e.g. ``mobile_manipulator``, or a path to a
``profile.yaml``), ``world`` (a PDDL problem file to start from instead of the profile's reference
world), ``skill_delay_s`` (how long each skill takes). A ``reset_scene`` request may carry its own
start state: ``world`` (a problem's text or file path) and ``facts`` (the facts that hold); the
start state it sets is what later resets without one go back to.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar, Optional

from pydantic import BaseModel, ConfigDict, Field
from rclpy.action import ActionServer
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetWorldState, ResetScene
from llm_planner_ros.core.errors import ExecutorError
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.profiles.loader import ProfileError, find_profile
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.executor_bridge import run_skill
from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.skill_action import GoalStops
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node
from llm_planner_ros.ros.world_versions import WorldVersions


def _problem_text(world: str) -> str:
    """A PDDL problem given as its text, or as the path of a file that holds it."""
    if world.lstrip().startswith(("(", ";")):
        return world
    try:
        return Path(world).expanduser().read_text()
    except OSError as exc:
        raise ProfileError(f"world: cannot read {world!r}: {exc.strerror}") from None


class PddlRobotParams(BaseModel):
    """The reference robot's parameters (read-only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    LIVE: ClassVar[tuple[str, ...]] = ()

    profile: str = Field("mobile_manipulator", min_length=1,
                         description="a shipped profile's name, or the path of a profile.yaml")
    world: str = Field("", description="a PDDL problem file to start from ('': the profile's reference world)")
    skill_delay_s: float = Field(0.0, ge=0.0, le=600.0, description="how long each skill takes")


class PddlRobotNode(Node):
    def __init__(self) -> None:
        super().__init__("pddl_robot")
        adopt_package_logs(self)
        params = declare_and_validate(self, PddlRobotParams)
        refuse_unknown_parameters(self)
        try:
            profile = find_profile(params.profile)
            self.pddl = PddlWorldExecutor(profile)
            if params.world:
                self.pddl.start_from(_problem_text(params.world))
        except ProfileError as exc:
            raise ExecutorError(str(exc)) from None
        self.skill_delay_s = params.skill_delay_s
        self._lock = threading.Lock()
        self._versions = WorldVersions(self.pddl.world_state, self.pddl.goal_met)
        self._stops = GoalStops()
        group = ReentrantCallbackGroup()
        self.create_service(GetWorldState, "get_world_state", self._world_state, callback_group=group)
        self.create_service(ResetScene, "reset_scene", self._reset, callback_group=group)
        self._action = ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self._execute,
                                    cancel_callback=self._stops.on_cancel, callback_group=group)
        self.get_logger().info(f"robot of profile '{profile.name}' serving action 'execute_skill'")

    def _execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        with self._stops.running(goal_handle) as stop:
            return run_skill(self, goal_handle, stop, self.pddl, self._lock, self.skill_delay_s, "the PDDL executor",
                             self._versions)

    def _reset(self, request: ResetScene.Request, response: ResetScene.Response) -> ResetScene.Response:
        with self._lock:
            try:
                if request.world or request.facts:
                    response.objects = self.pddl.start_from(_problem_text(request.world) if request.world else "",
                                                            list(request.facts))
                    response.message = "the start state given" + (f" ({len(request.facts)} facts)"
                                                                  if request.facts else "")
                else:
                    response.objects = self.pddl.reset()
                    response.message = f"the {self.pddl.profile.name} profile's start world"
            except ProfileError as exc:
                response.success, response.message = False, f"no reset, the world is as it was: {exc}"
                return response
            self._versions.changed()
        response.success = True
        return response

    def _world_state(self, request: GetWorldState.Request,
                     response: GetWorldState.Response) -> GetWorldState.Response:
        profile = self.pddl.profile
        response.success, response.domain_name = True, profile.domain.name
        if request.include_domain or request.domain_only:
            response.domain, response.profile = profile.domain_text, profile.text
        if request.domain_only:
            return response
        with self._lock:
            self._versions.fill(response, request.known_version)
            if request.include_applicable:
                response.applicable_skills = [conversions.skill_to_msg(s) for s in
                                              self.pddl.applicable_skills(request.max_applicable or None)]
        return response


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(PddlRobotNode, "pddl_robot", args))
