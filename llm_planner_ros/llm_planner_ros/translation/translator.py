"""Nearest admissible skill by cosine similarity (Huang et al. 3.2), over a cached bank index."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

import numpy as np
from threadpoolctl import ThreadpoolController

from llm_planner_ros.core.types import Skill
from llm_planner_ros.skills.bank import SkillBank
from llm_planner_ros.translation.onnx_embedder import cache_root
from llm_planner_ros.translation.vector_store import embed_in_chunks, written_atomically

log = logging.getLogger(__name__)

# numpy's BLAS threads slow the small matmuls of a bank search on a busy machine (15-17 ms a
# step on 2 threads against 5-7 ms on one, measured); every search runs under a 1-thread limit
_BLAS = ThreadpoolController()


class Embedder(Protocol):
    @property
    def key(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Match:
    skill: Skill
    index: int
    similarity: float


class Int8Search:
    """Coarse cosine search over a large bank: int8 rows x uint8 query with ONNX Runtime's
    ``MatMulInteger`` (MLAS int8 GEMM). ``candidates`` returns, per query, every skill whose
    exact cosine could be among the top ``n``: those whose approximate score is within twice the
    quantisation error bound of the approximate n-th best. Callers re-rank them exactly."""

    def __init__(self, matrix: np.ndarray) -> None:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        self.row_scale = (np.maximum(np.abs(matrix).max(axis=1), 1e-12) / 127.0).astype(np.float32)
        rows = np.round(matrix / self.row_scale[:, None]).astype(np.int8)
        self.row_sums = rows.astype(np.float32).sum(axis=1)
        self.dim = matrix.shape[1]
        self.max_row_scale = float(self.row_scale.max())
        self.max_row_l1 = float(np.abs(matrix).sum(axis=1).max())
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["q", "B"], ["y"])], "int8_search",
            [helper.make_tensor_value_info("q", TensorProto.UINT8, [None, matrix.shape[1]])],
            [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
            [numpy_helper.from_array(np.ascontiguousarray(rows.T), "B")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 9
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(model.SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])

    def _approximate(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the query on 7 bits (0..127, "reduce range"): x86 u8 x s8 kernels without VNNI add pairs
        # of products in saturating int16, which 8-bit queries overflow (errors of 0.05 seen here)
        q_scale = (np.maximum(np.abs(queries).max(axis=1, keepdims=True), 1e-12) / 63.0).astype(np.float32)
        q = (np.round(queries / q_scale) + 64).astype(np.uint8)   # shift to unsigned, undone below
        y = self.session.run(None, {"q": q})[0].astype(np.float32) - 64.0 * self.row_sums[None, :]
        y *= self.row_scale[None, :]
        y *= q_scale
        # |error| <= |q| . |db| + |b| . |dq| + |dq| . |db|, with |db| <= s_b / 2 and |dq| <= s_q / 2
        bound = (0.5 * self.max_row_scale * np.abs(queries).sum(axis=1) + 0.5 * q_scale[:, 0] * self.max_row_l1
                 + 0.25 * q_scale[:, 0] * self.max_row_scale * self.dim)
        return y, bound

    def similarities(self, queries: np.ndarray) -> np.ndarray:
        return self._approximate(queries)[0]

    def candidates(self, queries: np.ndarray, n: int) -> list[np.ndarray]:
        approx, bound = self._approximate(queries)
        nth = approx.max(axis=1) if n == 1 else np.partition(approx, -n, axis=1)[:, -n]
        return [np.flatnonzero(row >= t - 2.0 * b) for row, t, b in zip(approx, nth, bound)]


def bank_vectors(bank: SkillBank, embedder: Embedder, use_cache: bool = True, mapped: bool = False) -> np.ndarray:
    """The bank's embedding matrix, one row per skill: from the cache (``mapped``: mapped from the
    file, so that only the rows used are read), else embedded a chunk at a time with the active
    goal's stop point between chunks, and cached. A damaged cached file (truncated, another shape,
    dimension or type) is logged, removed (where it can be) and embedded again; a cache that cannot be read or written
    costs time, never a goal."""
    path = cache_root() / "banks" / f"{embedder.key}-{bank.digest}.npy"
    if use_cache and path.exists():
        try:
            matrix = np.load(path, mmap_mode="r" if mapped else None)
            dimension = getattr(embedder, "dimension", None)
            if matrix.ndim != 2 or matrix.shape[0] != len(bank) or (dimension and matrix.shape[1] != dimension) \
                    or matrix.dtype != np.float32:
                raise ValueError(f"it holds {matrix.shape} {matrix.dtype} vectors for {len(bank)} skills of "
                                 f"dimension {dimension} (float32)")
            return matrix
        except (ValueError, EOFError) as exc:   # damaged
            log.warning("bank embeddings %s are unusable (%s: %s); embedding the bank again",
                        path, type(exc).__name__, exc)
            with contextlib.suppress(OSError):   # a read-only cache keeps it (and the new vectors are not cached)
                path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("bank embeddings %s cannot be read (%s); embedding the bank", path, exc)
    log.info("embedding %d skills (cached at %s)", len(bank), path)
    parts = [vectors for _, vectors in embed_in_chunks(embedder, bank.texts)]
    matrix = np.concatenate(parts).astype(np.float32, copy=False) if parts else \
        np.zeros((0, getattr(embedder, "dimension", None) or 1), np.float32)   # float32, as the cache is read
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with written_atomically(path) as f:
                np.save(f, matrix)
        except OSError as exc:   # a read-only or full disk
            log.warning("bank embeddings not cached at %s: %s", path, exc)
    return matrix


class SkillIndex:
    """A bank with its embedding matrix (:func:`bank_vectors`, or ``matrix`` given, one row per
    skill). Banks above ``coarse_threshold`` skills are searched in two stages: int8 candidates,
    then an exact fp32 re-rank, which returns the same top skills as a brute-force fp32 search."""

    coarse_threshold = 4096

    def __init__(self, bank: SkillBank, embedder: Embedder, use_cache: bool = True,
                 matrix: Optional[np.ndarray] = None) -> None:
        self.bank = bank
        self.embedder = embedder
        self.matrix = np.ascontiguousarray(matrix if matrix is not None else bank_vectors(bank, embedder, use_cache))
        if self.matrix.shape[0] != len(bank):
            raise ValueError(f"{self.matrix.shape[0]} vectors for a bank of {len(bank)} skills")
        self._transposed = np.ascontiguousarray(self.matrix.T)
        self._coarse = Int8Search(self.matrix) if len(self.bank) > self.coarse_threshold else None

    @classmethod
    def rows_of(cls, bank: SkillBank, matrix: np.ndarray, rows: Sequence[int] | np.ndarray,
                embedder: Embedder) -> SkillIndex:
        """An index over some of ``bank``'s skills, with their rows of ``matrix`` (the bank's)."""
        rows = np.asarray(sorted({int(r) for r in rows}), dtype=np.int64)
        return cls(SkillBank(tuple(bank.skills[i] for i in rows)), embedder, matrix=matrix[rows])

    def subset(self, rows: Sequence[int] | np.ndarray) -> SkillIndex:
        """An index over some of this bank's skills, reusing their embeddings."""
        return SkillIndex.rows_of(self.bank, self.matrix, rows, self.embedder)

    def similarities(self, queries: np.ndarray) -> np.ndarray:
        """Exact cosine similarity of each query row to every skill (rows are unit vectors)."""
        return queries @ self._transposed

    def nearest(self, texts: Sequence[str], top_n: int = 1) -> list[list[Match]]:
        """For each text, its ``top_n`` most similar skills, best first. Repeated texts (common
        among k samples) are embedded once."""
        if not texts:
            return []
        unique = list(dict.fromkeys(texts))
        by_text = dict(zip(unique, self.search(self.embedder.embed(unique), top_n)))
        return [by_text[t] for t in texts]

    def search(self, vectors: np.ndarray, top_n: int = 1) -> list[list[Match]]:
        """For each unit vector, its ``top_n`` most similar skills, best first."""
        top_n = min(top_n, len(self.bank))
        with _BLAS.limit(limits=1, user_api="blas"):
            candidates: Sequence[np.ndarray]
            if self._coarse is None:
                sims = self.similarities(vectors)
                candidates = list(np.argpartition(-sims, top_n - 1, axis=1)[:, :top_n])
            else:
                candidates = self._coarse.candidates(vectors, top_n)
            out = []
            for vector, cand in zip(vectors, candidates):
                exact = self.matrix[cand] @ vector
                order = np.argsort(-exact, kind="stable")[:top_n]
                out.append([Match(self.bank.skills[cand[j]], int(cand[j]), float(exact[j])) for j in order])
        return out
