"""LLM as a common-sense heuristic (Borro et al.): hill-climbing over the actions applicable in
the current state, so every step executes by construction.

Per step: the applicable actions, in the simulator's language without ids (``[VERB] <obj>``),
are indexed and split into chunks of 100; each chunk yields one ``INDEX [VERB] <obj>`` candidate;
a final query picks one of the candidates (skipped when there is only one). The step is
executed and the loop repeats until the goal holds (when the executor can check it), the plan
reaches 20 steps, or 10 queries have had to be repeated.

Each reply is written under a grammar of the options its query lists, nearest the task first
(``heuristic_answer: constrained``, the default), so that every reply names an option; ``free``
is the paper's free reply, which a 135M model mostly answers by echoing the prompt.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Optional, Protocol

from pydantic import BaseModel, ConfigDict, Field

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import StepCallback
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import (
    GoalReport,
    GoalStatus,
    PlanResult,
    PlanStep,
    Skill,
    StageTimes,
    StepEvent,
    TerminationReason,
)
from llm_planner_ros.llm.base import LLMBackend, SamplingParams
from llm_planner_ros.llm.constraint import ChoiceConstraint
from llm_planner_ros.translation.demonstrations import Demonstration, DemonstrationBank
from llm_planner_ros.translation.translator import Embedder
from llm_planner_ros.translation.vector_store import SentenceVectors


class GuideWorld(Protocol):
    """What the guide prompt shows of a world given in code (a ``planning.worlds.WorldPlugin``)."""

    guide_examples: tuple[str, ...]               # tasks whose demonstrations the prompt shows
    state_names: Mapping[str, str]                # predicate -> the state it says ("on", "open")

    def actions(self) -> list[tuple[str, int]]: ...

    def parse_text(self, text: str) -> Optional[Skill]: ...

    def object_properties(self) -> Mapping[str, frozenset[str]]: ...

Guide = Literal["none", "high_level", "low_level"]
GuideInfo = Literal["none", "objects", "static", "dynamic"]
_BRACKETS = str.maketrans("", "", "[]<>")
REPEAT_PREFIX = ("This query is being repeated for you. Your previous response was [{previous}], but this was not "
                 "one of the options available to you. Answer with one of the options below, exactly as written.\n\n")


class HeuristicSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    heuristic_chunk_size: int = Field(100, ge=2, le=1000, description="applicable actions per query (paper: 100)")
    heuristic_max_length: int = Field(20, ge=1, le=200, description="plan length limit (paper: 20)")
    heuristic_max_repeats: int = Field(10, ge=0, le=100, description="repeated queries allowed per run (paper: 10)")
    heuristic_temperature: float = Field(0.2, ge=0.0, le=2.0, description="paper: 0.2 (gpt-4o-mini)")
    heuristic_max_tokens: int = Field(48, ge=8, le=512, description="tokens of one reply")
    heuristic_max_revisits: int = Field(2, ge=0, le=200,
                                        description="a run that comes back to a world state more often than this "
                                                    "ends with 'no_progress' (repeated actions, cycles); 0 = off "
                                                    "(Borro et al. have no such check)")
    heuristic_guide_tokens: int = Field(160, ge=16, le=1024, description="tokens of a generated guide")
    heuristic_answer: Literal["constrained", "free"] = Field(
        "constrained", description="constrained: each reply is written under a grammar of the options its query "
                                   "lists, so it names one (a backend that refuses grammars answers freely); "
                                   "free: Borro et al.'s free reply, asked again when it names none")


def action_string(skill: Skill) -> str:
    """``[VERB] <obj> <obj>``: the simulator's language without instance ids (Borro's agent ignores ids)."""
    return f"[{skill.action}]" + "".join(f" <{o}>" for o in skill.objects)


_REPLY = re.compile(r"(\d+)?\s*[:.)-]?\s*(\[[A-Za-z_]+\](?:\s*<[^<>]+>(?:\s*\(\d+\))?)*)?")


def parse_reply(text: str) -> tuple[Optional[int], Optional[str]]:
    """(index, action string) from a reply like ``12 [GRAB] <cup>`` or ``{12 [GRAB] <cup>}``; either
    may be None. The last ``{...}`` block wins when the reply reasons first."""
    blocks = re.findall(r"\{([^{}]*)\}", text)
    body = blocks[-1] if blocks else text
    for m in _REPLY.finditer(body):
        index, action = m.group(1), m.group(2)
        if index or action:
            norm = None
            if action:
                action = re.sub(r"\s*\(\d+\)", "", action)
                verb = re.match(r"\[([A-Za-z_]+)\]", action)
                objs = re.findall(r"<([^<>]+)>", action)
                norm = f"[{verb.group(1).upper()}]" + "".join(f" <{o.strip().lower()}>" for o in objs) if verb else None
            return (int(index) if index else None), norm
    return None, None


def repair(index: Optional[int], action: Optional[str], options: Sequence[str],
           allowed: Optional[Sequence[int]] = None) -> list[int]:
    """Candidate stage: the option at ``index`` when it agrees with ``action``; if they disagree,
    both that option and every option with the same string; nothing when neither parses.
    ``allowed`` restricts the indices (a chunk)."""
    pool = range(len(options)) if allowed is None else allowed
    by_index = [index] if index is not None and index in pool else []
    same = [i for i in pool if action is not None and options[i] == action]
    if by_index and (action is None or options[by_index[0]] == action):
        return by_index
    return list(dict.fromkeys(by_index + same))


def accepted(reply: str, options: Sequence[str], allowed: Sequence[int]) -> Optional[int]:
    """Final stage: the option a reply names without ambiguity (its index and action agree, or
    only one of them is given); None means the query must be repeated."""
    index, action = parse_reply(reply)
    got = repair(index, action, options, allowed)
    return got[0] if len(got) == 1 and action in (None, options[got[0]]) else None


@dataclass
class SearchTrace:
    queries: int = 0
    repeats: int = 0
    candidates_per_step: list[int] = field(default_factory=list)


def search_trace(report: GoalReport) -> SearchTrace:
    """The search's counters in a goal's report."""
    return report.stats.setdefault("search", SearchTrace())


class RepeatsExhausted(Exception):
    pass


class HeuristicPlanner:
    def __init__(self, llm: LLMBackend, demos: Optional[DemonstrationBank], world: Optional[GuideWorld],
                 settings: HeuristicSettings = HeuristicSettings(), seed: int = 0, embedder: Optional[Embedder] = None
                 ) -> None:
        """``world``: whose actions, object properties and example tasks the guide prompt shows
        (None: no guide: a profile's world); ``embedder``: under a constrained answer, lists the
        actions nearest the task first (None: in the executor's order)."""
        self.llm = llm
        self._vectors = SentenceVectors(embedder) if embedder is not None else None   # the actions recur each step
        self.world = world
        self.demos = demos
        self.settings = settings
        self.seed = seed

    @staticmethod
    def check(request: PlanRequest, executing: bool) -> None:
        """Raise if the goal cannot be searched (before anything runs)."""
        if not executing:
            raise InvalidGoal("execute: method 'heuristic' chooses among the actions applicable in the current "
                              "state, so it needs execute=true")

    # -- guides ---------------------------------------------------------------------------
    def _guide_world(self) -> GuideWorld:
        if self.world is None:
            raise InvalidGoal("options: guide: the guide prompt shows a world given in code, and this goal's "
                              "world is a profile's; leave guide unset")
        return self.world

    def guide_prompt(self, request: PlanRequest, kind: Guide, info: GuideInfo, executor: Executor) -> str:
        world = self._guide_world()
        verbs = ", ".join(f"{verb.lower()} ({arity})" for verb, arity in world.actions())
        found = (self.demos.get(t) for t in world.guide_examples) if self.demos is not None else ()
        held = {t.lower() for t in (request.task, *request.options.hold_out_tasks)}   # the query's own task, held out
        examples = [d for d in found if d is not None and d.task.lower() not in held][:2]
        shots = "".join(f"Task: {d.task}\nPlan:\n{self._render(d, kind)}\n\n" for d in examples)
        style = ("one English sentence per step" if kind == "high_level" else
                 "one action per line as 'verb | object' or 'verb | object | object'")
        return (f"Write a plan for a household robot, {style}. Actions (number of objects): {verbs}.\n"
                f"Walk to an item before interacting with it.\n{self._environment(info, executor)}\n"
                f"{shots}Task: {request.task}\nPlan:\n")

    def _render(self, demo: Demonstration, kind: Guide) -> str:
        if kind == "high_level":
            return "\n".join(f"{i}. {s[:1].upper() + s[1:]}." for i, s in enumerate(demo.steps, 1))
        out = []
        for s in demo.steps:
            skill = self._guide_world().parse_text(s)
            out.append(" | ".join([skill.action.lower(), *skill.objects]) if skill else s)
        return "\n".join(out)

    def _environment(self, info: GuideInfo, executor: Executor) -> str:
        if info == "none":
            return ""
        names = sorted(set(getattr(executor, "objects", None) or []))
        if info == "objects":
            return "Objects: " + ", ".join(names) + "\n"
        known = self._guide_world()
        props = known.object_properties()
        states: dict[str, set[str]] = {}
        if info == "dynamic":   # the states the executor's world reports (over ROS too)
            world = executor.world_state()
            for atom in world.facts:
                if len(atom) == 2 and atom[0] in known.state_names and atom[1] in world.classes:
                    states.setdefault(world.classes[atom[1]], set()).add(known.state_names[atom[0]])
        lines = []
        for n in names:
            extra = sorted(props.get(n, ())) + (sorted(states.get(n, ())) if info == "dynamic" else [])
            lines.append(f"{n}: {', '.join(extra)}" if extra else n)
        return "Objects:\n" + "\n".join(lines) + "\n"

    def guide(self, request: PlanRequest, kind: Guide, info: GuideInfo, executor: Executor,
              cancel: CancelToken, report: Optional[GoalReport] = None) -> str:
        if kind == "none":
            return ""
        params = SamplingParams(temperature=0.0, max_tokens=self.settings.heuristic_guide_tokens,
                                stop=("\n\n", "Task:"), seed=self.seed)
        t0 = time.perf_counter()
        text = self.llm.complete(self.guide_prompt(request, kind, info, executor), 1, params, cancel)[0].text
        if report is not None:
            report.times.llm_s += time.perf_counter() - t0
        return "\n".join(line.strip() for line in text.strip().splitlines()[:self.settings.heuristic_max_length])

    # -- search ---------------------------------------------------------------------------
    def _header(self, request: PlanRequest, guide: str, taken: Sequence[str]) -> str:
        task = request.task + (f" ({request.description})" if request.description else "")
        parts = [f"You are a household robot. Your task: {task}.\n"
                 "Walk to an item before interacting with it. Avoid repeating chains of actions.\n"]
        if guide:
            parts.append("A plan that might have missing, additional or impossible actions:\n" + guide + "\n")
        parts.append("Actions taken so far: " + ("; ".join(taken) if taken else "none") + "\n")
        return "".join(parts)

    def _ask(self, prompt: str, cancel: CancelToken, step: int, query: int, report: GoalReport,
             menu: Sequence[str]) -> str:
        """One reply to ``prompt``, which lists the lines of ``menu``; under heuristic_answer
        'constrained' the reply is one of those lines."""
        choice = ChoiceConstraint(tuple(menu)) if self.settings.heuristic_answer == "constrained" else None
        longest = max(len(line) for line in menu) + 2 if choice is not None else 0   # a token holds a character
        params = SamplingParams(temperature=self.settings.heuristic_temperature,
                                max_tokens=max(self.settings.heuristic_max_tokens, longest), stop=("\n\n",),
                                seed=self.seed + 1000 * step + query, constraint=choice)
        t0 = time.perf_counter()
        text = self.llm.chat(prompt, 1, params, cancel)[0].text
        report.times.llm_s += time.perf_counter() - t0
        search_trace(report).queries += 1
        return (choice.parse(text) if choice is not None else None) or text

    def _menu(self, indices: Sequence[int], options: Sequence[str]) -> list[str]:
        """The listed options: ``INDEX [VERB] <obj>`` as in the paper; under a constrained answer
        the action alone, so that the model chooses by the action's words, not by a number."""
        if self.settings.heuristic_answer == "constrained":
            return [options[i] for i in indices]
        return [f"{i} {options[i]}" for i in indices]

    def choose(self, request: PlanRequest, guide: str, taken: Sequence[str], options: Sequence[str],
               cancel: CancelToken, step: int, report: Optional[GoalReport] = None) -> int:
        """Index of the chosen option: candidates per chunk, then a final pick; ``report`` counts
        the queries and repeats (:func:`search_trace`)."""
        report = report if report is not None else GoalReport()
        size = self.settings.heuristic_chunk_size
        header = self._header(request, guide, taken)
        ask_line = ("Reply with the best next action, exactly as written above.\n"   # no example: a small
                    # model copied "[WALK] <kitchen>" to the kitchen counter for every task
                    if self.settings.heuristic_answer == "constrained" else
                    "Reply with the index and the action of the best next action, e.g. {3 [WALK] <kitchen>}.\n")
        candidates: list[int] = []
        query = 0
        for start in range(0, len(options), size):
            chunk = list(range(start, min(start + size, len(options))))
            menu = self._menu(chunk, options)
            reply = self._ask(f"{header}Next possible actions:\n" + "\n".join(menu) + f"\n{ask_line}",
                              cancel, step, query, report, menu)
            query += 1
            candidates += [i for i in repair(*parse_reply(reply), options, chunk) if i not in candidates]
        search_trace(report).candidates_per_step.append(len(candidates))
        if not candidates:   # no chunk gave a usable answer: ask over the first chunk again
            candidates = [self._repeat(header + "Next possible actions:\n", list(range(min(size, len(options)))),
                                       options, ask_line, "no usable answer", cancel, step, query, report)]
        if len(candidates) == 1:
            return candidates[0]
        menu = self._menu(candidates, options)
        prompt = f"{header}Choose one of these candidate actions:\n" + "\n".join(menu) + f"\n{ask_line}"
        reply = self._ask(prompt, cancel, step, query, report, menu)
        picked = accepted(reply, options, candidates)
        if picked is not None:
            return picked
        return self._repeat(header + "Choose one of these candidate actions:\n", candidates, options, ask_line,
                            reply.strip()[:200], cancel, step, query + 1, report)

    def _repeat(self, body: str, allowed: list[int], options: Sequence[str], ask_line: str, previous: str,
                cancel: CancelToken, step: int, query: int, report: GoalReport) -> int:
        """Re-ask with Borro's B.6 prefix until a reply names an allowed option exactly."""
        while True:
            trace = search_trace(report)
            if trace.repeats >= self.settings.heuristic_max_repeats:
                raise RepeatsExhausted()
            trace.repeats += 1
            menu = self._menu(allowed, options)
            reply = self._ask(REPEAT_PREFIX.format(previous=previous) + body + "\n".join(menu) + "\n" + ask_line,
                              cancel, step, query, report, menu)
            query += 1
            got = accepted(reply, options, allowed)
            if got is not None:
                return got
            previous = reply.strip()[:200]

    def _nearest_first(self, task: str, skills: list[Skill]) -> list[Skill]:
        """Under a constrained answer, ``skills`` by their words' cosine to the task, nearest
        first: a small model mostly takes the first option it is shown (SmolLM2-135M drove between
        the first two for every task), so the order is the shortlist the embeddings make."""
        if self._vectors is None or self.settings.heuristic_answer != "constrained" or len(skills) < 2:
            return skills
        words = [skill.text or action_string(skill).replace("_", " ").translate(_BRACKETS) for skill in skills]
        vectors = self._vectors.vectors([*words, task])
        cosine = vectors[:-1] @ vectors[-1]
        return [skills[i] for i in sorted(range(len(skills)), key=lambda i: -cosine[i])]

    @staticmethod
    def _applicable(executor: Executor, times: StageTimes) -> list[Skill]:
        """The skills applicable now, one per action string."""
        t0 = time.perf_counter()
        skills = list({action_string(s): s for s in executor.applicable_skills()}.values())
        times.extra["applicable_s"] = times.extra.get("applicable_s", 0.0) + time.perf_counter() - t0
        return skills

    def _cycling(self, executor: Executor, visits: dict[frozenset, int], taken: Sequence[str]) -> str:
        """Why the search stops rather than cycle ("" where it goes on): the world is back in a
        state it was in more than ``heuristic_max_revisits`` times before a choice."""
        if not self.settings.heuristic_max_revisits:
            return ""
        state = frozenset(executor.world_state().facts)   # the observation applicable_skills made
        visits[state] = visits.get(state, 0) + 1
        if visits[state] <= self.settings.heuristic_max_revisits:
            return ""
        return (f"back in a state it had been in {visits[state] - 1} times "
                f"(last action {taken[-1] if taken else 'none'}): stopped instead of cycling")

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
             executor: Optional[Executor] = None, report: Optional[GoalReport] = None,
             goal_met: Optional[Callable[[], Optional[bool]]] = None) -> PlanResult:
        """Hill-climb to the goal; ``report`` receives the time per stage, the guide
        (``stats["guide"]``) and the search's trace (``stats["search"]``). ``goal_met`` says
        whether the goal holds (default: the executor's own goal check)."""
        self.check(request, executor is not None)
        assert executor is not None   # check() refuses a goal without one
        goal_met = goal_met or executor.goal_met
        report = report if report is not None else GoalReport()
        trace = search_trace(report)
        times = report.times
        o = request.options
        guide = report.stats["guide"] = self.guide(request, o.guide or "none", o.guide_info or "none", executor,
                                                   cancel, report)
        steps: list[PlanStep] = []
        taken: list[str] = []
        visits: dict[frozenset, int] = {}   # world states seen before each choice
        reason, ending = TerminationReason.MAX_STEPS, f"guide: {o.guide or 'none'}"
        while True:
            if goal_met():
                if steps:
                    reason = TerminationReason.GOAL_REACHED
                else:   # it held before any step
                    reason, ending = TerminationReason.ALREADY_DONE, "the goal already holds; nothing to do"
                break
            if len(steps) >= self.settings.heuristic_max_length:
                ending += f"; reached the length limit of {self.settings.heuristic_max_length}"
                break
            cancel.check()
            skills = self._applicable(executor, times)
            if not skills:
                reason, ending = TerminationReason.END_OF_PLAN, "no action is applicable"
                break
            cycling = self._cycling(executor, visits, taken)
            if cycling:
                reason, ending = TerminationReason.NO_PROGRESS, f"{ending}; {cycling}"
                break
            skills = self._nearest_first(request.task, skills)
            options = [action_string(s) for s in skills]
            try:
                chosen = self.choose(request, guide, taken, options, cancel, len(steps) + 1, report)
            except RepeatsExhausted:
                reason = TerminationReason.CORRECTIONS_EXHAUSTED
                ending += f"; {self.settings.heuristic_max_repeats} queries had to be repeated"
                break
            skill = skills[chosen]
            t0 = time.perf_counter()
            result = executor.execute(skill)
            times.extra["execution_s"] = times.extra.get("execution_s", 0.0) + \
                time.perf_counter() - t0
            step = PlanStep(index=len(steps) + 1, generated_text=options[chosen], skill=skill, score=1.0,
                            executed=result.success, error=result.failure)
            steps.append(step)
            on_step(StepEvent(step=step, num_corrections=trace.repeats))
            if not result.success:   # applicable a moment ago: the executor disagrees with itself
                reason = TerminationReason.EXECUTOR_ERROR
                ending = f"an applicable action failed: {result.failure.message}"
                break
            taken.append(options[chosen])
        goal = goal_met()
        return PlanResult(termination_reason=reason, steps=steps, ending=ending, executing=True,
                          executed=bool(steps) and all(s.executed for s in steps),
                          num_corrections=trace.repeats, num_llm_calls=trace.queries, seeks_goal=True,
                          goal_status=GoalStatus.UNKNOWN if goal is None else
                          (GoalStatus.MET if goal else GoalStatus.NOT_MET))
