"""A robot that is not VirtualHome, over DDS (issue 23): the reference PDDL robot of the shipped
mobile manipulator profile behind the executor bridge (robot backend), and the real planner node.
The profile travels with the robot's GetWorldState; the planner and the bridge check and plan
against it."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from action_msgs.msg import GoalStatus

from helpers.processes import ros_node, wait_until
from helpers.ros_client import RosTestClient, execute_skill
from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.srv import GetWorldState

BRIDGE_READY = "serving action 'execute_skill'"
ROBOT_READY = "serving action 'execute_skill'"


def robot_stack(ns: str, *planner_params: str):
    return (ros_node("pddl_robot", f"{ns}/robot", ROBOT_READY, "profile:=mobile_manipulator"),
            ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=robot", "robot_action:=robot/execute_skill"),
            ros_node("planner_node", ns, "planner ready", *planner_params))


def test_a_robot_stack_never_imports_the_world_given_in_code(tmp_path, monkeypatch):
    """The robot stack as robot_stack_launch.py profile:=mobile_manipulator starts it (the planner
    with world none): no process of it imports the built-in world's package or its simulator, while
    a goal is planned and executed on the robot (issue 39). The watch itself is shown to see such
    an import, in a process started with the same environment."""
    watched = tmp_path / "imports.txt"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(Path(__file__).parent / "helpers" / "import_watch"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("IMPORT_WATCH_FILE", str(watched))
    monkeypatch.setenv("IMPORT_WATCH", "llm_planner_ros.profiles.virtualhome,virtualhome_eval")
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, planner = robot_stack(ns, "world:=none")
    with robot, bridge, planner, RosTestClient(ns) as client:
        status, result = client.send_plan(PlanTask.Goal(task="Turn on the light", method="pddl", execute=True,
                                                        goal_conditions=["(switched_on light)"]),
                                          timeout=60).result(timeout=180)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
    assert not watched.exists(), watched.read_text()
    subprocess.run([sys.executable, "-c", "import llm_planner_ros.profiles.virtualhome.world"], check=True)
    assert "llm_planner_ros.profiles.virtualhome" in watched.read_text()


def test_the_cores_python_log_lines_reach_rosout():
    """Issue 40: a line the ROS-free core writes through Python logging (the composition root's
    "planning service composed ...") reaches /rosout under the planner node's own logger, as
    its ROS log lines do."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy

    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    seen: list = []
    robot, bridge, planner = robot_stack(ns, "world:=none")
    with RosTestClient(ns) as client:
        client.node.create_subscription(Log, "/rosout", seen.append, QoSProfile(
            depth=1000, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL))
        logger = ns.strip("/") + ".planner"
        with robot, bridge, planner:
            assert wait_until(lambda: any(m.name == logger and "planner ready" in m.msg for m in seen), 60), \
                sorted({m.name for m in seen})
            assert any(m.name == logger and "planning service composed" in m.msg for m in seen), \
                [m.msg for m in seen if m.name == logger]


