"""The model writes the goal in the world's own terms: literals such as ``(on television)``, under
a grammar built at run time from the conditions the world admits (a GBNF grammar for the
embedded model, the server's grammar or JSON schema on the OpenAI-compatible path, a validated
plain answer where the server has neither). The demonstrations are other tasks' goals in the same
form, so the prompt needs no list of predicates: the grammar holds the world."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.interpretation.conditions import Condition, ConditionIndex
from llm_planner_ros.llm.base import LLMBackend, SamplingParams
from llm_planner_ros.llm.constraint import LiteralConstraint


def writable(index: ConditionIndex) -> list[str]:
    """The literals the model may write: every literal of the scene's conditions."""
    return list(dict.fromkeys(lit for c in index.conditions for lit in c.literals))


@dataclass
class LiteralWriter:
    llm: LLMBackend
    max_literals: int = 4
    max_tokens: int = 64

    def prompt(self, task: str, examples: Sequence[tuple[str, Sequence[str]]]) -> str:
        parts = ["Write the goal of each household task as literals.\n"]
        parts += [f"Task: {name}\nGoal: {' '.join(goal)}\n" for name, goal in reversed(examples) if goal]
        parts.append(f"Task: {task}\nGoal:")
        return "\n".join(parts)

    def write(self, task: str, index: ConditionIndex, examples, cancel: Optional[CancelToken] = None
              ) -> tuple[list[str], list[Condition]]:
        """(the literals written, their conditions). ``examples``: demonstrations whose sentences
        are said as literals where the scene has them."""
        shown = [(d.task, [lit for c in (index.by_text(s) for s in d.sentences) if c is not None
                           for lit in c.literals]) for d in examples]
        literals = writable(index)
        if not literals:   # a world whose conditions are actions alone, or none: no grammar to write under
            return [], []
        constraint = LiteralConstraint.of(literals, max_items=self.max_literals)
        params = SamplingParams(temperature=0.0, max_tokens=self.max_tokens, stop=("\n",), constraint=constraint)
        text = self.llm.complete(self.prompt(task, shown), 1, params, cancel or CancelToken())[0].text
        kept = constraint.parse(text)
        said = set(kept)
        return kept, [c for c in index.conditions if c.literals and said.issuperset(c.literals)]
