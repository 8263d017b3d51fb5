"""Run the Embodied Agent Interface's own action-sequencing scorer (PyPI virtualhome-eval).

The scorer reads ``<model>_outputs.json`` files of ``{"identifier", "llm_output"}`` records, where
``llm_output`` is a JSON object of verbs to arguments, as EAI's prompt asks. It runs in a child
process so that PYTHONHASHSEED, on which its results depend, can be fixed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

from llm_planner_ros.core.types import Skill
from llm_planner_ros.evaluation.metrics import as_steps

_RUNNER = """
import argparse, json, logging, os, sys
import virtualhome_eval
from virtualhome_eval.evaluation.action_sequence.scripts.evaluate_results import evaluate_results
logging.disable(logging.CRITICAL)
root = os.path.dirname(virtualhome_eval.__file__)
per_program = evaluate_results(argparse.Namespace(dataset="virtualhome", llm_response_path=sys.argv[1],
    resource_dir=os.path.join(root, "resources"), dataset_dir=os.path.join(root, "dataset"),
    output_dir=sys.argv[2]))
json.dump(per_program, open(os.path.join(sys.argv[2], "per_program.json"), "w"))
"""


def eai_output(program: Iterable[str | Skill]) -> str:
    """A program in the answer format EAI's prompt asks for: ``{"VERB": [args], ...}``.
    Repeated verbs repeat as keys, as models write them (EAI's parser keeps only the last)."""
    items = [f'"{action}": {json.dumps(list(objects))}' for action, objects in as_steps(program)]
    return "{\n" + ",\n".join(items) + "\n}"


def shipped_responses(model: str) -> list[dict]:
    """The responses EAI ships for ``model`` (e.g. ``gpt-4o-2024-05-13``)."""
    from llm_planner_ros.skills.resources import package_root

    path = package_root() / "llm_response" / "action_sequence" / f"{model}_outputs.json"
    return json.loads(path.read_text())


def score(responses: Mapping[str, list[dict]], hash_seed: int = 0, timeout_s: float = 1800) -> dict[str, dict]:
    """Per model name: EAI's ``summary`` (goal and trajectory evaluation) and ``programs`` (per
    identifier: ``executable``, the parsed ``actions``, ``error_type``). EAI's scorer divides by zero when a subset
    has no goal of one kind (state, relation or action); score sets that have all three."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "responses" / "action_sequence"
        src.mkdir(parents=True)
        for model, records in responses.items():
            (src / f"{model}_outputs.json").write_text(json.dumps(records))
        out = Path(tmp) / "out"
        env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
        done = subprocess.run([sys.executable, "-c", _RUNNER, str(src.parent), str(out)], env=env,
                              timeout=timeout_s, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"EAI's scorer failed: {done.stderr.strip().splitlines()[-1:]}")
        per_program = json.loads((out / "per_program.json").read_text())
        # evaluate_results returns [summary, error_info] per model (its error_info.json file
        # holds the summary again, so the return value is the only source of per-program info)
        return {model: {"summary": per_program[model][0], "programs": per_program[model][1]}
                for model in responses}
