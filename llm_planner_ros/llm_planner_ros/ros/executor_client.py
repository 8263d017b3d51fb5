"""The core ``Executor`` protocol over ROS: the planner talks to the executor bridge through
``execute_skill``, ``reset_scene`` and ``get_world_state``, so a robot can replace the simulator
without code changes.

The domain and profile are asked once, without the state. One ``get_world_state`` reply serves
``world_state``, ``goal_met`` and ``applicable_skills`` until the next skill or reset. It carries
the applicable skills once they have been asked for since the reset, so a search that checks the
goal and then reads its options makes one call a step. A skill's result that carries the change
it made to the world version held here is applied to it (the world is not read again); any other
result, or one for another version, drops the world, which is read again when next needed. A
bridge whose heartbeat stops is reported gone within about 3 s.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetWorldState, ResetScene
from llm_planner_ros.core.errors import CancelToken, ExecutorError
from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.profiles.loader import ProfileError, WorldProfile, validated_profile
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.liveness import PeerWatch, call_peer
from llm_planner_ros.ros.skill_action import SkillActionClient
from llm_planner_ros.ros.world_versions import with_change

BRIDGE = "executor_bridge"


class BridgeWorld:
    """The bridge's world-state reply, for a node that only reads it (the tracker)."""

    def __init__(self, node: Node, timeout_s: float = 60.0, wait_s: float = 5.0,
                 stop: Callable[[], Optional[CancelToken]] = lambda: None) -> None:
        self.stop = stop
        self.bridge = PeerWatch(node, BRIDGE)
        self._world: Client[Any, Any] = node.create_client(GetWorldState, "get_world_state",
                                                           callback_group=ReentrantCallbackGroup())
        self._domain = ""
        self._profile: Optional[WorldProfile] = None
        self._reply: Optional[GetWorldState.Response] = None
        self._stale: Optional[GetWorldState.Response] = None   # the reply forgotten: asked for again by its version
        self._parsed: Optional[tuple[GetWorldState.Response, WorldState]] = None   # a reply and its world
        self._reply_has_applicable = False
        self._wants_applicable = False
        self._classes: dict[int, str] = {}   # instance id -> class, read from a reply since the reset
        self.skill_timeout_s = timeout_s
        self.wait_s = wait_s

    def _call(self, client, request):
        return call_peer(client, request, self.bridge, "the executor bridge", ExecutorError, self.wait_s,
                         self.skill_timeout_s, self.stop())

    def forget(self) -> None:
        """Ask the bridge again at the next read (the world may have changed without a skill of
        ours): by the version held, so that a world still at it is not sent again."""
        self._stale, self._reply = self._reply or self._stale, None

    def observe(self, applicable: bool = False) -> GetWorldState.Response:
        """The bridge's one world-state reply (cached until the next skill or reset; after a reset
        asked by version, and kept where the world is still at it)."""
        self._wants_applicable |= applicable
        if self._reply is None or (self._wants_applicable and not self._reply_has_applicable):
            stale = self._stale if self._reply is None and not self._wants_applicable else None
            request = GetWorldState.Request(include_applicable=self._wants_applicable,
                                            known_version=stale.world_version if stale is not None else 0)
            response = self._state(request)
            if stale is not None and response.unchanged and response.world_version == stale.world_version:
                stale.goal_status, response = response.goal_status, stale   # its parsed world too
            elif response.unchanged:   # from another version than the one held: ask for it whole
                response = self._state(GetWorldState.Request(include_applicable=request.include_applicable))
            self._reply, self._reply_has_applicable, self._stale = response, request.include_applicable, None
        return self._reply

    def _state(self, request: GetWorldState.Request) -> GetWorldState.Response:
        response = self._call(self._world, request)
        if not response.success:
            raise ExecutorError(f"the executor cannot report its world: {response.message}")
        return response

    def redescribe(self) -> None:
        """Read the bridge's domain and profile again at the next use: a goal starts so, since the
        robot behind the bridge may have been replaced by one that declares another world."""
        self._domain, self._profile = "", None

    def _describe(self) -> None:
        """Read the bridge's domain and profile, once per :meth:`redescribe`, without the state."""
        if self._domain:
            return
        response = self._state(GetWorldState.Request(include_domain=True, domain_only=True))
        try:
            self._profile = validated_profile(response.profile, response.domain, where="the executor's profile") \
                if response.profile else None
        except ProfileError as exc:
            raise ExecutorError(str(exc)) from None
        self._domain = response.domain

    @property
    def profile(self) -> Optional[WorldProfile]:
        """The world profile the bridge reports (its robot's), or None for the built-in world."""
        self._describe()
        return self._profile

    def instance_class(self, instance_id: int) -> Optional[str]:
        """The class of an instance id, read from the world-state reply when the id is not known
        yet (asked again when the cached reply lacks it); kept until the next reset."""
        if instance_id not in self._classes:
            self._classes = WorldState.from_lines(self.observe().objects, ()).classes_by_id()
        if instance_id not in self._classes:
            self._reply = None
            self._classes = WorldState.from_lines(self.observe().objects, ()).classes_by_id()
        return self._classes.get(instance_id)

    def world_state(self) -> WorldState:
        """The cached reply's world, parsed once per reply (a step reads it more than once), with
        the changes that skills reported since applied to it."""
        reply = self.observe()
        if self._parsed is None or self._parsed[0] is not reply:
            profile = self._profile   # as described (a goal reads it first); not asked for here
            self._parsed = (reply, WorldState.from_lines(reply.objects, reply.facts,
                                                         profile.declared_classes if profile else {}))
        return self._parsed[1]

    def _apply_change(self, result: ExecuteSkill.Result) -> bool:
        """Apply the change a skill's ``result`` reports to the world held here; False when it
        cannot be (not reported, or reported from another version than the one held)."""
        reply = self._reply
        if (reply is None or not result.world_version or not reply.world_version
                or result.world_version_before != reply.world_version):
            return False
        after = with_change(self.world_state(), result)
        if after is None:   # the bridge's world and this one disagree: read it again
            return False
        self._parsed = (reply, after)
        reply.world_version, reply.goal_status = result.world_version, result.goal_status
        if result.world_version != result.world_version_before:
            reply.applicable_skills, self._reply_has_applicable = [], False
            reply.facts = []   # stale lines: the world is the parsed one above
        return True

    def domain_text(self) -> str:
        self._describe()
        return self._domain

    def applicable_skills(self, limit: Optional[int] = None) -> list[Skill]:
        skills = [conversions.skill_from_msg(s) for s in self.observe(applicable=True).applicable_skills]
        return skills[:limit] if limit else skills

    def goal_met(self) -> Optional[bool]:
        status = self.observe().goal_status
        return None if status < 0 else bool(status)


