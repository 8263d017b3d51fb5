"""Skills sent at once, late acceptances and robots that abort, over DDS: the executor bridge
(backend robot) in front of the reference PDDL robot, and SkillActionClient against a real rclpy
action server in this process."""
from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from typing import Optional

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from helpers.processes import NodeProcess, ros_node, wait_until
from helpers.ros_client import RosTestClient, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_ros.core.errors import CancelToken, ExecutorError
from llm_planner_ros.core.types import Skill
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.executor_client import RosExecutor
from llm_planner_ros.ros.skill_action import GoalStops, SkillActionClient

READY = "serving action 'execute_skill'"
SKILL_S = 5.0   # how long each of the robot's skills takes: the time a second skill waits for the first

# the robot stands at the lamp, which is off, holding the book: switching the lamp on, or putting
# the book on it, is safe alone; both make the book lie on a lit lamp (object_on_hot_appliance)
AT_THE_LAMP = """(define (problem apartment) (:domain mobile_manipulator)
  (:objects robot_1 - robot  kitchen_counter_2 dining_table_3 sofa_4 desk_5 dock_6 - place
    fridge_7 cupboard_8 - container  kettle_9 lamp_10 tv_11 - appliance  person_12 - person
    cup_13 mug_14 apple_15 milk_16 book_17 remote_18 phone_19 plate_20 - item)
  (:init (at robot_1 lamp_10) (holding robot_1 book_17) (on cup_13 kitchen_counter_2)
    (on apple_15 dining_table_3) (on remote_18 sofa_4) (on phone_19 desk_5) (in milk_16 fridge_7)
    (in mug_14 cupboard_8) (in plate_20 cupboard_8))
  (:goal (and)))
"""


class BridgeGoal:
    """An ExecuteSkill goal sent straight to the bridge."""

    def __init__(self, client: RosTestClient, skill: Skill) -> None:
        ac = client.action_client(ExecuteSkill, "execute_skill")
        assert ac.wait_for_server(timeout_sec=60)
        self.handle = send_goal(ac, ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill)))
        self.result = self.handle.get_result_async()


def until_the_bridge_reaches_the_robot(client: RosTestClient, skill: Skill) -> ExecuteSkill.Result:
    for _ in range(60):   # until the bridge has discovered the robot and read its world
        r = wait_future(BridgeGoal(client, skill).result, 120).result
        if "not available" not in r.failure.message and "cannot be read" not in r.failure.message:
            return r
        time.sleep(0.5)
    raise AssertionError(f"the bridge never reached the robot: {r.failure.message}")


@pytest.fixture(scope="module")
def robot_at_the_lamp(tmp_path_factory):
    world = tmp_path_factory.mktemp("world") / "at_the_lamp.pddl"
    world.write_text(AT_THE_LAMP)
    ns = f"/skills_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, "profile:=mobile_manipulator", f"world:={world}",
                  f"skill_delay_s:={SKILL_S}") as robot, \
            ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_timeout_s:=30.0") as bridge, \
            RosTestClient(ns) as client:
        until_the_bridge_reaches_the_robot(client, Skill("NAVIGATE_TO", ("lamp",), (10,)))
        yield robot, bridge, client


def executed(robot: NodeProcess, what: str) -> int:
    return sum(f"executing skill {what}" in line for line in robot.lines)


def test_two_skills_at_once_are_each_checked_against_the_world_the_other_left(robot_at_the_lamp):
    """Both used to be checked against the world before either ran, then both ran: the book lay
    on the lit lamp. Now the second is checked once the first has ended, and refused."""
    robot, bridge, client = robot_at_the_lamp
    switch = BridgeGoal(client, Skill("SWITCH_ON", ("lamp",), (10,)))
    place = BridgeGoal(client, Skill("PLACE", ("book", "lamp"), (17, 10)))
    results = [wait_future(g.result, 120).result for g in (switch, place)]
    hazard = [r for r in results if r.failure.type == PreconditionFailure.HAZARD]
    ran = [r for r in results if r.success]
    assert len(hazard) == 1 and len(ran) == 1, [(r.success, r.failure.message) for r in results]
    assert "would make a hazard hold" in hazard[0].failure.message and "lamp" in hazard[0].failure.message, \
        hazard[0].failure.message
    assert executed(robot, "[SWITCH_ON]") + executed(robot, "[PLACE]") == 1, robot.output[-3000:]


