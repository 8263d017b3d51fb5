"""Safety gates and the trace log, ROS-free, on the real simulator and the embedded model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import ErrorType, Skill, TerminationReason
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.safety.gate import ApprovalDenied, ApprovalTimeout, SafetyGate, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.trace.log import TraceLog, read_traces, redact
from llm_planner_ros.wiring import ServiceConfig, compose

VH = load_world()


class RecordingExecutor:
    """Wraps the real simulator and records what reaches it."""

    def __init__(self):
        self.inner = VirtualHomeExecutor(graph=resources.scene_graphs("file27_2")[0])
        self.received = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, skill):
        self.received.append(skill)
        return self.inner.execute(skill)


@pytest.mark.parametrize("skill,problem", [
    (Skill(action="", text="dance wildly"), "is not a known action"),
    (Skill(action="FLY", objects=("kitchen",)), "'FLY' is not a known action"),
    (Skill(action="WALK", objects=("kitchen", "sink")), "WALK takes 1 object(s), got 2"),
    (make_skill("GRAB", ["unicorn"]), "'unicorn' is not a known object class"),
    (make_skill("GRAB", ["bathroom"]), "GRAB does not apply to 'bathroom'"),
])
def test_inadmissible_skills_never_reach_the_executor(skill, problem):
    inner = RecordingExecutor()
    gate = SafetyGate(inner, SkillPolicy(), SafetySettings(), VH.skill_problem)
    result = gate.execute(skill)
    assert not result.success and result.failure.type is ErrorType.INVALID_ACTION
    assert problem in result.failure.message and inner.received == []
    assert VH.skill_problem(make_skill("WALK", ["microwave"])) == ""


def test_instance_ids_must_name_instances_of_their_classes():
    """An id of another class (2003 is the knife) is refused at the gate, before the executor,
    and the deny list applies to what the id really is."""
    inner = RecordingExecutor()
    inner.inner = VirtualHomeExecutor()   # TrimmedTestScene1's own graph, where 2003 is the knife
    world = inner.world_state()
    knife, cup = (world.ids[world.instances_of(c)[0]] for c in ("knife", "cup"))
    gate = SafetyGate(inner, SkillPolicy(object_denylist=["knife"]), SafetySettings(), VH.skill_problem)
    result = gate.execute(Skill("GRAB", ("cup",), (knife,), "grab cup"))
    assert not result.success and f"the object with id {knife} is a 'knife', not a 'cup'" in result.failure.message
    assert "there is no object with id 999999" in gate.execute(Skill("WALK", ("cup",), (999999,))).failure.message
    assert "1 instance id(s) for 2 object(s)" in gate.execute(Skill("PUTIN", ("cup", "sink"), (cup,))).failure.message
    assert inner.received == []
    assert gate.execute(Skill("WALK", ("cup",), (cup,), "walk to cup")).success
    # without a way to say what an id is, a skill with ids is refused (a skill without ids is not)
    policy = SkillPolicy()
    assert "cannot be checked" in policy.refusal(Skill("WALK", ("cup",), (cup,)), VH.skill_problem)
    assert policy.refusal(Skill("WALK", ("cup",)), VH.skill_problem) == ""
    # the simulator itself never acts on another object than the one named
    assert "is a knife, not a cup" in inner.inner.execute(Skill("GRAB", ("cup",), (knife,))).failure.cause


def test_a_skill_stopped_while_it_ran_is_named_by_the_error_the_gate_raises():
    from llm_planner_ros.core.errors import ExecutorError

    class Dying(RecordingExecutor):
        def execute(self, skill):
            raise ExecutorError("the bridge went away")

    gate = SafetyGate(Dying(), SkillPolicy(), SafetySettings(), VH.skill_problem)
    walk = make_skill("WALK", ["microwave"])
    with pytest.raises(ExecutorError) as caught:
        gate.execute(walk)
    assert caught.value.interrupted_skill == walk


def test_allow_and_deny_lists():
    inner = RecordingExecutor()
    gate = SafetyGate(inner, SkillPolicy(skill_denylist=["open"], object_denylist=["Television"]), SafetySettings(),
                      VH.skill_problem)
    assert "action OPEN is not allowed" in gate.execute(make_skill("OPEN", ["microwave"])).failure.message
    assert "object 'television' is not allowed" in gate.execute(make_skill("WALK", ["television"])).failure.message
    assert gate.execute(make_skill("WALK", ["microwave"])).success
    only_walk = SafetyGate(inner, SkillPolicy(skill_allowlist=["WALK"], object_allowlist=["microwave"]),
                           SafetySettings(), VH.skill_problem)
    assert not only_walk.execute(make_skill("WALK", ["television"])).success
    assert [s.action for s in inner.received] == ["WALK"]


def test_a_policy_naming_what_the_world_lacks_is_refused(smollm2, embedder, demos):
    """A misspelt deny entry (PLUGOTU) would deny nothing: no goal runs under it, and the
    refusal names the entry; object lists are checked where the world declares every class."""
    actions = {name for name, _ in VH.actions()}
    assert SkillPolicy(skill_denylist=["plugout"], skill_allowlist=["WALK"]).unknown_names(actions) == ""
    assert "skill_allowlist names 'FLY'" in SkillPolicy(skill_allowlist=["WALK", "FLY"]).unknown_names(actions)
    assert SkillPolicy(object_denylist=["knfie"]).unknown_names(actions) == ""   # classes not declared
    assert "object_denylist names 'knfie'" in SkillPolicy(object_denylist=["knfie"]).unknown_names(
        actions, {"knife", "cup"})
    made = []
    service = compose(ServiceConfig.of(SkillPolicy(skill_denylist=["PLUGOTU"])), llm=smollm2, embedder=embedder,
                      demos=demos, executor_factory=lambda scene, task: made.append(scene) or RecordingExecutor())
    with pytest.raises(InvalidGoal, match="the policy's skill_denylist names 'PLUGOTU', which is no skill"):
        service.plan(parse_request(task="Turn on light", method="pddl", goal_conditions=["(on light)"],
                                   execute=True), lambda e: None, CancelToken())
    assert made == []   # refused before the world was reset or anything planned


def test_approval_per_step_denied_and_timed_out():
    asked = []
    gate = SafetyGate(RecordingExecutor(), SkillPolicy(), SafetySettings(approval="step"), VH.skill_problem,
                      lambda skills, kind, stop: asked.append((kind, skills)) or (False, "too close to the stairs"))
    with pytest.raises(ApprovalDenied, match="denied: too close to the stairs"):
        gate.execute(make_skill("WALK", ["microwave"]))
    assert asked[0][0] == "step" and gate.inner.received == []
    silent = SafetyGate(RecordingExecutor(), SkillPolicy(), SafetySettings(approval="step", approval_timeout_s=2),
                        VH.skill_problem,
                        lambda skills, kind, stop: None)
    with pytest.raises(ApprovalTimeout, match="not given within 2s"):
        silent.execute(make_skill("WALK", ["microwave"]))


def test_service_gates_every_goal_and_dry_run(smollm2, embedder, demos):
    received = []

    def factory(scene, task):
        ex = RecordingExecutor()
        received.append(ex)
        return ex

    service = compose(ServiceConfig.of(SkillPolicy(skill_denylist=["WALK"])), llm=smollm2, embedder=embedder,
                      demos=demos, executor_factory=factory)
    result = service.plan(parse_request(task="Turn on light", method="reprompt", execute=True), lambda e: None,
                          CancelToken())
    assert received and result.steps, result.detail   # the goal ran, and planned steps
    assert all(s.action != "WALK" for ex in received for s in ex.received)
    assert all("WALK" not in f.message or "refused" in f.message for f in [st.error for st in result.steps])
    # skills ran, none of them a WALK: the policy keeps it out of what the LLM's steps translate to
    assert any(ex.received for ex in received) and not any(st.skill.action == "WALK" for st in result.steps)
    dry = compose(ServiceConfig.of(SafetySettings(dry_run=True)), llm=smollm2, embedder=embedder, demos=demos,
                  executor_factory=factory)
    n = len(received)
    result = dry.plan(parse_request(task="Turn on light", method="translated", execute=True), lambda e: None,
                      CancelToken())
    assert len(received) == n and result.detail.startswith("dry run:")


def test_whole_plan_approval(smollm2, embedder, demos):
    asked = []
    service = compose(ServiceConfig.of(SafetySettings(approval="plan")), llm=smollm2, embedder=embedder, demos=demos,
                      approver=lambda skills, kind, stop, **_: asked.append((kind, list(skills))) or (True, ""))
    result = service.plan(parse_request(task="Turn on light", execute=True), lambda e: None, CancelToken())
    # the interpreted goal is confirmed as an executing goal's is (where unsure), then its plan approved
    plans = [skills for kind, skills in asked if kind == "plan"]
    assert [kind for kind, _ in asked] in (["plan"], ["goal", "plan"]) and \
        [s.skill for s in result.steps][:len(plans[0])] == plans[0][:len(result.steps)]
    with pytest.raises(InvalidGoal, match="cannot wait for approval of the whole plan"):
        service.plan(parse_request(task="Turn on light", method="reprompt", execute=True), lambda e: None,
                     CancelToken())


def test_trace_log_records_everything_and_survives_a_cut_line(tmp_path, smollm2, embedder, demos, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123")
    path = tmp_path / "traces.jsonl"
    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos, trace=TraceLog(path))
    service.plan(parse_request(task="Turn on light", method="translated", description="key sk-test-not-a-real-key-123"),
                 lambda e: None, CancelToken())
    with pytest.raises(InvalidGoal):
        service.plan(parse_request(task="Turn on light", method="reprompt"), lambda e: None, CancelToken())
    with open(path, "a") as f:
        f.write('{"trace": "x", "event": "llm", "prompt": "cut sh')   # the node died mid-line
    text = path.read_text()
    assert "sk-test-not-a-real-key-123" not in text and "***" in text
    goals = list(read_traces(path))
    assert len(goals) == 2
    first, second = goals
    assert first["request"]["task"] == "Turn on light" and first["end"]["termination"]
    call = first["llm"][0]
    assert call["prompt"].startswith("Task:") and call["samples"][0]["logprobs"] and call["params"]["temperature"]
    assert {"wall_s", "llm_s", "translation_s"} <= set(first["end"]["timings"])
    assert first["end"]["steps"] and "score" in first["end"]["steps"][0]
    assert second["end"]["error"].startswith("InvalidGoal") and second["llm"] == []
    assert redact("x sk-test-not-a-real-key-123 y") == "x *** y"
    assert json.loads(text.splitlines()[0])["event"] == "goal"


def test_a_secret_is_redacted_before_it_is_serialised_and_in_part(tmp_path, monkeypatch):
    """Issue 35: the trace redacted its JSON line, where a secret holding a quote, a backslash or a
    non-ASCII character is already escaped and so no longer matched; and only exact values were
    redacted, so a key echoed without its last characters leaked."""
    from llm_planner_ros.core.secrets import register_secret

    secret = 'pass"word\\with-ünïcode-0123456789'
    register_secret(secret)
    log = TraceLog(tmp_path / "trace.jsonl")
    log.write("llm", prompt=f"key={secret}", samples=[{"text": secret[:-6]}, {"text": "x" + secret[7:]}],
              nested={secret: (secret, 1)})
    text = (tmp_path / "trace.jsonl").read_text()
    escaped = json.dumps(secret)[1:-1]
    for leak in (secret, escaped, secret[:12], secret[-12:], escaped[:12], escaped[-12:], "ünïcode"):
        assert leak not in text, leak
    record = json.loads(text)
    assert record["prompt"] == "key=***" and record["samples"] == [{"text": "***"}, {"text": "x***"}]
    # a short run of a secret's characters is ordinary text; a long one is a part of the secret
    assert redact(f"{secret[:11]} and {secret[3:20]}") == f"{secret[:11]} and ***"
    assert redact("an ordinary sentence about a password") == "an ordinary sentence about a password"


def test_a_secret_that_is_a_path_is_redacted_whole_never_in_part(monkeypatch):
    """A variable named like a credential may hold a folder (ROS_SECURITY_KEYSTORE, which the
    security docs set): it is replaced whole, and other paths that share its first 12 characters
    stay as they are."""
    monkeypatch.setenv("ROS_SECURITY_KEYSTORE", "/home/robot/llm_keys")
    assert redact("keys in /home/robot/llm_keys") == "keys in ***"
    assert redact("the trace is /home/robot/.ros/llm_planner_ros") == "the trace is /home/robot/.ros/llm_planner_ros"


def test_an_executor_that_raises_ends_the_goal_with_an_executor_error(smollm2, embedder, demos):
    from llm_planner_ros.core.errors import ExecutorError

    class Raising(RecordingExecutor):
        def execute(self, skill):
            raise RuntimeError("simulator segfault imitation")

    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos, executor_factory=lambda scene,
                      task: Raising())
    with pytest.raises(ExecutorError, match="the executor raised RuntimeError on .*simulator segfault"):
        service.plan(parse_request(task="Turn on light", method="reprompt", execute=True), lambda e: None,
                     CancelToken())
    assert ExecutorError.reason is TerminationReason.EXECUTOR_ERROR


@pytest.mark.parametrize("method, options, refused", [
    ("pddl", {"guide": "low_level"}, "guide does not apply to method 'pddl'"),
    ("translated", {"correction_level": "cause", "guide_info": "objects"},
     "correction_level, guide_info do not apply to method 'translated'"),
    ("heuristic", {"num_samples": 3}, "num_samples does not apply to method 'heuristic'"),
])
def test_an_option_the_method_does_not_read_is_refused_before_anything_runs(smollm2, embedder, demos, method,
                                                                           options, refused):
    """Refused when the goal is resolved (nothing is reset or executed), naming what it reads."""
    ran = []
    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos, executor_factory=lambda scene,
                      task: ran.append(scene))
    request = parse_request(task="Turn on light", method=method, execute=True, options=options,
                            goal_conditions=["(on light)"] if method == "pddl" else [])
    with pytest.raises(InvalidGoal, match=refused + "; it reads: "):
        service.plan(request, lambda e: None, CancelToken())
    assert ran == []


def test_traces_go_under_ros_home(tmp_path, monkeypatch):
    """Traces honour ROS_HOME as ROS tools do, else ~/.ros."""
    from llm_planner_ros.trace.log import default_path

    monkeypatch.setenv("ROS_HOME", str(tmp_path))
    assert default_path("/robot1", "planner") == tmp_path / "llm_planner_ros" / "robot1.planner.jsonl"
    monkeypatch.delenv("ROS_HOME")
    assert default_path("/", "planner") == Path("~/.ros/llm_planner_ros/planner.jsonl").expanduser()


def test_a_step_that_fails_after_whole_plan_approval_ends_the_goal_with_what_holds(embedder, demos):
    """approval 'plan': while the operator reads the plan, someone else switches the computer on;
    the approved plan's switch-on then fails on the real simulator. The goal ends there, its steps
    cut at the failed one, judged by its own conditions (which hold)."""
    sim = VirtualHomeExecutor("TrimmedTestScene1")
    tv = make_skill("SWITCHON", ["computer"])

    def approver(skills, kind, stop, **_):
        assert [s.action for s in skills] == ["WALK", "SWITCHON"]   # the plan switches it on ...
        for skill in (make_skill("WALK", ["computer"]), tv, make_skill("WALK", ["bathroom"])):
            assert sim.execute(skill).success   # ... and someone else does, before it runs
        return True, ""
    service = compose(ServiceConfig.of(SafetySettings(approval="plan")), llm=None, embedder=embedder, demos=demos,
                      executor_factory=lambda s, t: sim, approver=approver)
    result = service.plan(parse_request(task="Browse internet", method="pddl", execute=True,
                                        goal_conditions=["(on computer)"]), lambda e: None, CancelToken())
    failed = result.steps[-1]
    assert failed.skill.action == "SWITCHON" and not failed.executed and failed.error.message, result.steps
    assert all(st.executed for st in result.steps[:-1])
    assert "failed after approval" in result.detail, result.detail
    assert result.termination_reason is TerminationReason.GOAL_REACHED and result.goal_status.name == "MET"
