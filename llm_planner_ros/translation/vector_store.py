"""Sentence vectors computed once per embedding model, kept on disk: a fresh process embeds only
the sentences no process has embedded before (a scene's goal conditions are about 3,000).

Each batch of new vectors is one shard file under ``<cache>/vectors/<embedder key>/``, written
atomically and named by what it holds, so that processes sharing the folder never see half a
file or rows that moved; many shards are merged into one when a store opens. A store reads only
the shards' sentences when it opens, and a vector when it is first asked for (from the shard's
file mapped into memory: only the rows asked for are read); at most
``max_entries`` vectors stay in memory, the least recently used going first (one evicted is
read from its shard again).
"""
from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import numpy as np

log = logging.getLogger(__name__)

_MERGE_AT = 32     # shards on disk before an opening store merges them into one


class SentenceVectors:
    def __init__(self, embedder, folder: Optional[Path] = None, max_entries: int = 20_000) -> None:
        """``folder``: where this embedder's shards live (None: memory only)."""
        self.embedder = embedder
        self.folder = folder
        self.max_entries = max_entries
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._where: dict[str, tuple[Path, int]] = {}      # sentence -> (shard, row)
        self._seen: set[Path] = set()
        self._mapped: dict[Path, np.ndarray] = {}          # shard -> its vectors, mapped from the file
        self._lock = threading.Lock()
        self.embedded = 0            # sentences this process had to embed
        if folder is not None and folder.is_dir():
            _merge(folder)
            self._scan()

    @classmethod
    def for_embedder(cls, embedder, cache: Path, max_entries: int = 20_000) -> SentenceVectors:
        """On disk under ``cache/vectors/<key>``, where the embedder names its vectors (``key``)."""
        key = getattr(embedder, "key", None)
        return cls(embedder, cache / "vectors" / key if key else None, max_entries)

    def __len__(self) -> int:
        return len(self._memory)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: from memory, else from disk, else embedded (and stored)."""
        with self._lock:
            wanted = [t for t in dict.fromkeys(texts) if t not in self._memory]
            found = self._read(wanted)
            if len(found) < len(wanted) and self.folder is not None:
                self._scan()             # shards other processes wrote since
                found.update(self._read([t for t in wanted if t not in found]))
            missing = [t for t in wanted if t not in found]
            if missing:
                fresh = self.embedder.embed(missing)
                self.embedded += len(missing)
                found.update(zip(missing, fresh))
                self._store(missing, fresh)
            rows = []
            for t in texts:
                v = found[t] if t in found else self._memory.pop(t)
                self._memory[t] = v
                rows.append(v)
            while len(self._memory) > self.max_entries:
                self._memory.popitem(last=False)
            if not rows:
                return np.zeros((0, 1), dtype=np.float32)
            return np.stack(rows)

    def _read(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The vectors of ``texts`` that the known shards hold, one read per shard."""
        by_shard: dict[Path, list[tuple[str, int]]] = {}
        for t in texts:
            if t in self._where:
                shard, row = self._where[t]
                by_shard.setdefault(shard, []).append((t, row))
        out: dict[str, np.ndarray] = {}
        for shard, wanted in by_shard.items():
            try:
                vectors = self._mapped.get(shard)
                if vectors is None:
                    vectors = self._mapped[shard] = _map_vectors(shard)
                out.update((t, np.array(vectors[row])) for t, row in wanted)
            except (OSError, ValueError, KeyError, IndexError) as exc:   # merged away by another process, or damaged
                log.debug("shard %s unreadable: %s", shard, exc)
                self._forget(shard)
        return out

    def _scan(self) -> None:
        """Learn the sentences of shards not seen yet (their vectors are read when asked for)."""
        assert self.folder is not None
        for shard in sorted(self.folder.glob("*.npz")) if self.folder.is_dir() else ():
            if shard in self._seen:
                continue
            try:
                with np.load(shard) as data:
                    texts = data["texts"].tolist()
            except (OSError, ValueError, KeyError) as exc:
                log.debug("skipped %s: %s", shard, exc)
                continue
            self._seen.add(shard)
            self._where.update((t, (shard, i)) for i, t in enumerate(texts))

    def _forget(self, shard: Path) -> None:
        self._seen.discard(shard)
        self._mapped.pop(shard, None)
        self._where = {t: w for t, w in self._where.items() if w[0] != shard}

    def _store(self, texts: list[str], vectors: np.ndarray) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            shard = self.folder / f"{_name(texts)}.npz"
            _write(shard, texts, vectors)
        except OSError as exc:      # a read-only or full disk costs speed, never a goal
            log.warning("sentence vectors not stored in %s: %s", self.folder, exc)
            return
        self._seen.add(shard)
        self._where.update((t, (shard, i)) for i, t in enumerate(texts))


def _name(texts: list[str]) -> str:
    """A shard's name says what it holds, so that a name never changes its rows (another process
    may hold a shard's row numbers while this one merges)."""
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


def _merge(folder: Path) -> None:
    """Many shards into one, the others removed."""
    shards = sorted(folder.glob("*.npz"))
    if len(shards) <= _MERGE_AT:
        return
    texts: list[str] = []
    vectors: list[np.ndarray] = []
    seen: set[str] = set()
    for shard in shards:
        try:
            with np.load(shard) as data:
                rows = [(i, t) for i, t in enumerate(data["texts"].tolist()) if t not in seen]
                vectors.append(data["vectors"][[i for i, _ in rows]])
        except (OSError, ValueError, KeyError):
            continue
        texts += [t for _, t in rows]
        seen.update(t for _, t in rows)
    try:
        merged = folder / f"{_name(texts)}.npz"
        _write(merged, texts, np.concatenate(vectors))
        for shard in shards:
            if shard != merged:
                shard.unlink(missing_ok=True)
    except (OSError, ValueError) as exc:
        log.warning("vector shards in %s not merged: %s", folder, exc)


def _map_vectors(shard: Path) -> np.ndarray:
    """The shard's ``vectors`` array mapped from its file, read-only: ``np.savez`` stores each
    array uncompressed, as an ``.npy`` inside the zip (a file another process replaces or removes
    stays readable through the mapping)."""
    with zipfile.ZipFile(shard) as archive:
        info = archive.getinfo("vectors.npy")
    if info.compress_type != zipfile.ZIP_STORED:
        with np.load(shard) as data:
            return data["vectors"]
    with open(shard, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)   # the member's local header: its name and extra field follow
        if local[:4] != b"PK\x03\x04":
            raise ValueError(f"{shard}: no local header for vectors.npy")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
        offset = f.tell()
    return np.memmap(shard, dtype=dtype, mode="r", shape=shape, offset=offset, order="F" if fortran else "C")


def _write(path: Path, texts: list[str], vectors: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        np.savez(f, texts=np.array(texts), vectors=np.asarray(vectors, dtype=np.float32))
    os.replace(tmp, path)
