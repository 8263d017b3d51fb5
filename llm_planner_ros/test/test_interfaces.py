"""Every llm_planner_msgs interface: construct, fill, serialize over the wire format, compare."""
from __future__ import annotations

import math

import pytest
from rclpy.serialization import deserialize_message, serialize_message

from llm_planner_msgs.action import ExecuteSkill, PlanTask
from llm_planner_msgs.msg import MethodOptions, PlanStep, PreconditionFailure, Skill
from llm_planner_msgs.srv import CheckSubtask, GetWorldState, ResetScene

SKILL = Skill(action="PUTIN", objects=["milk", "fridge"], object_ids=[12, 7], text="put milk in fridge")
FAILURE = PreconditionFailure(type=PreconditionFailure.UNFLIPPED_BOOLEAN_STATE,
                              message='<fridge> (7) is not open when executing "[PUTIN] ..."',
                              cause="the fridge is closed")
STEP = PlanStep(index=3, generated_text="Put the milk in the fridge", skill=SKILL,
                script="[PUTIN] <milk> (12) <fridge> (7)", score=0.875, similarity=0.9375,
                mean_logprob=-0.125, executed=False, error=FAILURE, corrections=2, subtask_index=1)
OPTIONS = MethodOptions(num_samples=10, temperature=0.5, top_p=0.875, frequency_penalty=0.25,
                        presence_penalty=0.5, max_steps=20, ranking=MethodOptions.RANKING_RAMAN,
                        beta=0.25, epsilon=0.375, no_translation=True, fixed_example=True,
                        no_trajectory_correction=True, correction_level=MethodOptions.LEVEL_CAUSE,
                        max_corrections_per_step=3, max_corrections_per_plan=10, plan_subtasks=True,
                        track_subtasks=True, eliminate_objects=True,
                        guide=MethodOptions.GUIDE_LOW_LEVEL, guide_info=MethodOptions.INFO_DYNAMIC,
                        seed=42)

FILLED = [
    SKILL, FAILURE, STEP, OPTIONS,
    PlanTask.Goal(task="make breakfast", description="eggs and toast", scene_id="TrimmedTestScene1",
                  method=PlanTask.Goal.METHOD_REPROMPT, options=OPTIONS, execute=True),
    PlanTask.Result(success=False, termination_reason=PlanTask.Result.REASON_CORRECTIONS_EXHAUSTED,
                    detail="step 3 failed 3 times", program=[STEP.script], program_nl=[SKILL.text],
                    steps=[STEP], subtasks=["take milk", "store milk"], executed=False,
                    goal_status=PlanTask.Result.GOAL_NOT_MET, num_corrections=2, num_llm_calls=9,
                    wall_time_s=12.5),
    PlanTask.Feedback(step_index=3, generated_text=STEP.generated_text, skill=SKILL, script=STEP.script,
                      score=0.875, executed=False, num_corrections=2, subtask_index=1,
                      subtask="store milk", last_error=FAILURE),
    ExecuteSkill.Goal(skill=SKILL, scene_id="TrimmedTestScene1"),
    ExecuteSkill.Result(success=False, failure=FAILURE, observation="nothing changed"),
    ExecuteSkill.Feedback(status="walking"),
    CheckSubtask.Request(task="make breakfast", subtask="take milk", observations=["a", "b", "c"]),
    CheckSubtask.Response(done=True, probability=0.75, source="llm", detail="p(yes)=0.8"),
    ResetScene.Request(scene_id="TrimmedTestScene1", task="Put groceries in Fridge"),
    ResetScene.Response(success=True, message="ok", objects=["fridge", "milk"]),
    GetWorldState.Request(include_applicable=True, max_applicable=100),
    GetWorldState.Response(success=True, applicable_skills=[SKILL, Skill(action="STANDUP")], goal_status=0,
                           facts=["(on tv_1)"]),
]


@pytest.mark.parametrize("msg", FILLED, ids=lambda m: type(m).__name__)
def test_round_trip_preserves_every_field(msg):
    wire = serialize_message(msg)
    back = deserialize_message(wire, type(msg))
    assert back == msg
    assert back is not msg


def _perturbed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if hasattr(value, "__len__") and len(value):  # sequences, including array.array
        return value + value[:1]
    return None  # nested messages are covered by their own entries


@pytest.mark.parametrize("msg", FILLED, ids=lambda m: type(m).__name__)
def test_every_changed_field_compares_unequal(msg):
    checked = 0
    for name in msg.get_fields_and_field_types():
        back = deserialize_message(serialize_message(msg), type(msg))
        changed = _perturbed(getattr(back, name))
        if changed is None:
            continue
        setattr(back, name, changed)
        assert back != msg, name
        checked += 1
    assert checked > 0


def test_defaults_mean_use_the_node_default():
    goal = PlanTask.Goal(task="x")
    assert goal.method == "" and goal.execute is False
    o = goal.options
    assert o.num_samples == 0 and o.max_steps == 0 and o.seed == 0
    assert o.temperature < 0 and o.beta < 0 and o.epsilon < 0
    assert o.ranking == "" and o.correction_level == ""
    assert PlanTask.Result().goal_status == PlanTask.Result.GOAL_UNKNOWN
    assert math.isclose(PlanTask.Result().wall_time_s, 0.0)


