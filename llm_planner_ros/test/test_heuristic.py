"""Borro et al.'s LLM-as-heuristic search on the real VirtualHome simulator. A scripted chat
double pins chunking, index repair and each stop (the paper's free replies, and the constrained
ones); the embedded model runs it for real, under the grammar of the listed options."""
from __future__ import annotations

import re

import pytest

from helpers.scripted_llm import ScriptedChat
from llm_planner_ros.core.errors import CancelToken, PlanningError
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import GoalReport, GoalStatus, TerminationReason
from llm_planner_ros.planning.heuristic import HeuristicPlanner, HeuristicSettings, action_string, parse_reply, repair
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

TASK = "Turn on light"
FREE = {"heuristic_answer": "free"}   # the paper's replies: an index and an action, in free text

VH = load_world()


def executor():
    graph, goal = resources.scene_for_task("TrimmedTestScene1", TASK)
    return VirtualHomeExecutor(graph=graph, goal=goal)


def options_in(prompt: str) -> dict[str, int]:
    return {m.group(2): int(m.group(1)) for m in re.finditer(r"^(\d+) (\[.*)$", prompt, re.M)}


class CheckedExecutor:
    """Wraps the real simulator and checks each executed skill was applicable just before."""

    def __init__(self, inner):
        self.inner, self.violations = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, skill):
        if not self.inner.check(skill):
            self.violations.append(skill)
        return self.inner.execute(skill)


def test_parse_and_repair():
    assert parse_reply("I should walk first. {12 [WALK] <light>}") == (12, "[WALK] <light>")
    assert parse_reply("3 [PUTBACK] <Cup> (7) <table> (9)") == (3, "[PUTBACK] <cup> <table>")
    assert parse_reply("[SWITCHON] <light>") == (None, "[SWITCHON] <light>")
    assert parse_reply("no idea") == (None, None)
    options = ["[WALK] <light>", "[WALK] <sink>", "[SWITCHON] <light>"]
    assert repair(0, "[WALK] <light>", options) == [0]                 # agree
    assert repair(1, "[SWITCHON] <light>", options) == [1, 2]          # disagree: both
    assert repair(None, "[SWITCHON] <light>", options) == [2]
    assert repair(7, None, options) == [] and repair(None, None, options) == []
    assert repair(2, None, options, allowed=[0, 1]) == []              # outside the chunk


def test_chunks_of_the_applicable_actions_and_goal_stop():
    """A scripted heuristic walks to the floor lamp then switches it on (EAI's goal for this
    program: the floor lamp is ON); the goal check stops the search."""
    def answer(prompt):
        opts = options_in(prompt)
        for want in ("[SWITCHON] <floor_lamp>", "[WALK] <floor_lamp>"):
            if want in opts:
                return f"{{{opts[want]} {want}}}"
        return "{0 " + next(iter(opts)) + "}"

    llm = ScriptedChat(answer)
    planner = HeuristicPlanner(llm, None, VH, settings=HeuristicSettings(heuristic_chunk_size=40, **FREE))
    ex = CheckedExecutor(executor())
    n_options = len({action_string(s) for s in ex.applicable_skills()})
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), ex)
    assert result.termination_reason is TerminationReason.GOAL_REACHED
    assert [s.skill.script().split(" (")[0] for s in result.steps] == ["[WALK] <floor_lamp>", "[SWITCHON] <floor_lamp>"]
    assert not ex.violations and result.executed
    chunk_prompts = [p for p in llm.prompts if "Next possible actions" in p]
    first_step = chunk_prompts[:-(-n_options // 40)]
    assert len(first_step) == -(-n_options // 40) and all(len(options_in(p)) <= 40 for p in first_step)
    assert sum(len(options_in(p)) for p in first_step) == n_options   # every option shown once


def test_length_limit_and_every_action_applicable():
    def first_option(prompt):
        action, index = next(iter(options_in(prompt).items()))
        return f"{{{index} {action}}}"

    llm = ScriptedChat(first_option)
    settings = HeuristicSettings(heuristic_max_length=4, heuristic_max_revisits=0, **FREE)
    planner = HeuristicPlanner(llm, None, VH, settings)
    ex = CheckedExecutor(executor())
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), ex)
    assert result.termination_reason is TerminationReason.MAX_STEPS and len(result.steps) == 4
    assert not ex.violations and all(s.executed for s in result.steps)
    # the search runs until its goal holds: stopped short of it, it is no success (it was reported one)
    assert result.goal_status is GoalStatus.NOT_MET and not result.success
    assert result.detail.startswith("the goal does not hold after the steps"), result.detail


def test_a_goal_that_already_holds_ends_already_done_without_a_query():
    """The floor lamp already on (EAI's goal for the task): nothing to search for."""
    ex = executor()
    for want in ("[WALK] <floor_lamp>", "[SWITCHON] <floor_lamp>"):   # as the search above takes them
        assert ex.execute(next(s for s in ex.applicable_skills() if action_string(s) == want)).success
    assert ex.goal_met()
    llm = ScriptedChat(lambda p: "")
    result = HeuristicPlanner(llm, None, VH, HeuristicSettings(**FREE)).plan(
        parse_request(task=TASK, method="heuristic", execute=True), lambda e: None, CancelToken(), ex)
    assert result.termination_reason is TerminationReason.ALREADY_DONE, result.detail
    assert not result.steps and result.success and result.detail == "the goal already holds; nothing to do"
    assert not llm.prompts


def test_a_search_that_comes_back_to_a_state_ends_with_no_progress():
    """Issue 17: 'Watch TV' repeated [WALK] <bathroom_cabinet> seven times at ~30 s a step. A
    chooser that always walks to the same place: the state stops changing after the first walk,
    and the run ends on the third visit of that state, not at the length limit."""
    def same_walk(prompt):
        options = options_in(prompt)   # one chunk of the applicable actions, or the chunks' winners
        walk = "[WALK] <bathroom_cabinet>" if "[WALK] <bathroom_cabinet>" in options else next(iter(options))
        return f"{{{options[walk]} {walk}}}"

    planner = HeuristicPlanner(ScriptedChat(same_walk), None, VH, HeuristicSettings(heuristic_max_revisits=2, **FREE))
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), executor())
    assert result.termination_reason is TerminationReason.NO_PROGRESS, result.detail
    assert len(result.steps) == 3 and len({s.skill.script() for s in result.steps}) == 1
    assert "back in a state it had been in 2 times" in result.detail and "[WALK]" in result.detail
    # off, as Borro et al. run it: the walk repeats up to the length limit
    planner = HeuristicPlanner(ScriptedChat(same_walk), None, VH,
                               HeuristicSettings(heuristic_max_revisits=0, heuristic_max_length=6, **FREE))
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), executor())
    assert result.termination_reason is TerminationReason.MAX_STEPS and len(result.steps) == 6


