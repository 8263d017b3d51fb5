"""The MCAP recorder against the real planner: the files it writes read back with
mcap-ros2-support, and its message counts match what a client saw during the run; a killed
recorder leaves every ended goal readable with the standard reader; a restarted one goes on after
the files already there; a stopped one waits for the results of the goals the planner ends."""
from __future__ import annotations

import signal
import uuid
import warnings

import pytest

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


def streamed(path) -> list[tuple[str, object]]:
    """(topic, decoded message) of a file a running recorder writes, read up to where it is now."""
    from mcap.exceptions import McapError
    from mcap.reader import NonSeekingReader
    from mcap_ros2.decoder import DecoderFactory

    found: list[tuple[str, object]] = []
    try:
        with open(path, "rb") as f:
            reader = NonSeekingReader(f, decoder_factories=[DecoderFactory()])
            for _, channel, _, decoded in reader.iter_decoded_messages(log_time_order=False):
                found.append((channel.topic, decoded))
    except (McapError, FileNotFoundError):   # not there yet, or cut in the middle of a message
        pass
    return found


def recorded_request(path, ns: str, request_id: str) -> bool:
    return any(topic == f"{ns}/approval_request" and message.request_id == request_id
               for topic, message in streamed(path))


def shown(response) -> tuple:
    """A result as compared: reason, detail, scripts."""
    return response.result.termination_reason, response.result.detail, [s.script for s in response.result.steps]


def recorded_results(folder, ns: str) -> list[tuple]:
    return [shown(message) for path in sorted(folder.iterdir()) for topic, message in streamed(path)
            if topic == f"{ns}/plan_task/result"]


def test_a_restarted_recorder_goes_on_after_the_killed_ones_files(tmp_path):
    """The probe: a recorder started again on the same path numbered its files from 0 and opened
    them "wb", so run_0.mcap was replaced; a killed recorder's open file was empty (buffered), and
    read_record stopped with EndOfFile at a cut file that was not the last. Now the numbers go on,
    each message is flushed, and the cut file is read up to the kill, with a warning naming it."""
    from llm_planner_msgs.msg import ApprovalRequest
    from llm_planner_ros.ros.client import PlannerClient
    from llm_planner_ros.ros.qos import LATCHED_EVERY
    from llm_planner_ros.ros.recorder import read_record

    ns = f"/recre_{uuid.uuid4().hex[:6]}"
    path = tmp_path / "run"
    with ros_node("planner_node", ns, "planner ready", "executor_mode:=in_process", "max_steps:=2",
                  "approval:=plan", "approval_timeout_s:=600.0"), \
            PlannerClient(ns, node_name="recorder_restart_test") as planner:
        requests: list = []
        planner.node.create_subscription(ApprovalRequest, "approval_request", requests.append, LATCHED_EVERY)
        assert planner.wait_until_ready(60)
        recorder = ros_node("mcap_recorder", ns, "recording to", f"path:={path}")
        with recorder:
            assert wait_until(lambda: matched_all(recorder, ns), 60), recorder.output
            first = planner.plan("Watch TV", method="translated", timeout_s=120)
            assert wait_until(lambda: "recorded a result" in recorder.output, 60), recorder.output
            # the second goal waits for the operator: it is running when the recorder is killed
            run = planner.send("Turn on light", method="translated", execute=True)
            assert wait_until(lambda: requests and requests[-1].goal_id == bytes(run.handle.goal_id.uuid).hex(), 60)
            waiting = requests[-1]
            # flushed as written: the open file holds the request before the kill
            assert wait_until(lambda: recorded_request(path / "run_1.mcap", ns, waiting.request_id), 30), \
                (path / "run_1.mcap").stat().st_size
            recorder.proc.send_signal(signal.SIGKILL)
            recorder.proc.wait(10)
        again = ros_node("mcap_recorder", ns, "recording to", f"path:={path}")
        with again:
            assert wait_until(lambda: matched_all(again, ns), 60), again.output
            assert planner.answer(waiting, True)[0]
            second = planner.result(run, 120)
            assert wait_until(lambda: shown(second) in recorded_results(path, ns), 60), again.output
        assert again.proc.returncode == 0, again.output

    names = sorted(p.name for p in path.iterdir())
    assert names[:3] == ["run_0.mcap", "run_1.mcap", "run_2.mcap"] and len(names) >= 4, names
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages = [(c.topic, d) for _, c, _, d in read_record(path)]
    assert [str(w.message).split(" is cut")[0] for w in caught if " is cut" in str(w.message)] == \
        [str(path / "run_1.mcap")]
    results = [shown(d) for topic, d in messages if topic == f"{ns}/plan_task/result"]
    # the restarted recorder records the second goal's result, and the first's again (still listed)
    assert results[0] == shown(first) and results[-1] == shown(second), results
    assert any(topic == f"{ns}/approval_request" and d.request_id == waiting.request_id for topic, d in messages)


