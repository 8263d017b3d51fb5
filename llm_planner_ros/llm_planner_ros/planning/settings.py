"""The planner's settings for one goal: its defaults with the goal's overrides applied."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from llm_planner_ros.core.request import MethodOptions
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.llm.base import SamplingParams


class EffectiveSettings(BaseModel):
    """Settings for one goal: defaults with the goal's overrides applied."""

    model_config = ConfigDict(frozen=True)

    base: PlannerSettings
    no_translation: bool = False
    fixed_example: bool = False
    no_trajectory_correction: bool = False

    @classmethod
    def resolve(cls, defaults: PlannerSettings, options: MethodOptions) -> EffectiveSettings:
        overrides = {k: v for k, v in options.model_dump().items()
                     if v is not None and k in PlannerSettings.model_fields}
        return cls(base=defaults.model_copy(update=overrides),
                   no_translation=options.no_translation, fixed_example=options.fixed_example,
                   no_trajectory_correction=options.no_trajectory_correction)

    def sampling(self, max_tokens: int, stop: tuple[str, ...] = ("\n",), seed_offset: int = 0) -> SamplingParams:
        b = self.base
        return SamplingParams(temperature=b.temperature, top_p=b.top_p,
                              frequency_penalty=b.frequency_penalty, presence_penalty=b.presence_penalty,
                              repetition_penalty=b.repetition_penalty, max_tokens=max_tokens, stop=stop,
                              seed=b.seed + seed_offset, logprobs=True)   # the ranking's mean log-prob
