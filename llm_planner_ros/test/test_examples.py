"""Dynamic example selection with the task under test held out."""
from __future__ import annotations

import pytest

from llm_planner_ros.planning.prompt import plan_prompt
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.translation.demonstrations import DemonstrationBank


@pytest.fixture(scope="module")
def demos(embedder):
    return DemonstrationBank(load_world().demonstrations(), embedder)


def test_one_demonstration_per_task_in_natural_language(demos):
    assert len(demos.demos) == 26
    drink = demos.get("Drink")
    assert drink is not None and all(s == s.lower() for s in drink.steps)
    assert not any("<" in s or "[" in s for d in demos.demos for s in d.steps)


def test_nearest_example_is_the_same_task_unless_held_out(demos):
    assert demos.nearest("Watch TV")[0].task == "Watch TV"
    held_out = demos.nearest("Watch TV", exclude_tasks=["watch tv"])[0]
    assert held_out.task != "Watch TV"
    assert [d.task for d in demos.nearest("brush my teeth", k=2)] == ["Brush teeth", "Wash teeth"]


def test_fixed_example_falls_back_when_held_out(demos):
    assert demos.fixed(["Relax on sofa", "Read book"]).task == "Relax on sofa"
    assert demos.fixed(["Relax on sofa", "Read book"], exclude_tasks=["Relax on sofa"]).task == "Read book"
    with pytest.raises(ValueError, match="none of the fixed examples"):
        demos.fixed(["Fly a kite"])


def test_prompt_layout(demos):
    demo = demos.get("Drink")
    prompt = plan_prompt([demo], "Make tea", "", ["walk to dining room"])
    assert prompt.startswith("Task: Drink\nStep 1: ")
    assert prompt.endswith("\n\nTask: Make tea\nStep 1: Walk to dining room\nStep 2:")
    with_desc = plan_prompt([demo], "Make tea", "boil water", [])
    assert f"Task: Drink\nDescription: {demo.description}\nStep 1:" in with_desc
    assert with_desc.endswith("Task: Make tea\nDescription: boil water\nStep 1:")
