"""ONNX Runtime translation: parity with sentence-transformers (PyTorch), cache, nearest skill."""
from __future__ import annotations

import numpy as np
import pytest

from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder, default_model_dir
from llm_planner_ros.translation.translator import SkillIndex


def queries(n: int = 200) -> list[str]:
    seen, out = set(), []
    for p in resources.human_programs():
        if p.description and p.description not in seen:
            seen.add(p.description)
            out.append(p.description)
    assert len(out) >= n
    return out[:n]


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(default_model_dir()), device="cpu")


def test_onnx_matches_sentence_transformers(embedder, scene_index, reference):
    qs = queries()
    ref_q = reference.encode(qs, normalize_embeddings=True, convert_to_numpy=True)
    ref_bank = reference.encode(scene_index.bank.texts, normalize_embeddings=True, convert_to_numpy=True,
                                batch_size=128)
    onnx_q = embedder.embed(qs)
    # cosine of each query with itself across runtimes, and the full query x bank similarity matrix
    assert np.max(np.abs(np.sum(ref_q * onnx_q, axis=1) - 1.0)) < 1e-4
    ref_sim = ref_q @ ref_bank.T
    onnx_sim = onnx_q @ scene_index.matrix.T
    assert np.max(np.abs(ref_sim - onnx_sim)) < 1e-4
    agreement = np.mean(ref_sim.argmax(axis=1) == onnx_sim.argmax(axis=1))
    assert agreement >= 0.99


def test_int8_is_an_opt_in_with_lower_fidelity(embedder, tmp_path):
    int8 = OnnxSentenceEmbedder(int8=True)
    assert int8.key != embedder.key and int8.path.name == "model.int8.onnx"
    qs = queries(50)
    a, b = embedder.embed(qs), int8.embed(qs)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert np.mean(np.sum(a * b, axis=1)) > 0.9


def test_embeddings_are_unit_vectors_and_reject_a_bare_string(embedder):
    v = embedder.embed(["open the fridge", "", "x" * 5000])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape[0] == 0
    with pytest.raises(TypeError):
        embedder.embed("open the fridge")


def test_nearest_skill(scene_index):
    [best] = scene_index.nearest(["Open the freezer door"], top_n=3)
    assert best[0].skill.text == "open freezer"
    assert best[0].similarity >= best[1].similarity >= best[2].similarity
    assert [m.skill.text for m in scene_index.nearest(["switch the television on"])[0]] == ["switch on television"]


def test_bank_embeddings_are_cached_by_bank_and_model(embedder, scene_index, monkeypatch):
    calls = []
    original = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts: calls.append(len(texts)) or original(texts))
    again = SkillIndex(scene_index.bank, embedder)
    assert calls == []                      # loaded from the cache, nothing re-embedded
    assert np.array_equal(again.matrix, scene_index.matrix)


def test_two_stage_search_equals_brute_force_on_the_full_bank(embedder):
    from llm_planner_ros.profiles.virtualhome import bank

    index = SkillIndex(bank.full_bank(), embedder)
    assert index._coarse is not None
    qs = queries(200)
    brute = (embedder.embed(qs) @ index.matrix.T)
    top3 = np.argsort(-brute, axis=1)[:, :3]
    got = index.nearest(qs, top_n=3)
    assert [[m.index for m in row] for row in got] == top3.tolist()
    approx = index._coarse.similarities(embedder.embed(qs))
    assert np.max(np.abs(approx - brute)) < 5e-3
    assert got[0][0].similarity == pytest.approx(float(brute[0, top3[0, 0]]), abs=1e-6)


def test_sentence_vectors_are_embedded_once_per_model_and_bounded_in_memory(embedder, tmp_path):
    """A second store over the same folder (a fresh process) embeds nothing it has seen; memory
    keeps at most its bound; an unwritable folder costs speed, never vectors."""
    from llm_planner_ros.translation.vector_store import SentenceVectors

    texts = ["The television is on.", "The light is off.", "I am sitting on the couch."]
    first = SentenceVectors.for_embedder(embedder, tmp_path, max_entries=2)
    got = first.vectors(texts + texts[:1])
    assert first.embedded == 3 and len(first) == 2
    np.testing.assert_allclose(got[:3], embedder.embed(texts), atol=1e-6)
    np.testing.assert_array_equal(got[0], got[3])
    again = SentenceVectors.for_embedder(embedder, tmp_path, max_entries=10)
    np.testing.assert_array_equal(again.vectors(texts), got[:3])
    assert again.embedded == 0
    np.testing.assert_array_equal(first.vectors(texts[:1])[0], got[0])   # evicted: read from disk
    assert first.embedded == 3
    for i in range(33):                                  # many shards are merged when a store opens
        SentenceVectors.for_embedder(embedder, tmp_path).vectors([f"The cup {i} is on the table."])
    merged = SentenceVectors.for_embedder(embedder, tmp_path)
    assert len(list((tmp_path / "vectors").rglob("*.npz"))) == 2   # the merged one, and the last one's
    np.testing.assert_array_equal(merged.vectors(texts), got[:3])
    assert merged.embedded == 0
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert SentenceVectors(embedder, blocked / "vectors").vectors(texts).shape == (3, embedder.dimension)


