"""The tracker node over DDS: whole-task questions answered from the bridge's goal conditions;
subtask questions by PET's judge over the given observations; the latched progress pointer."""
from __future__ import annotations

import uuid

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from helpers.faulty_openai import FaultyOpenAIServer
from helpers.processes import NodeProcess, console_script, ros_node, wait_until
from helpers.ros_client import RosTestClient, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import TrackerState
from llm_planner_msgs.srv import CheckSubtask, ResetScene
from llm_planner_ros.pet.judges import Answer
from llm_planner_ros.pet.track import SubtaskTracker
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


def tracker_states(client):
    states = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    client.node.create_subscription(TrackerState, "tracker_state", states.append, qos)
    return states


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

    states = tracker_states(stack)
    assert wait_until(lambda: states, 10)
    assert states[-1].task == task and states[-1].goal_met is True
    assert states[-1].last_question == "switch on the light" and states[-1].pointer == 1
    done = ask(stack, task, "switch on the light", ["I am close to the light", "light is now on"], plan, 1)
    assert (done.done, done.source) == (True, "embedding") and "2 observation(s)" in done.detail
    assert wait_until(lambda: states[-1].pointer == 2, 10)
    assert list(states[-1].subtasks) == plan and states[-1].last_answer is True


class OverDds:
    """PET's tracker's judge as the planner has it: each question goes to the tracker node."""

    def __init__(self, client):
        self.client = client

    def ask(self, task, subtask, observations, subtasks=(), pointer=-1):
        r = ask(self.client, task, subtask, observations, subtasks, pointer)
        return Answer(r.done, r.probability, r.source)


def test_a_reopen_check_publishes_the_planners_pointer(stack):
    """With pet_reopen_undone the planner asks about the opposite of a finished subtask at that
    subtask's index: a yes moves its pointer back there, a no leaves it; the published state follows."""
    task, plan = "Heat food", ["open the microwave", "put the food in the microwave"]
    tracker = SubtaskTracker(OverDds(stack), task, plan, reopen_undone=True)
    states = tracker_states(stack)

    def published(question, answer):
        last = lambda: (states[-1].last_question, states[-1].last_answer) if states else None   # noqa: E731
        return wait_until(lambda: last() == (question, answer), 10)
    tracker.observe("microwave is now open")
    assert published("open the microwave", True) and states[-1].pointer == tracker.pointer == 1
    assert tracker.observe("microwave is now closed").reopened    # "close the microwave": yes
    assert published("close the microwave", True) and states[-1].pointer == tracker.pointer == 0
    tracker.observe("microwave is now open")
    assert published("open the microwave", True) and states[-1].pointer == tracker.pointer == 1
    assert not ask(stack, task, "close the microwave", ["I am holding the food"], plan, 0).done
    assert published("close the microwave", False) and states[-1].pointer == 1
    assert list(states[-1].subtasks) == plan


def test_copies_of_a_question_being_answered_ask_a_slow_judge_once():
    """The planner sends an unanswered question again every few seconds; copies that reach the
    tracker while its (slow) judge answers the first wait for that answer instead of asking again."""
    ns = f"/tracker_llm_{uuid.uuid4().hex[:6]}"
    with FaultyOpenAIServer(slow_s=3.0) as server, \
            ros_node("tracker_node", ns, "serving 'check_subtask'", "pet_judge:=llm", "llm_backend:=openai",
                     f"openai_base_url:={server.url}", "openai_model:=m", "openai_timeout_s:=60.0"), \
            RosTestClient(ns) as client:
        assert ask(client, "Heat food", "open the microwave", ["I am close to the microwave"]).source == "llm"
        server.mode, before = "slow", server.requests
        service = client.service(CheckSubtask, "check_subtask")
        request = CheckSubtask.Request(task="Heat food", subtask="open the microwave",
                                       observations=["microwave is now open"])
        copies = [service.call_async(request) for _ in range(3)]
        answers = [wait_future(f, 60) for f in copies]
        assert len({(a.done, a.probability, a.source) for a in answers}) == 1 and answers[0].source == "llm"
        assert server.requests - before == 1
