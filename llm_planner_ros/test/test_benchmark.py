"""The benchmark's runner, cache and entry point, on the real planner, LLM and simulator."""
from __future__ import annotations

import json

import pytest

from helpers.bench_scripts import bench_script
from llm_planner_ros.evaluation import benchmark, eai
from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks


def load_bench():
    return bench_script("eai")


def test_run_cache_resumes_and_skips_a_cut_line(tmp_path):
    path = tmp_path / "records.jsonl"
    cache = benchmark.RunCache(path)
    record = benchmark.anchor_records("gpt-4o-2024-05-13", eai_tasks()[:1])[0]
    cache.add(record)
    with open(path, "a") as f:
        f.write('{"key": "cut short by a crash"')
    again = benchmark.RunCache(path)
    assert list(again.records) == [record.key] and again.get(record.key) == record


def test_anchor_rows_are_scored_by_our_executor():
    tasks = eai.select_tasks(eai_tasks(), per_task=1)
    rows = benchmark.summarise(benchmark.anchor_records("gpt-4o-2024-05-13", tasks))
    assert rows["programs"] == 26
    assert 0.3 < rows["success"] <= rows["executability"] + 1e-9 <= 1.0 + 1e-9


def test_the_wrong_goal_rate_counts_goals_said_done_whose_goal_does_not_hold():
    """Said done: the planner's result said success; the anchors report nothing, so their rate is
    not a number."""
    shipped = benchmark.anchor_records("gpt-4o-2024-05-13", eai_tasks()[:1])[0]

    def record(said_done: bool, met: bool):
        return shipped.model_copy(update=dict(method="translated", reported_success=said_done, goal_met=met))
    rows = benchmark.summarise([record(True, False), record(True, True), record(False, False), record(False, True)])
    assert rows["done_not_met"] == 0.25 and rows["success"] == 0.5
    assert shipped.reported_success is None
    assert benchmark.summarise([shipped])["done_not_met"] != benchmark.summarise([shipped])["done_not_met"]


def test_small_benchmark_run_end_to_end(tmp_path):
    """Two methods on one program with the embedded model; the second run comes from the cache."""
    bench = load_bench()
    argv = ["--tasks", "Turn on light", "--limit", "1", "--methods", "translated", "reprompt cause",
            "reprompt cause +PET",
            "--settings", "task", "--anchors", "gpt-4o-2024-05-13", "--no-speed", "--no-eai-scorer",
            "--out", str(tmp_path)]
    report = bench.main(argv)
    assert report["goals_run"] == 3 and report["goals_cached"] == 0
    methods = {r["name"]: r for r in report["rows"] if r["kind"] == "method"}
    assert set(methods) == {"translated", "reprompt cause", "reprompt cause +PET"}
    pet = methods["reprompt cause +PET"]["records"][0]["pet"]
    assert {"subtasks", "pointer", "tracker_finished", "bank_reduction", "eliminate_recall"} <= set(pet)
    assert 0.0 < pet["bank_reduction"] < 1.0 and "bank_reduction" in methods["reprompt cause +PET"]["ours"]
    for row in methods.values():
        record = row["records"][0]
        assert isinstance(record["reported_success"], bool), record
        assert row["ours"]["done_not_met"] == float(record["reported_success"] and not record["goal_met"]), record
        assert record["task"] == "Turn on light" and record["error"] == ""
        assert record["length"] == len(record["program"]) and 0.0 <= record["lcs"] <= 1.0
        assert record["llm_calls"] >= 1 and record["llm_s"] > 0
        if record["executable"]:       # every step of the program executes from the initial graph
            assert eai.corrected_score(next(t for t in eai_tasks() if t.identifier == record["identifier"]),
                                       record["llm_output"])["executable"]
    assert (tmp_path / "eai.md").read_text().count("| translated | task text + description | 1 |") == 1
    assert (tmp_path / "eai.png").stat().st_size > 0
    assert json.loads((tmp_path / "eai.json").read_text())["programs"] == 1
    assert "; 3 goals planned in this run, 0 from the cache (" in (tmp_path / "eai.md").read_text()
    again = bench.main(argv)
    assert again["goals_run"] == 0 and again["goals_cached"] == 3
    # the table says its rows come from the cache (of an earlier run, maybe of other code)
    assert "; 0 goals planned in this run, 3 from the cache (" in (tmp_path / "eai.md").read_text()
    assert [r["records"] for r in again["rows"] if r["kind"] == "method"] == \
        [r["records"] for r in report["rows"] if r["kind"] == "method"]


