"""PET's Plan: "What are the middle steps required to T?", answered with the top-5 most similar
demonstrations as question/answer examples."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.llm.base import LLMBackend, SamplingParams
from llm_planner_ros.translation.demonstrations import Demonstration, DemonstrationBank

# Navigation steps are not subtasks: PET's subtasks name what is done to objects
# ("take an apple, heat the apple, place the apple in/on fridge").
_NAVIGATION = ("walk to ", "run to ", "find ", "turn to ", "look at ", "point at ")
MAX_SUBTASKS = 8


def question(task: str) -> str:
    return f"Q: What are the middle steps required to {task[:1].lower() + task[1:]}?\nA:"


def demonstration_subtasks(demo: Demonstration) -> list[str]:
    """A human program as subtasks: its non-navigation steps, consecutive repeats merged."""
    out: list[str] = []
    for step in demo.steps:
        text = step.strip().lower()
        if text and not text.startswith(_NAVIGATION) and (not out or out[-1] != text):
            out.append(text)
    return out[:MAX_SUBTASKS]


def parse_subtasks(text: str) -> list[str]:
    """A comma-separated answer, up to its first full stop, as subtasks (also split on ';' and
    ' then ')."""
    parts = re.split(r",|;|\bthen\b", text.split("\n")[0].split(".")[0])
    out: list[str] = []
    for part in parts:
        part = part.strip(" .").lower()
        part = re.sub(r"^(and|finally|first)\s+", "", part)
        if part and part not in out:
            out.append(part)
    return out[:MAX_SUBTASKS]


class SubtaskPlanner:
    def __init__(self, llm: LLMBackend, demos: DemonstrationBank, num_examples: int = 5,
                 max_tokens: int = 64) -> None:
        self.llm = llm
        self.demos = demos
        self.num_examples = num_examples
        self.max_tokens = max_tokens

    def prompt(self, task: str, exclude_tasks: Sequence[str] = ()) -> str:
        ranked = self.demos.nearest(task, len(self.demos.demos), exclude_tasks)
        examples = [d for d in ranked if demonstration_subtasks(d)][:self.num_examples]
        shots = [f"{question(d.task)} {', '.join(demonstration_subtasks(d))}.\n\n" for d in examples]
        return "".join(shots) + question(task)

    def plan(self, task: str, exclude_tasks: Sequence[str] = (), seed: int = 0,
             cancel: Optional[CancelToken] = None) -> list[str]:
        """The subtasks of ``task``; empty when the LLM gives none (the tracker then follows the
        whole task)."""
        params = SamplingParams(temperature=0.0, max_tokens=self.max_tokens, stop=("\n",), seed=seed)
        text = self.llm.complete(self.prompt(task, exclude_tasks), 1, params, cancel)[0].text
        return parse_subtasks(text)
