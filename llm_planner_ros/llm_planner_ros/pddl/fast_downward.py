"""Fast Downward, the classical planner, through the driver that PyPI ``up-fast-downward`` bundles.

One call per problem in a scratch folder, bounded by a time limit and a memory limit: each child
(the translator, the search) is ended once its resident memory passes the limit, and its address
space is capped a quarter above it (a Python translator at an address-space cap alone can spin on
failing allocations instead of ending), so a grounding that blows up ends in that child, not in
the robot computer's memory. No solution is an outcome with a reason (unsolvable, time-out, out of
memory, error), never an exception.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import select
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal, Optional

from llm_planner_ros.core.errors import PlanningError, stop_point

Status = Literal["solved", "unsolvable", "timeout", "out_of_memory", "error"]

# Exit codes of the Fast Downward driver (driver/returncodes.py)
_PLAN_FOUND = {0, 1, 2, 3}   # 1-3: a plan, then out of memory or time (an anytime search)
_UNSOLVABLE = {10, 11, 12}   # 12: search space exhausted by an incomplete search
_TIMEOUT = {21, 23}
_OVER_MEMORY = 99               # not Fast Downward's: the child was ended here at the memory limit
_OUT_OF_MEMORY = {20, 22, 24, _OVER_MEMORY}   # 24: out of memory and time
MEMORY_LIMIT_MB = 2048          # a 2-core, 4 GB robot computer: the node's ~600 MB beside it
STOP_POLL_S = 0.1               # how often a running child looks at the goal's stop


@dataclass(frozen=True)
class SolveOutcome:
    status: Status
    actions: tuple[tuple[str, ...], ...] = ()
    seconds: float = 0.0
    detail: str = ""
    stats: dict = field(default_factory=dict)
    # who ended it: "translator" (for unsolvable: the goal is unreachable even ignoring what actions
    # delete, e.g. no object to stand in for a parameter) or "search" (every reachable state tried)
    component: str = ""

    @property
    def unreachable_ignoring_deletes(self) -> bool:
        """Unsolvable even ignoring what actions delete: proved by the translator, or by the search
        at the start state (its relaxed heuristic finds no plan there: nothing expanded)."""
        return self.status == "unsolvable" and (self.component == "translator" or self.stats.get("expanded") == 0)


@cache
def _downward_dir() -> Path:
    """The Fast Downward build inside up-fast-downward, found without importing the package (its
    unified-planning plug-in takes over a second to import)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("up-fast-downward is not installed; run scripts/bootstrap.sh")
    return Path(list(spec.submodule_search_locations)[0]) / "downward"


