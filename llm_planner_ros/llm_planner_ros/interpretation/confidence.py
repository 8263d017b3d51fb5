"""How sure an interpretation is, calibrated on the world's own demonstrations.

Evidence per candidate condition: its cosine to the task text, the model's mean token log-prob
of it as the end state, its score's distance below the best candidate, and where it came from
(the model said it, it is near the task text, a demonstration's goal has it). A logistic model
fit on the demonstrations turns that into P(the condition belongs to the asked goal). The goal's
evidence: the least probable condition kept, the most probable candidate left out, how near the
task is to a demonstration's task, and how far the free-text route and the choice agree. A
second logistic model turns it into P(the interpreted goal reaches the goal asked).

Measured (docs/benchmarks.md, issue 37): on the benchmark's programs this evidence hardly tells a right
goal from a wrong one with the default model (AUROC about 0.4-0.7 by phrasing); the goal is
then asked at random more than for cause. The confidence reports what the evidence says.

Calibration data: each demonstration's task interpreted in a reference world, its own task held
out, labelled by its annotated goal. The query's own task is held out of the fit too, so a task
never vouches for itself. Without demonstrations there is no evidence to weigh: the confidence is
unknown (None), which a goal treats as unsure.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import numpy as np

CONDITION_EVIDENCE = ("cosine", "logprob", "below_best", "said", "text", "example")
GOAL_EVIDENCE = ("least_kept", "best_left_out", "demonstration", "agreement")


@dataclass(frozen=True)
class Candidate:
    """One candidate condition's evidence, and whether it was kept in the goal."""
    text: str
    cosine: float
    logprob: float          # nan: not scored by the model
    below_best: float       # the best candidate's score minus this one's (0 for the best)
    sources: tuple[str, ...]
    kept: bool

    def vector(self) -> list[float]:
        lp = self.logprob if math.isfinite(self.logprob) else -10.0
        below = self.below_best if math.isfinite(self.below_best) else 2.0
        return [self.cosine, max(lp, -10.0), min(below, 2.0)] + [float(s in self.sources) for s in
                                                                 ("said", "text", "example")]


@dataclass(frozen=True)
class Evidence:
    """What one interpretation offers to judge it by."""
    candidates: tuple[Candidate, ...]
    demonstration: float     # cosine between the task and the nearest demonstration's task shown
    agreement: float         # share of the kept conditions the model also said in free text

    def goal_vector(self, p: Sequence[float]) -> list[float]:
        """GOAL_EVIDENCE, from the conditions' probabilities ``p``."""
        kept = [pi for c, pi in zip(self.candidates, p) if c.kept]
        left = [pi for c, pi in zip(self.candidates, p) if not c.kept]
        return [min(kept, default=0.0), max(left, default=0.0), self.demonstration, self.agreement]


def raw_evidence(evidence: Evidence) -> dict[str, float]:
    """The evidence as plain numbers, for the record and for choosing what to weigh."""
    kept = [c for c in evidence.candidates if c.kept]
    left = [c for c in evidence.candidates if not c.kept and math.isfinite(c.below_best)]
    lp = [c.logprob for c in kept if math.isfinite(c.logprob)]
    return {"kept": len(kept), "candidates": len(evidence.candidates),
            "min_cos_kept": min((c.cosine for c in kept), default=0.0),
            "max_cos_kept": max((c.cosine for c in kept), default=0.0),
            "mean_lp_kept": sum(lp) / len(lp) if lp else -10.0,
            "worst_kept_below": max((c.below_best for c in kept if math.isfinite(c.below_best)), default=2.0),
            "best_left_below": min((c.below_best for c in left), default=2.0),
            "said_kept": sum("said" in c.sources for c in kept) / len(kept) if kept else 0.0,
            "text_kept": sum("text" in c.sources for c in kept) / len(kept) if kept else 0.0,
            "example_kept": sum("example" in c.sources for c in kept) / len(kept) if kept else 0.0,
            "demonstration": evidence.demonstration, "agreement": evidence.agreement}


