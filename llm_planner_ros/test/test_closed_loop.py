"""Closed-loop planning on the real VirtualHome simulator: corrective re-prompting at each
level (Raman et al.), its limits, the re-sampling baseline, and open-loop execution."""
from __future__ import annotations

import pytest

from helpers.scripted_llm import ScriptedLLM, translated_planner
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import ErrorType, TerminationReason
from llm_planner_ros.planning.methods import llm_loop
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.wiring import ServiceConfig, compose

GROCERIES = next(p for p in resources.human_programs() if p.task == "Put groceries in Fridge")



def planner(llm, demos, scene_index, **settings):
    return translated_planner(llm, demos, scene_index, num_samples=1, epsilon=0.0, **settings)


def executor():
    return VirtualHomeExecutor(graph=resources.scene_graphs(GROCERIES.program_id)[0])


def plan(p, method, **options):
    events = []
    result = p.plan(parse_request(task="Put groceries in Fridge", method=method, execute=True, options=options),
                    events.append, CancelToken(), executor(), loop=llm_loop(method))
    return result, events


def groceries_llm(prompt: str):
    """Grabs the food before walking to it; walks there once told why that failed."""
    if prompt.endswith("A correct step would be to Step 1:"):
        return [("Walk to the freezer", -0.1)]
    if prompt.endswith("Step 1:"):
        return [("Grab the food", -0.1)]
    return [("", -0.1)]


@pytest.mark.parametrize("level,error", [
    ("notion", "Error: Task failed. A correct step would be to Step 1:"),
    ("inference", "Error: I cannot grab food food. A correct step would be to Step 1:"),
    ("cause", "Error: I cannot grab food food because I am not close to the food food. "
              "A correct step would be to Step 1:")])
def test_reprompt_puts_the_error_in_the_prompt_at_each_level(demos, scene_index, level, error):
    llm = ScriptedLLM(groceries_llm)
    result, events = plan(planner(llm, demos, scene_index), "reprompt", correction_level=level)
    assert llm.prompts[1].endswith(f"Step 1: Grab food food\n{error}")
    assert [s.skill.text for s in result.steps] == ["walk to freezer"]
    assert result.steps[0].executed and result.steps[0].corrections == 1
    assert result.num_corrections == 1 and result.executed
    assert result.termination_reason is TerminationReason.END_OF_PLAN
    assert events[-1].num_corrections == 1


def stubborn_llm(prompt: str):
    """Proposes a different far object every time: every attempt fails."""
    tries = prompt.count("Error:")
    return [(["Grab the knife", "Grab the mouse", "Grab the keyboard", "Grab the phone", "Grab the pillow",
              "Grab the napkin"][tries % 6], -0.1)]


def test_reprompt_stops_at_the_per_step_limit(demos, scene_index):
    llm = ScriptedLLM(stubborn_llm)
    result, _ = plan(planner(llm, demos, scene_index, max_corrections_per_step=2), "reprompt")
    assert result.termination_reason is TerminationReason.CORRECTIONS_EXHAUSTED
    assert "step 1 failed 3 times" in result.detail
    assert len(llm.prompts) == 3 and not result.executed
    assert result.steps[-1].error.type is ErrorType.AGENT_PROXIMITY


def test_reprompt_stops_at_the_per_plan_limit(demos, scene_index):
    def llm_fn(prompt):
        if prompt.endswith("Put groceries in Fridge\nStep 1:"):
            return [("Walk to the freezer", -0.1)]
        return stubborn_llm(prompt)
    result, _ = plan(planner(ScriptedLLM(llm_fn), demos, scene_index, max_corrections_per_step=5,
                             max_corrections_per_plan=2), "reprompt")
    assert result.termination_reason is TerminationReason.CORRECTIONS_EXHAUSTED
    assert "used its 2 corrections" in result.detail
    assert result.steps[0].executed and not result.steps[-1].executed


def test_resample_walks_down_the_ranked_skills(demos, scene_index):
    def llm_fn(prompt):
        return [("Grab the food food", -0.1)] if prompt.endswith("Step 1:") else [("", -0.1)]
    result, _ = plan(planner(ScriptedLLM(llm_fn), demos, scene_index, resample_top_k=5), "resample")
    # "grab food food" fails (not close); the next-best admissible skills are tried without the LLM
    assert result.steps[0].executed and result.steps[0].corrections >= 1
    assert result.steps[0].skill.text != "grab food food"
    assert result.num_llm_calls == 2 and result.executed


def test_open_loop_execution_stops_at_the_first_failure(demos, scene_index):
    result, _ = plan(planner(ScriptedLLM(groceries_llm), demos, scene_index), "translated")
    assert result.termination_reason is TerminationReason.CORRECTIONS_EXHAUSTED
    assert "failed in open loop" in result.detail and not result.executed
    assert result.steps[0].error.cause == "I am not close to the food food"


def test_closed_loop_methods_need_execute(smollm2, embedder):
    from llm_planner_ros.core.errors import InvalidGoal

    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder)
    with pytest.raises(InvalidGoal, match="execute: method 'reprompt' corrects failed steps"):
        service.plan(parse_request(task="Wash hands", method="reprompt"), lambda e: None, CancelToken())


def test_reprompt_with_the_real_embedded_llm(smollm2, embedder):
    service = compose(ServiceConfig.of(PlannerSettings(max_steps=6, epsilon=0.2)), llm=smollm2, embedder=embedder)
    result = service.plan(parse_request(task="Watch TV", method="reprompt", execute=True),
                          lambda e: None, CancelToken())
    bank = set(service.parts.index_for("TrimmedTestScene1", "scene").bank.skills)
    assert all(s.skill in bank for s in result.steps)
    assert all(s.executed for s in result.steps[:-1])
    if result.termination_reason is TerminationReason.CORRECTIONS_EXHAUSTED:
        assert not result.steps[-1].executed and result.steps[-1].error.type is not ErrorType.NONE
    else:
        assert result.executed == bool(result.steps)
    assert result.num_corrections == sum(s.corrections for s in result.steps) or \
        "dropped" in result.detail


def test_translation_uses_the_objects_the_executor_has(smollm2, embedder):
    """Executing 'Drink', the executor starts from that task's graph, which has a water glass
    the canonical scene graph lacks; the skill bank follows the executor."""
    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder)
    canonical = service.parts.index_for("TrimmedTestScene1", "scene")
    executor = VirtualHomeExecutor(*(lambda g: ("TrimmedTestScene1", g))(
        resources.scene_for_task("TrimmedTestScene1", "Drink")[0]))
    assert "water_glass" in executor.objects and "water_glass" not in canonical.bank.objects()
    narrowed = service.parts.index_for("TrimmedTestScene1", "scene", executor.objects)
    assert "water_glass" in narrowed.bank.objects()
    assert narrowed.bank.objects() == set(executor.objects) & set(resources.object_properties())
    assert service.parts.index_for("TrimmedTestScene1", "scene", executor.objects) is narrowed   # cached