def test_the_stack_reports_its_health_on_diagnostics():
    """Issue 40: the planner and the bridge publish their status on /diagnostics: the model, the
    peers heard, the queue and the last goal's end; the bridge, whether the robot serves."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    from lifecycle_msgs.srv import GetState as GetLifecycleState

    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    statuses: dict[str, DiagnosticStatus] = {}
    robot, bridge, planner = robot_stack(ns, "world:=none")
    with RosTestClient(ns) as client:
        client.node.create_subscription(DiagnosticArray, "/diagnostics",
                                        lambda m: statuses.update({s.name: s for s in m.status}), 10)
        planner_key, bridge_key = f"{ns[1:]}/planner: planner", f"{ns[1:]}/executor_bridge: executor bridge"
        with robot, bridge, planner:
            def values(key: str) -> dict[str, str]:
                return {kv.key: kv.value for kv in statuses[key].values} if key in statuses else {}
            assert wait_until(lambda: values(planner_key).get("executor_bridge heard") == "True"
                              and statuses[planner_key].level == DiagnosticStatus.OK, 30), statuses.get(planner_key)
            assert values(planner_key)["llm"].startswith("llama.cpp:") and values(planner_key)["queued goals"] == "0"
            assert values(planner_key)["world given in code"].startswith("none")
            assert wait_until(lambda: values(bridge_key).get("robot serving") == "True", 30), statuses.get(bridge_key)
            assert statuses[bridge_key].level == DiagnosticStatus.OK and statuses[bridge_key].hardware_id == \
                f"{ns}/executor_bridge"
            _, result = client.send_plan(PlanTask.Goal(task="Turn on the light", method="pddl", execute=True,
                                                       goal_conditions=["(switched_on light)"]),
                                         timeout=60).result(timeout=180)
            assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
            assert wait_until(lambda: values(planner_key).get("last goal") == "goal_reached", 10), \
                statuses.get(planner_key)
            # the real planner through a whole lifecycle: deactivated it says so, cleaned up and
            # configured again (its parameters and approval service made once) it plans again
            for transition, then in ((Transition.TRANSITION_DEACTIVATE, "inactive"),
                                     (Transition.TRANSITION_CLEANUP, "unconfigured"),
                                     (Transition.TRANSITION_CONFIGURE, "inactive"),
                                     (Transition.TRANSITION_ACTIVATE, "active")):
                client.call(ChangeState, "planner/change_state",
                            ChangeState.Request(transition=Transition(id=transition)), timeout=120)
                assert client.call(GetLifecycleState, "planner/get_state",
                                   GetLifecycleState.Request()).current_state.label == then
                if then == "inactive" and transition == Transition.TRANSITION_DEACTIVATE:
                    assert wait_until(lambda: statuses[planner_key].level == DiagnosticStatus.WARN, 10)
            _, result = client.send_plan(PlanTask.Goal(task="Turn off the light", method="pddl", execute=True,
                                                       goal_conditions=["(not (switched_on light))"]),
                                         timeout=60).result(timeout=180)
            assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail


def test_the_robot_reports_its_profile_through_the_bridge():
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, _ = robot_stack(ns)
    with robot, bridge, RosTestClient(ns) as client:
        reply = client.call(GetWorldState, "get_world_state",
                            GetWorldState.Request(include_domain=True, include_applicable=True))
        assert reply.success and reply.domain_name == "mobile_manipulator", reply.message
        assert "name: mobile_manipulator" in reply.profile and "(:action navigate_to" in reply.domain
        assert "robot_1 - robot" in reply.objects and "(at robot_1 dock_6)" in reply.facts
        assert any(s.action == "NAVIGATE_TO" for s in reply.applicable_skills)


def test_pddl_and_interpret_reach_goals_on_the_mobile_manipulator_over_dds():
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, planner = robot_stack(ns)
    with robot, bridge, planner, RosTestClient(ns) as client:
        goal = PlanTask.Goal(task="Bring me the apple", method="pddl", execute=True,
                             goal_conditions=["(has person apple)"])
        run = client.send_plan(goal, timeout=60)
        status, result = run.result(timeout=180)
        assert status == GoalStatus.STATUS_SUCCEEDED, result.detail
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert result.program[0].startswith("[NAVIGATE_TO] <dining_table> (3)"), list(result.program)
        assert "[HAND_OVER] <apple> (15) <person> (12)" in result.program
        assert [s.skill.text for s in result.steps][0] == "go to the dining table"
        assert "executing skill [PICK] <apple> (15)" in robot.output

        # plan only: from the robot's world as it is now (the apple was handed over)
        status, result = client.send_plan(PlanTask.Goal(task="Turn on the light", method="pddl",
                                                        goal_conditions=["(switched_on light)"]),
                                          timeout=60).result(timeout=120)
        assert result.termination_reason == PlanTask.Result.REASON_END_OF_PLAN, result.detail
        assert result.program[-1] == "[SWITCH_ON] <lamp> (10)"

        # interpret: the task text alone, read in the profile's words, planned and executed
        status, result = client.send_plan(PlanTask.Goal(task="Put the mug in the fridge", method="interpret",
                                                        execute=True), timeout=60).result(timeout=180)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert "(in mug_14 fridge_7)" in result.goal_conditions, list(result.goal_conditions)
        assert result.program[-1] == "[PLACE_IN] <mug> (14) <fridge> (7)", list(result.program)

        # an LLM-step method: its steps run on the robot, and nothing checks the task's goal there:
        # the result says the goal is unknown rather than that it was reached (issue 37)
        status, result = client.send_plan(PlanTask.Goal(task="Put the apple in the fridge", method="reprompt",
                                                        execute=True), timeout=60).result(timeout=300)
        assert result.termination_reason != PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert result.goal_status == PlanTask.Result.GOAL_UNKNOWN, result.detail
        assert not result.steps or not any(s.executed for s in result.steps) or \
            "whether the task's goal holds is unknown" in result.detail, result.detail

        # checked against the robot's predicates, not VirtualHome's
        status, result = client.send_plan(PlanTask.Goal(task="Watch TV", method="pddl", execute=True,
                                                        goal_conditions=["(facing character tv)"]),
                                          timeout=60).result(timeout=60)
        assert result.termination_reason == PlanTask.Result.REASON_INVALID_GOAL
        assert "unknown predicate 'facing'" in result.detail and "switched_on" in result.detail


def test_the_bridge_refuses_a_skill_the_robots_profile_lacks():
    """The last hop checks against the robot's profile: VirtualHome's GRAB is not this robot's."""
    from llm_planner_ros.core.types import Skill

    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, _ = robot_stack(ns)
    with robot, bridge, RosTestClient(ns) as client:
        for skill, refused in ((Skill("GRAB", ("cup",)), "not a skill of the mobile_manipulator profile"),
                               (Skill("PICK", ("cup",), (14,)), "is a 'mug', not a 'cup'"),
                               (Skill("NAVIGATE_TO", ("kitchen_counter",), (2,)), "")):
            result = execute_skill(client, skill)
            if refused:
                assert not result.success and refused in result.failure.message, result.failure.message
            else:
                assert result.success, result.failure.message
        assert "executing skill [GRAB]" not in robot.output and "executing skill [PICK]" not in robot.output