def test_a_stopped_recorder_records_the_goals_the_planner_ends_on_shutdown(tmp_path):
    """The probe: on SIGINT the recorder went within 0.5 s, before the planner (stopped with it)
    ended its goal, so the goal's result was never recorded. Now it waits for it."""
    from llm_planner_msgs.action import PlanTask
    from llm_planner_msgs.msg import ApprovalRequest
    from llm_planner_ros.ros.client import PlannerClient
    from llm_planner_ros.ros.qos import LATCHED_EVERY
    from llm_planner_ros.ros.recorder import read_record

    ns = f"/recstop_{uuid.uuid4().hex[:6]}"
    path = tmp_path / "mcap"   # a folder may be named so
    planner_node = ros_node("planner_node", ns, "planner ready", "executor_mode:=in_process", "max_steps:=2",
                            "approval:=plan", "approval_timeout_s:=600.0")
    recorder = ros_node("mcap_recorder", ns, "recording to", f"path:={path}")
    with planner_node, PlannerClient(ns, node_name="recorder_stop_test") as planner:
        requests: list = []
        planner.node.create_subscription(ApprovalRequest, "approval_request", requests.append, LATCHED_EVERY)
        assert planner.wait_until_ready(60)
        with recorder:
            assert wait_until(lambda: matched_all(recorder, ns), 60), recorder.output
            run = planner.send("Turn on light", method="translated", execute=True)
            assert wait_until(lambda: requests and requests[-1].goal_id == bytes(run.handle.goal_id.uuid).hex(), 60)
            # the recorder has seen the goal running: what it wrote after the goal started is in its file
            assert wait_until(lambda: recorded_request(path / "mcap_0.mcap", ns, requests[-1].request_id), 30)
            # as a launch stops both, the recorder first
            recorder.proc.send_signal(signal.SIGINT)
            planner_node.proc.send_signal(signal.SIGINT)
            assert planner_node.wait(60) == 0, planner_node.output
            assert recorder.wait(60) == 0, recorder.output
        ended = planner.result(run, 10)
    assert ended.result.termination_reason == PlanTask.Result.REASON_SHUTDOWN
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)   # every file complete
        results = [d for _, c, _, d in read_record(path) if c.topic == f"{ns}/plan_task/result"]
    assert [r.result.termination_reason for r in results] == [PlanTask.Result.REASON_SHUTDOWN], recorder.output


@pytest.mark.parametrize("folder", ["p", "cap", "mcap", "runs/mcap", "run.mcap/x", ""])
def test_the_path_parameter_takes_any_folder(folder):
    """The probe: a pattern meant to refuse ``.mcap`` paths refused ``p``, ``cap`` and ``mcap``."""
    from llm_planner_ros.ros.recorder import RecorderParams

    assert RecorderParams(path=folder).path == folder


def test_the_path_parameter_refuses_a_file_in_plain_words():
    from pydantic import ValidationError

    from llm_planner_ros.core.request import describe_validation_error
    from llm_planner_ros.ros.recorder import RecorderParams

    with pytest.raises(ValidationError) as refused:
        RecorderParams(path="runs/run.mcap")
    assert describe_validation_error(refused.value) == (
        "path: 'runs/run.mcap' names a file: give the record's folder (its files are "
        "<folder>/<folder name>_0.mcap, _1.mcap, ...)")
