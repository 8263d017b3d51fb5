"""Sentence vectors computed once per embedding model, kept on disk: a fresh process embeds only
the sentences no process has embedded before (a scene's goal conditions are about 3,000).

Each batch of new vectors is one shard file under ``<cache>/vectors/<embedder key>/``, written
atomically, so that processes sharing the folder never see half a file; many shards are merged
into one when they are loaded. In memory at most ``max_entries`` vectors are held, the least
recently used going first (one evicted is embedded again when asked for).
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import numpy as np

log = logging.getLogger(__name__)

_MERGE_AT = 32     # shards on disk before a load merges them into one


class SentenceVectors:
    def __init__(self, embedder, folder: Optional[Path] = None, max_entries: int = 20_000) -> None:
        """``folder``: where this embedder's shards live (None: memory only)."""
        self.embedder = embedder
        self.folder = folder
        self.max_entries = max_entries
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0            # sentences this process had to embed
        if folder is not None:
            self._memory.update(self._load(folder))
            self._trim()

    @classmethod
    def for_embedder(cls, embedder, cache: Path, max_entries: int = 20_000) -> SentenceVectors:
        """On disk under ``cache/vectors/<key>``, where the embedder names its vectors (``key``)."""
        key = getattr(embedder, "key", None)
        return cls(embedder, cache / "vectors" / key if key else None, max_entries)

    def __len__(self) -> int:
        return len(self._memory)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, embedding (and storing) only those never seen."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memory]
            fresh = dict(zip(missing, self.embedder.embed(missing))) if missing else {}
            if missing:
                self.embedded += len(missing)
                self._store(missing, np.stack(list(fresh.values())))
            rows = []
            for t in texts:
                v = fresh[t] if t in fresh else self._memory.pop(t)
                self._memory[t] = v
                rows.append(v)
            self._trim()
            if not rows:
                return np.zeros((0, 1), dtype=np.float32)
            return np.stack(rows)

    def _trim(self) -> None:
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def _store(self, texts: list[str], vectors: np.ndarray) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
            _write(self.folder / f"{name}.npz", texts, vectors)
        except OSError as exc:      # a read-only or full disk costs speed, never a goal
            log.warning("sentence vectors not stored in %s: %s", self.folder, exc)

    @staticmethod
    def _load(folder: Path) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        shards = sorted(folder.glob("*.npz")) if folder.is_dir() else []
        for shard in shards:
            try:
                with np.load(shard) as data:
                    out.update(zip(data["texts"].tolist(), data["vectors"]))
            except (OSError, ValueError, KeyError) as exc:   # another process's merge removed it, or it is damaged
                log.debug("skipped %s: %s", shard, exc)
        if len(shards) > _MERGE_AT and out:
            try:
                texts = list(out)
                _write(folder / "merged.npz", texts, np.stack([out[t] for t in texts]))
                for shard in shards:
                    if shard.name != "merged.npz":
                        shard.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("vector shards in %s not merged: %s", folder, exc)
        return out


def _write(path: Path, texts: list[str], vectors: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        np.savez(f, texts=np.array(texts), vectors=np.asarray(vectors, dtype=np.float32))
    os.replace(tmp, path)
