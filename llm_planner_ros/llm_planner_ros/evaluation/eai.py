"""Run the Embodied Agent Interface's own action-sequencing scorer (PyPI virtualhome-eval).

The scorer reads ``<model>_outputs.json`` files of ``{"identifier", "llm_output"}`` records, where
``llm_output`` is a JSON object of verbs to arguments, as EAI's prompt asks. It runs in a child
process so that PYTHONHASHSEED, on which its results depend, can be fixed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Optional

from llm_planner_ros.core.types import Skill
from llm_planner_ros.evaluation.metrics import as_steps, executable
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, make_skill

SHIPPED_MODELS = (
    "gpt-4o-2024-05-13", "gpt-4-turbo-2024-04-09", "gpt-3.5-turbo-0125", "claude-3-opus-20240229",
    "claude-3-sonnet-2024022", "claude-3-haiku-20240307", "gemini-1.5-pro-preview-0409",
    "gemini-1.5-flash-preview-0514", "gemini-1.0-pro", "llama-3-70b-chat", "llama-3-8b-chat",
    "mistral-large-2402", "mixtral-8x22b-instruct-v0.1", "cohere-command-r-plus", "cohere-command-r")


def select_tasks(tasks: Iterable[EaiTask], names: Iterable[str] = (), per_task: Optional[int] = None,
                 limit: Optional[int] = None) -> list[EaiTask]:
    """Filter by task names (case-insensitive; unknown names raise), take ``per_task`` programs of
    each task, then the first ``limit``. Programs are spread over the tasks round-robin."""
    tasks = list(tasks)
    known = {t.task.lower() for t in tasks}
    wanted = {n.strip().lower() for n in names if n.strip()}
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown EAI task(s) {sorted(unknown)}; known: {sorted(known)}")
    groups: dict[str, list[EaiTask]] = {}
    for t in tasks:
        if not wanted or t.task.lower() in wanted:
            groups.setdefault(t.task, []).append(t)
    picked = [g[:per_task] if per_task else g for g in groups.values()]
    spread = [g[i] for i in range(max(map(len, picked), default=0)) for g in picked if i < len(g)]
    return spread[:limit] if limit else spread


@cache
def helm_prompts() -> dict[str, str]:
    """EAI's prompt per identifier: objects, initial state, goal conditions, answer format."""
    path = resources.package_root() / "evaluation" / "action_sequence" / "prompts" / "helm_prompts.json"
    return {r["identifier"]: r["llm_prompt"] for r in json.loads(path.read_text())}


def _section(prompt: str, start: str, end: str) -> list[str]:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), prompt, re.S)
    return [line.strip() for line in (m.group(1) if m else "").splitlines()
            if line.strip() and not line.startswith("---")]


def eai_context(identifier: str) -> str:
    """Setting (a) for the step-by-step planners: EAI's relevant objects, the initial states of
    those that have any, and the goal conditions, condensed into one description."""
    prompt = helm_prompts()[identifier]
    objects = [line.split(",")[0] for line in _section(prompt, "Objects in the scene:", "The current environment")]
    states = [re.sub(r", properties:.*", "", line).replace(", states: ", " is ")
              for line in _section(prompt, "Nodes:", "Edges:")]
    goals = (_section(prompt, "Node goals are:", "Edge goals are:")
             + _section(prompt, "Edge goals are:", "Action goals are:")
             + [g for g in _section(prompt, "Action goals are:", "Please output")
                if not g.startswith("There is no action")])
    objects = list(dict.fromkeys(o for o in objects if o != "character"))
    states = [s for s in states if not s.endswith(" is []")]
    return (f"Objects: {', '.join(objects)}. Initially: {'; '.join(states) or 'nothing noted'}. "
            f"Goals: {'; '.join(goals)}.")


def relevant_ids(identifier: str) -> dict[str, int]:
    """Object name -> node id of the relevant objects EAI's prompt lists (the first of a name),
    as EAI's scorer grounds the names of an answer."""
    out: dict[str, int] = {}
    for line in _section(helm_prompts()[identifier], "Objects in the scene:", "The current environment"):
        m = re.match(r"(\S+), id: (\d+)", line)
        if m:
            out.setdefault(m.group(1), int(m.group(2)))
    return out


