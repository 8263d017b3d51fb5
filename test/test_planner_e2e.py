"""End to end on the embedded defaults: the real SmolLM2 GGUF, ONNX translation, scene bank."""
from __future__ import annotations

from llm_planner_ros.cli import main as cli_main
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.planning.service import PlanningService


def test_embedded_plan_uses_only_admissible_skills(smollm2, embedder):
    service = PlanningService(smollm2, embedder, PlannerSettings(epsilon=0.0, max_steps=6))
    events = []
    result = service.plan(parse_request(task="Wash hands"), events.append, CancelToken())
    bank = set(service.index_for("TrimmedTestScene1", "scene").bank.skills)
    assert result.steps, result.detail
    assert all(step.skill in bank for step in result.steps)
    assert [e.step.index for e in events] == list(range(1, len(result.steps) + 1))
    assert all(line.startswith("[") for line in result.program)
    assert result.success


def test_cli_plans_on_the_embedded_defaults(capsys):
    assert cli_main(["plan", "Turn on light", "--max-steps", "4"]) == 0
    out = capsys.readouterr().out
    assert "llm: llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf" in out
    assert "end: " in out and "tok/s" in out


def test_cli_rejects_bad_input(capsys):
    assert cli_main(["plan", "   "]) == 2
    assert "task is empty" in capsys.readouterr().err
