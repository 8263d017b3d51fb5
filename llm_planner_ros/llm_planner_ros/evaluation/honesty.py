"""Issue 37's columns, shared by the benchmarks: how often a goal reaches the goal asked without
asking, reaches another goal without asking (the wrong-goal rate), or is asked, at a confidence
threshold; and risk against coverage. A record holds ``confidence`` (None: unknown),
``reported_success`` (what the planner told: done), ``absent`` (the words the world lacks),
``given_up`` (conditions given up for want of a plan) and whether the asked goal was reached
(``reached_key``)."""
from __future__ import annotations

from collections.abc import Sequence

from llm_planner_ros.interpretation.confidence import auroc


def asked(record: dict, at: float) -> bool:
    """Whether the goal is asked at threshold ``at``: its confidence is unknown or below it, the
    task names something the world lacks, or conditions were given up (what is left is asked)."""
    return record.get("confidence") is None or record["confidence"] < at or bool(record.get("absent")) \
        or bool(record.get("given_up"))


def honesty(records: Sequence[dict], at: float, reached_key: str = "goal_met") -> dict:
    """At the threshold ``at``: the share of goals that reach the asked goal unasked, that reach
    another goal unasked (reported done, the asked goal not reached), that are asked (and of them,
    for naming an absent word); the wrong-goal rate without asking; the confidence's AUROC for
    reaching the asked goal."""
    n = len(records) or 1
    wrong = [r for r in records if r.get("reported_success") and not r[reached_key]]
    known = [r for r in records if r.get("confidence") is not None]
    return {"threshold": at,
            "reached_unasked": sum(r[reached_key] and not asked(r, at) for r in records) / n,
            "wrong_unasked": sum(not asked(r, at) for r in wrong) / n,
            "asked": sum(asked(r, at) for r in records) / n,
            "naming_absent": sum(bool(r.get("absent")) for r in records) / n,
            "wrong_never_asking": len(wrong) / n,
            "confidence_known": len(known) / n,
            "auroc": auroc([r["confidence"] for r in known], [bool(r[reached_key]) for r in known])}


def risk_coverage(records: Sequence[dict], reached_key: str = "goal_met") -> tuple[list[float], list[float]]:
    """Goals sorted by confidence, most confident first: (coverage, wrong-goal rate among them)."""
    ranked = sorted(records, key=lambda r: -(r["confidence"] if r.get("confidence") is not None else -1.0))
    coverage, risk, wrong = [], [], 0
    for k, r in enumerate(ranked, 1):
        wrong += bool(r.get("reported_success") and not r[reached_key])
        coverage.append(k / len(ranked))
        risk.append(wrong / k)
    return coverage, risk
