"""Nearest admissible skill by cosine similarity (Huang et al. 3.2), over a cached bank index."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from llm_planner_ros.core.types import Skill
from llm_planner_ros.skills.bank import SkillBank
from llm_planner_ros.translation.onnx_embedder import cache_root

log = logging.getLogger(__name__)


class Embedder(Protocol):
    key: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Match:
    skill: Skill
    index: int
    similarity: float


class SkillIndex:
    """A bank with its embedding matrix; embeddings are cached on disk by bank and model."""

    def __init__(self, bank: SkillBank, embedder: Embedder, use_cache: bool = True) -> None:
        self.bank = bank
        self.embedder = embedder
        path = cache_root() / "banks" / f"{embedder.key}-{bank.digest}.npy"
        if use_cache and path.exists():
            self.matrix = np.load(path)
        else:
            log.info("embedding %d skills (cached at %s)", len(bank), path)
            self.matrix = embedder.embed(bank.texts)
            if use_cache:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
                np.save(tmp, self.matrix)
                tmp.replace(path)
        if self.matrix.shape[0] != len(bank):
            raise ValueError(f"cached bank embeddings at {path} have {self.matrix.shape[0]} rows, "
                             f"the bank has {len(bank)}")

    def similarities(self, queries: np.ndarray) -> np.ndarray:
        """Cosine similarity of each query row to every skill (rows are unit vectors)."""
        return queries @ self.matrix.T

    def nearest(self, texts: Sequence[str], top_n: int = 1) -> list[list[Match]]:
        """For each text, its ``top_n`` most similar skills, best first."""
        if not texts:
            return []
        sims = self.similarities(self.embedder.embed(texts))
        top_n = min(top_n, sims.shape[1])
        part = np.argpartition(-sims, top_n - 1, axis=1)[:, :top_n]
        out = []
        for row, cand in zip(sims, part):
            order = cand[np.argsort(-row[cand], kind="stable")]
            out.append([Match(self.bank.skills[i], int(i), float(row[i])) for i in order])
        return out
