"""Goal validation at the boundary: each bad goal gets a specific reason naming its field."""
from __future__ import annotations

import math

import pytest

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.request import InvalidRequest, parse_request


def reason(**fields) -> str:
    with pytest.raises(InvalidRequest) as info:
        parse_request(**fields)
    return str(info.value)


def test_a_plain_goal_is_normalised():
    r = parse_request(task="  make   breakfast\n", method="reprompt", options={"temperature": 0.5})
    assert r.task == "make breakfast" and r.method == "reprompt"
    assert r.options.temperature == 0.5 and r.options.num_samples is None


def test_unicode_is_accepted():
    assert parse_request(task="préparer le café ☕").task == "préparer le café ☕"


@pytest.mark.parametrize("task", ["", "   ", "\n\t"])
def test_empty_task(task):
    assert reason(task=task).startswith("task: task is empty")


@pytest.mark.parametrize("task", ["!!!", " ?!... ", "--__--", "☕"])
def test_a_task_without_a_word_is_refused(task):
    """"!!!" ran four skills under interpret (the model made a goal of it, confident): nobody asked
    for anything, so nothing runs."""
    assert "has no words (no letter or digit)" in reason(task=task)


@pytest.mark.parametrize("task", ["x", "把电视打开", "Mach das Licht an", "42"])
def test_a_task_of_one_word_in_any_script_is_a_task(task):
    assert parse_request(task=task).task == task


def test_oversized_task_reports_the_length():
    assert "task: task is 100000 characters long; the limit is 500" in reason(task="a" * 100_000)


@pytest.mark.parametrize("ch", ["\x00", "\x1b", "\u200b", "\x7f"])
def test_control_characters(ch):
    assert f"U+{ord(ch):04X}" in reason(task=f"make{ch}tea")


def test_unknown_method_lists_the_choices():
    from llm_planner_ros.planning.resolve import resolve

    assert "method: 'Magic Wand' is not a method's name" in reason(task="x", method="Magic Wand")
    with pytest.raises(InvalidGoal, match="method: unknown method 'magic'; choose one of .*reprompt"):
        resolve(parse_request(task="x", method="magic"), None, {}, "off")   # the registry decides, first


@pytest.mark.parametrize("field,value", [("temperature", -0.5), ("temperature", 3.0), ("top_p", 0.0),
                                         ("num_samples", 65), ("max_steps", 0), ("epsilon", 1.5),
                                         ("ranking", "best"), ("correction_level", "shout")])
def test_out_of_range_options(field, value):
    msg = reason(task="x", options={field: value})
    assert msg.startswith(f"options.{field}:") and repr(value) in msg


def test_unknown_fields_are_refused():
    assert "options.temprature: Extra inputs are not permitted" in reason(task="x", options={"temprature": 1})


def test_message_sentinels_map_to_defaults_and_nan_is_refused():
    from llm_planner_msgs.action import PlanTask
    from llm_planner_ros.ros.conversions import request_from_goal

    goal = PlanTask.Goal(task="x")
    goal.options.temperature = 0.0
    r = request_from_goal(goal)
    assert r.options.temperature == 0.0 and r.options.beta is None and r.method is None
    goal.options.beta = math.nan
    with pytest.raises(InvalidRequest, match="options.beta: NaN"):
        request_from_goal(goal)
