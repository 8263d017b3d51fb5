"""Executor-bridge node: serves ``execute_skill`` (ExecuteSkill), ``reset_scene`` (ResetScene)
and ``get_world_state`` (GetWorldState), and publishes ``heartbeat/executor_bridge``.

Backends (parameter ``backend``):
- ``sim``: the in-process simulator of a world given in code (parameter ``world``, by default
  the planner's default world; ``profiles.WORLDS``).
- ``robot``: forwards each skill to a robot's own ExecuteSkill action server (``robot_action``)
  with a timeout; the robot's failure comes back as the same structured PreconditionFailure.

The bridge is the last hop before the robot: every skill passes the same
:class:`~llm_planner_ros.safety.policy.SkillPolicy` as in the planner (config/policy.yaml) before
it is sent, whoever sent it, its instance ids checked against the classes they name in the
backend's own world (the simulator's graph; the robot's ``GetWorldState`` objects), and a skill
whose effects on that world would make one of its declared hazards hold is refused
(``PreconditionFailure.HAZARD``): the simulator says what the skill would do; a robot's reported
facts and domain predict it (a robot that reports no facts: the policy's ``hazard_unknown``). One skill runs
at a time, checked, sent and ended under one lock, so each is checked against the world the one
before it left; one more may wait its turn, and a skill sent while two are there is refused at once
(each waits on a thread of the node's executor, which the running one needs for the robot's
answers). A cancel of the bridge's goal cancels the robot's and waits, up to
``cancel_wait_s``, for the robot to confirm. A bridge that starts reconciles with the robot
first: a skill that a bridge before it left running on the robot is cancelled and waited for
before the bridge serves anything.

``sim_robot_main`` runs the reference robot-side skill server: a simulated robot that wraps a
world given in code behind the robot interface, so the robot path can be tested end to end.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field
from rclpy.action import ActionServer, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure as FailureMsg
from llm_planner_msgs.srv import GetWorldState, ResetScene
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.executor import ExecutionResult, Executor
from llm_planner_ros.core.settings import ManagedNodeParams
from llm_planner_ros.core.types import ErrorType
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.planning.worlds import DEFAULT_WORLD, WorldPlugin, load_world, skill_names
from llm_planner_ros.profiles.loader import ProfileError, WorldProfile, validated_profile
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.diagnostics import OK, WARN, publish_diagnostics
from llm_planner_ros.ros.liveness import ask_until_answered, publish_heartbeat
from llm_planner_ros.ros.managed import ManagedNode
from llm_planner_ros.ros.params import LiveParameters, declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.skill_action import GoalStops, SkillActionClient, StopAwareLock, end_stopped
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node
from llm_planner_ros.ros.wait import wait_for
from llm_planner_ros.ros.world_versions import HeldWorld, WorldVersions
from llm_planner_ros.safety.hazards import last_hop
from llm_planner_ros.safety.policy import SkillPolicy

# skills the bridge holds at once, the running one and those waiting their turn: each blocks one
# of the executor's threads (spin_node's 4), and the running one needs the others
AT_ONCE = 2


class RobotWorldUnread(RuntimeError):
    """The robot's world (its profile, its objects) cannot be read: no skill can be checked."""


class BridgeParams(ManagedNodeParams):
    backend: Literal["sim", "robot"] = Field("sim", description="where skills run: the simulator of a world "
                                                                  "given in code, or a robot's skill server")
    world: str = Field("", description="the sim backend's world given in code ('' = the default world)")
    default_scene: str = Field("", description="the sim backend's scene ('' = the world's first)")
    robot_action: str = Field("robot/execute_skill", description="the robot's ExecuteSkill action")
    robot_timeout_s: float = Field(30.0, gt=0.0, le=3600.0, description="limit for one robot skill")
    robot_wait_s: float = Field(5.0, ge=0.0, le=600.0, description="wait for the robot's server")
    robot_world_service: str = Field("robot/get_world_state",
                                     description="the robot's GetWorldState service (its PDDL domain and facts)")
    robot_reset_service: str = Field("", description="the robot's ResetScene service, to forward the bridge's "
                                     "reset_scene to; every goal that executes resets at its start, so name it only "
                                     "for a robot whose reset means that (a simulator, a test rig); '' = not "
                                     "forwarded: the robot's state is its own")
    cancel_wait_s: float = Field(5.0, gt=0.0, le=600.0,
                                 description="wait for the robot to confirm that a cancelled skill stopped")


