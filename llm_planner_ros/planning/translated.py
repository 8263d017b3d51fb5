"""Zero-shot planners of Huang et al.: Algorithm 1 ("Translated LM") and the vanilla baseline."""
from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.planner import StepCallback
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import Method, PlanResult, PlanStep, Skill, StepEvent, TerminationReason
from llm_planner_ros.llm.base import LLMBackend
from llm_planner_ros.planning import scoring
from llm_planner_ros.planning.examples import Demonstration, DemonstrationBank
from llm_planner_ros.planning.prompt import plan_prompt
from llm_planner_ros.planning.settings import EffectiveSettings, PlannerSettings
from llm_planner_ros.skills.vocabulary import SkillParser
from llm_planner_ros.translation.translator import SkillIndex

log = logging.getLogger(__name__)

IndexProvider = Callable[[str, str], SkillIndex]   # (scene_id, "scene" | "full") -> index


def free_text_skill(text: str, parser: SkillParser) -> Skill:
    """An untranslated step: parsed when it happens to match a template, else kept as text
    (``action == ""``), which no executor accepts."""
    return parser.parse_text(text) or Skill(action="", text=text.strip())


@dataclass
class StageTimes:
    """Wall time per stage, for the benchmark's per-goal split."""

    llm_s: float = 0.0
    translation_s: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


class TranslatedPlanner:
    """Algorithm 1: per step, k samples -> nearest admissible skill each -> rank by
    C + beta*P (or S_g) -> append the chosen skill's text to the prompt. Ablations: no
    translation, fixed example, no trajectory correction."""

    def __init__(self, llm: LLMBackend, demos: DemonstrationBank, index_for: IndexProvider,
                 parser: SkillParser, defaults: PlannerSettings) -> None:
        self.llm = llm
        self.demos = demos
        self.index_for = index_for
        self.parser = parser
        self.defaults = defaults
        self.last_times = StageTimes()

    def choose_example(self, request: PlanRequest, s: EffectiveSettings) -> Demonstration:
        exclude = [request.task] if s.base.hold_out_query_task else []
        if s.fixed_example:
            return self.demos.fixed(s.base.fixed_examples, exclude)
        return self.demos.nearest(request.task, 1, exclude)[0]

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken) -> PlanResult:
        s = EffectiveSettings.resolve(self.defaults, request.options)
        if request.method is Method.VANILLA:
            return self._vanilla(request, s, on_step, cancel)
        return self._translated(request, s, on_step, cancel)

    # -- Algorithm 1 ------------------------------------------------------------------------
    def _translated(self, request: PlanRequest, s: EffectiveSettings, on_step: StepCallback,
                    cancel: CancelToken) -> PlanResult:
        b = s.base
        times = self.last_times = StageTimes()
        example = self.choose_example(request, s)
        index = None if s.no_translation else self.index_for(request.scene_id, b.bank)
        prompt_steps: list[str] = []
        steps: list[PlanStep] = []
        calls = 0
        reason = TerminationReason.MAX_STEPS
        for n in range(1, b.max_steps + 1):
            cancel.check()
            prompt = plan_prompt([example], request.task, request.description, prompt_steps)
            t0 = time.perf_counter()
            samples = self.llm.complete(prompt, b.num_samples, s.sampling(b.max_step_tokens, seed_offset=1000 * n),
                                        cancel)
            times.llm_s += time.perf_counter() - t0
            calls += 1
            texts = [c.text.strip() for c in samples]
            if scoring.mostly_empty(texts):
                reason = TerminationReason.END_OF_PLAN
                break
            live = [(i, c) for i, c in enumerate(samples) if not scoring.is_empty_sample(c.text)]
            t0 = time.perf_counter()
            step, score = self._choose(n, live, index, s, used={st.skill for st in steps})
            times.translation_s += time.perf_counter() - t0
            if score == -math.inf:   # every sample maps to a skill already in the plan
                reason = TerminationReason.LOW_SCORE
                break
            if score < b.epsilon and not b.append_before_break:
                reason = TerminationReason.LOW_SCORE
                break
            steps.append(step)
            prompt_steps.append(step.generated_text if (s.no_trajectory_correction or index is None)
                                else step.skill.text)
            on_step(StepEvent(step=step, num_corrections=0))
            if score < b.epsilon:
                reason = TerminationReason.LOW_SCORE
                break
        return PlanResult(termination_reason=reason, steps=steps, num_llm_calls=calls,
                          detail=f"example: {example.task!r}")

    def _choose(self, n: int, live, index: Optional[SkillIndex], s: EffectiveSettings,
                used: set[Skill]) -> tuple[PlanStep, float]:
        b = s.base
        if index is None:   # w/o translation: the most likely sample, as written
            i, c = max(live, key=lambda ic: (_finite(ic[1].mean_logprob), -ic[0]))
            text = c.text.strip()
            sc = scoring.score(b.ranking, 1.0, c.mean_logprob, b.beta)
            return PlanStep(index=n, generated_text=text, skill=free_text_skill(text, self.parser),
                            score=sc, similarity=math.nan, mean_logprob=c.mean_logprob), sc
        matches = index.nearest([c.text.strip() for _, c in live], top_n=1)
        candidates = []
        for (i, c), m in zip(live, matches):
            value = scoring.score(b.ranking, m[0].similarity, c.mean_logprob, b.beta)
            if not b.allow_repeated_skills and m[0].skill in used:
                value = -math.inf
            candidates.append(scoring.Candidate(i, c.text.strip(), m[0].index, m[0].similarity,
                                                c.mean_logprob, value))
        best = scoring.best_candidate(candidates)
        assert best is not None
        return PlanStep(index=n, generated_text=best.text, skill=index.bank.skills[best.skill_index],
                        score=best.score, similarity=best.similarity,
                        mean_logprob=best.mean_logprob), best.score

    # -- Vanilla baseline -------------------------------------------------------------------
    _STEP_LINE = re.compile(r"^\s*Step\s*\d+\s*:\s*(.*)$", re.IGNORECASE)

    def _vanilla(self, request: PlanRequest, s: EffectiveSettings, on_step: StepCallback,
                 cancel: CancelToken) -> PlanResult:
        """Best of k full programs by mean log-prob (Huang et al. Eq. 1), untranslated."""
        b = s.base
        times = self.last_times = StageTimes()
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
                            skill=free_text_skill(text, self.parser), score=best.mean_logprob,
                            similarity=math.nan, mean_logprob=best.mean_logprob)
            steps.append(step)
            on_step(StepEvent(step=step, num_corrections=0))
        reason = TerminationReason.MAX_STEPS if len(steps) >= b.max_steps else TerminationReason.END_OF_PLAN
        return PlanResult(termination_reason=reason, steps=steps, num_llm_calls=1,
                          detail=f"example: {example.task!r}")


def _finite(x: float) -> float:
    return -math.inf if math.isnan(x) else x
