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

import pytest  # noqa: E402


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
    from llm_planner_ros.planning.examples import DemonstrationBank
    from llm_planner_ros.profiles import load_world

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