def test_reprompt_and_heuristic_run_on_the_mobile_manipulator_over_dds():
    """The LLM methods over the robot's profile, through the real nodes: reprompt with the
    embedded model (its failures come back from the robot in the profile's words and are
    corrected), and the heuristic search over the applicable skills the robot reports."""
    from llm_planner_msgs.msg import MethodOptions

    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, planner = robot_stack(ns)
    with robot, bridge, planner, RosTestClient(ns) as client:
        goal = PlanTask.Goal(task="Give me my phone", method="reprompt", execute=True,
                             options=MethodOptions(max_corrections_per_step=3))
        status, result = client.send_plan(goal, timeout=60).result(timeout=300)
        assert status == GoalStatus.STATUS_SUCCEEDED, result.detail
        assert "[HAND_OVER] <phone> (1) <person> (1)" in result.program, list(result.program)
        assert any(s.corrections > 0 and s.executed for s in result.steps), list(result.program)
        assert "finished [HAND_OVER] <phone> (1) <person> (1): done" in robot.output

        goal = PlanTask.Goal(task="Go to the kitchen counter", method="heuristic", execute=True,
                             goal_conditions=["(at robot counter)"])
        status, result = client.send_plan(goal, timeout=60).result(timeout=300)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert result.program[-1] == "[NAVIGATE_TO] <kitchen_counter> (1)"


def test_an_already_done_goal_and_one_naming_what_the_robot_lacks_over_dds():
    """Issue 37 over DDS with the real model: a goal reached once ends already_done the second
    time, with no step; a task naming what the robot's world lacks ("sandwich") is not run: it
    waits for the operator, the request and the feedback name the missing word, and declined it
    ends goal_declined with nothing executed."""
    from llm_planner_ros.ros.client import PlannerClient

    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, planner = robot_stack(ns, "approval_timeout_s:=300.0")
    R = PlanTask.Result
    with robot, bridge, planner, PlannerClient(ns) as client:
        assert client.wait_until_ready(60)
        first = client.plan("Put the mug in the fridge", method="interpret", execute=True, timeout_s=300)
        assert first.result.termination_reason == R.REASON_GOAL_REACHED, first.result.detail
        again = client.plan("Put the mug in the fridge", method="interpret", execute=True, timeout_s=300)
        assert again.succeeded and again.result.termination_reason == R.REASON_ALREADY_DONE, again.result.detail
        assert not again.result.steps and "already holds" in again.result.detail
        run = client.send("Make me a sandwich", method="interpret", execute=True)
        asked = client.wait_confirmation(run, 300)
        waiting = next((f.awaiting for f in run.feedback if f.awaiting), "")
        assert asked.kind == "goal" and "'sandwich'" in asked.why, asked
        assert client.answer(asked, approve=False, reason="there is no bread") == (True, "denied")
        outcome = client.result(run, 300)
        assert outcome.result.termination_reason == R.REASON_GOAL_DECLINED, outcome.result.detail
        assert "'sandwich'" in outcome.result.detail and "there is no bread" in outcome.result.detail
        assert not outcome.result.steps, list(outcome.result.program)
        assert not waiting or "confirmation of the goal" in waiting
        assert "executing skill" not in robot.output.split("PLACE_IN")[-1]   # nothing after the mug's goal


