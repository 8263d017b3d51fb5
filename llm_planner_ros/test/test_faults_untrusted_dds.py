"""Fault injection, round 4 (issue 35), against the real nodes: a robot that sends an invalid,
hostile or oversized profile; a skill cancelled while the bridge checks it; a damaged vector
cache; a goal that embeds thousands of new sentences, cancelled; a plan-only answer with a denied
skill; whole-plan approval; a grounding that blows up Fast Downward's memory. Each case asserts
its exact end state and fails without its fix; bench/faults.py prints their outcomes and times."""
from __future__ import annotations

import shutil
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from helpers.fault_report import STATUS, outcome, report
from helpers.faulty_openai import FaultyOpenAIServer
from helpers.generated_profiles import write_profile
from helpers.processes import NodeProcess, ros_node, wait_until
from helpers.ros_client import RosTestClient, execute_skill, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill, PlanTask
from llm_planner_msgs.msg import ApprovalRequest
from llm_planner_msgs.srv import Approve
from llm_planner_ros.core.types import Skill
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.profiles.loader import MAX_PROFILE_BYTES, load_profile, shipped
from llm_planner_ros.ros import conversions
from llm_planner_ros.safety.policy import approval_digest

R = PlanTask.Result
READY = "serving action 'execute_skill'"
SHIPPED = shipped("mobile_manipulator")
YAML_BOMB = "\n".join(["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
                      + [f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi")]) + "\n"


def robot_files(folder: Path, profile: str, domain: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profile.yaml").write_text(profile)
    (folder / "domain.pddl").write_text(domain)
    return folder / "profile.yaml", folder / "domain.pddl"


def profile_robot(ns: str, files: tuple[Path, Path], world_delay_s: float = 0.0) -> NodeProcess:
    """The test's robot: the mobile manipulator, sending the profile and domain the files hold now."""
    return NodeProcess([sys.executable, "-m", "helpers.profile_robot", "--profile-file", str(files[0]),
                        "--domain-file", str(files[1]), "--world-delay", str(world_delay_s),
                        "--ros-args", "-r", f"__ns:={ns}/robot"], ready=READY, timeout=120)


def robot_bridge(ns: str, *params: str) -> NodeProcess:
    return ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill", *params)


def skill_outcome(client: RosTestClient, skill: Skill, case: str):
    t0 = time.monotonic()
    result = execute_skill(client, skill)
    report(task=f"{case}: {skill.script()}", status="done" if result.success else "refused",
           reason=result.failure.cause[:60], detail=result.failure.message[:160],
           seconds=round(time.monotonic() - t0, 2))
    return result


@pytest.mark.parametrize("case, broken", [
    ("broken domain", lambda profile, domain: (profile, domain.replace("(:action pick\n", "(:action pick (((\n"))),
    ("YAML bomb", lambda profile, domain: (YAML_BOMB, domain)),
])
def test_an_invalid_profile_refuses_every_skill_until_a_valid_one_arrives(tmp_path, case, broken):
    """The probe: after the first skill was refused for an invalid profile, every later skill was
    checked against VirtualHome's world and sent on (GRAB reached a robot without a GRAB skill)."""
    good = (SHIPPED.read_text(), (SHIPPED.parent / "domain.pddl").read_text())
    files = robot_files(tmp_path, *broken(*good))
    ns = f"/badprofile_{uuid.uuid4().hex[:6]}"
    with profile_robot(ns, files) as robot, robot_bridge(ns), RosTestClient(ns) as client:
        for skill in (Skill("GRAB", ("cup",), (13,)), Skill("GRAB", ("cup",), (13,)),
                      Skill("NAVIGATE_TO", ("kitchen_counter",), (2,))):
            result = skill_outcome(client, skill, case)
            assert not result.success and "the robot's profile is invalid" in result.failure.message, \
                result.failure.message
        assert "executing skill" not in robot.output
        # the robot sends a valid profile: it is read again, and its world is the one checked
        robot_files(tmp_path, *good)
        assert skill_outcome(client, Skill("NAVIGATE_TO", ("kitchen_counter",), (2,)), case).success
        result = skill_outcome(client, Skill("GRAB", ("cup",), (13,)), case)
        assert not result.success and "not a skill of the mobile_manipulator profile" in result.failure.message
        assert "executing skill [NAVIGATE_TO]" in robot.output and "executing skill [GRAB]" not in robot.output


def test_an_oversized_profile_is_refused_unread_and_nothing_reaches_the_robot(tmp_path):
    """The probe: a valid profile holding one 50 MB example took 14.5 s to validate per read; the
    first goal got no result for 90 s, a skill sent straight to the bridge none within 60 s."""
    example = '  - {task: "' + "x" * (50 << 20) + '", goal: ["(open fridge)"]}\n'
    files = robot_files(tmp_path, SHIPPED.read_text() + example, (SHIPPED.parent / "domain.pddl").read_text())
    ns = f"/bigprofile_{uuid.uuid4().hex[:6]}"
    with profile_robot(ns, files) as robot, robot_bridge(ns), \
            ros_node("planner_node", ns, "planner ready"), RosTestClient(ns) as client:
        t0 = time.monotonic()
        result = skill_outcome(client, Skill("NAVIGATE_TO", ("kitchen_counter",), (2,)), "50 MB profile, bridge")
        assert not result.success and f"the limit is {MAX_PROFILE_BYTES:,}" in result.failure.message
        assert time.monotonic() - t0 < 30
        status, result, seconds = outcome(client, PlanTask.Goal(task="Open the fridge", method="pddl", execute=True,
                                                                goal_conditions=["(open fridge)"]), timeout=60)
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_EXECUTOR_ERROR
        assert f"the limit is {MAX_PROFILE_BYTES:,}" in result.detail and seconds < 30, (seconds, result.detail)
        assert "executing skill" not in robot.output


def test_a_skill_cancelled_while_the_bridge_checks_it_never_reaches_the_robot(tmp_path):
    """The probe: the bridge did not look at the stop between its slow check and sending, so a
    skill cancelled by then still reached the robot and ran."""
    files = robot_files(tmp_path, SHIPPED.read_text(), (SHIPPED.parent / "domain.pddl").read_text())
    ns = f"/slowcheck_{uuid.uuid4().hex[:6]}"
    with profile_robot(ns, files, world_delay_s=2.0) as robot, robot_bridge(ns, "robot_timeout_s:=30.0"), \
            RosTestClient(ns) as client:
        action = client.action_client(ExecuteSkill, "execute_skill")
        assert action.wait_for_server(timeout_sec=30)
        skill = Skill("NAVIGATE_TO", ("kitchen_counter",), (2,))
        handle = send_goal(action, ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill)))
        t0 = time.monotonic()
        wait_future(handle.cancel_goal_async(), 10)
        response = wait_future(handle.get_result_async(), 60)
        report(task="cancelled while the bridge checks it", status=STATUS.get(response.status, str(response.status)),
               reason=response.result.failure.cause[:60], detail=response.result.observation[:160],
               seconds=round(time.monotonic() - t0, 2))
        assert response.status == GoalStatus.STATUS_CANCELED, response.result
        assert "cancelled before it was sent" in response.result.failure.message
        assert "executing skill" not in robot.output
        # the next skill runs
        assert execute_skill(client, skill).success


@pytest.fixture
def damaged_cache(tmp_path, embedder):
    """A copy of the project's cache in which one vector shard is truncated, one holds vectors of
    another dimension and one another model's, and the scene's skill bank file is truncated."""
    from llm_planner_ros.planning.worlds import load_world
    from llm_planner_ros.translation.onnx_embedder import cache_root

    real, cache = cache_root(), tmp_path / "cache"
    vectors = cache / "vectors" / embedder.key
    vectors.mkdir(parents=True)
    (cache / "banks").mkdir()
    scene_bank = f"{embedder.key}-{load_world().scene_bank('TrimmedTestScene1').digest}.npy"
    for entry in real.iterdir():
        if entry.name not in ("vectors", "banks"):
            (cache / entry.name).symlink_to(entry)
    for entry in (real / "banks").glob("*.npy"):
        (cache / "banks" / entry.name).symlink_to(entry)
    shards = sorted((real / "vectors" / embedder.key).glob("*.npz"), key=lambda p: p.stat().st_size)
    assert shards and (real / "banks" / scene_bank).exists(), "run `make warm` first"
    for shard in shards:
        shutil.copy(shard, vectors / shard.name)
    damaged = {"truncated": vectors / shards[-1].name, "bank": cache / "banks" / scene_bank}
    damaged["truncated"].write_bytes(shards[-1].read_bytes()[: shards[-1].stat().st_size // 2])
    (cache / "banks" / scene_bank).unlink()
    damaged["bank"].write_bytes((real / "banks" / scene_bank).read_bytes()[:4096])
    with np.load(shards[0]) as data:
        texts = data["texts"][:50]
    for name, vectors_of, model in (("wrong_dimension", np.ones((50, 3), np.float32), embedder.key),
                                    ("foreign", np.ones((50, embedder.dimension), np.float32), "another-model")):
        damaged[name] = vectors / f"zz{name}.npz"
        np.savez(damaged[name], texts=texts, vectors=vectors_of, model=np.array(model))
    return cache, damaged


def test_a_damaged_vector_cache_never_stops_the_planner(damaged_cache, monkeypatch):
    """The probe: a truncated shard (still starting with PK) stopped the planner at start-up
    (BadZipFile, then "'PlannerNode' object has no attribute '_server'"); a shard of another
    dimension was accepted, and every interpret goal ended internal_error."""
    cache, damaged = damaged_cache
    monkeypatch.setenv("LLM_PLANNER_CACHE", str(cache))
    ns = f"/damaged_{uuid.uuid4().hex[:6]}"
    t0 = time.monotonic()
    with ros_node("planner_node", ns, "planner ready", timeout=300) as planner, RosTestClient(ns) as client:
        report(task="damaged cache: the planner starts", status="ready", reason="",
               detail="; ".join(line.split("]: ")[-1][:70] for line in planner.lines if "unusable" in line)[:160],
               seconds=round(time.monotonic() - t0, 2))
        for name, path in damaged.items():
            unusable = [line for line in planner.lines if "unusable" in line and path.name in line]
            assert len(unusable) == 1, (name, planner.output)   # logged once
            if name == "bank":                  # rebuilt, under the same name (the scene's digest)
                vectors = np.load(path)
                assert vectors.ndim == 2 and vectors.shape[1] == 384, (name, vectors.shape)
            elif name != "truncated":           # removed
                assert not path.exists(), name
        assert "Traceback" not in planner.output
        status, result, _ = outcome(client, PlanTask.Goal(task="Watch TV", method="interpret"), timeout=120)
        assert result.termination_reason not in (R.REASON_INTERNAL_ERROR, R.REASON_EXECUTOR_ERROR), result.detail
        assert any(c.startswith("(on television") for c in result.goal_conditions), list(result.goal_conditions)
    # The truncated shard was removed; what start-up and the goal needed of it was embedded again,
    # under the name of the sentences embedded (the same name only where they were all needed at once).
    # Every shard left is whole and holds this embedder's vectors.
    shards = sorted(damaged["truncated"].parent.glob("*.npz"))
    assert shards
    for shard in shards:
        with np.load(shard) as data:
            assert str(data["model"]) == damaged["truncated"].parent.name, shard
            assert data["vectors"].shape == (len(data["texts"]), 384), (shard, data["vectors"].shape)


def test_a_goal_that_embeds_on_a_cold_cache_ends_within_a_second_of_its_cancel(tmp_path):
    """The probe: a goal that embedded a whole bank on a cold cache ignored its cancel for up to
    258 s. A robot's world of classes no cache has seen makes an interpret goal embed thousands of
    new sentences; it is cancelled while it does."""
    profile = write_profile(tmp_path / "big", items=220, places=30, seed=uuid.uuid4().int)
    ns = f"/cold_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, f"profile:={profile}"), robot_bridge(ns), \
            ros_node("planner_node", ns, "planner ready") as planner, \
            RosTestClient(ns) as client:
        run = client.send_plan(PlanTask.Goal(task="Put the apple in the fridge", method="interpret", execute=True))
        assert wait_until(lambda: "new sentences" in planner.output, 120), planner.output[-2000:]
        t0 = time.monotonic()
        client.cancel(run)
        status, result = run.result(timeout=60)
        seconds = time.monotonic() - t0
        report(task="cancel while it embeds thousands of sentences", status=STATUS.get(status, str(status)),
               reason=result.termination_reason, detail=result.detail[:160], seconds=round(seconds, 2))
        assert status == GoalStatus.STATUS_CANCELED and result.termination_reason == R.REASON_CANCELED
        assert seconds < 1.0, seconds
        # the node serves the next goal
        status, result, _ = outcome(client, PlanTask.Goal(task="Open the fridge", method="pddl", execute=True,
                                                          goal_conditions=["(open fridge)"]), timeout=120)
        assert result.termination_reason == R.REASON_GOAL_REACHED, result.detail


def test_a_grounding_that_blows_up_ends_no_plan_at_the_memory_limit(tmp_path):
    """The probe: an action over four items of 300 grew Fast Downward's children to 945 MB with only
    a time limit to stop them. Now they have a memory limit, and the goal says so. The goal may use
    every object of the world, listed, which is grounded whole (unlisted, its relevance cut keeps 3)."""
    profile = write_profile(tmp_path / "blowup", items=150, places=3, seed=7, blow_up=True)
    every = sorted(PddlWorldExecutor(load_profile(profile)).world_state().objects)
    ns = f"/blowup_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, f"profile:={profile}"), robot_bridge(ns), \
            ros_node("planner_node", ns, "planner ready", "pddl_memory_limit_mb:=300", "pddl_time_limit_s:=120.0"), \
            RosTestClient(ns) as client:
        status, result, seconds = outcome(client, PlanTask.Goal(task="Open the fridge", method="pddl", execute=True,
                                                                goal_conditions=["(open fridge)"], objects=every),
                                          timeout=180)
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_NO_PLAN, result.detail
        assert "out_of_memory" in result.detail and "memory limit of 300 MB" in result.detail, result.detail
        assert seconds < 100, seconds   # the memory limit, not the time limit, ended it


def test_a_plan_only_answer_never_holds_a_denied_skill():
    """The probe: a plan-only translated goal handed back a plan with GRAB <knife> while the policy
    denied the knife (nothing ran). Now a plan-only answer passes the policy too."""
    ns = f"/denied_{uuid.uuid4().hex[:6]}"
    with FaultyOpenAIServer() as server, ros_node("executor_bridge", ns, READY), \
            ros_node("planner_node", ns, "planner ready", "llm_backend:=openai", f"openai_base_url:={server.url}",
                     "openai_model:=m", "object_denylist:=[knife]", "epsilon:=0.0", "max_steps:=2"), \
            RosTestClient(ns) as client:
        server.mode = "say:Grab knife"
        status, result, _ = outcome(client, PlanTask.Goal(task="Step 1: [GRAB] <knife> (1)", method="translated"))
        assert not any("knife" in line for line in result.program), list(result.program)
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_NO_PLAN, result.detail
        assert "is withheld: the object 'knife' is not allowed on this robot" in result.detail, result.detail


def test_an_approved_plan_ends_as_it_would_without_approval():
    """The probe: with approval 'plan', an approved goal that reached its goal ended end_of_plan,
    its goal status unknown and its detail "not executed", though it was executed."""
    ns = f"/approveplan_{uuid.uuid4().hex[:6]}"
    goal = PlanTask.Goal(task="Watch TV", method="pddl", execute=True,
                         goal_conditions=["(on television.410)", "(plugged_in television.410)"])
    with ros_node("executor_bridge", ns, READY), \
            ros_node("planner_node", ns, "planner ready", "approval:=plan", "approval_timeout_s:=60.0"), \
            RosTestClient(ns) as client:
        requests: list = []
        client.node.create_subscription(ApprovalRequest, "approval_request", requests.append,
                                        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                                   reliability=ReliabilityPolicy.RELIABLE))
        approve = client.node.create_client(Approve, "approve")
        assert approve.wait_for_service(timeout_sec=20)
        run = client.send_plan(goal)
        assert wait_until(lambda: requests, 60)
        shown = requests[-1]
        assert shown.kind == "plan"
        digest = approval_digest(shown.request_id, shown.goal_id, shown.kind, list(shown.scripts))
        assert wait_future(approve.call_async(Approve.Request(request_id=shown.request_id, digest=digest,
                                                              approve=True)), 10).accepted
        status, approved = run.result(timeout=120)
        report(task="approved whole plan", status=STATUS.get(status, str(status)), reason=approved.termination_reason,
               detail=approved.detail[:160], seconds=round(approved.wall_time_s, 2))
    with ros_node("executor_bridge", ns, READY), ros_node("planner_node", ns, "planner ready"), \
            RosTestClient(ns) as client:
        status_without, unapproved = client.send_plan(goal).result(timeout=120)
    assert status == status_without == GoalStatus.STATUS_SUCCEEDED
    assert approved.termination_reason == unapproved.termination_reason == R.REASON_GOAL_REACHED, approved.detail
    assert approved.goal_status == unapproved.goal_status and approved.executed and "not executed" not in \
        approved.detail
    assert list(approved.program) == list(unapproved.program)