@dataclass(frozen=True)
class Labelled:
    """One demonstration interpreted with its task held out: the evidence and the truth."""
    task: str
    evidence: Evidence
    asked: tuple[str, ...]    # the demonstration's goal sentences the world has
    reached: Optional[bool] = None   # whether a plan for the interpreted goal reaches the asked one

    def condition_labels(self) -> list[float]:
        return [float(c.text in self.asked) for c in self.evidence.candidates]

    def goal_label(self) -> float:
        """Whether the interpretation gets the asked goal: a plan for it reaches the asked goal where
        that was tried, else it keeps every asked condition."""
        if self.reached is not None:
            return float(self.reached)
        kept = {c.text for c in self.evidence.candidates if c.kept}
        return float(bool(self.asked) and set(self.asked) <= kept)


class Logistic:
    """L2-regularised logistic regression on standardised features (Newton's method)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> None:
        self.mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
        self.scale = x.std(axis=0) + 1e-6 if len(x) else np.ones(x.shape[1])
        z = np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.scale])
        w = np.zeros(z.shape[1])
        penalty = l2 * np.diag([0.0] + [1.0] * x.shape[1])
        for _ in range(25):
            p = 1 / (1 + np.exp(-z @ w))
            grad = z.T @ (p - y) + penalty @ w
            hess = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * np.eye(len(w))
            step = np.linalg.solve(hess, grad)
            w -= step
            if np.abs(step).max() < 1e-6:
                break
        self.w = w

    def __call__(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        x = np.asarray(rows, dtype=float).reshape(-1, len(self.mean))
        z = np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.scale])
        return 1 / (1 + np.exp(-z @ self.w))


@dataclass(frozen=True)
class Judgement:
    goal: Optional[float]                      # P(the goal holds every asked condition); None: unknown
    conditions: tuple[tuple[str, float], ...]  # (condition text, P(it belongs to the goal)), kept ones


class Calibration:
    """The logistic models, fit on the labelled demonstrations, the query's own task held out."""

    def __init__(self, labelled: Sequence[Labelled], l2: float = 1.0) -> None:
        self.labelled = [lab for lab in labelled if lab.asked and lab.evidence.candidates]
        self.l2 = l2
        self._fits: dict[frozenset[str], Optional[tuple[Logistic, Logistic]]] = {}

    def _fit(self, hold_out: frozenset[str]) -> Optional[tuple[Logistic, Logistic]]:
        if hold_out not in self._fits:
            data = [lab for lab in self.labelled if lab.task.strip().lower() not in hold_out]
            goals = [lab.goal_label() for lab in data]
            if len(data) < 4 or len(set(goals)) < 2:   # too little evidence to weigh: unknown
                self._fits[hold_out] = None
            else:
                xs = [c.vector() for lab in data for c in lab.evidence.candidates]
                ys = [y for lab in data for y in lab.condition_labels()]
                per_condition = Logistic(np.array(xs), np.array(ys), self.l2)
                gx = [lab.evidence.goal_vector(list(per_condition([c.vector() for c in lab.evidence.candidates])))
                      for lab in data]
                self._fits[hold_out] = (per_condition, Logistic(np.array(gx), np.array(goals), self.l2))
        return self._fits[hold_out]

    def judge(self, evidence: Evidence, hold_out: Sequence[str] = ()) -> Judgement:
        fit = self._fit(frozenset(h.strip().lower() for h in hold_out))
        if fit is None or not evidence.candidates:
            return Judgement(None, ())
        per_condition, per_goal = fit
        p = list(per_condition([c.vector() for c in evidence.candidates]))
        goal = float(per_goal([evidence.goal_vector(p)])[0])
        return Judgement(goal, tuple((c.text, float(pi)) for c, pi in zip(evidence.candidates, p) if c.kept))


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The probability that a positive scores above a negative (ties count half); nan without both."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def read_labelled(path: Path) -> Optional[list[Labelled]]:
    """The labelled demonstrations kept in ``path``; None when there are none (or unreadable)."""
    try:
        raw = json.loads(path.read_text())
        return [_labelled(r) for r in raw] if isinstance(raw, list) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):   # missing, cut short, or another shape
        return None


def _labelled(r: dict) -> Labelled:
    return Labelled(r["task"], Evidence(tuple(Candidate(c["text"], c["cosine"], c["logprob"], c["below_best"],
                                                        tuple(c["sources"]), c["kept"])
                                              for c in r["evidence"]["candidates"]),
                                        r["evidence"]["demonstration"], r["evidence"]["agreement"]),
                    tuple(r["asked"]), r.get("reached"))


def write_labelled(path: Path, labelled: Sequence[Labelled]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps([asdict(lab) for lab in labelled]))   # NaN and Infinity as Python writes them
    tmp.replace(path)