def test_an_unusable_vector_cache_is_removed_and_rebuilt_never_a_fault(embedder, tmp_path):
    """Issue 35: a truncated shard (still starting with PK) raised BadZipFile and stopped the
    planner; a shard of another dimension was used, and every goal ended in a matmul error."""
    from llm_planner_ros.translation.vector_store import SentenceVectors

    texts = [f"The mug {i} is in the sink." for i in range(10)]
    good = SentenceVectors.for_embedder(embedder, tmp_path).vectors(texts)
    folder = tmp_path / "vectors" / embedder.key
    [shard] = folder.glob("*.npz")
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    for name, vectors, model in (("dimension", np.ones((10, 3)), embedder.key),
                                 ("foreign", np.ones((10, embedder.dimension)), "another-model"),
                                 ("rows", np.ones((4, embedder.dimension)), embedder.key)):
        np.savez(folder / f"{name}.npz", texts=np.array(texts), vectors=vectors.astype(np.float32),
                 model=np.array(model))
    # a shard written before shards named their model: used, as its dimension fits this model's
    legacy = (np.ones((1, embedder.dimension)) / np.sqrt(embedder.dimension)).astype(np.float32)   # as written then
    np.savez(folder / "legacy.npz", texts=np.array(["an old sentence"]), vectors=legacy)
    again = SentenceVectors.for_embedder(embedder, tmp_path)
    assert len(again.discarded) == 4 and [p.name for p in folder.glob("*.npz")] == ["legacy.npz"], again.discarded
    np.testing.assert_allclose(again.vectors(texts), good, atol=1e-6)
    assert again.embedded == 10 and len(list(folder.glob("*.npz"))) == 2
    np.testing.assert_array_equal(again.vectors(["an old sentence"]), legacy)
    assert again.embedded == 10


def test_embedding_stops_between_chunks_with_the_goal_and_keeps_what_it_did(embedder, tmp_path, monkeypatch):
    """A goal that must embed many sentences or a bank ends within a chunk of its cancel (the
    probe: 258 s), and the chunks it embedded are on disk for the next goal."""
    from llm_planner_ros.core.errors import CancelToken, PlanCanceled
    from llm_planner_ros.profiles.virtualhome import bank as banks
    from llm_planner_ros.skills.bank import SkillBank
    from llm_planner_ros.translation.translator import bank_vectors
    from llm_planner_ros.translation.vector_store import CHUNK, SentenceVectors

    monkeypatch.setenv("LLM_PLANNER_CACHE", str(tmp_path))
    store = SentenceVectors.for_embedder(embedder, tmp_path)
    original, calls, token = embedder.embed, [], CancelToken()

    def embed(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            token.cancel()
        return original(batch)
    monkeypatch.setattr(embedder, "embed", embed)
    many = [f"The plate {i} is on the shelf." for i in range(5 * CHUNK)]
    with token.active(), pytest.raises(PlanCanceled):
        store.vectors(many)
    assert calls == [CHUNK, CHUNK]
    fresh = SentenceVectors.for_embedder(embedder, tmp_path)
    fresh.vectors(many[:2 * CHUNK])
    assert fresh.embedded == 0
    # a bank too; and a bank file that cannot be used is embedded again, not a fault
    calls.clear()
    token = CancelToken()
    bank = SkillBank(banks.full_bank().skills[:4 * CHUNK])
    with token.active(), pytest.raises(PlanCanceled):
        bank_vectors(bank, embedder)
    assert calls == [CHUNK, CHUNK]
    monkeypatch.setattr(embedder, "embed", original)
    matrix = bank_vectors(bank, embedder)
    [path] = (tmp_path / "banks").glob("*.npy")
    path.write_bytes(path.read_bytes()[:1000])
    np.testing.assert_array_equal(bank_vectors(bank, embedder), matrix)
    np.testing.assert_array_equal(np.load(path), matrix)


def test_a_cache_file_is_written_whole_or_not_at_all(tmp_path):
    """A write that fails (a full disk) leaves neither the file nor its temporary behind."""
    from llm_planner_ros.translation.vector_store import written_atomically

    with pytest.raises(OSError):
        with written_atomically(tmp_path / "bank.npy") as f:
            f.write(b"half")
            raise OSError("no space left on device")
    assert list(tmp_path.iterdir()) == []
    with written_atomically(tmp_path / "bank.npy") as f:
        f.write(b"whole")
    assert [p.name for p in tmp_path.iterdir()] == ["bank.npy"] and (tmp_path / "bank.npy").read_bytes() == b"whole"
