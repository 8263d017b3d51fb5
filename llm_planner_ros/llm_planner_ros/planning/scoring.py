"""Ranking and termination maths (Huang et al. Eq. 3; Raman et al. S_g)."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Optional

Ranking = Literal["huang", "raman"]
_ENGLISH = re.compile(r"[A-Za-z]")


def huang_score(similarity: float, mean_logprob: float, beta: float) -> float:
    """S_w = C + beta * P. Without log-probs (NaN) the LM term is dropped: S_w = C."""
    return similarity + (0.0 if math.isnan(mean_logprob) else beta * mean_logprob)


def raman_score(similarity: float, mean_logprob: float) -> float:
    """S_g = ((C + 1) / 2) * exp(P), in (0, 1]. Without log-probs exp(P) is taken as 1."""
    return (similarity + 1.0) / 2.0 * (1.0 if math.isnan(mean_logprob) else math.exp(mean_logprob))


def score(ranking: Ranking, similarity: float, mean_logprob: float, beta: float) -> float:
    if ranking == "huang":
        return huang_score(similarity, mean_logprob, beta)
    return raman_score(similarity, mean_logprob)


def is_empty_sample(text: str) -> bool:
    """Zero length once leading/trailing non-English characters are dropped (Huang et al.)."""
    return _ENGLISH.search(text) is None


def mostly_empty(texts: Sequence[str]) -> bool:
    """More than half of a step's samples are empty: the plan has ended."""
    return sum(is_empty_sample(t) for t in texts) * 2 > len(texts)


@dataclass(frozen=True)
class Candidate:
    sample_index: int
    text: str
    skill_index: int
    similarity: float
    mean_logprob: float
    score: float


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Best first: highest score; ties go to the earlier sample (deterministic)."""
    return sorted(candidates, key=lambda c: (-c.score, c.sample_index))


def best_candidate(candidates: Sequence[Candidate]) -> Optional[Candidate]:
    ranked = rank(candidates)
    return ranked[0] if ranked else None
