"""Speed of the planner's stages, measured side by side in one run.

    python bench/speed.py [--texts 2000] [--repeats 50] [--baseline REV] [--out bench/results]

Prints a table and writes speed.json and speed.png under --out:
- embedding throughput: sentence-transformers (PyTorch) vs ONNX Runtime fp32 vs int8, and the
  top-1 nearest-skill agreement of each with PyTorch;
- translation latency per step (embed k samples + search the bank) for banks of 1k, 10k and 47,522
  skills (Huang et al.'s size, drawn from the 50,571 skills of all known classes), split into embedding and search;
- LLM tokens/s of the embedded model;
- plans for five EAI task names on the embedded defaults, with their wall time;
- method interpret, the product's (bench/goal_times.py --method interpret): first goal of a fresh
  process, new tasks warm, repeated tasks, by stage, in-process and through the nodes over DDS,
  with the planner node's resident memory after 300 goals (--soak);
- goals (bench/goal_times.py, one fresh process each, EAI's 26 tasks with method reprompt, executed):
  first and warm goal time split by stage with the untimed remainder, prompt tokens evaluated per
  goal with and without the prompt cache, the baseline revision's code (--baseline), the
  OpenAI-compatible path against ``llama_cpp.server`` with the same GGUF, and the weight types
  the embedded runtime makes from the shipped GGUF (Q4_1 shipped, Q8_0, F16: speed and goals met),
  and the same goals through planner_node and executor_bridge over DDS (PlannerClient);
- translation per step in the live planner (the scene and the full bank, k samples).
All runtimes use one thread, the default on a shared two-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from llm_planner_ros.core.errors import CancelToken  # noqa: E402
from llm_planner_ros.core.request import parse_request  # noqa: E402
from llm_planner_ros.llm.base import SamplingParams  # noqa: E402
from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend, smollm2_path  # noqa: E402
from llm_planner_ros.profiles.virtualhome import bank as banks  # noqa: E402
from llm_planner_ros.profiles.virtualhome import resources  # noqa: E402
from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder, default_model_dir  # noqa: E402
from llm_planner_ros.translation.translator import SkillIndex  # noqa: E402
from llm_planner_ros.wiring import ServiceConfig, compose  # noqa: E402

TASKS = ["Make coffee", "Watch TV", "Wash hands", "Put groceries in Fridge", "Turn on light"]
PROMPT = ("Task: Drink\nStep 1: Walk to dining room\nStep 2: Walk to cupboard\nStep 3: Open cupboard\n"
          "Step 4: Grab water glass\n\nTask: Make coffee\nStep 1:")


def timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def queries(n: int) -> list[str]:
    descs = list(dict.fromkeys(p.description for p in resources.human_programs() if p.description))
    return descs[:n]


def bench_embedding(texts: list[str], qs: list[str], full: banks.SkillBank) -> tuple[dict, dict]:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    st = SentenceTransformer(str(default_model_dir()), device="cpu")
    runtimes = {
        "sentence-transformers (PyTorch)": lambda xs: st.encode(xs, batch_size=64, normalize_embeddings=True,
                                                                 convert_to_numpy=True),
        "ONNX Runtime fp32": OnnxSentenceEmbedder().embed,
        "ONNX Runtime int8": OnnxSentenceEmbedder(int8=True).embed,
    }
    reference_bank = runtimes["sentence-transformers (PyTorch)"](full.texts[:5000])
    reference_top1 = (runtimes["sentence-transformers (PyTorch)"](qs) @ reference_bank.T).argmax(axis=1)
    results, agreement = {}, {}
    for name, embed in runtimes.items():
        embed(texts[:64])   # warm-up
        t0 = time.perf_counter()
        embed(texts)
        seconds = time.perf_counter() - t0
        single = timed(lambda: embed([qs[0]]), 30)
        results[name] = {"texts_per_s": len(texts) / seconds,
                         "single_query_ms": statistics.median(single) * 1000}
        top1 = (embed(qs) @ embed(full.texts[:5000]).T).argmax(axis=1) if name != "sentence-transformers (PyTorch)" \
            else reference_top1
        agreement[name] = float(np.mean(top1 == reference_top1))
    return results, agreement


HUANG_BANK_SIZE = 47522   # Huang et al.'s VirtualHome action space


def bench_translation(full: banks.SkillBank, embedder: OnnxSentenceEmbedder, k: int, repeats: int,
                      sizes: tuple[int, ...] = (1000, 10000, HUANG_BANK_SIZE)) -> dict:
    """Per-step translation latency for banks of ``sizes`` skills drawn from ``full``."""
    rng = np.random.default_rng(0)
    full_index = SkillIndex(full, embedder)
    samples = ["Open the fridge", "Grab a cup of milk", "walk into the kitchen", "Turn on the TV",
               "sit down on the sofa"][:k]
    out = {}
    for size in sizes:
        size = min(size, len(full))
        rows = rng.choice(len(full), size, replace=False) if size < len(full) else np.arange(len(full))
        index = full_index.subset(rows)
        q = embedder.embed(samples)
        brute = timed(lambda: index.similarities(q).argmax(axis=1), repeats)
        per_step = timed(lambda: index.nearest(samples, top_n=1), repeats)
        embed_ms = statistics.median(timed(lambda: embedder.embed(samples), repeats)) * 1000
        step_ms = statistics.median(per_step) * 1000
        out[f"{size}"] = {"skills": size, "two_stage": index._coarse is not None,
                          "embed_ms": embed_ms, "search_ms": step_ms - embed_ms,
                          "brute_force_fp32_search_ms": statistics.median(brute) * 1000,
                          "per_step_ms": step_ms}
    return out


def bench_llm(llm: LlamaCppBackend, repeats: int) -> dict:
    llm.complete(PROMPT, 1, SamplingParams(max_tokens=8, seed=0))
    llm.stats.tokens = 0
    llm.stats.seconds = 0.0
    for i in range(repeats):
        llm.complete(PROMPT, 5, SamplingParams(max_tokens=24, seed=i, stop=("\n\n",)))
    return {"tokens": llm.stats.tokens, "seconds": llm.stats.seconds,
            "tokens_per_s": llm.stats.tokens_per_second, "threads": 1}


def first_plans(llm: LlamaCppBackend, embedder: OnnxSentenceEmbedder) -> list[dict]:
    service = compose(ServiceConfig(), llm=llm, embedder=embedder)
    plans = []
    for task in TASKS:
        t0 = time.perf_counter()
        result, report = service.plan_with_report(parse_request(task=task), lambda e: None, CancelToken())
        plans.append({"task": task, "seconds": time.perf_counter() - t0,
                      "termination": result.termination_reason.value, "example": result.detail,
                      "program": result.program,
                      "generated": [s.generated_text for s in result.steps],
                      "llm_s": report.times.llm_s, "translation_s": report.times.translation_s})
    return plans


ROOT = Path(__file__).resolve().parents[1]


def goal_times(*args: str) -> dict:
    """bench/goal_times.py in a fresh process; its JSON."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "goal_times.py"), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"goal_times {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def weight_file(ftype: str) -> Path:
    """The shipped Q4_1 GGUF re-encoded to ``ftype`` (Q8_0, F16) by llama.cpp, made once."""
    from dataclasses import replace

    from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS, run_file

    return run_file(replace(MODELS[DEFAULT_MODEL], run_as=ftype.lower()), smollm2_path())


def openai_server_goals() -> dict:
    """The same goals through the OpenAI-compatible path against llama_cpp.server (same GGUF, 1 thread)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()),
                               "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        return goal_times("--backend", "openai", "--openai-base-url", f"http://127.0.0.1:{port}/v1")
    finally:
        server.terminate()
        server.wait(30)


def baseline_goals(rev: str) -> dict:
    """The goals on the code of revision ``rev`` (a temporary git worktree)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            return goal_times("--root", str(tree))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def bench_interpret(ros: bool, soak: int) -> dict:
    """The product's method: EAI's 26 tasks (new tasks), then the first 8 again (repeated), in a
    fresh process each: in-process, and through the nodes over DDS; ``soak`` more goals over DDS
    give the planner node's memory after 26 + 8 + soak goals."""
    rows = {"interpret, in-process": goal_times("--method", "interpret", "--again", "8")}
    rows["pddl, in-process (interpret's goals given)"] = pddl_given(rows["interpret, in-process"])
    if ros:
        rows["interpret, planner + bridge nodes over DDS"] = goal_times("--ros", "--method", "interpret",
                                                                        "--again", str(8 + soak))
        rows["pddl, over DDS (interpret's goals given)"] = pddl_given(
            rows["interpret, planner + bridge nodes over DDS"], "--ros")
    return rows


def pddl_given(interpreted: dict, *extra: str) -> dict:
    """Method pddl on the goals that ``interpreted``'s goals came to, given as goal conditions."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(interpreted, f)
        f.flush()
        return goal_times(*extra, "--method", "pddl", "--goals-from", f.name, "--again", "8")


def print_interpret(rows: dict) -> None:
    print("\nMethod interpret (the product's), and pddl on the goals it came to: EAI's 26 tasks, executed; first "
          "goal of a fresh process, new tasks warm and repeated tasks (medians, s); stages are medians of the "
          "warm goals (in-process)")
    stages = goal_times_module().STAGES["interpret"] + ("untimed_s",)
    print(f"{'configuration':44s} {'first':>6s} {'warm':>6s} {'again':>6s} "
          + " ".join(f"{s.removeprefix('interpret_')[:-2]:>8s}" for s in stages) + f" {'RSS MB':>7s}")
    for name, r in rows.items():
        warm = r["goals"][1:26]
        cells = " ".join(f"{statistics.median(g[s] for g in warm):8.3f}" if s in warm[0] else f"{'':>8s}"
                         for s in stages)
        rss = r.get("planner_rss_mb", r.get("rss_mb"))
        print(f"{name:44s} {r['first_s']:6.2f} {r['warm_median_s']:6.2f} {r['repeated_median_s']:6.2f} "
              f"{cells} {rss:7.0f}")
        if r.get("over_ros"):
            print(f"  planner node: {r['planner_rss_mb_ready']:.0f} MB when ready, {r['planner_rss_mb']:.0f} MB after "
                  f"{len(r['goals'])} goals; ROS and bridge round trips "
                  f"{statistics.median(g['ros_s'] for g in warm):.3f} s a goal (median)")


def goal_times_module():
    sys.path.insert(0, str(ROOT / "bench"))
    import goal_times as module

    return module


def bench_goals(baseline: str, weights: bool, openai: bool, ros: bool = True) -> dict:
    rows = {"this code, prompt cache on": goal_times(),
            "this code, prompt cache off": goal_times("--prompt-cache-mb", "0"),
            "this code, prompt cache 256 MB": goal_times("--prompt-cache-mb", "256")}
    if ros:
        rows["this code over ROS (planner + bridge nodes)"] = goal_times("--ros")
    if baseline:
        rows[f"baseline {baseline}"] = baseline_goals(baseline)
    if openai:
        rows["OpenAI-compatible path, llama_cpp.server"] = openai_server_goals()
    if weights:
        for ftype in ("Q8_0", "F16"):
            rows[f"weights {ftype}"] = goal_times("--model-path", str(weight_file(ftype)))
    return rows


def bench_live_translation(embedder: OnnxSentenceEmbedder, k: int, repeats: int) -> dict:
    """Translation per step as the live planner does it: k samples against the scene's bank and
    the full bank (two-stage int8 search), under the 1-thread BLAS limit."""
    samples = ["Open the fridge", "Grab a cup of milk", "walk into the kitchen", "Turn on the TV",
               "sit down on the sofa"][:k]
    out = {}
    banks_by_kind = {"scene": banks.scene_bank(resources.initial_graph("TrimmedTestScene1")), "full": banks.full_bank()}
    for kind, bank in banks_by_kind.items():
        index = SkillIndex(bank, embedder)   # what PlannerParts.index_for builds for a goal
        index.nearest(samples)
        vectors = embedder.embed(samples)
        step = statistics.median(timed(lambda: index.nearest(samples), repeats)) * 1000
        embed = statistics.median(timed(lambda: embedder.embed(samples), repeats)) * 1000
        search = statistics.median(timed(lambda: index.search(vectors), repeats)) * 1000
        out[kind] = {"skills": len(index.bank), "per_step_ms": step, "embed_ms": embed, "search_ms": search}
    return out


def print_goals(rows: dict) -> None:
    print("\nGoals: EAI's 26 tasks, method reprompt, executed; seconds per goal by stage (medians of the warm goals)")
    stages = ("reset_s", "example_s", "bank_s", "llm_s", "translation_s", "execution_s", "untimed_s")
    print(f"{'configuration':44s} {'first':>6s} {'warm':>6s} " + " ".join(f"{s[:-2]:>11s}" for s in stages)
          + f" {'prompt tok':>10s} {'evaluated':>9s} {'met':>5s}")
    for name, r in rows.items():
        warm = r["goals"][1:]
        if r.get("over_ros"):   # the node's stages are not reported over ROS: planner time and the rest
            print(f"{name:44s} {r['first_s']:6.2f} {r['warm_median_s']:6.2f}   planner "
                  f"{statistics.median(g['planner_s'] for g in warm):.3f}, ROS and bridge round trips "
                  f"{statistics.median(g['ros_s'] for g in warm):.3f}{'':>40s} {r['goals_met']:>2d}/{len(r['goals'])}")
            continue
        med = {s: statistics.median(g[s] for g in warm) for s in stages}
        tokens = [g["prompt_tokens"] for g in r["goals"] if g["prompt_tokens"] is not None]
        evaluated = [g["prompt_evaluated"] for g in r["goals"] if g["prompt_evaluated"] is not None]
        print(f"{name:44s} {r['first_s']:6.2f} {r['warm_median_s']:6.2f} "
              + " ".join(f"{med[s]:11.3f}" for s in stages)
              + (f" {statistics.mean(tokens):10.0f} {statistics.mean(evaluated):9.0f}" if tokens
                 else f" {'':>10s} {'':>9s}")
              + f" {r['goals_met']:>2d}/{len(r['goals'])}")
    base = rows.get("this code, prompt cache on")
    for name, r in rows.items():
        if r is base:
            continue
        same = sum(a["program"] == b["program"] for a, b in zip(base["goals"], r["goals"]))
        total_base = sum(g["wall_s"] for g in base["goals"])
        total = sum(g["wall_s"] for g in r["goals"])
        print(f"  {name}: {total / total_base:.2f}x the time of this code (all goals), "
              f"{same}/{len(base['goals'])} plans identical")


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    emb = report["embedding"]
    a.barh(list(emb), [v["texts_per_s"] for v in emb.values()], color=["#888", "#2a7", "#27a"])
    a.set_xlabel("texts / s (1 thread)")
    a.set_title("Embedding throughput")
    tr = report["translation"]
    sizes = [v["skills"] for v in tr.values()]
    a_ = [v["embed_ms"] for v in tr.values()]
    s_ = [v["search_ms"] for v in tr.values()]
    b.bar([str(s) for s in sizes], a_, label="embed k samples")
    b.bar([str(s) for s in sizes], s_, bottom=a_, label="search bank")
    b.set_xlabel("bank size (skills)")
    b.set_ylabel("ms per step")
    b.set_title("Translation latency per step (ONNX fp32)")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--skip-plans", action="store_true")
    parser.add_argument("--baseline", default="", help="a git revision to time the goals on, side by side")
    parser.add_argument("--no-goals", action="store_true", help="skip the goal, OpenAI and weight-type rows")
    parser.add_argument("--no-openai", action="store_true", help="skip the OpenAI-compatible path's row")
    parser.add_argument("--no-weights", action="store_true", help="skip the Q8_0 and F16 rows")
    parser.add_argument("--no-ros", action="store_true", help="skip the rows through the nodes over DDS")
    parser.add_argument("--soak", type=int, default=266,
                        help="goals more through the nodes for the memory figure (26 + 8 + soak in all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    full = banks.large_bank()
    texts = [full.texts[i] for i in np.random.default_rng(1).choice(len(full), args.texts, replace=False)]
    qs = queries(200)
    embedder = OnnxSentenceEmbedder()
    llm = LlamaCppBackend(smollm2_path(), n_threads=1)
    report = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version()}}
    report["embedding"], report["top1_agreement_vs_pytorch"] = bench_embedding(texts, qs, full)
    report["translation"] = bench_translation(full, embedder, args.k, args.repeats)
    report["llm"] = {**bench_llm(llm, 5), "name": llm.name}
    if not args.skip_plans:
        report["plans"] = first_plans(llm, embedder)
    report["live_translation"] = bench_live_translation(embedder, args.k, args.repeats)
    del llm
    if not args.no_goals:
        report["interpret"] = bench_interpret(not args.no_ros, args.soak)
        report["goals"] = bench_goals(args.baseline, not args.no_weights, not args.no_openai, not args.no_ros)

    emb = report["embedding"]
    base = emb["sentence-transformers (PyTorch)"]["texts_per_s"]
    print("\nEmbedding (all-MiniLM-L6-v2, 1 thread)")
    print(f"{'runtime':34s} {'texts/s':>9s} {'x PyTorch':>10s} {'1 query ms':>11s} {'top-1 agree':>12s}")
    for name, v in emb.items():
        print(f"{name:34s} {v['texts_per_s']:9.0f} {v['texts_per_s'] / base:10.2f} "
              f"{v['single_query_ms']:11.2f} {report['top1_agreement_vs_pytorch'][name]:12.1%}")
    print(f"\nTranslation per step (k={args.k} samples, ONNX fp32)")
    print(f"{'bank':>8s} {'embed ms':>9s} {'search ms':>10s} {'per step ms':>12s} {'fp32 brute search ms':>21s}")
    for v in report["translation"].values():
        print(f"{v['skills']:8d} {v['embed_ms']:9.2f} {v['search_ms']:10.2f} {v['per_step_ms']:12.2f} "
              f"{v['brute_force_fp32_search_ms']:21.2f}")
    print(f"\nTranslation per step in the live planner (k={args.k}, 1-thread BLAS)")
    for kind, v in report["live_translation"].items():
        print(f"  {kind} bank, {v['skills']} skills: {v['per_step_ms']:.2f} ms a step "
              f"(embed {v['embed_ms']:.2f}, search {v['search_ms']:.2f})")
    if "interpret" in report:
        print_interpret(report["interpret"])
    if "goals" in report:
        print_goals(report["goals"])
    llm_r = report["llm"]
    print(f"\nLLM {llm_r['name']}: {llm_r['tokens_per_s']:.1f} tokens/s "
          f"({llm_r['tokens']} tokens in {llm_r['seconds']:.1f}s, 1 thread)")
    for p in report.get("plans", []):
        print(f"\n{p['task']!r}: {p['termination']}, {len(p['program'])} steps, {p['seconds']:.1f}s "
              f"(LLM {p['llm_s']:.1f}s, translation {p['translation_s'] * 1000:.0f}ms; {p['example']})")
        for line, gen in zip(p["program"], p["generated"]):
            print(f"    {line:40s} <- {gen!r}")
    (out / "speed.json").write_text(json.dumps(report, indent=2))
    plot(report, out / "speed.png")
    print(f"\nwrote {out / 'speed.json'} and {out / 'speed.png'}")


if __name__ == "__main__":
    main()
