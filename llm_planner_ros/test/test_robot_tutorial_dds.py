"""Issue 40: the tutorial's robot (docs/robot.md, examples/lamp_robot.py), a skill server written
with rclpy and the interfaces alone, behind the real executor bridge and planner node: a goal
planned from its profile and executed on it, a precondition failure in its profile's words, and
a skill cancelled while it runs, and the bridge's reset forwarded to the robot."""
from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

from action_msgs.msg import GoalStatus

from helpers.processes import NodeProcess, ros_node
from helpers.ros_client import RosTestClient, execute_skill, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill, PlanTask
from llm_planner_msgs.msg import PreconditionFailure, Skill
from llm_planner_msgs.srv import GetWorldState, ResetScene
from llm_planner_ros.core.types import Skill as CoreSkill

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lamp_robot.py"
READY = "serving action 'execute_skill'"


def test_the_tutorials_robot_plans_executes_fails_in_its_words_and_stops_when_cancelled():
    ns = f"/lamp_{uuid.uuid4().hex[:6]}"
    robot = NodeProcess([sys.executable, str(EXAMPLE), "--ros-args", "-r", f"__ns:={ns}/robot"], ready=READY)
    bridge = ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill",
                      "robot_reset_service:=robot/reset_scene")
    planner = ros_node("planner_node", ns, "planner ready", "world:=none")
    with robot, bridge, planner, RosTestClient(ns) as client:
        # a skill whose precondition does not hold, through the bridge: the robot's own words
        result = execute_skill(client, CoreSkill("SWITCH_ON", ("lamp",), (3,)))
        assert not result.success and result.failure.type == PreconditionFailure.AGENT_PROXIMITY
        assert result.failure.cause == "I am not at the lamp"
        # a goal in the profile's terms, planned by Fast Downward from its state and executed
        status, result = client.send_plan(PlanTask.Goal(task="Turn on the light", method="pddl", execute=True,
                                                        goal_conditions=["(switched_on lamp)"]),
                                          timeout=60).result(timeout=120)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert [s.skill.action for s in result.steps] == ["NAVIGATE_TO", "SWITCH_ON"]
        # a drive cancelled while it runs stops at once
        drive = client.action_client(ExecuteSkill, "robot/execute_skill")
        assert drive.wait_for_server(timeout_sec=30)
        handle = send_goal(drive, ExecuteSkill.Goal(skill=Skill(action="NAVIGATE_TO", objects=["dock"],
                                                                object_ids=[2])))
        assert handle.accepted
        t0 = time.monotonic()
        handle.cancel_goal_async()
        ended = wait_future(handle.get_result_async(), 30)
        assert ended.status == GoalStatus.STATUS_CANCELED and time.monotonic() - t0 < 1.0
        assert ended.result.failure.cause == "I stopped driving"
        # the bridge's reset_scene reaches the robot's own: back at the dock, the lamp off
        reset = client.call(ResetScene, "reset_scene", ResetScene.Request())
        assert reset.success and "robot_1" in reset.objects
        given = client.call(ResetScene, "reset_scene", ResetScene.Request(facts=["(at robot_1 lamp_3)"]))
        assert not given.success and "cannot start from a given world or facts" in given.message, given
        world = client.call(GetWorldState, "get_world_state", GetWorldState.Request())
        assert "(at robot_1 dock_2)" in world.facts and "(switched_on lamp_3)" not in world.facts