class RosExecutor(BridgeWorld):
    """The Executor protocol on the bridge: skills, resets and the world-state reply."""

    def __init__(self, node: Node, skill_timeout_s: float = 60.0, wait_s: float = 5.0,
                 stop: Callable[[], Optional[CancelToken]] = lambda: None, cancel_wait_s: float = 5.0) -> None:
        """``stop()`` gives the running goal's stop token (cancel, time limit, shutdown): a skill
        running when it fires is cancelled on the bridge, which cancels it on the robot."""
        super().__init__(node, skill_timeout_s, wait_s, stop)
        self.skills = SkillActionClient(node, "execute_skill", "the executor bridge",
                                        gone=lambda: self.bridge.gone(wait_s),
                                        went_away=lambda asked_at: self.bridge.went_away(asked_at, wait_s))
        self._reset: Client[Any, Any] = node.create_client(ResetScene, "reset_scene",
                                                           callback_group=ReentrantCallbackGroup())
        self.cancel_wait_s = cancel_wait_s
        self.scene_id = ""
        self.objects: list[str] = []

    def reset(self, scene_id: str, graph: Optional[dict] = None, task: str = "") -> list[str]:
        self.forget()
        self._wants_applicable, self._classes = False, {}
        response = self._call(self._reset, ResetScene.Request(scene_id=scene_id, task=task))
        if not response.success:
            raise ExecutorError(f"the executor bridge could not reset: {response.message}")
        self.scene_id = scene_id
        self.objects = list(response.objects)
        return self.objects

    def execute(self, skill: Skill) -> ExecutionResult:
        held, self._reply = self._reply, None   # kept only where the result tells what changed
        stop = self.stop()
        goal = ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill), scene_id=self.scene_id)
        outcome = self.skills.run(goal, skill.script(), self.skill_timeout_s, self.wait_s, stop, self.cancel_wait_s)
        if outcome.ended == "done" and outcome.result is not None:
            self._reply = held
            if not self._apply_change(outcome.result):
                self._reply = None
        if outcome.ended == "stopped" and stop is not None:   # the bridge's own word on the robot, if it gave one
            said = outcome.result.observation if outcome.result is not None else outcome.message
            raise type(stop.error)(f"{stop.error} while the bridge ran {skill.script()}; {said}")
        if outcome.ended != "done" or outcome.result is None:
            raise ExecutorError(outcome.message)
        result = outcome.result
        failure = conversions.failure_from_msg(result.failure)
        if failure.type is ErrorType.EXECUTOR_ERROR:   # not a precondition: nothing to re-prompt on
            raise ExecutorError(failure.message)
        return ExecutionResult(result.success, failure, result.observation, skill.script())