def test_a_skill_cancelled_while_it_waits_its_turn_is_never_sent(robot_at_the_lamp):
    """A goal cancelled while another skill runs ends at once, and the robot never sees it
    (before, it waited for the running skill, was sent, and then cancelled on the robot)."""
    robot, bridge, client = robot_at_the_lamp
    first = BridgeGoal(client, Skill("NAVIGATE_TO", ("desk",), (5,)))
    assert wait_until(lambda: executed(robot, "[NAVIGATE_TO] <desk>") > 0 or first.result.done(), 120)
    queued = BridgeGoal(client, Skill("NAVIGATE_TO", ("sofa",), (4,)))
    wait_future(queued.handle.cancel_goal_async(), 30)
    response = wait_future(queued.result, 60)
    assert not first.result.done(), "the cancelled goal waited for the running one"
    assert response.status == GoalStatus.STATUS_CANCELED, response.result
    assert response.result.observation == "cancelled: nothing was sent", response.result
    assert wait_future(first.result, 120).result.success
    assert executed(robot, "[NAVIGATE_TO] <sofa>") == 0, robot.output[-3000:]


def test_more_skills_at_once_than_the_bridge_holds_are_refused_not_starved(robot_at_the_lamp):
    """Five goals at once used to block every thread of the bridge's executor, the robot's answers
    waiting behind them: false timeouts. Now one runs, one waits, the rest are refused at once."""
    robot, bridge, client = robot_at_the_lamp
    places = [("dock", 6), ("sofa", 4), ("desk", 5), ("dock", 6), ("sofa", 4)]
    goals = [BridgeGoal(client, Skill("NAVIGATE_TO", (c,), (i,))) for c, i in places]
    results = [wait_future(g.result, 120).result for g in goals]
    said = [r.failure.message or r.observation for r in results]
    refused = [m for m in said if "already runs a skill and has one waiting" in m]
    assert 1 <= len(refused) <= 3, said
    assert all(r.failure.type != PreconditionFailure.EXECUTOR_ERROR for r, m in zip(results, said)
               if m not in refused), said   # no false timeout among those that ran


def test_a_lifecycle_shutdown_of_the_bridge_stops_the_skill_the_robot_runs(tmp_path):
    """``ros2 lifecycle set <bridge> shutdown`` while the robot runs a skill: the skill is
    cancelled on the robot at once (before, it ran to its end beside a finalized bridge)."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState

    world = tmp_path / "at_the_lamp.pddl"
    world.write_text(AT_THE_LAMP)
    ns = f"/shutdown_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, "profile:=mobile_manipulator", f"world:={world}",
                  "skill_delay_s:=600.0") as robot, \
            ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_timeout_s:=900.0") as bridge, \
            RosTestClient(ns) as client:
        walk = BridgeGoal(client, Skill("NAVIGATE_TO", ("sofa",), (4,)))
        assert wait_until(lambda: executed(robot, "[NAVIGATE_TO]") == 1, 120), robot.output[-3000:]
        change = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_ACTIVE_SHUTDOWN))
        client.call(ChangeState, "executor_bridge/change_state", change)   # judged by what it stops
        ended = wait_future(walk.result, 60)   # not the robot's 600 s
        assert ended.status == GoalStatus.STATUS_ABORTED and not ended.result.success, bridge.output[-3000:]
        assert ended.result.observation.startswith("stopped: the robot confirmed"), ended.result
        assert "cancelled [NAVIGATE_TO] <sofa> (4) while it ran" in robot.output, robot.output[-3000:]


ABORTING_ROBOT = """
import sys
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_ros.ros.pddl_robot import PddlRobotNode
from llm_planner_ros.ros.spin import spin_node