def result_msg(result: ExecutionResult) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=result.success, failure=conversions.failure_to_msg(result.failure),
                               observation=result.observation)


def refused(message: str) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=False, observation=f"nothing changed: {message}",
                               failure=FailureMsg(type=int(ErrorType.INVALID_ACTION),
                                                  message=f"refused by the executor bridge: {message}",
                                                  cause=message.removeprefix("not admissible: ")))


def hazard_refused(message: str, cause: str) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=False, observation=f"nothing changed: {message}",
                               failure=FailureMsg(type=FailureMsg.HAZARD,
                                                  message=f"refused by the executor bridge: {message}", cause=cause))


class RobotWorld:
    """A robot's world as the hazard check reads it: its facts now (``read``, asked when the check
    needs them) and its domain (its profile's, else the domain text it sent)."""

    def __init__(self, read: Callable[[], WorldState], profile: Optional[WorldProfile], domain: str) -> None:
        self._read, self.profile, self._domain = read, profile, domain

    def world_state(self) -> WorldState:
        return self._read()

    def domain_text(self) -> str:
        return self._domain


def executor_error(message: str) -> ExecuteSkill.Result:
    return ExecuteSkill.Result(success=False, observation=f"nothing changed: {message}",
                               failure=FailureMsg(type=FailureMsg.EXECUTOR_ERROR, message=message,
                                                  cause=message))


def run_skill(node: Node, goal_handle: ServerGoalHandle, stop: CancelToken, executor: Executor,
              lock: threading.Lock, skill_delay_s: float, what: str, versions: WorldVersions) -> ExecuteSkill.Result:
    """One ExecuteSkill goal on an in-process executor, as a robot's skill server runs it: it takes
    ``skill_delay_s`` (cancellable), then runs under ``lock``; an exception is an executor error.
    The result carries the change to the world (``versions``)."""
    skill = conversions.skill_from_msg(goal_handle.request.skill)
    node.get_logger().info(f"executing skill {skill.script()}")
    if skill_delay_s and stop.wait(skill_delay_s):   # a robot's skill takes time
        how = end_stopped(goal_handle, stop)
        node.get_logger().info(f"{how} {skill.script()} while it ran")
        why = "" if how == "cancelled" else f" ({stop.error})"
        return executor_error(f"{skill.script()} was {how} while it ran{why}; it stopped")
    with lock:
        try:
            result = result_msg(executor.execute(skill))
        except Exception as exc:   # never take the node down
            result = executor_error(f"{what} raised {type(exc).__name__}: {exc}")
        try:
            versions.skill_ran(result)
        except Exception as exc:   # the change untold (version 0): the client reads the world again
            node.get_logger().warning(f"the world after {skill.script()} could not be rendered: {exc}")
    node.get_logger().info(f"finished {skill.script()}: {'done' if result.success else 'failed'}")
    goal_handle.succeed()
    return result


