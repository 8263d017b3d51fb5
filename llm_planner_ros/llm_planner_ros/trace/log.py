"""The JSONL trace log and the LLM wrapper that feeds it."""
from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.secrets import redact, redact_all, secrets
from llm_planner_ros.core.types import PlanResult, PlanStep, StepEvent
from llm_planner_ros.llm.base import Completion, SamplingParams
from llm_planner_ros.llm.constraint import ChoiceConstraint, LiteralConstraint


def _plain(value: Any) -> Any:
    if isinstance(value, (LiteralConstraint, ChoiceConstraint)):   # thousands of literals: their count
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "value") and not isinstance(value, (int, float, str)):
        return value.value
    if isinstance(value, float) and value != value:
        return None
    return value


class TraceLog:
    """Append-only JSONL; one goal at a time is 'current' per thread."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._local = threading.local()

    def write(self, event: str, **fields: Any) -> None:
        record = {"t": time.time(), "trace": getattr(self._local, "trace_id", ""), "event": event, **_plain(fields)}
        known = secrets()
        line = json.dumps(redact_all(record, known), default=lambda v: redact(str(v), known))
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def begin(self, request: PlanRequest, goal_id: str = "") -> str:
        """Start a goal's records; its trace id is ``goal_id`` (the ROS goal id) when given."""
        self._local.trace_id = goal_id or uuid.uuid4().hex
        self.write("goal", request=request.model_dump(mode="json"))
        return self._local.trace_id

    def unplanned(self, goal_id: str, request: dict, termination: str, detail: str) -> None:
        """A goal that ended before planning (malformed, refused, cancelled or shut down while
        queued), so that every goal the node accepted has a record."""
        self._local.trace_id = goal_id or uuid.uuid4().hex
        self.write("goal", request=request)
        self.write("end", termination=termination, detail=detail, success=False, steps=[])
        self._local.trace_id = ""

    def step(self, event: StepEvent) -> None:
        """One step as it is decided or executed, on disk (fsync'd) before the goal goes on."""
        self.write("step", plan_corrections=event.num_corrections, subtask=event.subtask, **step_record(event.step))

    def end(self, result: Optional[PlanResult], error: str = "", timings: Optional[dict] = None,
            steps: Sequence[PlanStep] = (), termination: str = "internal_error") -> None:
        """The goal's end: its result, or the error it raised (with its ``termination`` reason)
        and the ``steps`` decided before it."""
        if result is None:
            self.write("end", termination=termination, detail=error, success=False, error=error,
                       timings=timings or {}, steps=[step_record(s) for s in steps])
        else:
            self.write("end", termination=result.termination_reason.value, detail=result.detail,
                       success=result.success, executed=result.executed, goal_status=int(result.goal_status),
                       corrections=result.num_corrections, llm_calls=result.num_llm_calls,
                       subtasks=result.subtasks, program=result.program,
                       steps=[step_record(s) for s in result.steps], error=error, timings=timings or {},
                       hazards=list(result.hazards))
        self._local.trace_id = ""


def step_record(s: PlanStep) -> dict:
    return {"index": s.index, "text": s.generated_text, "skill": s.skill.script() if s.skill.action else "",
            "score": s.score, "similarity": s.similarity, "mean_logprob": s.mean_logprob, "executed": s.executed,
            "error": {"type": int(s.error.type), "message": s.error.message, "cause": s.error.cause},
            "corrections": s.corrections}


def default_path(node_namespace: str, node_name: str) -> Path:
    """One trace file per node: ``$ROS_HOME/llm_planner_ros/<namespace>.<name>.jsonl``, where
    ``ROS_HOME`` defaults to ``~/.ros`` as for every ROS tool."""
    parts = [p for p in node_namespace.split("/") if p] + [node_name]
    home = Path(os.environ.get("ROS_HOME") or "~/.ros").expanduser()
    return home / "llm_planner_ros" / (".".join(parts) + ".jsonl")


def read_traces(path: Path | str, tail_bytes: Optional[int] = None) -> Iterator[dict]:
    """Goals of a trace log, each with its LLM calls, its steps as they happened, and its end
    (or none, if the node died). ``tail_bytes`` reads only the end of the file (the newest goals;
    the first of them may lack its start and is left out)."""
    goals: dict[str, dict] = {}
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - tail_bytes) if tail_bytes else 0
        f.seek(start)
        text = f.read().decode("utf-8", errors="replace")
    lines = text.splitlines()
    if start and lines:
        lines = lines[1:]   # cut in the middle
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue   # a line cut short by a crash
        goal = goals.setdefault(record.get("trace", ""), {"llm": [], "end": None, "request": None})
        if record["event"] == "goal":
            goal["request"], goal["started"] = record["request"], record["t"]
        elif record["event"] == "llm":
            goal["llm"].append(record)
        elif record["event"] == "step":
            goal.setdefault("steps", []).append(record)
        elif record["event"] == "end":
            goal["end"] = record
    yield from ({"trace": k, **v} for k, v in goals.items() if v["request"] is not None)


class RecordingLLM:
    """Wraps an LLM backend and writes each call (prompt, parameters, samples, log-probs, time)."""

    def __init__(self, inner, log: TraceLog) -> None:
        self.inner = inner
        self.log = log

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def _record(self, kind: str, prompt: str, params: Optional[SamplingParams], started: float, out) -> None:
        self.log.write("llm", kind=kind, prompt=prompt, params=params, seconds=time.perf_counter() - started,
                       samples=[{"text": c.text, "logprobs": c.token_logprobs, "finish": c.finish_reason}
                                for c in out] if out and isinstance(out[0], Completion) else None,
                       values=out if out and not isinstance(out[0], Completion) else None)

    def complete(self, prompt: str, n: int, params: SamplingParams,
                 cancel: Optional[CancelToken] = None) -> list[Completion]:
        t0 = time.perf_counter()
        out = self.inner.complete(prompt, n, params, cancel)
        self._record("complete", prompt, params, t0, out)
        return out

    def chat(self, user: str, n: int, params: SamplingParams, cancel: Optional[CancelToken] = None) -> list[Completion]:
        t0 = time.perf_counter()
        out = self.inner.chat(user, n, params, cancel)
        self._record("chat", user, params, t0, out)
        return out

    def continuation_logprobs(self, prompt: str, continuations: Sequence[str],
                              cancel: Optional[CancelToken] = None) -> list[tuple[float, ...]]:
        t0 = time.perf_counter()
        out = self.inner.continuation_logprobs(prompt, continuations, cancel)
        self._record("continuation_logprobs", prompt, None, t0, [sum(x) for x in out])
        return out

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...],
                            cancel: Optional[CancelToken] = None) -> list[float]:
        t0 = time.perf_counter()
        out = self.inner.next_token_logprobs(prompt, candidates, cancel)
        self._record("next_token_logprobs", prompt, None, t0, out)
        return out
