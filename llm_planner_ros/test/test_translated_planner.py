"""Algorithm 1 and the vanilla baseline: control flow on a scripted LLM, real translation."""
from __future__ import annotations

import math

import pytest

from helpers.scripted_llm import ScriptedLLM, translated_planner
from llm_planner_ros.core.errors import CancelToken, PlanCanceled
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import NoteKind, TerminationReason
from llm_planner_ros.planning.methods import llm_loop


def make(llm, demos, scene_index, **settings):
    return translated_planner(llm, demos, scene_index, num_samples=2, **settings)


def run(planner, task="Watch TV", **fields):
    events = []
    request = parse_request(task=task, scene_id="TrimmedTestScene1", **fields)
    result = planner.plan(request, events.append, CancelToken(), loop=llm_loop(request.method or "translated"))
    return result, events


TV = [[("Walk to the living room", -0.2), ("walk to home office", -0.4)],
      [("Switch on the TV", -0.1), ("turn on tv", -0.3)],
      [("Sit on the couch", -0.2), ("sit on couch", -0.2)],
      [("", -0.1), ("", -0.1)]]


def test_translated_plan_appends_the_translation_and_ends_on_empty_samples(embedder, demos, scene_index):
    llm = ScriptedLLM(TV)
    result, events = run(make(llm, demos, scene_index), method="translated")
    assert result.termination_reason is TerminationReason.END_OF_PLAN
    assert [s.skill.text for s in result.steps][1:] == ["switch on television", "sit on couch"]
    assert [e.step.index for e in events] == [1, 2, 3]
    assert "Step 2: Switch on television\nStep 3:" in llm.prompts[2]     # trajectory correction
    s = result.steps[1]
    assert s.score == pytest.approx(s.similarity + 0.3 * s.mean_logprob)
    assert {st.skill for st in result.steps} <= set(scene_index.bank.skills)
    assert result.num_llm_calls == 4


def test_no_trajectory_correction_feeds_back_the_raw_sample(demos, scene_index):
    llm = ScriptedLLM(TV)
    result, _ = run(make(llm, demos, scene_index), options={"no_trajectory_correction": True})
    assert "Step 2: Switch on the TV\nStep 3:" in llm.prompts[2]
    assert result.steps[1].skill.text == "switch on television"


def test_no_translation_keeps_free_text(demos, scene_index):
    steps = [TV[0], TV[1], [("Sit on the couch", -0.3), ("sit on couch", -0.2)], TV[3]]
    result, _ = run(make(ScriptedLLM(steps), demos, scene_index), options={"no_translation": True})
    assert result.steps[0].generated_text == "Walk to the living room"
    assert result.steps[0].skill.action == ""                     # not admissible as written
    assert result.steps[2].skill.action == "SIT"                  # the likelier sample parses as is
    assert math.isnan(result.steps[0].similarity)
    # plan-only: the lines that are not admissible skills of the scene are marked, and it fails
    assert result.steps[0].error.message == "untranslated line: not a skill, the LLM's text as written"
    assert not result.steps[2].error.type and not result.success
    assert result.noted(NoteKind.UNTRANSLATED) == ["untranslated: line(s) 1, 2 of 3 are not admissible skills of "
                                                   "the scene"]
    assert result.detail.startswith("the plan was not checked on a model of the world; untranslated: line(s) 1, 2")


def test_epsilon_stops_before_a_poor_step_unless_append_before_break(demos, scene_index):
    poor = [[("Walk to the living room", -0.2)], [("quantum flux capacitor", -3.0)]]
    result, _ = run(make(ScriptedLLM(poor), demos, scene_index, epsilon=0.4))
    assert result.termination_reason is TerminationReason.LOW_SCORE and len(result.steps) == 1
    result, _ = run(make(ScriptedLLM(poor), demos, scene_index, epsilon=0.4, append_before_break=True))
    assert result.termination_reason is TerminationReason.LOW_SCORE and len(result.steps) == 2


def test_repeated_skills_end_the_plan_unless_allowed(demos, scene_index):
    loop = lambda prompt: [("Walk to the bathroom", -0.1)]      # noqa: E731
    result, _ = run(make(ScriptedLLM(loop), demos, scene_index))
    assert result.termination_reason is TerminationReason.LOW_SCORE and len(result.steps) == 1
    result, _ = run(make(ScriptedLLM(loop), demos, scene_index, allow_repeated_skills=True, max_steps=4))
    assert result.termination_reason is TerminationReason.MAX_STEPS and len(result.steps) == 4


def test_ranking_can_be_raman(demos, scene_index):
    result, _ = run(make(ScriptedLLM(TV), demos, scene_index), options={"ranking": "raman"})
    s = result.steps[0]
    assert s.score == pytest.approx((s.similarity + 1) / 2 * math.exp(s.mean_logprob))


def test_example_is_held_out_or_fixed(demos, scene_index):
    llm = ScriptedLLM(TV)
    run(make(llm, demos, scene_index), task="Watch TV")
    assert not llm.prompts[0].startswith("Task: Watch TV\n")
    llm = ScriptedLLM(TV)
    run(make(llm, demos, scene_index), task="Watch TV", options={"fixed_example": True})
    assert llm.prompts[0].startswith("Task: Relax on sofa\n")


def test_cancel_between_steps(demos, scene_index):
    token = CancelToken()
    planner = make(ScriptedLLM(TV), demos, scene_index)
    with pytest.raises(PlanCanceled):
        planner.plan(parse_request(task="Watch TV"), lambda e: token.cancel(), token)


def test_vanilla_picks_the_most_likely_program(demos, scene_index):
    programs = iter([" Walk to bathroom\nStep 2: Wash hands\nStep 3: ???", " Fly\nStep 2: Swim"])

    def sample(prompt):
        return [(next(programs), -0.2), (next(programs), -2.0)]
    result, events = run(make(ScriptedLLM(sample), demos, scene_index), method="vanilla")
    assert [s.generated_text for s in result.steps] == ["Walk to bathroom", "Wash hands"]
    assert result.steps[0].skill.action == "WALK" and result.steps[1].skill.action == ""
    assert len(events) == 2 and result.num_llm_calls == 1
    assert [bool(s.error.type) for s in result.steps] == [False, True] and not result.success


def test_an_injected_line_of_an_object_the_scene_lacks_is_marked(demos, scene_index):
    """Issue 15: '[OPEN] <front_door>' written into the task came back in a successful plan."""
    def sample(prompt):
        return [(" [OPEN] <front_door>\nStep 2: Walk to bathroom", -0.1)] * 2
    result, _ = run(make(ScriptedLLM(sample), demos, scene_index), method="vanilla")
    first = result.steps[0]
    assert first.error.message.startswith("untranslated line: ")
    assert not result.steps[1].error.type and not result.success
