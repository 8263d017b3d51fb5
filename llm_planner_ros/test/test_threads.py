"""The embedded LLM's thread count (llm/threads.py): fixed, or the CPUs others leave idle."""
from __future__ import annotations

import multiprocessing
import time

import numpy as np

from llm_planner_ros.llm import threads
from llm_planner_ros.llm.threads import ThreadCount


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def test_a_fixed_count_is_kept():
    count = ThreadCount(3)
    time.sleep(threads.MIN_WINDOW_S * 2)
    assert count() == 3 and count() == 3


def test_idle_cpus_are_counted_and_others_busy_ones_are_not(monkeypatch):
    """Read from the machine's busy seconds less this process's own, over the time since the last call."""
    clock = {"t": 0.0, "machine": 0.0, "own": 0.0, "running": 9}
    monkeypatch.setattr(threads, "usable_cpus", lambda: 4)
    monkeypatch.setattr(threads, "_machine", lambda: (clock["machine"], 4, clock["running"]))
    monkeypatch.setattr(threads, "_own_seconds", lambda: clock["own"])
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["t"])
    count = ThreadCount(0)

    def after(wall: float, machine: float, own: float, running: int = 9) -> int:
        clock["t"] += wall
        clock["machine"] += machine
        clock["own"] += own
        clock["running"] = running
        return count()
    assert after(1.0, 1.0, 1.0) == 4          # all the machine's use was this process's own
    assert after(1.0, 2.2, 0.2) == 2          # others kept two CPUs busy
    assert after(1.0, 3.9, 0.0) == 1          # and never fewer than one
    assert after(0.01, 0.0, 0.0) == 1         # too short a window to tell: the last count stands
    assert after(1.0, 0.6, 0.0) == 3
    # others busy lately but idle now (the robot ran the last goal's steps): the CPUs idle now
    assert after(1.0, 2.0, 0.0, running=1) == 4
    assert after(1.0, 2.0, 0.0, running=2) == 3


def test_a_cpu_kept_busy_beside_it_is_not_taken():
    """On the real /proc/stat: with a busy process on every CPU this process may use, one thread."""
    count = ThreadCount(0)
    if count._last is None:   # no /proc/stat (not Linux): the count stays 1
        assert count() == 1
        return
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(count.cpus)]
    for p in spinners:
        p.start()
    try:
        time.sleep(0.3)
        count()                 # the window from here on has every CPU busy
        time.sleep(1.0)
        assert count() == 1
    finally:
        stop.set()
        for p in spinners:
            p.join(10)


def test_the_count_changes_nothing_but_speed(smollm2):
    """llama.cpp's logits are the same bit for bit on one thread and on two."""
    import llama_cpp

    prompt = "Task: Put the mug on the desk\nEnd state:"
    tokens = smollm2.llm.tokenize(prompt.encode(), add_bos=True)
    rows = []
    with smollm2._lock:
        for n in (1, 2):
            smollm2.llm._ctx.set_n_threads(n, n)
            smollm2.llm.reset()
            smollm2.llm.eval(tokens)
            rows.append(np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(smollm2.llm.ctx, -1),
                                              shape=(smollm2.n_vocab,)).copy())
        smollm2.llm._ctx.set_n_threads(smollm2._n_threads, smollm2._n_threads)
        smollm2.llm.reset()
    assert np.array_equal(rows[0], rows[1])