def test_repeated_queries_stop_the_run():
    """Every reply names an action that is not offered: the candidate stage finds nothing, the
    repeat prefix is used, and the run ends after 3 repeats."""
    llm = ScriptedChat(lambda p: "{999 [FLY] <moon>}")
    planner = HeuristicPlanner(llm, None, VH, HeuristicSettings(heuristic_max_repeats=3, **FREE))
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), executor())
    assert result.termination_reason is TerminationReason.CORRECTIONS_EXHAUSTED and not result.steps
    assert "3 queries had to be repeated" in result.detail
    repeats = [p for p in llm.prompts if p.startswith("This query is being repeated for you")]
    assert len(repeats) == 3 and "Your previous response was [" in repeats[0]


def test_final_query_repairs_a_disagreeing_answer():
    """Two chunks give two candidates; the final answer's index and action disagree, so it is
    asked again with the repeat prefix and the corrected answer is taken."""
    def answer(prompt):
        opts = options_in(prompt)
        if prompt.startswith("This query is being repeated"):
            return f"{opts['[WALK] <light>']} [WALK] <light>"
        if "Choose one of these candidate actions" in prompt:
            idx = sorted(opts.values())
            return f"{idx[0]} [WALK] <light>" if opts.get("[WALK] <light>") != idx[0] else f"{idx[1]} [WALK] <light>"
        if "[WALK] <light>" in opts:                      # the chunk holding it proposes it
            return f"{opts['[WALK] <light>']} [WALK] <light>"
        action, index = min(opts.items(), key=lambda kv: kv[1])   # the other chunk: its first option
        return f"{index} {action}"

    llm = ScriptedChat(answer)
    settings = HeuristicSettings(heuristic_chunk_size=150, heuristic_max_length=1, **FREE)
    planner = HeuristicPlanner(llm, None, VH, settings)
    report = GoalReport()
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), executor(), report)
    assert report.stats["search"].repeats == 1
    assert action_string(result.steps[0].skill) == "[WALK] <light>"


def test_a_constrained_reply_is_one_of_the_listed_actions():
    """The default answer: each query lists the actions without indices and samples under the
    grammar of exactly those lines (a ChoiceConstraint), so the reply is taken as it comes."""
    from llm_planner_ros.llm.constraint import ChoiceConstraint

    def answer(prompt):
        listed = re.findall(r"^(\[[A-Z_]+\](?: <[^<>]+>)*)$", prompt, re.M)
        for want in ("[SWITCHON] <floor_lamp>", "[WALK] <floor_lamp>"):
            if want in listed:
                return want + "\n"
        return listed[0] + "\n"

    llm = ScriptedChat(answer)
    planner = HeuristicPlanner(llm, None, VH, settings=HeuristicSettings(heuristic_chunk_size=40))
    result = planner.plan(parse_request(task=TASK, method="heuristic", execute=True), lambda e: None,
                          CancelToken(), executor())
    assert result.termination_reason is TerminationReason.GOAL_REACHED
    assert [action_string(s.skill) for s in result.steps] == ["[WALK] <floor_lamp>", "[SWITCHON] <floor_lamp>"]
    assert not any(options_in(p) for p in llm.prompts)   # no index to choose by
    for prompt, params in zip(llm.prompts, llm.params):
        assert isinstance(params.constraint, ChoiceConstraint)
        listed = re.findall(r"^(\[[A-Z_]+\](?: <[^<>]+>)*)$", prompt, re.M)
        assert list(params.constraint.choices) == listed and "exactly as written" in prompt


