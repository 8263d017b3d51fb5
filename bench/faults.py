"""Fault injection against running nodes, as a table: case -> observed outcome -> time to outcome,
plus threads and memory of the planner node around 50 goals sent back to back by three clients.

    python bench/faults.py [--out bench/results]

Runs the cases of llm_planner_ros/test/test_faults*_dds.py (each asserts its exact end state) and collects what
each observed. Writes faults.json and faults.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "faults.jsonl"
        env = dict(os.environ, FAULTS_REPORT=str(report))
        files = sorted(str(p) for p in (ROOT / "llm_planner_ros" / "test").glob("test_faults*_dds.py"))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=ROOT,
                              env=env)
        rows = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    cases = [r for r in rows if "reason" in r]
    load = [r for r in rows if "goals" in r]
    lines = ["| case | goal | observed | reason | detail | time to outcome (s) |", "|---|---|---|---|---|---|"]
    for r in cases:
        detail = r["detail"].replace("|", "/")[:90]
        lines.append(f"| {r['case']} | {r['task'][:40]!r} | {r['status']} | {r['reason']} | {detail} "
                     f"| {r['seconds']} |")
    for r in load:
        lines.append(f"\n50 goals from three clients at once: {r['statuses']} in {r['seconds']} s; planner threads "
                     f"{r['threads_before']} -> {r['threads_after']}; RSS {r['rss_before_mb']:.0f} MB -> "
                     f"{r['rss_after_mb']:.0f} MB")
    table = "\n".join(lines)
    print(table)
    print(f"\npytest exit code {done.returncode} (every case asserts its exact end state)")
    (out / "faults.json").write_text(json.dumps({"rows": rows, "pytest_exit": done.returncode}, indent=1))
    (out / "faults.md").write_text(table + "\n")
    raise SystemExit(done.returncode)


if __name__ == "__main__":
    main()