class SimulatedSkillServer:
    """ExecuteSkill/ResetScene/GetWorldState on the simulator of a world given in code, one skill at a time."""

    def __init__(self, node: Node, world: WorldPlugin, scene: str, group: ReentrantCallbackGroup,
                 skill_delay_s: float = 0.0) -> None:
        self.node, self.world = node, world
        self.skill_delay_s = skill_delay_s
        self.scene = scene or world.scenes[0]
        self.sim = world.executor(self.scene, "")
        self.lock = threading.Lock()
        self.versions = WorldVersions(lambda: self.sim.world_state(), lambda: self.sim.goal_met())
        node.create_service(ResetScene, "reset_scene", self.reset, callback_group=group)
        node.create_service(GetWorldState, "get_world_state", self.world_state, callback_group=group)

    def execute(self, goal_handle: ServerGoalHandle, stop: CancelToken) -> ExecuteSkill.Result:
        return run_skill(self.node, goal_handle, stop, self.sim, self.lock, self.skill_delay_s, "simulator",
                         self.versions)

    def reset(self, request: ResetScene.Request, response: ResetScene.Response) -> ResetScene.Response:
        scene = request.scene_id or self.scene
        if request.world or request.facts:
            response.success = False
            response.message = (f"the simulator of {self.world.name} starts from its scenes only: a start state "
                                "(world, facts) cannot be given; nothing was reset")
            return response
        with self.lock:
            try:
                self.sim = self.world.executor(scene, request.task)
                self.scene = scene
                response.objects = list(self.sim.objects)
                self.versions.changed()
                response.success = True
                response.message = (f"scene {scene}" + (f" with the goal conditions of {request.task!r}"
                                                        if self.sim.goal_met() is not None else ""))
            except KeyError as exc:
                response.success, response.message = False, str(exc.args[0])
        return response

    def instance_class(self, instance_id: int) -> Optional[str]:
        with self.lock:
            return self.sim.instance_class(instance_id)

    def world_state(self, request: GetWorldState.Request, response: GetWorldState.Response) -> GetWorldState.Response:
        if request.domain_only:
            response.success, response.domain_name, response.goal_status = True, self.world.name, -1
            response.domain = self.sim.domain_text()
            return response
        with self.lock:
            try:
                self.versions.fill(response, request.known_version)
                if request.include_applicable:
                    response.applicable_skills = [conversions.skill_to_msg(s) for s in
                                                  self.sim.applicable_skills(request.max_applicable or None)]
            except Exception as exc:   # never take the node down
                response.success, response.message = False, f"{type(exc).__name__}: {exc}"
                return response
        response.success, response.domain_name = True, self.world.name
        if request.include_domain:
            response.domain = self.sim.domain_text()
        return response


