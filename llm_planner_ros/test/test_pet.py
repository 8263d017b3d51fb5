"""PET (Wu et al.): Plan, Track and Eliminate, on the real simulator's observations, the real
embedding model and the embedded LLM. A scripted judge is used only to pin the pointer rules."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.pet.eliminate import Eliminator
from llm_planner_ros.pet.judges import (
    Answer,
    EmbeddingRelevanceScorer,
    EmbeddingSubtaskJudge,
    LLMSubtaskJudge,
    completion_question,
)
from llm_planner_ros.pet.plan import SubtaskPlanner, demonstration_subtasks, parse_subtasks
from llm_planner_ros.pet.track import SubtaskTracker, inverse_subtask
from llm_planner_ros.profiles.virtualhome import bank as banks
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.translation.translator import SkillIndex
from llm_planner_ros.wiring import ServiceConfig, compose


class ScriptedJudge:
    """Unit-test double: answers 'done' for the subtasks named in ``done`` and records each question."""

    def __init__(self, done=()):
        self.done = set(done)
        self.asked = []

    def ask(self, task, subtask, observations, subtasks=(), pointer=-1):
        self.asked.append((subtask, list(observations)))
        return Answer(subtask in self.done, 1.0 if subtask in self.done else 0.0, "scripted")


@pytest.fixture(scope="module")
def observations():
    """Real observations of the simulator: walk to the microwave, open it, close it."""
    ex = VirtualHomeExecutor(graph=resources.scene_graphs("file27_2")[0])
    out = []
    for action in ("WALK", "OPEN", "CLOSE"):
        result = ex.execute(make_skill(action, ["microwave"]))
        assert result.success
        out.append(result.observation)
    assert out[1:] == ["microwave is now open", "microwave is now closed"]
    return out


def test_window_grows_to_three_and_restarts_when_the_pointer_moves():
    judge = ScriptedJudge()
    tracker = SubtaskTracker(judge, "Heat food", ["open the microwave", "put food in the microwave"])
    windows = [tracker.observe(f"o{i}").window for i in range(4)]
    assert windows == [1, 2, 3, 3] and tracker.pointer == 0
    assert judge.asked[-1] == ("open the microwave", ["o1", "o2", "o3"])   # the last d observations
    judge.done.add("open the microwave")
    update = tracker.observe("o4")
    assert update.advanced and update.pointer == 1 and tracker.window == 0
    assert tracker.observe("o5").window == 1 and judge.asked[-1] == ("put food in the microwave", ["o5"])


def test_fallback_to_the_whole_task_when_the_subtasks_are_exhausted():
    judge = ScriptedJudge(done={"open the microwave"})
    tracker = SubtaskTracker(judge, "Heat food", ["open the microwave"])
    assert tracker.active() == "open the microwave"
    tracker.observe("microwave is now open")
    assert tracker.exhausted and tracker.active() == "Heat food"
    update = tracker.observe("anything")
    assert update.question == "" and update.answer is None and tracker.pointer == 1


def test_embedding_judge_on_real_observations(embedder, observations):
    judge = EmbeddingSubtaskJudge(embedder)
    tracker = SubtaskTracker(judge, "Heat food", ["open the microwave", "close the microwave"])
    first = tracker.observe(observations[0])     # walked there: not yet open
    assert not first.advanced and first.answer.source == "embedding" and first.answer.probability < 0.5
    second = tracker.observe(observations[1])    # "microwave is now open"
    assert second.advanced and tracker.pointer == 1 and second.window == 2
    third = tracker.observe(observations[2])     # "microwave is now closed"
    assert third.advanced and third.window == 1 and tracker.exhausted


@pytest.mark.parametrize("reopen", [False, True])
def test_undo_switch_reopens_a_finished_subtask(embedder, observations, reopen):
    tracker = SubtaskTracker(EmbeddingSubtaskJudge(embedder), "Heat food",
                             ["open the microwave", "put the food in the microwave"], reopen_undone=reopen)
    tracker.observe(observations[1])
    assert tracker.pointer == 1
    update = tracker.observe(observations[2])    # the microwave is closed again
    assert update.reopened is reopen
    assert tracker.pointer == (0 if reopen else 1)
    assert inverse_subtask("open the microwave") == "close the microwave"
    assert inverse_subtask("switch off the tv") == "switch on the tv" and inverse_subtask("wipe the table") is None


def test_llm_judge_reads_yes_no_log_probs_of_the_embedded_model(smollm2):
    answer = LLMSubtaskJudge(smollm2).ask("Heat food", "open the microwave", ["microwave is now open"])
    assert answer.source == "llm" and 0.0 < answer.probability < 1.0
    assert answer.done == (answer.probability > 0.5)
    assert completion_question("open the microwave", ["a", " ", "b"]) == \
        "a\nb\nDid you finish the task of open the microwave? Answer yes or no."


def test_plan_prompt_uses_five_held_out_examples_and_parses_the_answer(demos, smollm2):
    planner = SubtaskPlanner(smollm2, demos)
    prompt = planner.prompt("Make coffee", exclude_tasks=["Make coffee"])
    assert prompt.count("Q: What are the middle steps required to") == 6
    assert prompt.endswith("Q: What are the middle steps required to make coffee?\nA:")
    assert "required to make coffee?\nA: " not in prompt          # the task itself is held out
    assert parse_subtasks("grab cup, then fill the cup; drink it. And more\nQ: x") == \
        ["grab cup", "fill the cup", "drink it"]
    demo = demos.get("Turn on light")
    assert demonstration_subtasks(demo) and not any(s.startswith("walk to") for s in demonstration_subtasks(demo))
    subtasks = planner.plan("Watch TV", ["Watch TV"])
    assert isinstance(subtasks, list) and len(subtasks) <= 8


def test_eliminate_shrinks_the_bank_and_keeps_rooms(embedder):
    graph = resources.scene_graphs("file27_2")[0]
    index = SkillIndex(banks.scene_bank(graph), embedder)
    rooms = {"bathroom", "bedroom", "dining_room", "home_office"}
    elimination, sub = Eliminator(EmbeddingRelevanceScorer(embedder), 0.4).apply("switch on the light", index, rooms)
    assert "light" in elimination.kept and rooms <= elimination.kept and "toilet" in elimination.removed
    assert elimination.skills_after == len(sub.bank) < len(index.bank)
    assert all(set(s.objects) <= elimination.kept for s in sub.bank.skills)
    assert 0.0 < elimination.bank_reduction < 1.0
    assert elimination.recall(["light", "toilet"]) == 0.5
    nothing_left, same = Eliminator(EmbeddingRelevanceScorer(embedder), 1.01).apply("x", index)
    assert same is index and nothing_left.skills_after == len(index.bank)   # never an empty bank


def test_pet_goal_through_the_planning_service(embedder, smollm2, demos):
    from llm_planner_ros.core.errors import InvalidGoal

    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos)
    events = []
    options = {"plan_subtasks": True, "track_subtasks": True, "eliminate_objects": True}
    result, report = service.plan_with_report(
        parse_request(task="Watch TV", method="reprompt", execute=True, options=options), events.append, CancelToken())
    session = report.stats["pet"]
    assert result.subtasks == session.subtasks
    assert session.tracker is not None and len(session.tracker.history) == sum(s.executed for s in result.steps)
    assert session.eliminations and session.eliminations[0].skills_after < session.eliminations[0].skills_before
    assert all(e.subtask for e in events)
    with pytest.raises(InvalidGoal, match="track_subtasks.*execute=true"):
        service.plan(parse_request(task="Watch TV", method="translated",
                                   options={"track_subtasks": True}), events.append, CancelToken())
