"""Zero-shot planners of Huang et al.: Algorithm 1 ("Translated LM") and the vanilla baseline."""
from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional, Protocol

from llm_planner_ros.core.errors import CancelToken, InvalidGoal, PlanningError
from llm_planner_ros.core.executor import ExecutionResult, Executor
from llm_planner_ros.core.planner import StepCallback
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import (
    ErrorType,
    GoalReport,
    GoalStatus,
    NoteKind,
    PlanResult,
    PlanStep,
    PreconditionFailure,
    Skill,
    StageTimes,
    StepEvent,
    TerminationReason,
)
from llm_planner_ros.llm.base import LLMBackend
from llm_planner_ros.planning import scoring
from llm_planner_ros.planning.prompt import as_step, plan_prompt
from llm_planner_ros.planning.settings import EffectiveSettings
from llm_planner_ros.translation.demonstrations import Demonstration, DemonstrationBank
from llm_planner_ros.translation.translator import SkillIndex

if TYPE_CHECKING:
    from llm_planner_ros.pet.session import PetFactory, PetSession

log = logging.getLogger(__name__)

# (scene_id, "scene" | "full", object classes the executor has or None) -> index
IndexProvider = Callable[..., SkillIndex]


@dataclass(frozen=True)
class LlmLoop:
    """How an LLM-step method plans: the whole program at once (Huang et al.'s vanilla baseline),
    or a step at a time (Algorithm 1); and, when an executed step fails, whether the plan stops
    (open loop), tries the next-best skills (Raman et al.'s re-sampling) or re-prompts with the
    error (Raman et al.)."""

    whole_program: bool = False
    on_failure: Literal["stop", "resample", "reprompt"] = "stop"


class WorldSkills(Protocol):
    """What the LLM methods read of the world's skills besides its skill bank."""

    def parse_text(self, text: str) -> Optional[Skill]:
        """A skill said as its words, or None."""

    def skill_problem(self, skill: Skill) -> str:
        """Why ``skill`` is not admissible, or ""."""

    def scene_classes(self, scene_id: str) -> Optional[set[str]]:
        """The object classes of a scene (None: not known before the executor reports them)."""


def free_text_skill(text: str, skills: WorldSkills) -> Skill:
    """An untranslated step: parsed when it happens to match a template, else kept as text
    (``action == ""``), which no executor accepts."""
    return skills.parse_text(text) or Skill(action="", text=text.strip())


def mark_untranslated(result: PlanResult, scene_id: str, skills: WorldSkills) -> None:
    """A plan-only program of the LLM's own lines (vanilla, no_translation): each line that is
    not an admissible skill of the scene gets an INVALID_ACTION error, so the plan does not
    succeed and the detail says which lines."""
    present = skills.scene_classes(scene_id) if scene_id else None
    bad = []
    for step in result.steps:
        why = skills.skill_problem(step.skill) if step.skill.action else "not a skill, the LLM's text as written"
        if not why and present is not None:
            missing = [o for o in step.skill.objects if o not in present]
            why = f"no {missing[0]!r} in scene {scene_id}" if missing else ""
        if why:
            step.error = PreconditionFailure(ErrorType.INVALID_ACTION, f"untranslated line: {why}", why)
            bad.append(str(step.index))
    if bad:
        result.note(NoteKind.UNTRANSLATED, f"untranslated: line(s) {', '.join(bad)} of {len(result.steps)} are "
                                           f"not admissible skills of the scene")


