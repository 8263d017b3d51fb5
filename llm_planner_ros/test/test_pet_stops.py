"""PET inside a goal: a cancel stops the paper's Eliminate (an LLM question per object) and
Track (a question per finished subtask) within a second, a failing tracker loses no executed
step, and Eliminate keeps a bounded number of sub-banks. Real embedder, real SmolLM2, real
simulator; the planner's steps are scripted only where a test needs a step that executes."""
from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest

from helpers.scripted_llm import ScriptedLLM
from llm_planner_ros.core.errors import CancelToken, PlanCanceled
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.pet.eliminate import Eliminator
from llm_planner_ros.pet.judges import EmbeddingRelevanceScorer, LLMSubtaskJudge
from llm_planner_ros.pet.session import PetSettings
from llm_planner_ros.pet.track import SubtaskTracker
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.wiring import ServiceConfig, compose


def wait_for(condition, timeout_s=120.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_cancel_stops_the_llm_eliminate_within_a_second(embedder, smollm2, demos):
    """pet_relevance: llm asks one question per object of the scene (~30 s in all on the 135M
    model); it used to finish them all, then end the goal low_score as if nothing was asked."""
    service = compose(ServiceConfig.of(PetSettings(pet_relevance="llm")), llm=smollm2, embedder=embedder,
                      demos=demos)
    cancel, outcome = CancelToken(), {}
    calls = smollm2.stats.calls

    def run():
        try:
            outcome["result"] = service.plan(parse_request(task="Make toast", method="translated",
                                                           options={"eliminate_objects": True}),
                                             lambda event: None, cancel)
        except BaseException as exc:   # noqa: BLE001 (asserted below)
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(lambda: smollm2.stats.calls >= calls + 3)   # the step's samples, then Eliminate's questions
    cancelled = time.monotonic()
    cancel.cancel()
    thread.join(60)
    assert isinstance(outcome.get("error"), PlanCanceled), outcome
    assert outcome["ended"] - cancelled < 1.0


def test_a_cancel_stops_the_trackers_reopen_questions_within_a_second(smollm2):
    subtasks = [f"{verb} the {thing}" for verb in ("open", "switch on") for thing in ("fridge", "tv", "lamp", "oven")]
    cancel = CancelToken()
    tracker = SubtaskTracker(LLMSubtaskJudge(smollm2), "Cook", subtasks, reopen_undone=True, cancel=cancel,
                             pointer=len(subtasks))   # all done: each is asked whether it was undone
    calls, outcome = smollm2.stats.calls, {}

    def run():
        try:
            tracker.observe("microwave is now closed")
        except PlanCanceled as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(lambda: smollm2.stats.calls > calls)
    cancelled = time.monotonic()
    cancel.cancel()
    thread.join(60)
    assert "error" in outcome and outcome["ended"] - cancelled < 1.0
    assert smollm2.stats.calls - calls < len(subtasks)


@pytest.fixture(scope="module")
def tiny_context_llm():
    """The real embedded model with a context too small for any tracker question."""
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend, smollm2_path

    return LlamaCppBackend(smollm2_path(), n_threads=1, n_ctx=32)


def test_an_executed_step_is_kept_when_the_tracker_fails(embedder, demos, tiny_context_llm):
    """The tracker's judge fails after a skill ran (over ROS: the tracker node went away; here the
    real model refuses the question): the goal ends with that error, and the step that ran is
    among its steps, not lost."""
    def steps(prompt):
        if prompt.endswith("A:"):                  # PET's plan
            return [("walk to the bedroom, switch on the tv.", -0.1)]
        return [("Walk to the bedroom" if prompt.endswith("Step 1:") else "", -0.1)]

    llm = ScriptedLLM(steps)
    service = compose(ServiceConfig(), llm=llm, embedder=embedder, demos=demos,
                      judge=LLMSubtaskJudge(tiny_context_llm))
    events = []
    executor = VirtualHomeExecutor()
    with pytest.raises(Exception) as raised:
        service.plan_with_report(parse_request(task="Watch TV", method="reprompt", execute=True,
                                               options={"track_subtasks": True}),
                                 events.append, CancelToken(), executor=executor)
    assert not isinstance(raised.value, AssertionError)
    assert [(e.step.skill.script(), e.step.executed) for e in events] == [("[WALK] <bedroom> (1)", True)]


def test_eliminate_keeps_a_bounded_number_of_sub_banks(embedder, scene_index):
    """A long-running node eliminates for every new task and subtask: each sub-bank holds its own
    embeddings (MBs), so the oldest are let go."""
    eliminator = Eliminator(EmbeddingRelevanceScorer(embedder), 0.15)
    _, first = eliminator.apply("watch tv", scene_index)
    gone = weakref.ref(first)
    del first
    for i in range(40):
        eliminator.apply(f"subtask number {i}: wash the plate", scene_index)
    _, recent = eliminator.apply("subtask number 39: wash the plate", scene_index)
    gc.collect()
    assert gone() is None
    assert eliminator.apply("subtask number 39: wash the plate", scene_index)[1] is recent   # kept
