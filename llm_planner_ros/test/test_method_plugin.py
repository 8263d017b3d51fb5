"""A method is a plugin (issue 39): a contributor adds one with a module (here, the classes below)
and one registry line; the service builds its runner, the resolve stage checks goals against its
entry, its settings become the service's (node parameters, config keys), and the node's
default_method accepts it, with nothing else edited."""
from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import PlanResult, PlanStep, StepEvent, TerminationReason
from llm_planner_ros.planning.methods import ANY_METHOD, METHODS, Goal, GoalRun, MethodEntry, MethodParts
from llm_planner_ros.wiring import PlannerNodeParams, ServiceConfig, SettingsError, compose, service_models


class FirstApplicableSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    first_applicable_rank: int = Field(1, ge=1, le=10, description="which applicable skill it takes")


class FirstApplicable:
    """A method of one step: an applicable skill (the first, or its setting's rank), executed
    through the gate."""

    def __init__(self, parts: MethodParts) -> None:
        self.rank = parts.settings_of(FirstApplicableSettings).first_applicable_rank

    def check(self, goal: Goal) -> None:
        pass

    def plan(self, run: GoalRun) -> PlanResult:
        world = run.world_source()
        skill = world.applicable_skills(self.rank)[self.rank - 1]
        step = PlanStep(index=1, generated_text=skill.text, skill=skill, score=1.0)
        if run.gate is not None:
            result = run.gate.execute(skill)
            step.executed, step.error = result.success, result.failure
        run.on_step(StepEvent(step=step, num_corrections=0))
        return PlanResult(TerminationReason.END_OF_PLAN, ending="one step", steps=[step],
                          executing=run.gate is not None, executed=step.executed)


@pytest.fixture
def registered(monkeypatch):
    # the one registry line
    monkeypatch.setitem(METHODS, "first_applicable",
                        MethodEntry(FirstApplicable, ANY_METHOD, (FirstApplicableSettings,)))


def test_a_method_added_with_one_registry_line_plans_through_the_service(registered, embedder, demos):
    service = compose(ServiceConfig(), llm=None, embedder=embedder, demos=demos)
    events: list[StepEvent] = []
    result = service.plan(parse_request(task="Watch TV", method="first_applicable", execute=True),
                          events.append, CancelToken())
    assert result.termination_reason is TerminationReason.END_OF_PLAN, result.detail
    assert len(result.steps) == 1 and result.steps[0].executed and events
    # its entry is checked like any other's: an option it does not read is refused before it runs
    with pytest.raises(InvalidGoal, match="options: temperature does not apply to method 'first_applicable'"):
        service.plan(parse_request(task="Watch TV", method="first_applicable", options={"temperature": 0.5}),
                     lambda e: None, CancelToken())
    assert PlannerNodeParams(default_method="first_applicable").default_method == "first_applicable"


def test_a_methods_settings_are_the_services(registered, embedder, demos):
    assert FirstApplicableSettings in service_models()   # the planner node declares them as parameters
    config = ServiceConfig.from_flat({"first_applicable_rank": 2})
    with pytest.raises(SettingsError, match="first_applicable_rank"):
        ServiceConfig.from_flat({"first_applicable_rank": 11})
    service = compose(config, llm=None, embedder=embedder, demos=demos)
    first = compose(ServiceConfig(), llm=None, embedder=embedder, demos=demos)
    ran = [s.plan(parse_request(task="Watch TV", method="first_applicable", execute=True), lambda e: None,
                  CancelToken()).steps[0].skill for s in (first, service)]
    assert ran[0] != ran[1]   # the second applicable skill, as configured


def test_an_unregistered_method_is_refused_naming_the_registered_ones(embedder, demos):
    service = compose(ServiceConfig(), llm=None, embedder=embedder, demos=demos)
    with pytest.raises(InvalidGoal, match="method: unknown method 'first_applicable'; choose one of vanilla"):
        service.plan(parse_request(task="Watch TV", method="first_applicable"), lambda e: None, CancelToken())
    with pytest.raises(ValueError, match="unknown method 'first_applicable'"):
        PlannerNodeParams(default_method="first_applicable")
    assert FirstApplicableSettings not in service_models()
    with pytest.raises(SettingsError, match="unknown setting"):
        ServiceConfig.from_flat({"first_applicable_rank": 2})