class ExecutorBridgeNode(ManagedNode):
    """The last hop to the simulator or the robot. A managed node: configure loads the simulated
    world or connects to the robot; while it is not active a skill is refused, nothing sent."""

    def __init__(self, node_name: str = "executor_bridge") -> None:
        super().__init__(node_name)
        adopt_package_logs(self)
        self.params = declare_and_validate(self, BridgeParams)
        self.policy = declare_and_validate(self, SkillPolicy)
        refuse_unknown_parameters(self)
        LiveParameters(self).add(SkillPolicy, self._set_policy)
        group = ReentrantCallbackGroup()
        self._sim: Optional[SimulatedSkillServer] = None
        self._robot: Optional[SkillActionClient] = None
        self._robot_classes: dict[int, str] = {}
        self._robot_profile_cache: Optional[WorldProfile] = None
        self._robot_profile_read = False
        self._robot_domain = ""
        self._robot_held = HeldWorld({})   # the robot's world by version (for the hazard check)
        self._stops = GoalStops()
        self._one_skill = StopAwareLock()   # held across a skill's check, send and end
        self._at_once = 0
        self._count_lock = threading.Lock()
        self._group = group
        self._server = ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self._execute,
                                    cancel_callback=self._stops.on_cancel, callback_group=group)
        publish_heartbeat(self, "executor_bridge")
        publish_diagnostics(self, "executor bridge", self._health)
        self.start(self.params.autostart)

    def configure(self) -> None:
        """The simulated world, loaded, or the robot's servers, connected; once (a cleanup keeps them)."""
        group = self._group
        if self.params.backend == "sim" and self._sim is None:
            self._sim = SimulatedSkillServer(self, self._world(), self.params.default_scene, group)
        elif self.params.backend == "robot" and self._robot is None:
            self._robot = SkillActionClient(self, self.params.robot_action, "the robot", reconcile=True)
            self._robot_reset_client: Optional[Client[Any, Any]] = self.create_client(
                ResetScene, self.params.robot_reset_service, callback_group=group) \
                if self.params.robot_reset_service else None
            self.create_service(ResetScene, "reset_scene", self._robot_reset, callback_group=group)
            self._robot_world: Client[Any, Any] = self.create_client(GetWorldState, self.params.robot_world_service,
                                                   callback_group=group)
            self.create_service(GetWorldState, "get_world_state", self._robot_world_state, callback_group=group)

    def activate(self) -> None:
        self.get_logger().info(f"serving action 'execute_skill' with backend '{self.params.backend}'")

    def shutdown(self) -> None:
        """A finalized bridge runs nothing: the skill running now is stopped (on the robot, cancelled)."""
        self._stops.stop_all("the executor bridge is shutting down")

    def _health(self) -> tuple[bytes, str, dict[str, object]]:
        """/diagnostics: the backend and, for a robot, whether its skill server is up."""
        values: dict[str, object] = {"backend": self.params.backend}
        if not self.serving:
            return WARN, "not active (lifecycle): skills are refused", values
        if self._robot is None:
            return OK, "serving the simulator", values
        ready = self._robot.client.server_is_ready()
        values.update({"robot action": self._robot.action_name, "robot serving": ready})
        if not ready:
            return WARN, f"the robot's '{self._robot.action_name}' action is not served", values
        return OK, "serving; the robot is up", values

    def _world(self) -> WorldPlugin:
        """The world given in code that the sim backend simulates, and whose skills and hazards
        a robot reporting no profile is checked against."""
        return load_world(self.params.world or DEFAULT_WORLD)

    def _set_policy(self, policy: SkillPolicy) -> None:
        self.policy = policy

    def _execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        skill = conversions.skill_from_msg(goal_handle.request.skill)
        with self._count_lock:
            full = self._at_once >= AT_ONCE
            if not full:
                self._at_once += 1
        if full:
            goal_handle.succeed()
            return executor_error(f"the executor bridge already runs a skill and has one waiting; "
                                  f"{skill.script() or skill.text!r} was not sent")
        try:
            with self._stops.running(goal_handle) as stop, self._one_skill.held(stop) as mine:
                if not mine:
                    return self._cancelled(goal_handle, skill, stop)
                return self._run(goal_handle, stop)
        finally:
            with self._count_lock:
                self._at_once -= 1

    def _cancelled(self, goal_handle: ServerGoalHandle, skill, stop: CancelToken) -> ExecuteSkill.Result:
        how = end_stopped(goal_handle, stop)
        self.get_logger().info(f"{how} {skill.script()} before it was sent")
        result = executor_error(f"{skill.script()} was {how} before it was sent"
                                f"{'' if how == 'cancelled' else f' ({stop.error})'}; nothing ran")
        result.observation = f"{how}: nothing was sent"
        return result

    def _run(self, goal_handle: ServerGoalHandle, stop: CancelToken) -> ExecuteSkill.Result:
        """One skill, under the lock: checked against the world the skill before it left, then run."""
        skill = conversions.skill_from_msg(goal_handle.request.skill)
        if not self.serving:
            goal_handle.succeed()
            return executor_error(f"the executor bridge is not active (lifecycle); {skill.script() or skill.text!r} "
                                  "was not sent")
        try:
            why = self._refusal(skill)
            stopped = None if why else self._hazard(skill)
        except RobotWorldUnread as exc:   # no world to check against: nothing is sent
            self.get_logger().warning(f"not sent {skill.script() or skill.text!r}: {exc}")
            goal_handle.succeed()
            return executor_error(f"{exc}; nothing was sent")
        if why:   # the last hop: nothing the policy refuses reaches the robot, whoever sent it
            self.get_logger().warning(f"refused {skill.script() or skill.text!r}: {why}")
            goal_handle.succeed()
            return refused(why)
        if stopped is not None:   # nor anything that would make a hazard of its world hold
            self.get_logger().warning(f"stopped {skill.script() or skill.text!r}: {stopped.failure.message}")
            goal_handle.succeed()
            return stopped
        if stop.cancelled:   # cancelled while it waited or was checked: it never reaches the robot
            return self._cancelled(goal_handle, skill, stop)
        if self._sim is not None:
            return self._sim.execute(goal_handle, stop)
        assert self._robot is not None
        p = self.params
        outcome = self._robot.run(goal_handle.request, skill.script(), p.robot_timeout_s, p.robot_wait_s, stop,
                                  p.cancel_wait_s)
        if outcome.ended == "stopped":
            how = end_stopped(goal_handle, stop)
            self.get_logger().info(f"{how} {skill.script()}: {outcome.message}")
            result = executor_error(outcome.message)
            result.observation = f"{how}: {outcome.message}"
            return result
        goal_handle.succeed()
        if outcome.ended == "done" and outcome.result is not None:
            self._robot_held.skill_ran(outcome.result)
            return outcome.result
        self._robot_held.skill_ran(ExecuteSkill.Result())   # what it did is untold: read the world again
        result = executor_error(outcome.message)
        if outcome.ended == "failed":   # it ran: it may have changed something
            result.observation = outcome.message
        return result

    def _refusal(self, skill) -> str:
        """The policy's refusal, instance ids checked in the backend's world. Raises
        :class:`RobotWorldUnread` when the robot's world cannot be read."""
        if self._sim is not None:
            world = self._world()
            return self.policy.unknown_names(skill_names(world)) \
                or self.policy.refusal(skill, world.skill_problem, self._sim.instance_class)
        try:
            profile = self._robot_profile()
        except ProfileError as exc:
            return f"not admissible: the robot's profile is invalid: {exc}"
        misfit = self.policy.unknown_names(profile.skill_names, profile.object_names) if profile is not None \
            else self.policy.unknown_names(skill_names(self._world()))
        if misfit:   # a misspelt entry would silently allow or deny nothing
            return misfit
        try:
            problem = profile.skill_problem if profile is not None else self._world().skill_problem
            # a named instance is held to its class's lists (a world given in code names classes)
            return self.policy.refusal(skill, problem, self._robot_instance_class,
                                       profile.class_of if profile is not None else None)
        except LookupError as exc:
            return f"not admissible: its instance ids cannot be checked: {exc}"

    def _hazard(self, skill) -> Optional[ExecuteSkill.Result]:
        """The refusal of a skill whose effects, on the backend's world as it is, would make one
        of its hazards hold; where its facts cannot be read, the policy's ``hazard_unknown``
        decides (refuse, or send with a warning). None: it may be sent. Asked only after the policy
        admitted the skill, so a robot's profile is read and valid by then (its own, never another
        world's); :class:`RobotWorldUnread` when it cannot be read."""
        if self._sim is not None:
            hazards = self._world().hazards
            if not hazards:
                return None
            with self._sim.lock:
                hits, unknown = last_hop(self._sim.sim, skill, hazards)
        else:
            profile = self._robot_profile()
            hazards = profile.hazards if profile is not None else self._world().hazards
            if not hazards:
                return None
            hits, unknown = last_hop(RobotWorld(self._robot_world_now, profile, self._robot_domain), skill, hazards)
        what = skill.script() or skill.text
        if unknown:
            if self.policy.hazard_unknown == "warn":
                self.get_logger().warning(f"{what}: the hazards cannot be checked: {unknown}; "
                                          "sent anyway (hazard_unknown: warn)")
                return None
            return hazard_refused(f"{what}: the hazards cannot be checked: {unknown} (hazard_unknown: refuse)",
                                  f"its hazards cannot be checked: {unknown}")
        if hits:
            texts = "; ".join(h.text() for h in hits)
            return hazard_refused(f"{what} would make a hazard hold: {texts}", texts)
        return None

    def _robot_profile(self) -> Optional[WorldProfile]:
        """The robot's world profile, read from its GetWorldState once it is valid (and again after
        a reset); None for a robot whose reply holds no profile (its world is the bridge's world given
        in code). Never another world in place of the robot's: while its profile is invalid
        (:class:`ProfileError`, each text validated once) or its world cannot be read
        (:class:`RobotWorldUnread`), every skill is refused, and the robot is asked again."""
        if self._robot_profile_read:
            return self._robot_profile_cache
        reply = self._robot_world_state(GetWorldState.Request(include_domain=True, domain_only=True),
                                        GetWorldState.Response())
        if not reply.success:
            raise RobotWorldUnread(f"the robot's world cannot be read: {reply.message}")
        profile = validated_profile(reply.profile, reply.domain, where="the robot's profile") \
            if reply.profile else None
        self._robot_profile_read, self._robot_profile_cache, self._robot_domain = True, profile, reply.domain
        self._robot_held = HeldWorld(profile.declared_classes if profile else {})
        return profile

    def _robot_world_now(self) -> WorldState:
        """The robot's world now: asked by version, read whole only when it changed in a way no
        skill's result told (:class:`HeldWorld`). Raises :class:`RobotWorldUnread`."""
        reply, world = self._robot_held.read(lambda r: self._robot_world_state(r, GetWorldState.Response()))
        if world is None:
            raise RobotWorldUnread(reply.message or "the robot did not report its world")
        return world

    def _robot_instance_class(self, instance_id: int) -> Optional[str]:
        """The class of an instance id on the robot: from its world's objects, asked again for an
        id not seen since the last reset. Raises LookupError when the robot does not say."""
        if instance_id not in self._robot_classes:
            reply = self._robot_world_state(GetWorldState.Request(), GetWorldState.Response())
            if not reply.success:
                raise LookupError(reply.message or "the robot did not report its world")
            self._robot_classes = WorldState.from_lines(reply.objects, ()).classes_by_id()
        return self._robot_classes.get(instance_id)

    def _robot_world_state(self, request: GetWorldState.Request,
                           response: GetWorldState.Response) -> GetWorldState.Response:
        """The robot's own domain and facts, passed through."""
        p = self.params
        if not self._robot_world.wait_for_service(timeout_sec=p.robot_wait_s):
            response.success = False
            response.message = f"the robot's world-state service '{p.robot_world_service}' is not available"
            return response
        _, answer = ask_until_answered(self._robot_world, request, p.robot_timeout_s)   # a read: asked again
        if answer is None:
            response.success = False
            response.message = f"the robot did not answer for its world within {p.robot_timeout_s:.0f}s"
            return response
        return answer

    def _robot_reset(self, request: ResetScene.Request, response: ResetScene.Response) -> ResetScene.Response:
        """Forwarded to the robot's ResetScene (``robot_reset_service``) when one is named; the
        robot's world is read again afterwards either way."""
        self._robot_classes, self._robot_profile_read = {}, False
        p, client = self.params, self._robot_reset_client
        if client is None:
            response.success = not (request.world or request.facts)
            response.message = ("robot backend: the robot's state is its own; nothing was reset" if response.success
                                else "robot backend: a start state (world, facts) goes to the robot's reset service, "
                                     "and robot_reset_service names none; nothing was reset")
            return response
        if not client.wait_for_service(timeout_sec=p.robot_wait_s):
            response.success = False
            response.message = f"the robot's reset service '{p.robot_reset_service}' is not available"
            return response
        answer = wait_for(client.call_async(request), p.robot_timeout_s)
        if answer is None:
            response.success = False
            response.message = f"the robot did not answer its reset within {p.robot_timeout_s:.0f}s"
            return response
        return answer