def parse_eai_output(text: str, name_to_id: Mapping[str, int] = {}) -> tuple[list[Skill], str]:
    """An EAI answer (JSON object of verb -> arguments) as skills, keeping repeated verbs in
    order, which EAI's ``json.loads`` collapses. Objects named in ``name_to_id`` are grounded to
    that node. Returns (skills, error); the error names the first problem and the skills stop
    before it."""
    body = text.strip()
    body = re.sub(r"^```(?:json)?", "", body).removesuffix("```").strip().replace("'", '"')
    try:
        pairs = json.loads(body, object_pairs_hook=list)
    except ValueError as exc:
        return [], f"parsing error: {exc}"
    if not isinstance(pairs, list) or not pairs or not all(isinstance(p, tuple) for p in pairs):
        return [], "parsing error: not a non-empty JSON object of actions"
    skills: list = []
    for verb, args in pairs:
        spec = ACTIONS.get(str(verb).upper())
        args = args if isinstance(args, list) else [args]
        if spec is None:
            return skills, f"hallucination error: unknown action {verb!r}"
        if len(args) != spec.arity or not all(isinstance(a, str) for a in args):
            return skills, f"parameter error: {verb} takes {spec.arity} object(s), got {args!r}"
        names = [a.lower() for a in args]
        ids = [name_to_id[n] for n in names if n in name_to_id]
        skills.append(make_skill(spec.name, names, ids if len(ids) == len(names) else ()))
    return skills, ""


def score_answer(task: EaiTask, llm_output: str) -> tuple[list[Skill], dict]:
    """(the answer's skills, its :func:`corrected_score`), parsing the answer once."""
    skills, error = parse_eai_output(llm_output, relevant_ids(task.identifier))
    if error:
        return skills, {"executable": False, "goal_met": False, "length": len(skills), "error": error}
    ok, goal = executable(skills, task.graph, task.goal)
    return skills, {"executable": ok, "goal_met": bool(goal), "length": len(skills), "error": ""}


def corrected_score(task: EaiTask, llm_output: str) -> dict:
    """EAI's answer scored by this project's executor and goal check: every program counts, no
    dependence on the hash seed, repeated verbs kept."""
    return score_answer(task, llm_output)[1]

_RUNNER = """
import argparse, json, logging, os, sys
import virtualhome_eval
from virtualhome_eval.evaluation.action_sequence.scripts.evaluate_results import evaluate_results
logging.disable(logging.CRITICAL)
root = os.path.dirname(virtualhome_eval.__file__)
per_program = evaluate_results(argparse.Namespace(dataset="virtualhome", llm_response_path=sys.argv[1],
    resource_dir=os.path.join(root, "resources"), dataset_dir=os.path.join(root, "dataset"),
    output_dir=sys.argv[2]))
json.dump(per_program, open(os.path.join(sys.argv[2], "result.json"), "w"))
"""


def eai_output(program: Iterable[str | Skill]) -> str:
    """A program in the answer format EAI's prompt asks for: ``{"VERB": [args], ...}``.
    Repeated verbs repeat as keys, as models write them (EAI's parser keeps only the last)."""
    items = [f'"{action}": {json.dumps(list(objects))}' for action, objects in as_steps(program)]
    return "{\n" + ",\n".join(items) + "\n}"


def shipped_responses(model: str) -> list[dict]:
    """The responses EAI ships for ``model`` (e.g. ``gpt-4o-2024-05-13``)."""
    from llm_planner_ros.profiles.virtualhome.resources import package_root

    path = package_root() / "llm_response" / "action_sequence" / f"{model}_outputs.json"
    return json.loads(path.read_text())


def score_cached(responses: Mapping[str, list[dict]], cache_dir: Optional[Path], hash_seed: int = 0) -> dict[str, dict]:
    """:func:`score`, one model at a time, cached on disk by the responses' content."""
    out = {}
    for model, records in responses.items():
        key = hashlib.sha256(json.dumps([hash_seed, records], sort_keys=True).encode()).hexdigest()[:20]
        path = cache_dir / f"eai_score_{key}.json" if cache_dir else None
        if path is not None and path.exists():
            out[model] = json.loads(path.read_text())
            continue
        out[model] = score({model: records}, hash_seed)[model]
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(out[model]))
    return out


def score(responses: Mapping[str, list[dict]], hash_seed: int = 0, timeout_s: float = 1800) -> dict[str, dict]:
    """Per model name: EAI's ``summary`` (goal and trajectory evaluation) and ``programs`` (per
    identifier: ``executable``, the parsed ``actions``, ``error_type``). EAI's scorer divides by zero when a subset
    has no goal of one kind (state, relation or action); score sets that have all three."""
    per_program = _run_scorer(_RUNNER, "action_sequence", responses, hash_seed=hash_seed, timeout_s=timeout_s)
    # evaluate_results returns [summary, error_info] per model (its error_info.json file
    # holds the summary again, so the return value is the only source of per-program info)
    return {model: {"summary": per_program[model][0], "programs": per_program[model][1]}
            for model in responses}