@cache
def search_options(alias: str) -> tuple[str, ...]:
    """The search configuration the Fast Downward driver names ``alias`` (its driver/aliases.py);
    a configuration written out (``astar(ff())``) is passed as it is."""
    if "(" in alias:
        return ("--search", alias)
    folder = _downward_dir() / "driver"
    spec = importlib.util.spec_from_file_location("_fd_driver", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None, folder
    package = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_fd_driver", package)
    spec.loader.exec_module(package)
    aliases = importlib.import_module("_fd_driver.aliases").ALIASES
    if alias not in aliases:
        raise ValueError(f"unknown Fast Downward alias {alias!r}; known: {', '.join(sorted(aliases))}")
    return tuple(aliases[alias])


def solve(domain_text: str, problem_text: str, time_limit_s: float = 10.0, alias: str = "lama-first",
          invariants: bool = True, memory_limit_mb: int = MEMORY_LIMIT_MB) -> SolveOutcome:
    """Plan with Fast Downward; the plan is a tuple of ground actions ``("pick", "robot_1", "cup_2")``.

    Runs the driver's two components directly (translator, then search), which saves the
    driver's own start-up of about a second per call here; the translator runs in a child forked
    from a warm process (:class:`WarmTranslator`), which saves Python's start-up and imports.
    ``invariants``: the translator's invariant synthesis (mutex groups; multi-valued variables),
    most of its time on a small problem; without it every fact is a binary variable.
    ``memory_limit_mb`` bounds the address space of the translator and of the search, each."""
    t0 = time.perf_counter()
    memory = memory_limit_mb << 20
    bin_dir = _downward_dir() / "builds" / "release" / "bin"
    with tempfile.TemporaryDirectory(prefix="llm_planner_fd_") as tmp:
        domain_file, problem, sas, plan = (os.path.join(tmp, n) for n in
                                           ("domain.pddl", "problem.pddl", "output.sas", "plan"))
        for path, text in ((domain_file, domain_text), (problem, problem_text)):
            with open(path, "w") as f:
                f.write(text)
        try:
            options = [] if invariants else ["--invariant-generation-max-candidates", "0"]
            done = TRANSLATOR.run([domain_file, problem, "--sas-file", sas, *options], tmp, time_limit_s, memory)
            translated = time.perf_counter() - t0
            if done.returncode != 0:
                return _failed(done, time.perf_counter() - t0, "translator", time_limit_s, memory_limit_mb)
            with open(sas) as f:
                done = _run_limited([str(bin_dir / "downward"), *search_options(alias), "--internal-plan-file", plan],
                                    tmp, max(0.1, time_limit_s - translated), memory, stdin=f)
        except subprocess.TimeoutExpired:
            found = _best_plan(plan, numbered_only=True)   # an anytime search (lama) ended at the limit
            if found is not None:
                return SolveOutcome("solved", found, time.perf_counter() - t0,
                                    stats={"translate_s": round(translated, 4)})
            return SolveOutcome("timeout", seconds=time.perf_counter() - t0, detail=f"no plan within {time_limit_s:g}s")
        seconds = time.perf_counter() - t0
        stats = {"translate_s": round(translated, 4), "expanded": _stat(done.stdout, "Expanded ")}
        found = _best_plan(plan) if done.returncode in _PLAN_FOUND else None
        if found is not None:
            return SolveOutcome("solved", found, seconds, stats=stats)
        return _failed(done, seconds, "search", time_limit_s, memory_limit_mb, stats)


def _best_plan(plan: str, numbered_only: bool = False) -> Optional[tuple[tuple[str, ...], ...]]:
    """The plan the search wrote at ``plan``, else an anytime search's last whole one (``plan.1``,
    ``plan.2``, ...: each better than the one before); None when there is none."""
    if os.path.exists(plan) and not numbered_only:
        return _read_plan(plan)
    numbered: list[str] = []
    while os.path.exists(f"{plan}.{len(numbered) + 1}"):
        numbered.append(f"{plan}.{len(numbered) + 1}")
    for path in reversed(numbered):
        actions = _read_plan(path, whole=True)
        if actions is not None:
            return actions
    return None


def _read_plan(path: str, whole: bool = False) -> Optional[tuple[tuple[str, ...], ...]]:
    """A plan file's actions; ``whole``: None unless it ends with the cost line the search writes last
    (a search ended at its time limit may have been writing it)."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip()]
    if whole and not (lines and lines[-1].startswith("; cost")):
        return None
    return tuple(tuple(line.strip("()").split()) for line in lines if not line.startswith(";"))


def _resident(pid: int) -> int:
    """A process's resident memory in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _address_space_cap(memory: int) -> int:
    """A quarter above ``memory``, never above the hard limit this process already has (a
    service's LimitAS, a container's ulimit), which a child may not raise."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    return memory * 5 // 4 if hard == resource.RLIM_INFINITY else min(memory * 5 // 4, hard)


def _run_limited(argv: list[str], cwd: str, time_limit_s: float, memory: int, stdin=None,
                 env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """``subprocess.run`` of a child ended once its resident memory passes ``memory`` bytes (exit
    code ``_OVER_MEMORY``), at the active goal's stop point, and at its time limit; its address
    space is capped a quarter above ``memory`` (set with ``prlimit`` as it starts: no code runs in
    the forked child of this threaded process before ``exec``)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        try:
            cap = _address_space_cap(memory)
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (cap, cap))
        except (OSError, ValueError):   # already ended (its exit code says how), or not allowed: the check
            pass                        # of resident memory below still holds
        deadline = time.monotonic() + time_limit_s
        while True:
            try:
                out, err = proc.communicate(timeout=max(0.0, min(STOP_POLL_S, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(argv, time_limit_s) from None
                stop_point()
                if _resident(proc.pid) > memory:
                    proc.kill()
                    out, err = proc.communicate()
                    return subprocess.CompletedProcess(argv, _OVER_MEMORY, out, err)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _translator_env() -> dict[str, str]:
    bin_dir = _downward_dir() / "builds" / "release" / "bin"   # the translator bundled with the search
    return dict(os.environ, PYTHONPATH=str(bin_dir) + os.pathsep + os.environ.get("PYTHONPATH", ""))


# The warm process: it imports the translator once, then forks a child per problem, so each
# translation starts from the same clean state as a fresh `python -m fast_downward.translate`;
# it kills a child past its time limit, past its memory limit or when the node says "stop", and
# answers one line per problem: the exit code (_OVER_MEMORY at the memory limit), "timeout" or "stopped".
_ZYGOTE = r"""
import ctypes, json, os, select, signal, sys, time, traceback
signal.signal(signal.SIGINT, signal.SIG_IGN)   # a Ctrl-C is the node's to handle; stdin's end stops this
from fast_downward.translate import options, pddl_parser
from fast_downward.translate.main import main
import resource
LIBC = ctypes.CDLL(None, use_errno=True)
pending = b""   # what the node sent and no line took yet (read with os.read: select sees the rest)

def line(block):
    # the node's next line; None when block is false and no whole line has come
    global pending
    while b"\n" not in pending:
        if not block and not select.select([0], [], [], 0)[0]:
            return None
        chunk = os.read(0, 65536)
        if not chunk:
            raise SystemExit(0)   # the node closed the pipe
        pending += chunk
    text, pending = pending.split(b"\n", 1)
    return text.decode()

def resident(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0

print("ready", flush=True)
while True:
    text = line(True)
    if text.strip() == "stop":   # a stop that crossed the answer of a child that had just ended
        continue
    request = json.loads(text)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            LIBC.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG: this child ends with the warm process
            cap = request["address_space"]
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            os.chdir(request["cwd"])
            out = os.open("translate.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, 1)
            os.dup2(out, 2)
            sys.argv = ["translate", *request["argv"]]
            options.set_options()
            main()
            code = 0
        except pddl_parser.ParseError as e:
            print(e)
            code = 31
        except MemoryError:
            code = 20
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    child, answer = os.pidfd_open(pid), None
    deadline = time.monotonic() + request["limit"]
    while answer is None:
        waiting = b"\n" in pending
        ready = [] if waiting else select.select([child, 0], [], [], max(0.0, min(0.1, deadline - time.monotonic())))[0]
        if child in ready:
            answer = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            break
        if (waiting or 0 in ready) and line(False) is not None:   # "stop" from the node: the goal stopped
            answer = "stopped"
        elif time.monotonic() >= deadline:
            answer = "timeout"
        elif resident(pid) > request["memory"]:
            answer = request["over_memory"]
        else:
            continue
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(child)
    print(json.dumps(answer), flush=True)
"""


class WarmTranslator:
    """Fast Downward's translator without a Python start-up per problem: a process that has
    imported it forks a child for each. The same plans as the command line: each child starts
    from the imported modules' clean state. A busy, dead or failing warm process falls back to
    ``python -m fast_downward.translate`` for that call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Optional[subprocess.Popen[bytes]] = None

    def start(self) -> None:
        """Start the warm process now (off a goal's path); idempotent."""
        with self._lock:
            try:
                self._started()
            except OSError:
                self._proc = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, "-S", "-c", _ZYGOTE], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, bufsize=0, env=_translator_env())
            if self._line(30.0) != "ready":
                raise OSError("the warm translator did not start")
        return self._proc

    def _line(self, timeout_s: float, stoppable: bool = False) -> str:
        """The warm process's next line, read unbuffered (so that ``select`` sees what is left);
        ``stoppable``: the active goal's stop point is looked at while it waits."""
        assert self._proc is not None and self._proc.stdout is not None
        fd, data, deadline = self._proc.stdout.fileno(), b"", time.monotonic() + timeout_s
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if not select.select([fd], [], [], max(0.0, min(STOP_POLL_S, left) if stoppable else left))[0]:
                if time.monotonic() < deadline:
                    if stoppable:
                        stop_point()
                    continue
                self._proc.kill()
                raise OSError("the warm translator did not answer")
            chunk = os.read(fd, 256)
            if not chunk:
                raise OSError("the warm translator exited")
            data += chunk
        return data.decode().strip()

    def run(self, argv: list[str], cwd: str, time_limit_s: float,
            memory: int = MEMORY_LIMIT_MB << 20) -> subprocess.CompletedProcess:
        """The translator's exit code and output, as ``subprocess.run`` gives them; raises
        ``subprocess.TimeoutExpired`` past ``time_limit_s``; its address space is ``memory`` bytes."""
        if self._lock.acquire(blocking=False):
            try:
                return self._forked(argv, cwd, time_limit_s, memory)
            except OSError:
                self._proc = None   # started again at the next call
            finally:
                self._lock.release()
        return _run_limited([sys.executable, "-S", "-m", "fast_downward.translate", *argv], cwd, time_limit_s,
                            memory, env=_translator_env())

    def _forked(self, argv: list[str], cwd: str, time_limit_s: float, memory: int) -> subprocess.CompletedProcess:
        proc = self._started()
        assert proc.stdin is not None
        proc.stdin.write((json.dumps({"cwd": cwd, "argv": argv, "limit": time_limit_s, "memory": memory,
                                      "address_space": _address_space_cap(memory), "over_memory": _OVER_MEMORY})
                          + "\n").encode())
        try:
            answer = json.loads(self._line(time_limit_s + 10.0, stoppable=True))
        except PlanningError:   # the goal stopped: the warm process ends the child and says so
            try:
                proc.stdin.write(b"stop\n")
                self._line(10.0)
            except OSError:     # gone or silent: ended (its child with it), started again next time
                proc.kill()
            raise
        if answer == "timeout":
            raise subprocess.TimeoutExpired(argv, time_limit_s)
        log = Path(cwd) / "translate.log"
        return subprocess.CompletedProcess(argv, int(answer), log.read_text(errors="replace") if log.exists() else "",
                                           "")


TRANSLATOR = WarmTranslator()


def _failed(done: subprocess.CompletedProcess, seconds: float, component: str, limit: float, memory_mb: int,
            stats: Optional[dict] = None) -> SolveOutcome:
    if done.returncode in _UNSOLVABLE:
        return SolveOutcome("unsolvable", seconds=seconds, stats=stats or {}, component=component,
                            detail="the planner proved that no plan reaches the goal from this state")
    if done.returncode in _OUT_OF_MEMORY or (done.returncode < 0 and "MemoryError" in done.stderr + done.stdout):
        return SolveOutcome("out_of_memory", seconds=seconds, stats=stats or {},
                            detail=f"Fast Downward's {component} ran out of its memory limit of {memory_mb} MB "
                                   "(pddl_memory_limit_mb)")
    if done.returncode in _TIMEOUT:
        return SolveOutcome("timeout", seconds=seconds, stats=stats or {}, detail=f"no plan within {limit:g}s")
    tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-2:]
    return SolveOutcome("error", seconds=seconds, stats=stats or {},
                        detail=f"Fast Downward's {component} exited {done.returncode}: {' / '.join(tail)}")


def _stat(text: str, key: str) -> int:
    for line in text.splitlines():
        if key in line:
            try:
                return int(line.split(key)[1].split()[0])
            except (IndexError, ValueError):
                return -1
    return -1