class SimRobotParams(BaseModel):
    """The reference simulated robot's parameters (read-only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    LIVE: ClassVar[tuple[str, ...]] = ()

    world: str = Field("", description="a world given in code ('' = the default)")
    scene: str = Field("", description="its scene ('' = the world's first)")
    skill_delay_s: float = Field(0.0, ge=0.0, le=600.0, description="how long each skill takes (fault injection, "
                                                                     "demos)")
    accept_delay_s: float = Field(0.0, ge=0.0, le=600.0, description="how long accepting a skill takes (fault "
                                                                      "injection)")


class SimRobotNode(Node):
    """Reference robot-side skill server: a world given in code behind the robot's ExecuteSkill action."""

    def __init__(self) -> None:
        super().__init__("sim_robot")
        adopt_package_logs(self)
        params = declare_and_validate(self, SimRobotParams)
        refuse_unknown_parameters(self)
        group = ReentrantCallbackGroup()
        world = load_world(params.world or DEFAULT_WORLD)
        self.server = SimulatedSkillServer(self, world, params.scene, group, params.skill_delay_s)
        self._stops = GoalStops()
        accept_delay_s = params.accept_delay_s

        def accept(_goal) -> GoalResponse:
            time.sleep(accept_delay_s)
            return GoalResponse.ACCEPT
        self._action = ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self._execute,
                                    goal_callback=accept, cancel_callback=self._stops.on_cancel,
                                    callback_group=group)
        self.get_logger().info("simulated robot serving action 'execute_skill'")

    def _execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        with self._stops.running(goal_handle) as stop:
            return self.server.execute(goal_handle, stop)


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(ExecutorBridgeNode, "executor_bridge", args))


def sim_robot_main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(SimRobotNode, "sim_robot", args))