class TranslatedPlanner:
    """Algorithm 1: per step, k samples -> nearest admissible skill each -> rank by
    C + beta*P (or S_g) -> append the chosen skill's text to the prompt. Ablations: no
    translation, fixed example, no trajectory correction."""

    def __init__(self, llm: LLMBackend, demos: DemonstrationBank, index_for: IndexProvider,
                 skills: WorldSkills, defaults: PlannerSettings, pet: Optional[PetFactory] = None) -> None:
        self.llm = llm
        self.pet = pet
        self.demos = demos
        self.index_for = index_for
        self.skills = skills
        self.defaults = defaults

    def check(self, request: PlanRequest, executing: bool) -> None:
        """Raise if the goal asks for what this planner cannot do (before anything runs)."""
        o = request.options
        if (o.plan_subtasks or o.track_subtasks or o.eliminate_objects) and self.pet is None:
            raise PlanningError("options: plan_subtasks / track_subtasks / eliminate_objects need the PET "
                                "components, which this planner was built without")
        if o.track_subtasks and not executing:
            raise InvalidGoal("options.track_subtasks: the tracker reads the executor's observations, so it "
                              "needs execute=true")

    def choose_example(self, request: PlanRequest, s: EffectiveSettings) -> Demonstration:
        exclude = ([request.task] if s.base.hold_out_query_task else []) + list(request.options.hold_out_tasks)
        if s.fixed_example:
            return self.demos.fixed(s.base.fixed_examples, exclude)
        return self.demos.nearest(request.task, 1, exclude)[0]

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
             executor: Optional[Executor] = None, report: Optional[GoalReport] = None,
             loop: LlmLoop = LlmLoop()) -> PlanResult:
        """Plan as ``loop`` says; with an ``executor``, execute each step as it is chosen and, when
        one fails, stop or correct it as ``loop.on_failure`` says. ``report`` receives the time per
        stage and the PET session (``stats["pet"]``)."""
        s = EffectiveSettings.resolve(self.defaults, request.options)
        report = report if report is not None else GoalReport()
        if loop.whole_program:
            result = self._vanilla(request, s, on_step, cancel, executor, report)
        else:
            result = self._translated(request, s, on_step, cancel, executor, report, loop.on_failure)
        if executor is None and (loop.whole_program or s.no_translation):
            mark_untranslated(result, request.scene_id, self.skills)
        return result

    # -- Algorithm 1, open or closed loop ---------------------------------------------------
    def _translated(self, request: PlanRequest, s: EffectiveSettings, on_step: StepCallback,
                    cancel: CancelToken, executor: Optional[Executor], report: GoalReport,
                    on_failure: str) -> PlanResult:
        return _StepsRun(self, request, s, on_step, cancel, executor, report, on_failure).run()

    def _pet_session(self, request: PlanRequest, s: EffectiveSettings, cancel: CancelToken,
                     executor: Optional[Executor], times: StageTimes) -> Optional[PetSession]:
        o = request.options
        if not (o.plan_subtasks or o.track_subtasks or o.eliminate_objects):
            return None
        self.check(request, executor is not None)
        if self.pet is None:
            raise InvalidGoal("PET options need a PET factory; this planner was built without one")
        t0 = time.perf_counter()
        session = self.pet.session(request, s.base.hold_out_query_task, s.base.seed, cancel)
        times.llm_s += time.perf_counter() - t0
        return session

    @staticmethod
    def _correction(n: int, step: PlanStep, result: ExecutionResult, level: str) -> str:
        """Raman et al.: the failed step, then 'Error: <msg>. A correct step would be to Step n:'."""
        if level == "notion":
            message = "Task failed"
        elif level == "inference":
            message = f"I cannot {step.skill.text}"
        else:
            message = f"I cannot {step.skill.text} because {result.failure.cause}"
        return (f" {as_step(step.skill.text or step.generated_text)}\nError: {message}. "
                f"A correct step would be to Step {n}:")

    def _rank(self, n: int, live, index: Optional[SkillIndex], s: EffectiveSettings,
              used: set[Skill], failed: set[Skill], top_n: int) -> list[tuple[PlanStep, float]]:
        """Distinct candidate steps, best first. A skill already in the plan, or already failed
        for this step, scores -inf (Huang et al.'s reference code: -100)."""
        b = s.base
        if index is None:   # w/o translation: the most likely sample, as written
            i, c = max(live, key=lambda ic: (_finite(ic[1].mean_logprob), -ic[0]))
            text = c.text.strip()
            sc = scoring.score(b.ranking, 1.0, c.mean_logprob, b.beta)
            return [(PlanStep(index=n, generated_text=text, skill=free_text_skill(text, self.skills),
                              score=sc, similarity=math.nan, mean_logprob=c.mean_logprob), sc)]
        matches = index.nearest([c.text.strip() for _, c in live], top_n=top_n)
        candidates = []
        for (i, c), row in zip(live, matches):
            for m in row:
                value = scoring.score(b.ranking, m.similarity, c.mean_logprob, b.beta)
                if m.skill in failed or (m.skill in used and not b.allow_repeated_skills):
                    value = -math.inf
                candidates.append(scoring.Candidate(i, c.text.strip(), m.index, m.similarity, c.mean_logprob, value))
        out: list[tuple[PlanStep, float]] = []
        seen: set[Skill] = set()
        for cand in scoring.rank(candidates):   # each skill once, at its best candidate
            skill = index.bank.skills[cand.skill_index]
            if skill not in seen:
                seen.add(skill)
                out.append((PlanStep(index=n, generated_text=cand.text, skill=skill, score=cand.score,
                                     similarity=cand.similarity, mean_logprob=cand.mean_logprob), cand.score))
        return out

    # -- Vanilla baseline -------------------------------------------------------------------
    _STEP_LINE = re.compile(r"^\s*Step\s*\d+\s*:\s*(.*)$", re.IGNORECASE)

    def _vanilla(self, request: PlanRequest, s: EffectiveSettings, on_step: StepCallback,
                 cancel: CancelToken, executor: Optional[Executor], report: GoalReport) -> PlanResult:
        """Best of k full programs by mean log-prob (Huang et al. Eq. 1), untranslated."""
        b = s.base
        times = report.times
        example = self.choose_example(request, s)
        prompt = plan_prompt([example], request.task, request.description, [])
        t0 = time.perf_counter()
        programs = self.llm.complete(prompt, b.num_samples,
                                     s.sampling(b.max_program_tokens, stop=("\n\n", "Task:")), cancel)
        times.llm_s += time.perf_counter() - t0
        best = max(enumerate(programs), key=lambda ic: (_finite(ic[1].mean_logprob), -ic[0]))[1]
        lines = ("Step 1:" + best.text).splitlines()
        steps: list[PlanStep] = []
        for line in lines:
            m = self._STEP_LINE.match(line)
            text = (m.group(1) if m else line).strip()
            if scoring.is_empty_sample(text) or len(steps) >= b.max_steps:
                break
            step = PlanStep(index=len(steps) + 1, generated_text=text,
                            skill=free_text_skill(text, self.skills), score=best.mean_logprob,
                            similarity=math.nan, mean_logprob=best.mean_logprob)
            steps.append(step)
        reason = TerminationReason.MAX_STEPS if len(steps) >= b.max_steps else TerminationReason.END_OF_PLAN
        ending = f"example: {example.task!r}"
        for i, step in enumerate(steps):   # open loop: execute as written, stop at the first failure
            cancel.check()
            if executor is not None:
                result = executor.execute(step.skill)
                step.executed, step.error = result.success, result.failure
            on_step(StepEvent(step=step, num_corrections=0))
            if executor is not None and not step.executed:
                del steps[i + 1:]
                reason = TerminationReason.CORRECTIONS_EXHAUSTED
                ending = f"step {step.index} failed in open loop: {step.error.message}"
                break
        executed = executor is not None and bool(steps) and all(st.executed for st in steps)
        return PlanResult(termination_reason=reason, steps=steps, num_llm_calls=1, ending=ending,
                          executed=executed, goal_status=_goal_status(executor), executing=executor is not None)


