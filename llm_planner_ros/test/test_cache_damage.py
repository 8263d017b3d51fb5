"""The embedding caches on disk: a read-only cache with a damaged file in it, vectors of another
type, and a damaged ONNX model either work or are made again; never a crash, never wrong vectors."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from llm_planner_ros.core.types import Skill
from llm_planner_ros.skills.bank import SkillBank
from llm_planner_ros.translation.translator import bank_vectors
from llm_planner_ros.translation.vector_store import SentenceVectors

SENTENCES = ["pick up the cup", "open the fridge", "walk to the kitchen"]
BANK = SkillBank(tuple(Skill(verb, (thing,), text=f"{verb.lower()} the {thing}")
                       for verb in ("GRAB", "OPEN", "WALK") for thing in ("cup", "fridge", "sofa")))


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` read-only: by its mode for a user, by a read-only bind mount for root (whom modes
    do not stop)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("mount") is None or \
            subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode != 0:
        pytest.skip("root without a bind mount: a read-only folder cannot be made here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, capture_output=True)
        with pytest.raises(OSError):
            (folder / "probe").write_bytes(b"")
        yield
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)   # (files mapped still: busy)


def test_a_damaged_file_in_a_read_only_cache_is_passed_over_not_a_crash(embedder, tmp_path, monkeypatch):
    """Before: the damaged shard (or bank matrix) was to be removed, and the OSError of a read-only
    file system ended the store's opening (a node's start) or the bank's index."""
    folder = tmp_path / "vectors" / embedder.key
    SentenceVectors(embedder, folder).vectors(SENTENCES[:1])
    (folder / "0000000000000000.npz").write_bytes(b"PK\x03\x04 not a whole zip")
    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    bank = BANK
    matrix = bank_vectors(bank, embedder)
    cached = tmp_path / "banks" / f"{embedder.key}-{bank.digest}.npy"
    cached.write_bytes(cached.read_bytes()[:200])   # truncated
    with read_only(folder), read_only(cached.parent):
        store = SentenceVectors(embedder, folder)
        assert np.allclose(store.vectors(SENTENCES), embedder.embed(SENTENCES), atol=1e-6)
        assert any("0000000000000000.npz" in d for d in store.discarded)
        assert np.allclose(bank_vectors(bank, embedder), matrix, atol=1e-6)
    assert cached.stat().st_size == 200 and (folder / "0000000000000000.npz").exists()   # nothing removed


def test_cached_vectors_of_another_type_are_never_used(embedder, tmp_path, monkeypatch):
    """Before: a bank matrix or shard of the right shape in float64 or int8 (another version's, or
    written by hand) was used as it was: int8 ones, or not unit vectors."""
    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    bank = BANK
    matrix = bank_vectors(bank, embedder)
    cached = tmp_path / "banks" / f"{embedder.key}-{bank.digest}.npy"
    for wrong in (np.ones(matrix.shape, np.float64), np.ones(matrix.shape, np.int8)):
        np.save(cached, wrong)
        for mapped in (False, True):
            again = bank_vectors(bank, embedder, mapped=mapped)
            assert again.dtype == np.float32 and np.array_equal(again, matrix)
            np.save(cached, wrong)
    folder = tmp_path / "vectors" / embedder.key
    folder.mkdir(parents=True)
    np.savez(folder / "1111111111111111.npz", texts=np.array(SENTENCES), vectors=np.ones((3, matrix.shape[1])),
             model=np.array(embedder.key))
    store = SentenceVectors(embedder, folder)
    assert np.allclose(store.vectors(SENTENCES), embedder.embed(SENTENCES), atol=1e-6)
    assert store.embedded == 3 and not (folder / "1111111111111111.npz").exists()


def test_a_damaged_onnx_model_in_the_cache_is_exported_again(embedder, tmp_path):
    """Before: ONNX Runtime's "Protobuf parsing failed" at every start until someone removed the file."""
    from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder

    folder = tmp_path / "onnx" / embedder.digest
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(embedder.path.read_bytes()[:1 << 20])   # truncated
    again = OnnxSentenceEmbedder(cache_dir=tmp_path)
    assert np.allclose(again.embed(SENTENCES), embedder.embed(SENTENCES), atol=1e-5)
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx"]   # no temporary file left
    shutil.rmtree(folder)
