"""Prompt layout of Huang et al.: ``Task: ...`` [``Description: ...``] then ``Step n: ...`` lines."""
from __future__ import annotations

from collections.abc import Sequence

from llm_planner_ros.translation.demonstrations import Demonstration


def task_header(task: str, description: str = "") -> str:
    return f"Task: {task}\n" + (f"Description: {description}\n" if description else "")


def as_step(text: str) -> str:
    """Steps are written capitalised, as in Huang et al.'s prompts ("Walk to kitchen")."""
    return text[:1].upper() + text[1:]


def format_demonstration(demo: Demonstration, with_description: bool) -> str:
    steps = "".join(f"Step {i}: {as_step(s)}\n" for i, s in enumerate(demo.steps, 1))
    return task_header(demo.task, demo.description if with_description else "") + steps


def plan_prompt(examples: Sequence[Demonstration], task: str, description: str,
                steps: Sequence[str]) -> str:
    """The prompt for the next step: examples, the query, the steps so far, ``Step n:``."""
    with_desc = bool(description)
    parts = [format_demonstration(d, with_desc) + "\n" for d in examples]
    parts.append(task_header(task, description))
    parts.extend(f"Step {i}: {as_step(s)}\n" for i, s in enumerate(steps, 1))
    parts.append(f"Step {len(steps) + 1}:")
    return "".join(parts)