def test_under_a_constrained_answer_the_actions_nearest_the_task_come_first(embedder):
    """A small model leans to the first options it is shown: under a constrained answer the
    applicable actions are listed by their words' cosine to the task (the real embedder), not in
    the executor's order; the paper's free replies keep the executor's order."""
    skills = executor().applicable_skills()
    constrained = HeuristicPlanner(None, None, VH, HeuristicSettings(), embedder=embedder)
    first = [action_string(s) for s in constrained._nearest_first("Turn on the light", skills)[:3]]
    assert any("<light>" in a or "<floor_lamp>" in a or "<table_lamp>" in a for a in first), first
    assert sorted(map(action_string, constrained._nearest_first("Turn on the light", skills))) == \
        sorted(map(action_string, skills))
    free = HeuristicPlanner(None, None, VH, HeuristicSettings(**FREE), embedder=embedder)
    assert free._nearest_first("Turn on the light", skills) == skills


def test_needs_an_executor():
    with pytest.raises(PlanningError, match="needs execute=true"):
        HeuristicPlanner(ScriptedChat(lambda p: ""), None, VH).plan(parse_request(task=TASK), lambda e: None,
                                                                CancelToken(), None)


def test_embedded_model_runs_the_search(smollm2, demos):
    """The real model under the grammar of the listed actions: every reply names one, so no
    query is repeated (free, this model mostly echoes the prompt and the run ends with
    corrections_exhausted)."""
    guide, info = "low_level", "static"
    planner = HeuristicPlanner(smollm2, demos, VH, HeuristicSettings(heuristic_max_length=1))
    ex = CheckedExecutor(executor())
    request = parse_request(task=TASK, method="heuristic", execute=True,
                            options={"guide": guide, "guide_info": info})
    report = GoalReport()
    result = planner.plan(request, lambda e: None, CancelToken(), ex, report)
    assert not ex.violations
    assert all(s.executed for s in result.steps)
    assert result.termination_reason in (TerminationReason.MAX_STEPS, TerminationReason.GOAL_REACHED,
                                         TerminationReason.NO_PROGRESS), result.detail
    assert report.stats["search"].repeats == 0 and result.steps
    prompt = planner.guide_prompt(request, guide, info, ex)
    assert report.stats["search"].queries >= 1 and report.times.llm_s > 0
    assert "Walk to an item before interacting with it." in prompt and "\nfloor_lamp: " in prompt
    assert "walk | " in prompt     # the worked examples in the guide's language


def test_the_guide_shows_no_example_of_a_held_out_task(demos):
    """A paraphrase's own task is held out by hold_out_tasks, as in the LLM-step methods; the guide
    prompt showed it ("Switch the lights on" got "Task: Turn on light")."""
    planner = HeuristicPlanner(None, demos, VH, HeuristicSettings())
    shown = planner.guide_prompt(parse_request(task="Switch the lights on", method="heuristic",
                                               options={"guide": "high_level"}), "high_level", "none", executor())
    assert "Task: Turn on light" in shown   # one of the guide's examples, unless held out
    held = planner.guide_prompt(parse_request(task="Switch the lights on", method="heuristic",
                                              options={"guide": "high_level", "hold_out_tasks": ["Turn on light"]}),
                                "high_level", "none", executor())
    assert "Task: Turn on light" not in held and held.count("Task: ") == 3, held


def test_progprompt_tasks_have_reachable_goals():
    """Each runnable ProgPrompt task's goal is met by a hand-written program on its graph, and
    not met at the start; the other six say why they cannot run."""
    from llm_planner_ros.evaluation.progprompt import NOT_RUNNABLE, PROGPROMPT_TASKS
    from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill as sk

    programs = {
        "watch tv": [sk("WALK", ["television"]), sk("SWITCHON", ["television"]), sk("TURNTO", ["television"])],
        "turn off light": [sk("WALK", ["home_office"]), sk("WALK", ["light"]), sk("SWITCHOFF", ["light"])],
        "make toast": [sk("WALK", ["food_bread"]), sk("GRAB", ["food_bread"]), sk("WALK", ["toaster"]),
                       sk("PUTIN", ["food_bread", "toaster"]), sk("SWITCHON", ["toaster"])],
        "wash the plate": [sk("WALK", ["dishwasher"]), sk("OPEN", ["dishwasher"]), sk("GRAB", ["plate"]),
                           sk("WALK", ["sink"]), sk("WASH", ["plate"])],
    }
    assert len(PROGPROMPT_TASKS) + len(NOT_RUNNABLE) == 10
    for task in PROGPROMPT_TASKS:
        ex = VirtualHomeExecutor(graph=task.graph, goal=task.goal)
        assert ex.goal_met() is False, task.task
        for skill in programs[task.task]:
            assert ex.execute(skill).success, (task.task, skill)
        assert ex.goal_met() is True, task.task