def test_a_robot_replaced_by_one_of_another_world_is_planned_in_its_world(tmp_path):
    """The robot behind the bridge is replaced by one whose profile declares other objects: the
    next goal is checked and planned against the new robot's world, not the one read before."""
    from helpers.generated_profiles import write_profile
    from helpers.processes import wait_until

    other = write_profile(tmp_path / "other", items=1, places=1, seed=3)
    item = next(line.split()[0] for line in (other.parent / "world.pddl").read_text().splitlines()
                if line.strip().endswith("- item") and "_10" in line)
    item_class = item.rsplit("_", 1)[0]
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    robot, bridge, planner = robot_stack(ns, "world:=none")
    goal = PlanTask.Goal(task="Bring me the thing", method="pddl", execute=True,
                         goal_conditions=[f"(has person {item_class})"])
    with bridge, planner, RosTestClient(ns) as client:
        with robot:
            status, result = client.send_plan(goal, timeout=60).result(timeout=120)
            assert result.termination_reason == PlanTask.Result.REASON_INVALID_GOAL, result.detail
            assert item_class in result.detail, result.detail   # the first robot has no such thing
        with ros_node("pddl_robot", f"{ns}/robot", ROBOT_READY, f"profile:={other}"):
            results = []

            def reached() -> bool:   # the bridge may not have matched the new robot yet
                _, result = client.send_plan(goal, timeout=60).result(timeout=180)
                results.append(result)
                return result.termination_reason != PlanTask.Result.REASON_EXECUTOR_ERROR
            assert wait_until(reached, 120, interval=1.0), [r.detail for r in results]
            result = results[-1]
            assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
            assert any(item in line or item_class in line for line in result.program), list(result.program)


def test_a_robot_whose_instances_keep_their_own_names_over_dds(tmp_path):
    """Issue 40: a robot whose world names its desks and its person as a map does (bob_desk,
    alice), their classes declared in its profile: goals that name them, and one that names
    their class, are planned by the planner node and run on the robot through the bridge, each
    skill naming its instance (id -1). Then a start state given in the bridge's reset_scene
    (forwarded to the robot) is where the next goal starts."""
    from helpers.generated_profiles import NAMED, named_profile

    profile = named_profile(tmp_path, NAMED)
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", ROBOT_READY, f"profile:={profile}"), \
            ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=robot", "robot_action:=robot/execute_skill",
                     "robot_reset_service:=robot/reset_scene"), \
            ros_node("planner_node", ns, "planner ready", "world:=none"), RosTestClient(ns) as client:
        status, result = client.send_plan(PlanTask.Goal(
            task="Take the book to Carol's desk and give Alice the apple", method="pddl", execute=True,
            goal_conditions=["(on book carol_desk)", "(has alice apple)"]), timeout=60).result(timeout=180)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert "[PLACE] <book> (17) <carol_desk> (-1)" in result.program, list(result.program)
        assert "[HAND_OVER] <apple> (15) <alice> (-1)" in result.program, list(result.program)
        status, result = client.send_plan(PlanTask.Goal(task="Give the person the cup", method="pddl", execute=True,
                                                        goal_conditions=["(has person cup)"]),
                                          timeout=60).result(timeout=180)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert "[HAND_OVER] <cup> (13) <alice> (-1)" in result.program, list(result.program)
        from llm_planner_msgs.srv import ResetScene

        refused = client.call(ResetScene, f"{ns}/reset_scene", ResetScene.Request(facts=["(on book_17 attic)"]))
        assert not refused.success and "no object 'attic'" in refused.message, refused.message
        given = client.call(ResetScene, f"{ns}/reset_scene", ResetScene.Request(facts=[
            "(at robot_1 sofa_4)", "(hand_free robot_1)", "(on book_17 sofa_4)", "(in milk_16 fridge_7)"]))
        assert given.success, given.message
        status, result = client.send_plan(PlanTask.Goal(task="Put the book on Bob's desk", method="pddl", execute=True,
                                                        goal_conditions=["(on book bob_desk)"]),
                                          timeout=60).result(timeout=180)
        assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED, result.detail
        assert list(result.program) == ["[PICK] <book> (17)", "[NAVIGATE_TO] <bob_desk> (-1)",
                                        "[PLACE] <book> (17) <bob_desk> (-1)"], list(result.program)


def test_the_bridge_holds_a_named_instance_to_its_classs_deny_list(tmp_path):
    """``object_denylist: [desk]`` refuses a skill on Bob's desk (bob_desk, a desk by the robot's
    profile) at the last hop, as on any desk; it reached the robot before."""
    from helpers.generated_profiles import NAMED, named_profile
    from llm_planner_ros.core.types import Skill

    profile = named_profile(tmp_path, NAMED)
    ns = f"/mm_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", ROBOT_READY, f"profile:={profile}") as robot, \
            ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=robot", "robot_action:=robot/execute_skill",
                     "object_denylist:=[desk]"), RosTestClient(ns) as client:
        result = execute_skill(client, Skill("NAVIGATE_TO", ("bob_desk",), (-1,)))
        assert not result.success and "'bob_desk' (a desk) is not allowed" in result.failure.message, \
            result.failure.message
        assert "executing skill [NAVIGATE_TO]" not in robot.output