class AbortingRobot(PddlRobotNode):
    def _execute(self, goal_handle):
        action = goal_handle.request.skill.action
        if action == "SWITCH_ON":
            goal_handle.abort()
            return ExecuteSkill.Result()
        if action == "SWITCH_OFF":
            goal_handle.abort()
            return ExecuteSkill.Result(failure=PreconditionFailure(message="the gripper jammed"))
        if action == "PICK":   # ends as if it succeeded, with nothing said
            goal_handle.succeed()
            return ExecuteSkill.Result()
        raise RuntimeError("motor driver fault")   # rclpy aborts the goal

raise SystemExit(spin_node(AbortingRobot, "pddl_robot", sys.argv[1:]))
"""


def test_a_robot_that_aborts_a_skill_is_an_executor_error_that_says_so():
    """An ABORTED robot goal used to come back SUCCEEDED, success false, failure NONE, no
    message: a skill that merely failed, for no reason."""
    ns = f"/aborts_{uuid.uuid4().hex[:6]}"
    with NodeProcess([sys.executable, "-c", ABORTING_ROBOT, "--ros-args", "-r", f"__ns:={ns}/robot"],
                     ready=READY, timeout=120), \
            ros_node("executor_bridge", ns, READY, "backend:=robot"), RosTestClient(ns) as client:
        r = until_the_bridge_reaches_the_robot(client, Skill("NAVIGATE_TO", ("desk",), (5,)))
        assert r.failure.type == PreconditionFailure.EXECUTOR_ERROR, r
        assert r.failure.message == "the robot aborted [NAVIGATE_TO] <desk> (5); it gave no reason"
        response = wait_future(BridgeGoal(client, Skill("SWITCH_ON", ("lamp",), (10,))).result, 120)
        assert response.status == GoalStatus.STATUS_SUCCEEDED and not response.result.success
        assert response.result.failure.type == PreconditionFailure.EXECUTOR_ERROR
        assert response.result.failure.message == "the robot aborted [SWITCH_ON] <lamp> (10); it gave no reason"
        r = wait_future(BridgeGoal(client, Skill("SWITCH_OFF", ("lamp",), (10,))).result, 120).result
        assert r.failure.message == "the robot aborted [SWITCH_OFF] <lamp> (10): the gripper jammed", r
        r = wait_future(BridgeGoal(client, Skill("PICK", ("book",), (17,))).result, 120).result
        assert r.failure.type == PreconditionFailure.EXECUTOR_ERROR
        assert r.failure.message == "the robot said that [PICK] <book> (17) failed; it gave no reason", r
        ros = client.planner.attach(lambda n: RosExecutor(n, wait_s=10.0))
        with pytest.raises(ExecutorError, match="the robot aborted"):
            ros.execute(Skill("SWITCH_ON", ("lamp",), (10,)))


@contextmanager
def robot_in_this_process(execute: Callable, accept: Optional[Callable] = None):
    """A skill server and a client node on one executor: (the client's node, the action's name)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=6, context=context)
    name = f"skill_{uuid.uuid4().hex[:6]}/execute_skill"
    robot = rclpy.create_node("robot", context=context)
    bridge = rclpy.create_node("bridge", context=context)
    stops = GoalStops()
    ActionServer(robot, ExecuteSkill, name, lambda handle: execute(handle, stops),
                 goal_callback=accept or (lambda _: GoalResponse.ACCEPT), cancel_callback=stops.on_cancel,
                 callback_group=ReentrantCallbackGroup())
    for node in (robot, bridge):
        executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        yield bridge, name
    finally:
        executor.shutdown()
        for node in (robot, bridge):
            node.destroy_node()
        rclpy.shutdown(context=context)


