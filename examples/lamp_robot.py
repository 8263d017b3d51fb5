"""A minimal robot-side skill server (docs/robot.md, "Connect your robot"): everything a robot
serves so that llm_planner_ros plans for it and executes on it, in one file that needs only
rclpy and the interfaces (llm_planner_msgs), not this project's Python package.

The robot drives between a dock and a lamp and switches the lamp. It serves, under its namespace:
- ``get_world_state`` (GetWorldState): its profile and domain (what its skills are, in words), and
  its state as instances and facts;
- ``execute_skill`` (ExecuteSkill): one skill at a time; a skill whose precondition does not hold
  fails with a PreconditionFailure whose cause is in the profile's words; a cancelled skill stops;
- ``reset_scene`` (ResetScene): back to the start state.

    python examples/lamp_robot.py --ros-args -r __ns:=/robot1/robot
    llm_planner_stack --namespace /robot1 --world none      # the bridge, the planner, the tracker
    llm_planner_send_goal "Turn on the light" --namespace /robot1 --execute
"""
from __future__ import annotations

import secrets
import threading
import time

import rclpy
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_msgs.srv import GetWorldState, ResetScene

# The robot's world in PDDL: what each skill needs and does.
DOMAIN = """(define (domain lamp_robot)
  (:requirements :strips :typing :negative-preconditions)
  (:types place - object appliance - place robot)
  (:predicates (at ?r - robot ?p - place) (switched_on ?a - appliance))
  (:action navigate_to
    :parameters (?r - robot ?from - place ?to - place)
    :precondition (and (at ?r ?from) (not (at ?r ?to)))
    :effect (and (at ?r ?to) (not (at ?r ?from))))
  (:action switch_on
    :parameters (?r - robot ?a - appliance)
    :precondition (and (at ?r ?a) (not (switched_on ?a)))
    :effect (switched_on ?a))
  (:action switch_off
    :parameters (?r - robot ?a - appliance)
    :precondition (and (at ?r ?a) (switched_on ?a))
    :effect (not (switched_on ?a))))
"""

# The profile: which skill each action is, its facts and objects in words, an example goal.
PROFILE = """name: lamp_robot
domain: domain.pddl
agent: robot_1
actions:
  navigate_to: {skill: NAVIGATE_TO, args: ["?to"], words: "go to the {0}"}
  switch_on: {skill: SWITCH_ON, args: ["?a"], words: "switch on the {0}"}
  switch_off: {skill: SWITCH_OFF, args: ["?a"], words: "switch off the {0}"}
predicates:
  at: {words: "I am at the {1}", negated: "I am not at the {1}"}
  switched_on: {words: "the {0} is on", negated: "the {0} is off"}
objects:
  robot: [me]
  dock: [charger]
  lamp: [light]
examples:
  - {task: "Turn on the light", goal: ["(switched_on lamp)"]}
"""

OBJECTS = ["robot_1 - robot", "dock_2 - place", "lamp_3 - appliance"]
START = {("at", "robot_1", "dock_2")}
DRIVE_S = 1.0   # a drive takes this long; it stops when the skill is cancelled


class LampRobot(Node):
    def __init__(self) -> None:
        super().__init__("lamp_robot")
        self.facts: set[tuple[str, ...]] = set(START)
        # changes with the world; a random start, so that a version held from before a restart never matches
        self.version = secrets.randbits(62) + 1
        self.lock = threading.Lock()
        group = ReentrantCallbackGroup()
        self.create_service(GetWorldState, "get_world_state", self.world_state, callback_group=group)
        self.create_service(ResetScene, "reset_scene", self.reset, callback_group=group)
        ActionServer(self, ExecuteSkill, "execute_skill", execute_callback=self.execute,
                     cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        self.get_logger().info("lamp robot serving action 'execute_skill'")

    # -- what the planner reads --------------------------------------------------------------
    def world_state(self, request, response):
        response.success, response.domain_name = True, "lamp_robot"
        if request.include_domain or request.domain_only:
            response.domain, response.profile = DOMAIN, PROFILE
        if not request.domain_only:
            with self.lock:
                response.world_version = self.version
                if request.known_version == self.version:   # the asker holds this world: not sent again
                    response.unchanged = True
                    return response
                response.objects = OBJECTS
                response.facts = [f"({' '.join(f)})" for f in sorted(self.facts)]
        return response

    def reset(self, request, response):
        if request.world or request.facts:   # a given start state: this robot has only its own
            response.success, response.message = False, "this robot cannot start from a given world or facts"
            return response
        with self.lock:
            self.facts, self.version = set(START), self.version + 1
        response.success, response.objects = True, [o.split(" - ")[0] for o in OBJECTS]
        return response

    # -- the skills --------------------------------------------------------------------------
    def execute(self, goal_handle):
        skill = goal_handle.request.skill
        # the planner names instances by class and id: ("lamp", 3) is lamp_3
        target = f"{skill.objects[0]}_{skill.object_ids[0]}" if skill.objects and skill.object_ids else ""
        here = next(f[2] for f in self.facts if f[0] == "at")
        result = ExecuteSkill.Result()
        if skill.action == "NAVIGATE_TO" and target in ("dock_2", "lamp_3"):
            goal_handle.publish_feedback(ExecuteSkill.Feedback(status=f"driving to the {skill.objects[0]}"))
            end = time.monotonic() + DRIVE_S
            while time.monotonic() < end:       # a real robot: wait on its own controller
                if goal_handle.is_cancel_requested:
                    goal_handle.canceled()
                    return self.failed(result, PreconditionFailure.EXECUTOR_ERROR, "cancelled", "I stopped driving")
                time.sleep(0.05)
            with self.lock:
                self.facts = (self.facts - {("at", "robot_1", here)}) | {("at", "robot_1", target)}
                self.version += 1
        elif skill.action in ("SWITCH_ON", "SWITCH_OFF") and target == "lamp_3":
            if here != "lamp_3":   # the precondition, in the profile's words for the fact
                return self.failed(result, PreconditionFailure.AGENT_PROXIMITY, f"robot at {here}",
                                   "I am not at the lamp", goal_handle)
            with self.lock:
                fact = ("switched_on", "lamp_3")
                self.facts = self.facts | {fact} if skill.action == "SWITCH_ON" else self.facts - {fact}
                self.version += 1
        else:
            return self.failed(result, PreconditionFailure.PARSE_ERROR, f"unknown skill {skill.action} {target}",
                               f"I cannot {skill.action.lower().replace('_', ' ')} {target}", goal_handle)
        goal_handle.succeed()
        result.success, result.observation = True, f"done: {skill.action}"   # the planner reads the world again
        return result

    @staticmethod
    def failed(result, kind: int, message: str, cause: str, goal_handle=None):
        if goal_handle is not None:
            goal_handle.abort()
        result.success = False
        result.failure = PreconditionFailure(type=kind, message=message, cause=cause)
        return result


def main() -> None:
    rclpy.init()
    node = LampRobot()
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
