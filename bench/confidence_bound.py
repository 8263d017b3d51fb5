"""What issue 37's targets would need from the confidence, read from a run's records.

    python bench/confidence_bound.py [bench/results/interpret.json] [--asked 0.35] [--wrong 0.10]

For each row of a ``bench/interpret.py`` run: success with every goal run; the shipped
confidence's AUROC and its operating point; and the same for two scores fit on the very records
they score, so upper bounds, not methods:
- "task": each goal scored by how often its task's goals reached the asked goal;
- "task and goal": by how often the goals with its task text and its interpreted goal did.
The shipped confidence's AUROC is the benchmark's (the confidence alone); its operating points
ask every goal that names an absent word first, as the product does. For each score: the goals
reached and the wrong goals reached unasked when the least confident ``--asked`` share is asked,
and the least share asked that keeps wrong goals unasked within ``--wrong``. An upper bound under
the targets says the interpretation, not the confidence, is what misses them. Writes nothing.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder

from llm_planner_ros.evaluation import honesty  # noqa: E402
from llm_planner_ros.interpretation.confidence import auroc  # noqa: E402


def operating_points(scored: list[tuple[float, bool, bool]], asked: float, wrong: float) -> tuple[float, float, float]:
    """``scored``: (score, asked goal reached, reported done) per goal. Acting on the most
    confident first: (reached unasked, wrong unasked) with ``asked`` of the goals asked, and the
    least share asked with at most ``wrong`` wrong goals unasked."""
    n = len(scored)
    ranked = sorted(scored, key=lambda s: -s[0])
    act = ranked[:round(n * (1.0 - asked))]
    reached = sum(m for _, m, _ in act) / n
    wrongs = sum(done and not m for _, m, done in act) / n
    least = next(1.0 - k / n for k in range(n, -1, -1)
                 if sum(done and not m for _, m, done in ranked[:k]) / n <= wrong)
    return reached, wrongs, least


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, nargs="?", default=Path("bench/results/interpret.json"))
    parser.add_argument("--asked", type=float, default=0.35, help="the share of goals asked (issue 37: at most 0.35)")
    parser.add_argument("--wrong", type=float, default=0.10, help="wrong goals unasked allowed (issue 37: 0.10)")
    args = parser.parse_args()
    run = json.loads(args.records.read_text())
    print(f"| row | goals | success | score | AUROC | asking {args.asked:.0%}: reached / wrong unasked "
          f"| least asked for wrong <= {args.wrong:.0%} |")
    print("|---|---|---|---|---|---|---|")
    for row in run["summary"]:
        records = [r for r in run["records"] if r["row"] == row]
        if not any("confidence" in r for r in records):   # a row nothing asks for (the oracle goal)
            continue
        groups: dict[tuple, list[bool]] = defaultdict(list)
        tasks: dict[str, list[bool]] = defaultdict(list)
        for r in records:
            groups[(r["task"], tuple(r["interpreted"]))].append(bool(r["goal_met"]))
            tasks[r["task"]].append(bool(r["goal_met"]))
        confidence = [-1.0 if r["confidence"] is None else r["confidence"] for r in records]
        # asked whatever the threshold (confidence unknown, or an absent word named): first
        scores = {"shipped confidence": [-1.0 if honesty.asked(r, 0.0) else c for c, r in zip(confidence, records)],
                  "task (bound)": [sum(tasks[r["task"]]) / len(tasks[r["task"]]) for r in records],
                  "task and goal (bound)": [sum(g) / len(g) for g in
                                            (groups[(r["task"], tuple(r["interpreted"]))] for r in records)]}
        met = [bool(r["goal_met"]) for r in records]
        success = sum(met) / len(records)
        for name, score in scores.items():
            scored = [(s, m, bool(r["reported_success"])) for s, m, r in zip(score, met, records)]
            reached, wrong, least = operating_points(scored, args.asked, args.wrong)
            ranks = confidence if name == "shipped confidence" else score   # the AUROC the benchmark reports
            print(f"| {row} | {len(records)} | {success:.1%} | {name} | {auroc(ranks, met):.3f} | "
                  f"{reached:.1%} / {wrong:.1%} | {least:.1%} |")


if __name__ == "__main__":
    main()
