"""Sentence vectors computed once per embedding model, kept on disk: a fresh process embeds only
the sentences no process has embedded before (a scene's goal conditions are about 3,000).

Each batch of new vectors is one shard file under ``<cache>/vectors/<embedder key>/``, written
atomically and named by what it holds, so that processes sharing the folder never see half a
file or rows that moved; many shards are merged into one when a store opens. A store reads only
the shards' sentences when it opens, and a vector when it is first asked for (from the shard's
file mapped into memory: only the rows asked for are read); at most
``max_entries`` vectors stay in memory, the least recently used going first (one evicted is
read from its shard again).

The cache is a speed-up, never a fault: a shard that is damaged (truncated, not a zip), that
holds another model's vectors or vectors of another dimension or type, or whose rows do not match
its sentences, is logged once, removed (passed over in a read-only cache), and its sentences are
embedded again when asked for; one
that cannot be read for another reason (no memory, too many open files) is skipped, not removed.
A shard names its model; one written before shards did is used when its dimension fits.
Embedding many new sentences goes in chunks (:func:`embed_in_chunks`) with the active goal's
stop point between them: a goal that is cancelled while it embeds ends within a chunk's time,
and what it embedded is stored for the next one.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Optional

import numpy as np

from llm_planner_ros.core.errors import stop_point

log = logging.getLogger(__name__)

_MERGE_AT = 32     # shards on disk before an opening store merges them into one
CHUNK = 64         # sentences embedded between two stop points (about 0.1-0.3 s on one thread)
_STORE_AT = 2048   # new vectors kept in memory before they are written as a shard


class ForeignShard(ValueError):
    """A shard this store must not use: another model's, another dimension's, or malformed."""


_DAMAGED = (ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile)   # ForeignShard too


class SentenceVectors:
    def __init__(self, embedder, folder: Optional[Path] = None, max_entries: int = 20_000) -> None:
        """``folder``: where this embedder's shards live (None: memory only)."""
        self.embedder = embedder
        self.key = getattr(embedder, "key", "")   # the model whose vectors the shards hold
        self.folder = folder
        self.max_entries = max_entries
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._where: dict[str, tuple[Path, int]] = {}      # sentence -> (shard, row)
        self._seen: set[Path] = set()
        self._mapped: dict[Path, np.ndarray] = {}          # shard -> its vectors, mapped from the file
        self._lock = threading.Lock()
        self.embedded = 0            # sentences this process had to embed
        self.discarded: list[str] = []   # shards found unusable, with why
        if folder is not None and folder.is_dir():
            self._merge()
            self._scan()

    @classmethod
    def for_embedder(cls, embedder, cache: Path, max_entries: int = 20_000) -> SentenceVectors:
        """On disk under ``cache/vectors/<key>``, where the embedder names its vectors (``key``)."""
        key = getattr(embedder, "key", None)
        return cls(embedder, cache / "vectors" / key if key else None, max_entries)

    def __len__(self) -> int:
        return len(self._memory)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: from memory, else from disk, else embedded (and stored); a cancelled
        goal ends it between two chunks, with the chunks embedded so far stored."""
        with self._lock:
            wanted = [t for t in dict.fromkeys(texts) if t not in self._memory]
            found = self._read(wanted)
            if len(found) < len(wanted) and self.folder is not None:
                self._scan()             # shards other processes wrote since
                found.update(self._read([t for t in wanted if t not in found]))
            missing = [t for t in wanted if t not in found]
            if len(missing) > CHUNK:
                log.info("embedding %d new sentences (kept in %s)", len(missing), self.folder or "memory")
            pending: list[tuple[list[str], np.ndarray]] = []
            try:
                for chunk, fresh in embed_in_chunks(self.embedder, missing):
                    self.embedded += len(chunk)
                    found.update(zip(chunk, fresh))
                    pending.append((chunk, fresh))
                    if sum(len(c) for c, _ in pending) >= _STORE_AT:
                        self._store_all(pending)
            finally:   # a cancelled goal's work is kept too
                self._store_all(pending)
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
            except (OSError, *_DAMAGED) as exc:   # merged away by another process, or damaged since
                self._unusable(shard, exc)
        return out

    def _scan(self) -> None:
        """Learn the sentences of shards not seen yet (their vectors are read when asked for)."""
        assert self.folder is not None
        for shard in sorted(self.folder.glob("*.npz")) if self.folder.is_dir() else ():
            if shard in self._seen:
                continue
            try:
                texts, _ = self._open(shard)
            except (OSError, *_DAMAGED) as exc:   # truncated, not a zip, foreign: never the node's end
                self._unusable(shard, exc)
                continue
            self._seen.add(shard)
            self._where.update((t, (shard, i)) for i, t in enumerate(texts))

    def _open(self, shard: Path) -> tuple[list[str], np.ndarray]:
        """The shard's sentences and its vectors (mapped), once it is known to hold this embedder's
        vectors, one per sentence; raises ForeignShard when it does not."""
        with np.load(shard) as data:
            texts = data["texts"].tolist()
            model = str(data["model"]) if "model" in data.files else None
        if model is not None and model != self.key:
            raise ForeignShard(f"it holds the vectors of model {model!r}, not {self.key!r}")
        vectors = _map_vectors(shard)
        dimension = getattr(self.embedder, "dimension", None)
        if vectors.ndim != 2 or len(vectors) != len(texts) or (dimension and vectors.shape[1] != dimension) \
                or vectors.dtype != np.float32:
            raise ForeignShard(f"its vectors are {vectors.shape} {vectors.dtype} for {len(texts)} sentences of "
                               f"dimension {dimension} (float32)")
        return texts, vectors

    def _unusable(self, shard: Path, why: Exception) -> None:
        """A shard that cannot be used: gone (merged away by another process) is forgotten; damaged
        or foreign is logged once and removed (its sentences are embedded again when asked); any
        other error (no memory, too many open files) is logged and the shard skipped, kept."""
        self._forget(shard)
        if isinstance(why, FileNotFoundError):
            return
        damaged, done = isinstance(why, _DAMAGED), "skipped"
        if damaged:
            self.discarded.append(f"{shard.name}: {type(why).__name__}: {why}")
            try:
                shard.unlink(missing_ok=True)
                done = "removed"
            except OSError as exc:   # a read-only cache: never read again by this store
                self._seen.add(shard)
                done = f"kept, not removable ({exc.strerror})"
        log.warning("sentence vectors %s are unusable and were %s (%s: %s); they are embedded again when needed",
                    shard, done, type(why).__name__, why)

    def _merge(self) -> None:
        """Many shards into one, the others removed (unusable ones too)."""
        assert self.folder is not None
        shards = sorted(self.folder.glob("*.npz"))
        if len(shards) <= _MERGE_AT:
            return
        texts: list[str] = []
        vectors: list[np.ndarray] = []
        seen: set[str] = set()
        taken: list[Path] = []
        for shard in shards:
            try:
                held, mapped = self._open(shard)
                rows = [(i, t) for i, t in enumerate(held) if t not in seen]
                vectors.append(np.array(mapped[[i for i, _ in rows]]))
            except (OSError, *_DAMAGED) as exc:
                self._unusable(shard, exc)
                continue
            taken.append(shard)
            texts += [t for _, t in rows]
            seen.update(t for _, t in rows)
        if not vectors:
            return
        try:
            merged = self.folder / f"{_name(texts)}.npz"
            _write(merged, texts, np.concatenate(vectors), self.key)
            for shard in taken:
                if shard != merged:
                    shard.unlink(missing_ok=True)
        except (OSError, ValueError) as exc:
            log.warning("vector shards in %s not merged: %s", self.folder, exc)

    def _forget(self, shard: Path) -> None:
        self._seen.discard(shard)
        self._mapped.pop(shard, None)
        self._where = {t: w for t, w in self._where.items() if w[0] != shard}

    def _store_all(self, pending: list[tuple[list[str], np.ndarray]]) -> None:
        if pending:
            self._store([t for c, _ in pending for t in c], np.concatenate([v for _, v in pending]))
            pending.clear()

    def _store(self, texts: list[str], vectors: np.ndarray) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            shard = self.folder / f"{_name(texts)}.npz"
            _write(shard, texts, vectors, self.key)
        except OSError as exc:      # a read-only or full disk costs speed, never a goal
            log.warning("sentence vectors not stored in %s: %s", self.folder, exc)
            return
        self._seen.add(shard)
        self._where.update((t, (shard, i)) for i, t in enumerate(texts))


def embed_in_chunks(embedder, texts: Sequence[str], chunk: int = CHUNK) -> Iterator[tuple[list[str], np.ndarray]]:
    """``embedder.embed`` over ``texts`` a chunk at a time, the active goal's stop point before
    each: (texts, vectors) per chunk."""
    for start in range(0, len(texts), chunk):
        stop_point()
        part = list(texts[start:start + chunk])
        yield part, embedder.embed(part)


def _name(texts: list[str]) -> str:
    """A shard's name says what it holds, so that a name never changes its rows (another process
    may hold a shard's row numbers while this one merges)."""
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


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


def _write(path: Path, texts: list[str], vectors: np.ndarray, model: str) -> None:
    with written_atomically(path) as f:
        np.savez(f, texts=np.array(texts), vectors=np.asarray(vectors, dtype=np.float32), model=np.array(model))


@contextlib.contextmanager
def written_atomically(path: Path) -> Iterator[IO[bytes]]:
    """A file that appears at ``path`` whole, once written (a reader never sees half of it), or
    not at all: a failed write leaves no temporary file behind."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
