"""How many CPU threads the embedded LLM runs a call on: a fixed number, or (``llm_threads: 0``,
the default) as many of this process's CPUs as other processes left idle since the last call.

llama.cpp's threads meet at every layer, so one thread on a core that another process keeps busy
stalls them all: on this project's shared 2-core machine, two threads beside two busy processes
decoded 1.5-2x slower than one, while on idle cores two are about 2x faster. Results are the same
bit for bit at any count (each output is computed by one thread), so the choice changes only speed.

Others' use is read from ``/proc/stat`` two ways, and the CPUs either finds idle are taken: their
busy time (steal included) less this process's own (``os.times``) since the last call, and the
threads runnable at this instant (``procs_running``, less the one reading). The first alone lags:
through the nodes, the robot's and the bridge's work on the last goal's steps, over when the
planner asks, counted as a busy CPU. Where ``/proc/stat`` cannot be read the count is 1."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional

PROC_STAT = Path("/proc/stat")
MIN_WINDOW_S = 0.05   # a shorter window keeps the last count (its ticks are too few to tell)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def _machine() -> Optional[tuple[float, int, int]]:
    """(busy CPU seconds of the whole machine, its CPU count, threads runnable now), or None where
    it cannot be read."""
    try:
        lines = PROC_STAT.read_text().splitlines()
    except OSError:
        return None
    fields = [int(x) for x in lines[0].split()[1:9]]   # user nice system idle iowait irq softirq steal
    busy = sum(fields) - fields[3] - fields[4]
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    running = next((int(line.split()[1]) for line in lines if line.startswith("procs_running ")), 1)
    return busy / os.sysconf("SC_CLK_TCK"), max(cpus, 1), running


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system


class ThreadCount:
    """``fixed`` threads (>= 1), or with 0 the idle CPUs this process may use, at least 1."""

    def __init__(self, fixed: int = 0) -> None:
        self.fixed = fixed
        self.cpus = usable_cpus()
        self.count = fixed or 1
        self._last = self._sample()

    @staticmethod
    def _sample() -> Optional[tuple[float, float, float, int, int]]:
        machine = _machine()
        return None if machine is None else (time.monotonic(), machine[0], _own_seconds(), *machine[1:])

    def __call__(self) -> int:
        if self.fixed or self.cpus == 1 or self._last is None:
            return self.count
        now = self._sample()
        if now is None:
            return self.count
        wall = now[0] - self._last[0]
        if wall < MIN_WINDOW_S:
            return self.count
        lately = max(0.0, (now[1] - self._last[1]) - (now[2] - self._last[2])) / wall   # CPUs others kept busy
        running = max(0, now[4] - 1)   # others' threads runnable now
        self._last = now
        self.count = max(1, min(self.cpus, round(now[3] - min(lately, running))))
        return self.count