def _run_scorer(runner: str, kind: str, responses: Mapping[str, list[dict]], copies: Iterable[Path] = (),
                hash_seed: int = 0, timeout_s: float = 1800):
    """Run one of EAI's scorers (``runner``, a script that writes ``result.json`` to its second
    argument) in a child process on ``responses`` and the ``copies`` of shipped answer files,
    laid out as EAI's ``llm_response/<kind>/<model>_outputs.json``."""
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "responses" / kind
        src.mkdir(parents=True)
        for model, records in responses.items():
            (src / f"{model}_outputs.json").write_text(json.dumps(records))
        for path in copies:
            shutil.copy(path, src / path.name)
        out = Path(tmp) / "out"
        done = subprocess.run([sys.executable, "-c", runner, str(src.parent), str(out)], timeout=timeout_s,
                              capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED=str(hash_seed)))
        if done.returncode != 0:
            raise RuntimeError(f"EAI's {kind} scorer failed: {done.stderr.strip().splitlines()[-1:]}")
        return json.loads((out / "result.json").read_text())


# -- goal interpretation ---------------------------------------------------------------------

_GOAL_RUNNER = """
import argparse, json, logging, os, sys
import virtualhome_eval
from virtualhome_eval.evaluation.goal_interpretation.scripts.evaluate_results import evaluate_results
logging.disable(logging.CRITICAL)
root = os.path.dirname(virtualhome_eval.__file__)
results = evaluate_results(argparse.Namespace(llm_response_path=sys.argv[1],
                                              resource_dir=os.path.join(root, "resources"),
    dataset_dir=os.path.join(root, "dataset"), output_dir=sys.argv[2], scene_id=1))
json.dump({m: r[0] for m, r in results.items()}, open(os.path.join(sys.argv[2], "result.json"), "w"))
"""

# this project's predicates -> EAI's node states, relations (character first) and action goals
_EAI_STATES = {"on": "ON", "off": "OFF", "open": "OPEN", "closed": "CLOSED", "plugged_in": "PLUGGED_IN",
               "plugged_out": "PLUGGED_OUT", "sitting": "SITTING", "lying": "LYING"}
_EAI_RELATIONS = {"ontop": "ON", "obj_ontop": "ON", "inside": "INSIDE", "obj_inside": "INSIDE", "facing": "FACING",
                  "next_to": "CLOSE", "holds_rh": "HOLDS_RH", "holds_lh": "HOLDS_LH"}


def goal_answer(literals: Iterable[str]) -> str:
    """Class-level goal literals (``(on television)``, ``(did_watch television)``) in the answer
    format of EAI's goal-interpretation prompt."""
    nodes, edges, actions = [], [], []
    for line in literals:
        pred, *args = line.strip("()").split()
        if pred.startswith("did_"):
            actions.append({"action": pred[4:].upper()})
        elif pred in _EAI_STATES and args:
            nodes.append({"name": args[-1], "state": _EAI_STATES[pred]})
        elif pred in _EAI_RELATIONS and len(args) == 2:
            edges.append({"from_name": args[0], "relation": _EAI_RELATIONS[pred], "to_name": args[1]})
    return json.dumps({"node goals": nodes, "edge goals": edges, "action goals": actions})


def shipped_goal_models() -> list[str]:
    from llm_planner_ros.profiles.virtualhome.resources import package_root

    folder = package_root() / "llm_response" / "goal_interpretation"
    return sorted(p.name[:-len("_outputs.json")] for p in folder.glob("*_outputs.json"))


def score_goal_interpretation(responses: Mapping[str, list[dict]], anchors: Iterable[str] = (),
                              timeout_s: float = 1800) -> dict[str, dict]:
    """EAI's goal-interpretation scorer (state, relation and action precision, recall, F1, in %)
    for ``responses`` (model -> [{"identifier", "llm_output"}]) and the shipped ``anchors``."""
    from llm_planner_ros.profiles.virtualhome.resources import package_root

    shipped = package_root() / "llm_response" / "goal_interpretation"
    return _run_scorer(_GOAL_RUNNER, "goal_interpretation", responses,
                       [shipped / f"{model}_outputs.json" for model in anchors], timeout_s=timeout_s)