def test_bad_arguments_are_named():
    bench = load_bench()
    with pytest.raises(SystemExit, match="unknown method"):
        bench.main(["--methods", "telepathy"])
    with pytest.raises(SystemExit, match="unknown EAI task"):
        bench.main(["--tasks", "fly to the moon", "--no-speed"])


def test_the_benchmarks_halves_partition_the_sorted_names_and_all_keeps_their_order():
    """bench/interpret.py and bench/behavior.py split by the one rule: a setting chosen on "dev"
    is reported on "test", which shares no name with it."""
    from llm_planner_ros.evaluation.splits import half

    names = ["wash", "cook", "sort", "bake", "pack"]
    assert half(names, "all") == names
    assert half(names, "dev") == ["bake", "pack", "wash"] and half(names, "test") == ["cook", "sort"]
    with pytest.raises(KeyError):
        half(names, "train")


def test_the_confidence_bound_acts_on_the_most_confident_and_asks_the_rest(tmp_path, capsys, monkeypatch):
    """bench/confidence_bound.py: the goals acted on are the most confident; a goal not reported
    done is no wrong goal reached; the least share asked is the first that keeps wrong goals
    within the bound. The "task and goal" bound ranks a task's right goals first."""
    bound = bench_script("confidence_bound")
    scored = [(0.9, True, True), (0.8, False, True), (0.7, True, True), (0.1, False, False)]
    assert bound.operating_points(scored, asked=0.5, wrong=0.10) == (0.25, 0.25, 0.75)
    assert bound.operating_points(scored, asked=0.0, wrong=0.25) == (0.5, 0.25, 0.0)

    def record(task, goal, met, confidence):
        return {"row": "titles", "task": task, "interpreted": [goal], "goal_met": met,
                "reported_success": True, "confidence": confidence, "absent": []}
    records = [record("Sit", "(sitting)", True, 0.2), record("Sit", "(sitting)", True, 0.3),
               record("Sit", "(lying)", False, 0.9), record("Lie", "(lying)", False, 0.8)]
    path = tmp_path / "interpret.json"
    path.write_text(json.dumps({"summary": {"titles": {}}, "records": records}))
    monkeypatch.setattr("sys.argv", ["confidence_bound.py", str(path), "--asked", "0.5"])
    bound.main()
    rows = {line.split("|")[4].strip(): line.split("|")[5:8] for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["shipped confidence"][0].strip() == "0.000"       # the confident goals are the wrong ones
    assert rows["task and goal (bound)"][0].strip() == "1.000"
    assert rows["task and goal (bound)"][1].strip() == "50.0% / 0.0%"


def test_the_goal_judgement_asks_the_real_model_once_a_goal(tmp_path, capsys, monkeypatch):
    """bench/goal_judgement.py on the shipped smollm2-135m: literals in plain words; one row of
    records scored both ways, each AUROC a probability (a goal asked twice is answered once)."""
    judgement = bench_script("goal_judgement")
    assert judgement.in_words("(holds_rh character water_glass)") == "I hold the water glass"
    assert judgement.in_words("(ontop book table)") == "the book is on the table"
    assert judgement.in_words("(on tv)") == "the tv is on"

    def record(goal, met):
        return {"row": "titles", "task": "Watch TV", "interpreted": [goal], "goal_met": met, "confidence": 0.5}
    records = [record("(on tv)", True), record("(on tv)", True), record("(open fridge)", False)]
    path = tmp_path / "interpret.json"
    path.write_text(json.dumps({"records": records}))
    monkeypatch.setattr("sys.argv", ["goal_judgement.py", str(path), "--model", "smollm2-135m"])
    judgement.main()
    row = capsys.readouterr().out.splitlines()[2].split("|")
    assert row[1].strip() == "titles" and row[2:4] == [" 3 ", " 2 "] and row[4].strip() == "0.500"
    assert all(0.0 <= float(cell) <= 1.0 for cell in row[5:7])