def _finite(x: float) -> float:
    return -math.inf if math.isnan(x) else x


def _goal_status(executor: Optional[Executor]) -> GoalStatus:
    goal = executor.goal_met() if executor is not None else None
    return GoalStatus.UNKNOWN if goal is None else (GoalStatus.MET if goal else GoalStatus.NOT_MET)


class _StepsRun:
    """One goal of Algorithm 1 as named steps: each step generated, ranked and translated
    (:meth:`sample`), chosen and executed (:meth:`choose`), corrected on failure as the loop says
    (:meth:`corrected`), until the plan ends (:meth:`run`)."""

    def __init__(self, planner: TranslatedPlanner, request: PlanRequest, s: EffectiveSettings,
                 on_step: StepCallback, cancel: CancelToken, executor: Optional[Executor], report: GoalReport,
                 on_failure: str) -> None:
        self.planner, self.request, self.s, self.on_step, self.cancel = planner, request, s, on_step, cancel
        self.executor, self.report = executor, report
        self.mode = on_failure if executor is not None else None
        times = self.times = report.times
        t0 = time.perf_counter()
        self.example = planner.choose_example(request, s)
        times.extra["example_s"] = time.perf_counter() - t0
        self.pet = planner._pet_session(request, s, cancel, executor, times)
        if self.pet is not None:
            report.stats["pet"] = self.pet
        objects = getattr(executor, "objects", None) if executor is not None else None
        t0 = time.perf_counter()
        self.index = None if s.no_translation else planner.index_for(request.scene_id, s.base.bank, objects)
        times.extra["bank_s"] = time.perf_counter() - t0   # the skill bank's index (embedded once, then cached)
        self.prompt_steps: list[str] = []
        self.steps: list[PlanStep] = []
        self.calls = self.corrections = 0
        self.reason, self.ending = TerminationReason.MAX_STEPS, f"example: {self.example.task!r}"

    def run(self) -> PlanResult:
        b, pet, executor = self.s.base, self.pet, self.executor
        for n in range(1, b.max_steps + 1):
            failed: list[tuple[PlanStep, ExecutionResult]] = []
            step = self.choose(n, failed)
            if step is None:                # the LLM ended the plan, possibly while correcting
                if failed:
                    self.ending += (f"; step {n} was dropped after {len(failed)} failed attempt(s), last: "
                                    f"{failed[-1][0].skill.script()}: {failed[-1][1].failure.cause}")
                break
            self.steps.append(step)
            if executor is not None and not step.executed:   # the plan failed at this step
                self.on_step(StepEvent(step=step, num_corrections=self.corrections))
                break
            self.prompt_steps.append(step.generated_text if (self.s.no_trajectory_correction or self.index is None)
                                     else step.skill.text)
            self.on_step(StepEvent(step=step, num_corrections=self.corrections, subtask=pet.active() if pet else ""))
            if step.score < b.epsilon:      # append_before_break
                self.reason = TerminationReason.LOW_SCORE
                break
        if executor is not None and self.reason is not TerminationReason.CORRECTIONS_EXHAUSTED \
                and executor.goal_met():
            self.reason = TerminationReason.GOAL_REACHED
        steps = self.steps
        return PlanResult(termination_reason=self.reason, steps=steps, num_llm_calls=self.calls, ending=self.ending,
                          executed=executor is not None and bool(steps) and all(st.executed for st in steps),
                          num_corrections=self.corrections, subtasks=pet.subtasks if pet else [],
                          goal_status=_goal_status(executor), executing=executor is not None)

    def sample(self, n: int, failed: list[tuple[PlanStep, ExecutionResult]]) -> Optional[list[tuple[PlanStep, float]]]:
        """Step ``n``'s samples (the failed attempts in the prompt, as re-prompting writes them),
        ranked after translation; None where the samples are mostly empty (the plan ends)."""
        s, b, pet, request = self.s, self.s.base, self.pet, self.request
        description = pet.description(request.description) if pet else request.description
        prompt = plan_prompt([self.example], request.task, description, self.prompt_steps)
        prompt += "".join(self.planner._correction(n, st, r, b.correction_level) for st, r in failed)
        t0 = time.perf_counter()
        samples = self.planner.llm.complete(prompt, b.num_samples,
                                            s.sampling(b.max_step_tokens, seed_offset=1000 * n + len(failed)),
                                            self.cancel)
        self.times.llm_s += time.perf_counter() - t0
        self.calls += 1
        if scoring.mostly_empty([c.text.strip() for c in samples]):
            return None
        live = [(i, c) for i, c in enumerate(samples) if not scoring.is_empty_sample(c.text)]
        t0 = time.perf_counter()
        ranked = self.planner._rank(n, live, pet.index(self.index) if pet else self.index, s,
                                    used={st.skill for st in self.steps}, failed={st.skill for st, _ in failed},
                                    top_n=b.resample_top_k if self.mode == "resample" else 1)
        self.times.translation_s += time.perf_counter() - t0
        return ranked

    def choose(self, n: int, failed: list[tuple[PlanStep, ExecutionResult]]) -> Optional[PlanStep]:
        """Step ``n``: the best-ranked skill, executed where there is an executor and corrected as
        the loop says when it fails; None where the plan ends before it (``reason`` says why)."""
        b, executor = self.s.base, self.executor
        ranked: list[tuple[PlanStep, float]] = []
        while True:
            self.cancel.check()
            if not ranked or self.mode == "reprompt":
                sampled = self.sample(n, failed)
                if sampled is None:
                    self.reason = TerminationReason.END_OF_PLAN
                    return None
                ranked = sampled
            if not ranked or ranked[0][1] == -math.inf:   # only repeated or failed skills left
                self.reason = TerminationReason.LOW_SCORE
                return None
            step, score = ranked.pop(0)
            if score < b.epsilon and not (b.append_before_break and executor is None):
                self.reason = TerminationReason.LOW_SCORE
                return None
            if executor is None:
                return step
            t0 = time.perf_counter()
            result = executor.execute(step.skill)
            self.times.extra["execution_s"] = self.times.extra.get("execution_s", 0.0) + time.perf_counter() - t0
            step.corrections = len(failed)
            if result.success:
                step.executed = True
                if self.pet is not None:
                    step.subtask_index = self.pet.pointer
                    try:
                        self.pet.observe(result.observation)
                    except BaseException:   # a stop or an LLM error in the tracker: the step ran all the same
                        self.on_step(StepEvent(step=step, num_corrections=self.corrections, subtask=self.pet.active()))
                        raise
                return step
            step.error = result.failure
            failed.append((step, result))
            if not self.corrected(n, failed, ranked):
                return step

    def corrected(self, n: int, failed: list[tuple[PlanStep, ExecutionResult]],
                  ranked: list[tuple[PlanStep, float]]) -> bool:
        """After a failed attempt at step ``n``: whether the loop tries again (re-sampling keeps
        the ranked skills not failed yet in ``ranked``); where it does not, ``reason`` and ``ending``
        say why the plan ends."""
        b, message = self.s.base, failed[-1][1].failure.message
        if self.mode == "stop":
            self.reason, self.ending = TerminationReason.CORRECTIONS_EXHAUSTED, \
                f"step {n} failed in open loop: {message}"
            return False
        self.corrections += 1
        if len(failed) > b.max_corrections_per_step or self.corrections > b.max_corrections_per_plan:
            self.reason = TerminationReason.CORRECTIONS_EXHAUSTED
            self.ending = (f"step {n} failed {len(failed)} times; last: {message}"
                           if len(failed) > b.max_corrections_per_step else
                           f"the plan used its {b.max_corrections_per_plan} corrections; last: {message}")
            return False
        if self.mode == "resample":
            ranked[:] = [(st, sc) for st, sc in ranked if st.skill not in {f.skill for f, _ in failed}]
            if not ranked:
                self.reason, self.ending = TerminationReason.CORRECTIONS_EXHAUSTED, \
                    f"none of the top {b.resample_top_k} skills for step {n} executes"
                return False
        return True
