"""The tracker node over DDS: whole-task questions answered from the bridge's goal conditions;
subtask questions by PET's judge over the given observations; the latched progress pointer."""
from __future__ import annotations

import uuid

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from helpers.processes import NodeProcess, console_script, wait_until
from helpers.ros_client import RosTestClient, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import TrackerState
from llm_planner_msgs.srv import CheckSubtask, ResetScene
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.vocabulary import SkillParser
from llm_planner_ros.ros import conversions


@pytest.fixture(scope="module")
def stack():
    ns = f"/tracker_{uuid.uuid4().hex[:6]}"
    bridge = [str(console_script("executor_bridge")), "--ros-args", "-r", f"__ns:={ns}"]
    tracker = [str(console_script("tracker_node")), "--ros-args", "-r", f"__ns:={ns}"]
    with NodeProcess(bridge, ready="serving action 'execute_skill'"), \
            NodeProcess(tracker, ready="serving 'check_subtask'"):
        with RosTestClient(ns) as client:
            yield client


def ask(client, task, subtask="", observations=(), subtasks=(), pointer=-1):
    request = CheckSubtask.Request(task=task, subtask=subtask, observations=list(observations),
                                   subtasks=list(subtasks), pointer=pointer)
    return client.call(CheckSubtask, "check_subtask", request)


def test_whole_task_is_checked_against_the_goal_conditions(stack):
    task = "Turn on light"
    assert stack.call(ResetScene, "reset_scene", ResetScene.Request(task=task)).success
    before = ask(stack, task)
    assert (before.done, before.probability, before.source) == (False, 0.0, "goal_check")

    # execute the EAI human program for the task through the bridge
    program = next(p for p in resources.human_programs() if p.task == task and resources.eai_goal(p.program_id))
    graph, _ = resources.scene_for_task("TrimmedTestScene1", task)
    assert graph == resources.scene_graphs(program.program_id)[0]
    ac = stack.action_client(ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=20)
    for line in program.script:
        goal = ExecuteSkill.Goal(skill=conversions.skill_to_msg(SkillParser.parse_script(line)))
        result = wait_future(send_goal(ac, goal).get_result_async(), 30).result
        assert result.success, (line, result.failure)
    after = ask(stack, task, subtask="turn on light")
    assert (after.done, after.probability, after.source) == (True, 1.0, "goal_check")

    plan = ["walk to the light", "switch on the light"]
    not_yet = ask(stack, task, "switch on the light", ["I am close to the light"], plan, 1)
    assert (not_yet.done, not_yet.source) == (False, "embedding") and not_yet.probability < 0.5

    states = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    stack.node.create_subscription(TrackerState, "tracker_state", states.append, qos)
    assert wait_until(lambda: states, 10)
    assert states[-1].task == task and states[-1].goal_met is True
    assert states[-1].last_question == "switch on the light" and states[-1].pointer == 1
    done = ask(stack, task, "switch on the light", ["I am close to the light", "light is now on"], plan, 1)
    assert (done.done, done.source) == (True, "embedding") and "2 observation(s)" in done.detail
    assert wait_until(lambda: states[-1].pointer == 2, 10)
    assert list(states[-1].subtasks) == plan and states[-1].last_answer is True