def test_constants_match_the_core_enums_and_the_method_registry():
    from llm_planner_ros.core.types import ErrorType, TerminationReason
    from llm_planner_ros.planning.methods import METHODS

    constants = {v for k, v in vars(PlanTask.Goal).items() if k.startswith("METHOD_")}
    assert constants == set(METHODS)   # the shipped methods, each named on the wire
    for r in TerminationReason:
        assert getattr(PlanTask.Result, f"REASON_{r.name}") == r.value
    for e in ErrorType:
        assert getattr(PreconditionFailure, e.name) == e.value


def test_every_termination_reason_is_documented_with_its_status():
    """Issue 37: docs/interfaces.md lists each reason with the action status it comes with."""
    import re
    from pathlib import Path

    from llm_planner_ros.core.types import TerminationReason

    text = (Path(__file__).resolve().parents[2] / "docs" / "interfaces.md").read_text()
    table = {name for row in re.findall(r"^\| (.+?) \| (?:SUCCEEDED|ABORTED|CANCELED|as )", text, re.M)
             for name in re.findall(r"`(\w+)`", row)}
    assert {r.value for r in TerminationReason} <= table, {r.value for r in TerminationReason} - table
    for r in TerminationReason:   # a success reason is documented as SUCCEEDED (at least sometimes)
        row = next(line for line in text.splitlines() if line.startswith("| ") and f"`{r.value}`" in line)
        assert ("SUCCEEDED" in row or "as `end_of_plan`" in row) == r.is_success, row


def test_every_outcome_has_an_error_code_documented_with_its_reason():
    """Issue 40: a numeric error_code beside the reason, as nav2's actions have; NONE on success."""
    import re
    from pathlib import Path

    from llm_planner_ros.core.types import GoalStatus, PlanResult, PlanStep, Skill, TerminationReason
    from llm_planner_ros.ros.conversions import error_code, result_to_msg

    codes = {k: v for k, v in vars(PlanTask.Result).items()
             if k.isupper() and isinstance(v, int) and not k.startswith(("GOAL_UNKNOWN", "GOAL_NOT_MET", "GOAL_MET",
                                                                               "GOAL_STATUS"))}
    assert codes["NONE"] == 0 and len(set(codes.values())) == len(codes), codes   # distinct
    text = (Path(__file__).resolve().parents[2] / "docs" / "interfaces.md").read_text()
    step = PlanStep(1, "walk", Skill("WALK", ("kitchen",), (1,)), executed=True)
    for r in TerminationReason:
        failed = PlanResult(r, ending="why", goal_status=GoalStatus.NOT_MET)
        msg = result_to_msg(failed)
        assert not msg.success and msg.error_msg == msg.detail != ""
        assert msg.error_code == (codes["PLAN_INCOMPLETE"] if r.is_success else codes[r.name])
        row = next(line for line in text.splitlines() if line.startswith("| ") and f"`{r.value}`" in line)
        named = "PLAN_INCOMPLETE" if r.is_success else r.name
        assert f"`{named}` ({codes[named]})" in row or "as `end_of_plan`" in row, row
        if r.is_success:   # the same reason, succeeding: NONE and no error message
            done = PlanResult(r, steps=[step], executing=True, executed=True)
            assert done.success and error_code(done) == codes["NONE"] and result_to_msg(done).error_msg == ""
    assert set(codes) - {n for r in TerminationReason for n in (r.name,)} == {"NONE", "UNKNOWN", "PLAN_INCOMPLETE"}
    assert re.search(r"`UNKNOWN` \(600\)", text)


def test_the_topic_reference_lists_each_published_topic_with_its_qos():
    """The generated interface reference's topic table (ros/qos.py TOPICS) is what the nodes
    publish: each topic a node publishes under a fixed name, with the QoS it publishes with."""
    import re
    from pathlib import Path

    from llm_planner_ros.ros import qos

    ros = Path(__file__).resolve().parents[1] / "llm_planner_ros" / "ros"
    published = {m.group(1): m.group(2) for f in ros.glob("*.py")
                 for m in re.finditer(r'create_publisher\(\s*\w+,\s*"([^"]+)",\s*(\w+)', f.read_text())}
    assert published == {t.name: t.qos for t in qos.TOPICS if "<" not in t.name}
    assert all(hasattr(qos, t.qos) for t in qos.TOPICS)


def test_field_comments_survive_ros2_interface_show():
    """rosidl reads a comment's only [bracketed] word as the field's unit and cuts it from the
    comment (``ros2 interface show`` printed 'e.g. "[WALK] <kitchen> (1'); no field has a unit."""
    from pathlib import Path

    from rosidl_adapter.parser import parse_message_string

    root = Path(__file__).resolve().parents[2] / "llm_planner_msgs"
    for path in sorted(root.glob("msg/*.msg")) + sorted(root.glob("srv/*.srv")) + sorted(root.glob("action/*.action")):
        for part in path.read_text().split("\n---\n"):
            spec = parse_message_string("llm_planner_msgs", "Probe", part)
            units = {f.name: f.annotations["unit"] for f in spec.fields if "unit" in f.annotations}
            assert not units, f"{path.name}: {units}"
    script = next(f for f in parse_message_string("llm_planner_msgs", "PlanStep",
                                                  (root / "msg/PlanStep.msg").read_text()).fields if f.name == "script")
    assert '"[WALK] <kitchen> (1)"' in " ".join(script.annotations["comment"])
