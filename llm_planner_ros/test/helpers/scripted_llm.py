"""Unit-test double of an LLM backend: returns scripted samples per step (no model).
The real backends are exercised in test_llm_backends.py and test_planner_e2e.py."""
from __future__ import annotations

import re
from collections.abc import Callable

from llm_planner_ros.llm.base import Completion, SamplingParams, UsageStats


class ScriptedLLM:
    name = "scripted"
    has_logprobs = True

    def __init__(self, steps: list[list[tuple[str, float]]] | Callable[[str], list[tuple[str, float]]]) -> None:
        self.steps = steps
        self.prompts: list[str] = []
        self.stats = UsageStats()

    def complete(self, prompt: str, n: int, params: SamplingParams, cancel=None) -> list[Completion]:
        if cancel is not None:
            cancel.check()
        self.prompts.append(prompt)
        if callable(self.steps):
            samples = self.steps(prompt)
        else:
            step = int(re.findall(r"Step (\d+):$", prompt)[0]) if prompt.endswith(":") else 1
            samples = self.steps[step - 1] if step - 1 < len(self.steps) else [("", -0.1)] * n
        return [Completion(text=f" {t}", token_logprobs=(lp,) * max(1, len(t.split())))
                for t, lp in (samples * n)[:n]]


class ScriptedChat:
    """Unit-test double for chat-style queries: ``answer(prompt)`` gives each reply."""

    name = "scripted-chat"
    has_logprobs = False

    def __init__(self, answer: Callable[[str], str], guide: str = "") -> None:
        self.answer = answer
        self.guide = guide
        self.prompts: list[str] = []
        self.params: list[SamplingParams] = []
        self.stats = UsageStats()

    def chat(self, user: str, n: int, params: SamplingParams, cancel=None) -> list[Completion]:
        if cancel is not None:
            cancel.check()
        self.prompts.append(user)
        self.params.append(params)
        return [Completion(text=self.answer(user))] * n

    def complete(self, prompt: str, n: int, params: SamplingParams, cancel=None) -> list[Completion]:
        self.prompts.append(prompt)
        return [Completion(text=self.guide)] * n


def translated_planner(llm, demos, index, **settings):
    """A TranslatedPlanner over one fixed skill index, with test settings."""
    from llm_planner_ros.core.settings import PlannerSettings
    from llm_planner_ros.planning.translated import TranslatedPlanner
    from llm_planner_ros.planning.worlds import load_world

    return TranslatedPlanner(llm, demos, lambda scene, kind, objects=None: index, load_world(),
                             PlannerSettings(**settings))
