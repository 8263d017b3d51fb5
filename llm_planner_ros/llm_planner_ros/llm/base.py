"""The LLM contract used by every planning method."""
from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

from llm_planner_ros.core.errors import CancelToken, LLMError
from llm_planner_ros.llm.constraint import Constraint


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.6
    top_p: float = 0.9
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repetition_penalty: float = 1.0   # Hugging Face / llama.cpp style; 1.0 = off
    max_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    seed: Optional[int] = None
    logprobs: bool = False   # a server is asked for token log-probs only where a ranking uses them
    stop_at_repeat: bool = False   # end where a sentence is said again (split_sentences drops the rest)
    # write only admitted literals (a grammar or JSON schema) where the backend can; read the
    # answer with constraint.parse either way (Completion.constrained says which it was)
    constraint: Optional[Constraint] = None


@dataclass(frozen=True)
class Completion:
    text: str
    token_logprobs: Optional[tuple[float, ...]] = None  # None where the backend gives none
    finish_reason: str = "stop"
    constrained: bool = False   # written under params.constraint (False: a plain answer, to validate)

    @property
    def mean_logprob(self) -> float:
        """Mean token log-prob (Huang et al. Eq. 1); NaN without log-probs or tokens."""
        if not self.token_logprobs:
            return math.nan
        return sum(self.token_logprobs) / len(self.token_logprobs)


@dataclass
class UsageStats:
    calls: int = 0
    completions: int = 0
    tokens: int = 0
    seconds: float = 0.0
    prompt_tokens: int = 0       # prompt tokens the goal asked for
    prompt_evaluated: int = 0    # of those, evaluated (the rest came from cached prompt states)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def record(self, completions: list[Completion], started: float) -> None:
        self.calls += 1
        self.completions += len(completions)
        self.tokens += sum(len(c.token_logprobs or ()) or len(c.text.split()) for c in completions)
        self.seconds += time.perf_counter() - started


class LLMBackend(Protocol):
    name: str
    has_logprobs: bool
    stats: UsageStats

    def complete(self, prompt: str, n: int, params: SamplingParams,
                 cancel: Optional[CancelToken] = None) -> list[Completion]:
        """``n`` independent samples continuing ``prompt``, each cut at the first stop string."""
        ...

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...],
                            cancel: Optional[CancelToken] = None) -> list[float]:
        """log p(candidate's first token | prompt) for each candidate (yes/no questions); a
        stopped ``cancel`` raises its error."""
        ...

    def continuation_logprobs(self, prompt: str, continuations: Sequence[str],
                              cancel: Optional[CancelToken] = None) -> list[tuple[float, ...]]:
        """Each continuation's token log-probs after ``prompt`` (the LLM judges rather than writes)."""
        ...

    def chat(self, user: str, n: int, params: SamplingParams,
             cancel: Optional[CancelToken] = None) -> list[Completion]:
        """``n`` answers to one user message (an instruction-following prompt)."""
        ...


class NoLLM:
    """A planner without a language model (e.g. one that runs only method pddl): a method that
    asks it fails with an LLMError saying so."""

    name = "none"
    has_logprobs = False

    def __init__(self) -> None:
        self.stats = UsageStats()

    def _none(self, *args, **kwargs):
        raise LLMError("this planner has no language model; only a method that needs none (pddl) can run")

    complete = next_token_logprobs = continuation_logprobs = chat = _none


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


SENTENCE_END = re.compile(r"[.;!\n]")


def _unrepeated(parts: Sequence[str]) -> tuple[list[str], bool]:
    """The sentences among ``parts`` (stripped, longer than two characters) up to the first one
    said again, and whether one was."""
    out: list[str] = []
    seen: set[str] = set()
    for part in parts:
        said = part.strip()
        if len(said) <= 2:
            continue
        if said.lower() in seen:
            return out, True
        seen.add(said.lower())
        out.append(said)
    return out, False


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, up to the first one said again (a small model's loop)."""
    return [said + "." for said in _unrepeated(SENTENCE_END.split(text))[0]]


def said_again(text: str) -> bool:
    """Whether a finished sentence of ``text`` repeats an earlier one: where :func:`split_sentences`
    stops, so that decoding may stop there too."""
    return _unrepeated(SENTENCE_END.split(text)[:-1])[1]


YES = (" Yes", " yes", "Yes", "yes")
NO = (" No", " no", "No", "no")


PLAIN_TURN = "{user}\nAnswer:"


def user_turn(llm: LLMBackend, user: str) -> str:
    """``user`` as one turn in the layout the backend's model was tuned on (its registry line's
    ``turn``, which an embedded backend carries), else as plain text ending "Answer:"."""
    return (getattr(llm, "turn", "") or PLAIN_TURN).replace("{user}", user)


def yes_probability(llm: LLMBackend, prompt: str, cancel: Optional[CancelToken] = None) -> float:
    """p(yes) / (p(yes) + p(no)) for the answer that follows ``prompt``; of the spellings with
    and without a leading space or capital, the likeliest stands for each answer."""
    lps = llm.next_token_logprobs(prompt, YES + NO, cancel)
    yes, no = max(lps[:len(YES)]), max(lps[len(YES):])
    if yes == no == -math.inf:
        return 0.5
    return 1.0 / (1.0 + math.exp(min(no - yes, 700.0)))