def goal(place: str) -> ExecuteSkill.Goal:
    return ExecuteSkill.Goal(skill=conversions.skill_to_msg(make_skill("WALK", [place])))


class Freezer:
    """A skill server's execute: the freezer runs until it is cancelled or released, the rest at once."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.started = threading.Event()
        self._wakes: list[threading.Event] = []
        self._released = False
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            self._released = True
            for wake in self._wakes:
                wake.set()

    def __call__(self, goal_handle, stops: GoalStops):
        what = " ".join(goal_handle.request.skill.objects)
        self.events.append(f"start {what}")
        self.started.set()
        with stops.running(goal_handle) as stop:
            if what == "freezer":
                wake = threading.Event()
                with self._lock:
                    self._wakes.append(wake)
                    if self._released:
                        wake.set()
                remove = stop.on_stop(wake.set)
                if not stop.cancelled:   # a cancel that came before this callback started
                    wake.wait(60.0)
                remove()
            if stop.cancelled:
                goal_handle.canceled()
            else:
                goal_handle.succeed()
        self.events.append(f"end {what}")
        return ExecuteSkill.Result(success=True)


def test_a_skill_accepted_late_is_cancelled_and_the_next_waits_for_it():
    """The robot accepts after the client stopped waiting: it used to run anyway, beside the next
    skill, while the client said it was never accepted. Now it is cancelled as soon as it is
    accepted, the outcome says it may have started, and the next skill waits for it to end."""
    freezer, accept_now = Freezer(), threading.Event()

    def accept(request) -> GoalResponse:
        if request.skill.objects == ["freezer"]:
            accept_now.wait(60.0)
        return GoalResponse.ACCEPT
    with robot_in_this_process(freezer, accept) as (node, name):
        client = SkillActionClient(node, name, "the robot")
        first = client.run(goal("freezer"), "[WALK] <freezer>", timeout_s=60.0, wait_s=0.5, stop_wait_s=60.0)
        assert first.ended == "rejected" and "may have started" in first.message, first
        accept_now.set()
        second = client.run(goal("couch"), "[WALK] <couch>", timeout_s=60.0, wait_s=30.0, stop_wait_s=60.0)
        freezer.release()
        assert second.ended == "done", second.message
        assert freezer.events == ["start freezer", "end freezer", "start couch", "end couch"], freezer.events


class WaitingToken(CancelToken):
    """A stop token that says when a waiter registers on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waited_on = threading.Event()

    def on_stop(self, callback):
        self.waited_on.set()
        return super().on_stop(callback)


def test_a_skill_stopped_while_it_waits_for_the_running_one_is_not_sent():
    """Cancelled while queued behind another skill on the same client: it ends at once and is
    never sent (before, it waited for the running skill, then went to the server)."""
    freezer = Freezer()
    with robot_in_this_process(freezer) as (node, name):
        client = SkillActionClient(node, name, "the robot")
        outcomes: dict[str, object] = {}
        running = threading.Thread(target=lambda: outcomes.update(first=client.run(
            goal("freezer"), "[WALK] <freezer>", timeout_s=60.0, wait_s=30.0)))
        running.start()
        if not freezer.started.wait(60.0):
            running.join(60.0)
            raise AssertionError(f"the first skill never reached the server: {outcomes}")
        stop = WaitingToken()
        queued = threading.Thread(target=lambda: outcomes.update(second=client.run(
            goal("couch"), "[WALK] <couch>", timeout_s=60.0, wait_s=30.0, stop=stop)))
        queued.start()
        assert stop.waited_on.wait(30.0)
        stop.cancel()
        queued.join(30.0)
        stopped_while_running = not queued.is_alive() and running.is_alive()
        freezer.release()
        running.join(60.0)
        queued.join(60.0)
        assert stopped_while_running, outcomes
        second = outcomes["second"]
        assert second.ended == "stopped" and "nothing was sent" in second.message, second
        assert freezer.events == ["start freezer", "end freezer"], freezer.events
