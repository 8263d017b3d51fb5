"""Executor-bridge node: serves ``execute_skill`` (ExecuteSkill), ``reset_scene`` (ResetScene)
and ``get_applicable_skills`` (GetApplicableSkills).

Backends (parameter ``backend``):
- ``virtualhome``: the in-process VirtualHome simulator.
- ``robot``: forwards each skill to a robot's own ExecuteSkill action server (``robot_action``)
  with a timeout; the robot's failure comes back as the same structured PreconditionFailure.

``sim_robot_main`` runs the reference robot-side skill server: a simulated robot that wraps the
VirtualHome executor behind the robot interface, so the robot path can be tested end to end.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from typing import Literal, Optional

from action_msgs.msg import GoalStatusArray
from pydantic import BaseModel, ConfigDict, Field
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.action.client import ClientGoalHandle
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_action_status_default
from unique_identifier_msgs.msg import UUID

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure as FailureMsg
from llm_planner_msgs.srv import GetApplicableSkills, GetWorldState, ResetScene

from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.executors.virtualhome import VirtualHomeExecutor
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.spin import spin_node
from llm_planner_ros.ros.wait import wait_for
from llm_planner_ros.skills import resources


class BridgeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["virtualhome", "robot"] = Field("virtualhome", description="where skills run")
    default_scene: str = Field("TrimmedTestScene1", description="scene of the virtualhome backend")
    robot_action: str = Field("robot/execute_skill", description="the robot's ExecuteSkill action")
    robot_timeout_s: float = Field(30.0, gt=0.0, le=3600.0, description="limit for one robot skill")
    robot_wait_s: float = Field(5.0, ge=0.0, le=600.0, description="wait for the robot's server")
    robot_world_service: str = Field("robot/get_world_state",
                                     description="the robot's GetWorldState service (its PDDL domain and facts)")


def result_msg(result: ExecutionResult) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=result.success, failure=conversions.failure_to_msg(result.failure),
                               observation=result.observation)


def executor_error(message: str) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=False, observation=f"nothing changed: {message}",
                               failure=FailureMsg(type=FailureMsg.EXECUTOR_ERROR, message=message,
                                                  cause=message))


class SimulatedSkillServer:
    """ExecuteSkill/ResetScene/GetApplicableSkills on a VirtualHome executor, one skill at a time."""

    def __init__(self, node: Node, scene: str, group: ReentrantCallbackGroup, skill_delay_s: float = 0.0) -> None:
        self.node = node
        self.skill_delay_s = skill_delay_s
        self.sim = VirtualHomeExecutor(scene)
        self.lock = threading.Lock()
        node.create_service(ResetScene, "reset_scene", self.reset, callback_group=group)
        node.create_service(GetApplicableSkills, "get_applicable_skills", self.applicable, callback_group=group)
        node.create_service(GetWorldState, "get_world_state", self.world_state, callback_group=group)

    def execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        skill = conversions.skill_from_msg(goal_handle.request.skill)
        self.node.get_logger().info(f"executing skill {skill.script()}")
        deadline = time.monotonic() + self.skill_delay_s
        while time.monotonic() < deadline:   # a robot's skill takes time; it can be cancelled meanwhile
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return executor_error("the skill was cancelled while it ran")
            time.sleep(0.05)
        with self.lock:
            try:
                result = result_msg(self.sim.execute(skill))
            except Exception as exc:   # never take the node down
                result = executor_error(f"simulator raised {type(exc).__name__}: {exc}")
        goal_handle.succeed()
        return result

    def reset(self, request: ResetScene.Request, response: ResetScene.Response) -> ResetScene.Response:
        scene = request.scene_id or self.sim.scene_id
        with self.lock:
            try:
                graph, goal = resources.scene_for_task(scene, request.task)
                response.objects = self.sim.reset(scene, graph)
                self.sim.goal = goal
                response.success = True
                response.message = (f"scene {scene}" + (f" with the goal conditions of {request.task!r}"
                                                        if goal else ""))
            except KeyError as exc:
                response.success, response.message = False, str(exc.args[0])
        return response

    def applicable(self, request: GetApplicableSkills.Request,
                   response: GetApplicableSkills.Response) -> GetApplicableSkills.Response:
        with self.lock:
            skills = self.sim.applicable_skills(request.max_results or None)
            response.skills = [conversions.skill_to_msg(s) for s in skills]
            response.goal_met = bool(self.sim.goal_met())
        return response

    def world_state(self, request: GetWorldState.Request, response: GetWorldState.Response) -> GetWorldState.Response:
        with self.lock:
            try:
                world = self.sim.world_state()
                goal = self.sim.goal_met()
            except Exception as exc:   # never take the node down
                response.success, response.message = False, f"{type(exc).__name__}: {exc}"
                return response
        response.success, response.domain_name = True, "virtualhome"
        response.domain = self.sim.domain_text()
        response.objects, response.facts = world.to_lines()
        response.goal_status = -1 if goal is None else int(goal)
        return response


class RobotGoalStatus:
    """Goal ids the robot's action server lists on its status topic.

    On first DDS contact a goal's acceptance response can be lost while the goal itself arrived;
    the server's (transient-local) status topic still lists it, so its result can be fetched
    without sending the skill twice."""

    def __init__(self, node: Node, action_name: str, group: ReentrantCallbackGroup, keep: int = 256) -> None:
        self._seen: "OrderedDict[bytes, None]" = OrderedDict()
        self._keep = keep
        self._changed = threading.Condition()
        node.create_subscription(GoalStatusArray, f"{action_name}/_action/status", self._on_status,
                                 qos_profile_action_status_default, callback_group=group)

    def _on_status(self, msg: GoalStatusArray) -> None:
        with self._changed:
            for status in msg.status_list:
                self._seen[bytes(status.goal_info.goal_id.uuid)] = None
                self._seen.move_to_end(bytes(status.goal_info.goal_id.uuid))
            while len(self._seen) > self._keep:
                self._seen.popitem(last=False)
            self._changed.notify_all()

    def wait_listed(self, goal_id: UUID, timeout_s: float) -> bool:
        key = bytes(goal_id.uuid)
        with self._changed:
            return self._changed.wait_for(lambda: key in self._seen, timeout_s)


class ExecutorBridgeNode(Node):
    def __init__(self, node_name: str = "executor_bridge") -> None:
        super().__init__(node_name)
        self.params = declare_and_validate(self, BridgeParams)
        refuse_unknown_parameters(self)
        group = ReentrantCallbackGroup()
        self._sim: Optional[SimulatedSkillServer] = None
        self._robot: Optional[ActionClient] = None
        if self.params.backend == "virtualhome":
            self._sim = SimulatedSkillServer(self, self.params.default_scene, group)
        else:
            self._robot = ActionClient(self, ExecuteSkill, self.params.robot_action, callback_group=group)
            self._robot_status = RobotGoalStatus(self, self.params.robot_action, group)
            self.create_service(ResetScene, "reset_scene", self._robot_reset, callback_group=group)
            self._robot_world = self.create_client(GetWorldState, self.params.robot_world_service,
                                                   callback_group=group)
            self.create_service(GetWorldState, "get_world_state", self._robot_world_state, callback_group=group)
        self._server = ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self._execute,
                                    cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group)
        self.get_logger().info(f"serving action 'execute_skill' with backend '{self.params.backend}'")

    def _execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        if self._sim is not None:
            return self._sim.execute(goal_handle)
        result = self._forward(goal_handle.request)
        goal_handle.succeed()
        return result

    def _forward(self, goal: ExecuteSkill.Goal) -> ExecuteSkill.Result:
        assert self._robot is not None
        p = self.params
        if not self._robot.wait_for_server(timeout_sec=p.robot_wait_s):
            return executor_error(f"the robot's skill server '{self._robot._action_name}' is not available")
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        handle = wait_for(self._robot.send_goal_async(goal, goal_uuid=goal_id), p.robot_wait_s or 1.0)
        if handle is None and not self._robot.server_is_ready():
            return executor_error("the robot's skill server went away before it accepted the skill")
        if handle is None and self._robot_status.wait_listed(goal_id, 1.0):
            self.get_logger().warning(f"no acceptance from the robot within {p.robot_wait_s}s, but its status "
                                      "lists the skill: fetching its result (the skill is not sent again)")
            handle = ClientGoalHandle(self._robot, goal_id,
                                      ExecuteSkill.Impl.SendGoalService.Response(accepted=True))
        if handle is None or not handle.accepted:
            return executor_error("the robot rejected the skill" if handle else "the robot did not answer")
        future = handle.get_result_async()
        deadline = time.monotonic() + p.robot_timeout_s
        while (response := wait_for(future, 0.5)) is None:
            if not self._robot.server_is_ready():
                return executor_error("the robot's skill server went away while the skill ran")
            if time.monotonic() > deadline:
                handle.cancel_goal_async()
                return executor_error(f"the robot did not finish the skill within {p.robot_timeout_s:.0f}s")
        return response.result

    def _robot_world_state(self, request: GetWorldState.Request,
                           response: GetWorldState.Response) -> GetWorldState.Response:
        """The robot's own domain and facts, passed through."""
        p = self.params
        if not self._robot_world.wait_for_service(timeout_sec=p.robot_wait_s):
            response.success = False
            response.message = f"the robot's world-state service '{p.robot_world_service}' is not available"
            return response
        answer = wait_for(self._robot_world.call_async(GetWorldState.Request()), p.robot_timeout_s)
        if answer is None:
            response.success = False
            response.message = f"the robot did not report its world within {p.robot_timeout_s:.0f}s"
            return response
        return answer

    def _robot_reset(self, request: ResetScene.Request, response: ResetScene.Response) -> ResetScene.Response:
        response.success = True
        response.message = "robot backend: the robot's state is its own; nothing was reset"
        return response


class SimRobotNode(Node):
    """Reference robot-side skill server: VirtualHome behind the robot's ExecuteSkill action."""

    def __init__(self) -> None:
        super().__init__("sim_robot")
        self.declare_parameter("scene", "TrimmedTestScene1")
        self.declare_parameter("skill_delay_s", 0.0)   # how long each skill takes (fault injection, demos)
        group = ReentrantCallbackGroup()
        self.server = SimulatedSkillServer(self, self.get_parameter("scene").value, group,
                                           float(self.get_parameter("skill_delay_s").value))
        self._action = ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self.server.execute,
                                    cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group)
        self.get_logger().info("simulated robot serving action 'execute_skill'")


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(ExecutorBridgeNode, "executor_bridge", args))


def sim_robot_main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(SimRobotNode, "sim_robot", args))
