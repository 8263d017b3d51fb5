"""The MCAP recorder against the real planner: the files it writes read back with
mcap-ros2-support, and its message counts match what a client saw during the run; a killed
recorder leaves every ended goal readable with the standard reader."""
from __future__ import annotations

import uuid

from helpers.processes import ros_node, wait_until

RECORDED = ("plan_task/_action/feedback", "plan_events", "plan")


def matched_all(recorder, ns: str) -> bool:
    """The recorder's subscriptions have matched the planner's publishers at the DDS level (the
    test's own view of the graph says nothing about the recorder's matches)."""
    return all(f"matched {ns}/{topic}: 1 publisher" in recorder.output for topic in RECORDED)


def test_an_mcap_record_of_three_goals_reads_back_with_the_counts_of_the_run(tmp_path):
    from llm_planner_msgs.msg import PlanState, PlanStep
    from llm_planner_ros.ros.client import PlannerClient
    from llm_planner_ros.ros.qos import LATCHED_EVERY
    from llm_planner_ros.ros.recorder import read_record

    ns = f"/rec_{uuid.uuid4().hex[:6]}"
    path = tmp_path / "run"
    with ros_node("planner_node", ns, "planner ready", "executor_mode:=in_process", "max_steps:=3"):
        recorder = ros_node("mcap_recorder", ns, "recording to", f"path:={path}")
        with recorder, PlannerClient(ns, node_name="recorder_test") as planner:
            states: list = []
            events: list = []
            planner.node.create_subscription(PlanState, "plan", states.append, LATCHED_EVERY)
            planner.node.create_subscription(PlanStep, "plan_events", events.append, 100)
            assert planner.wait_until_ready(60)
            # the recorder hears the feedback, the steps and the plan before the goals start
            assert wait_until(lambda: matched_all(recorder, ns), 60), recorder.output
            feedback: list = []
            outcomes = [planner.plan(task, method="translated", on_feedback=feedback.append)
                        for task in ("Watch TV", "Turn on light")]
            # issue 38: a goal refused for a hazard; the hazard is in the recorded result
            outcomes.append(planner.plan("Toast the knife", method="pddl", execute=True, on_feedback=feedback.append,
                                         goal_conditions=["(obj_inside knife toaster)", "(on toaster)"]))
            assert wait_until(lambda: recorder.output.count("recorded a result") >= 3, 30), recorder.output
            assert wait_until(lambda: len(states) >= 3 * 2 + len(feedback), 10)
        assert recorder.proc.returncode == 0, recorder.output
    assert all(o.result.steps for o in outcomes[:2]) and len(feedback) == sum(len(o.result.steps) for o in outcomes)
    assert outcomes[2].result.termination_reason == "hazardous_goal" and outcomes[2].result.hazards

    by_topic: dict[str, list] = {}
    assert sorted(p.name for p in path.iterdir()) == [f"run_{i}.mcap" for i in range(4)]   # one per goal
    for schema, channel, _message, decoded in read_record(path):
        by_topic.setdefault(channel.topic, []).append(decoded)
        assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
    assert len(by_topic[f"{ns}/plan_task/_action/feedback"]) == len(feedback)
    assert len(by_topic[f"{ns}/plan_events"]) == len(events) == len(feedback)
    assert len(by_topic[f"{ns}/plan"]) == len(states)
    assert by_topic[f"{ns}/goal_queue"] and by_topic[f"{ns}/plan_task/_action/status"]
    results = by_topic[f"{ns}/plan_task/result"]
    assert [r.result.termination_reason for r in results] == [o.result.termination_reason for o in outcomes]
    assert [r.status for r in results] == [o.status for o in outcomes]
    assert list(results[2].result.hazards) == list(outcomes[2].result.hazards)
    assert [s.script for r in results for s in r.result.steps] == \
        [s.script for o in outcomes for s in o.result.steps]
    recorded = [fb.feedback.script for fb in by_topic[f"{ns}/plan_task/_action/feedback"]]
    assert recorded == [fb.script for fb in feedback]
    assert {s.task for s in by_topic[f"{ns}/plan"]} == {"Watch TV", "Turn on light", "Toast the knife"}
    assert any(s.hazards for s in by_topic[f"{ns}/plan"])   # the plan topic's end state names it too
