"""Embedded backend: a GGUF model run on the CPU by llama-cpp-python.

Log-probs are read from the last position's logits as each token is generated (the C API's
``llama_get_logits_ith``), which avoids ``logits_all=True`` (GBs of memory, ~10x slower).
Relies on llama-cpp-python 0.3.36's ``Llama.generate``, its ``input_ids``, ``n_tokens`` and
``_requires_eval``, and llama.cpp's ``llama_state_get_data``/``llama_state_set_data`` and
``llama_set_abort_callback``; the version is pinned.

Prompts are evaluated line by line, and the state after each line is kept
(:class:`PromptStates`), keyed by the exact tokens up to there. A prompt that shares lines with an
earlier one (the demonstration, the steps so far) starts from the state of the longest such
prefix. Because every prompt is split at the same places whatever ran before, a state loaded from
the cache is bit for bit the one evaluation would produce: the same goal, seed and settings give
the same plan, first or after other goals. Each of the k samples starts from the evaluated prompt.

Under ``params.constraint`` each sample is drawn under the constraint's grammar (GBNF): 0.3.36's
``LlamaGrammar`` only holds the text, and ``generate`` builds a new sampler chain (penalties,
grammar, then greedy or the random samplers) on every call, so every sample starts from the
grammar's first state; nothing needs resetting. Log-probs stay the model's own (the raw logits'),
not those renormalised over what the grammar allows.
"""
from __future__ import annotations

import ctypes
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TypeVar

import numpy as np

from llm_planner_ros.core.errors import CancelToken, LLMError, PlanningError, PromptTooLong
from llm_planner_ros.llm.base import SENTENCE_END, Completion, SamplingParams, UsageStats, cut_at_stop, said_again
from llm_planner_ros.llm.constraint import Constraint
from llm_planner_ros.llm.models import entry_of_file, smollm2_path  # noqa: F401 (smollm2_path: found here too)
from llm_planner_ros.llm.threads import ThreadCount

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptState:
    """The model's state (its KV cache) after some prompt tokens, without llama-cpp-python's
    copy of the logits array (a 100 MB copy per save, which made states cost more than they save)."""

    data: Any             # ctypes buffer of llama_state_get_data
    llama_state_size: int
    input_ids: np.ndarray


class PromptStates:
    """Model states after evaluated prompt prefixes, by their exact tokens; least recently used
    dropped beyond ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], PromptState] = OrderedDict()
        self._bytes = 0

    def get(self, tokens: tuple[int, ...]) -> Optional[PromptState]:
        state = self._states.get(tokens)
        if state is not None:
            self._states.move_to_end(tokens)
        return state

    def put(self, tokens: tuple[int, ...], state: PromptState) -> None:
        if tokens in self._states:
            return
        self._states[tokens] = state
        self._bytes += state.llama_state_size
        while self._bytes > self.max_bytes and len(self._states) > 1:
            _, old = self._states.popitem(last=False)
            self._bytes -= old.llama_state_size

    def clear(self) -> None:
        self._states.clear()
        self._bytes = 0


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities from logits, over the last axis (in float64)."""
    logits = logits.astype(np.float64)
    m = logits.max(axis=-1, keepdims=True)
    return logits - (m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True)))


class LlamaCppBackend:
    has_logprobs = True

    def __init__(self, model_path: Path, *, n_ctx: int = 2048, n_threads: int = 0, seed: int = 0,
                 prompt_cache_mb: int = 64, turn: Optional[str] = None) -> None:
        """``n_threads``: CPU threads; 0 = the CPUs other processes leave idle, asked at each call
        (:mod:`.threads`). ``prompt_cache_mb`` bounds the kept prompt states; 0 keeps none across calls (each
        prompt is evaluated from its start, once per call). ``turn``: a user turn's layout for the
        yes/no judges (``llm.base.user_turn``); None: the registry line's of the model file."""
        import llama_cpp

        if not Path(model_path).is_file():
            raise LLMError(f"GGUF model not found: {model_path}")
        self._llama_cpp = llama_cpp
        self.threads = ThreadCount(n_threads)
        self._n_threads = self.threads.count
        self.llm = llama_cpp.Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=self._n_threads,
                                   n_threads_batch=self._n_threads, logits_all=False, seed=seed,
                                   verbose=False)
        # llama.cpp pads its context (1000 -> 1024), but llama-cpp-python's token buffers keep the
        # size asked for: the smaller is what fits
        self.n_ctx = min(n_ctx, self.llm.n_ctx())
        self.name = f"llama.cpp:{Path(model_path).name}"
        registered = entry_of_file(Path(model_path))
        self.turn = turn if turn is not None else (registered.turn if registered is not None else "")
        self.seed = seed
        self.n_vocab = self.llm.n_vocab()
        self.eos = self.llm.token_eos()
        self.stats = UsageStats()
        self._lock = threading.Lock()  # one llama context: one generation at a time
        # every call computes on this one thread: llama.cpp's OpenMP keeps a team of threads per
        # calling thread, and calls from a node's rotating goal threads ran 1.5x slower on two
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama.cpp")
        self.prompt_cache_mb = prompt_cache_mb
        self._states = PromptStates(prompt_cache_mb * 1_000_000)
        self._newline: dict[int, bool] = {}
        self._grammars: OrderedDict[Constraint, Any] = OrderedDict()   # LlamaGrammar, checked
        # asked by llama.cpp within a batch's decode (:meth:`_stoppable`); kept here, as llama.cpp
        # holds only its address
        self._cancel: Optional[CancelToken] = None
        self._abort = llama_cpp.ggml_abort_callback(self._aborts)
        self._no_abort = llama_cpp.ggml_abort_callback()   # NULL: none asked

    GRAMMARS_KEPT = 8

    def grammar(self, constraint: Constraint) -> Any:
        """The constraint's ``LlamaGrammar``, parsed once by llama.cpp to check it (0.3.36's
        ``LlamaGrammar.from_string`` does not, and a grammar that does not parse would be added
        to the sampler chain as a null sampler); the last few are kept."""
        grammar = self._grammars.get(constraint)
        if grammar is not None:
            self._grammars.move_to_end(constraint)
            return grammar
        gbnf = constraint.gbnf()
        sampler = self._llama_cpp.llama_sampler_init_grammar(self.llm._model.vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            raise LLMError(f"llama.cpp does not parse the grammar of {constraint!r}")
        self._llama_cpp.llama_sampler_free(sampler)
        grammar = self._grammars[constraint] = self._llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False)
        while len(self._grammars) > self.GRAMMARS_KEPT:
            self._grammars.popitem(last=False)
        return grammar

    def _compute(self, work: Callable[[], T], cancel: Optional[CancelToken] = None) -> T:
        """``work`` (what touches the context) on the backend's own thread, one call at a time, on
        as many CPU threads as :mod:`.threads` finds idle. A decode that ``cancel`` stops ends
        with its error; what it left in the context is dropped, never kept as a prompt state."""
        def run() -> T:
            try:
                return work()
            except PlanningError:
                raise
            except RuntimeError:   # llama_decode returned 2: aborted
                if cancel is None or not cancel.cancelled:
                    raise
                self.llm.reset()   # every call starts from a reset or a loaded state
                raise cancel.error from None
        with self._lock:
            n = self.threads()
            if n != self._n_threads:
                self.llm._ctx.set_n_threads(n, n)
                self._n_threads = n
            return self._thread.submit(run).result()

    def _stoppable(self, cancel: Optional[CancelToken], decode: Callable[..., Any], *args: Any) -> None:
        """``decode(*args)`` with llama.cpp asking ``cancel`` after each step of its graph: a long
        line stops within it (llama_decode then fails). Only around batches: each ask takes the
        GIL, too dear for one token at a time."""
        if cancel is None:
            decode(*args)
            return
        self._cancel = cancel
        self._llama_cpp.llama_set_abort_callback(self.llm.ctx, self._abort, None)
        try:
            decode(*args)
        finally:
            self._llama_cpp.llama_set_abort_callback(self.llm.ctx, self._no_abort, None)
            self._cancel = None

    def _aborts(self, _data: Any) -> bool:
        cancel = self._cancel
        return cancel is not None and cancel.cancelled

    def _check_fits(self, n_tokens: int, to_generate: int) -> None:
        if n_tokens + to_generate > self.n_ctx:
            raise PromptTooLong(f"the prompt of {n_tokens} tokens does not fit the LLM's context of "
                                f"{self.n_ctx} tokens with {to_generate} to generate; shorten the "
                                "task or description, or raise llm_context")

    def _save(self) -> PromptState:
        ctx = self.llm.ctx
        size = self._llama_cpp.llama_state_get_size(ctx)
        buffer = (ctypes.c_uint8 * size)()
        used = self._llama_cpp.llama_state_get_data(ctx, buffer, size)
        return PromptState(buffer, int(used), self.llm.input_ids[:self.llm.n_tokens].copy())

    def _load(self, state: PromptState) -> None:
        if self._llama_cpp.llama_state_set_data(self.llm.ctx, state.data, state.llama_state_size) \
                != state.llama_state_size:
            raise LLMError("llama.cpp could not restore a prompt state")
        n = len(state.input_ids)
        self.llm.input_ids[:n] = state.input_ids
        self.llm.n_tokens = n
        self.llm._requires_eval = True   # the next generate() replays the last token for its logits

    def _ends_line(self, token: int) -> bool:
        ends = self._newline.get(token)
        if ends is None:
            ends = self._newline[token] = b"\n" in self.llm.detokenize([token])
        return ends

    def _ends_generation(self, token: int) -> bool:
        """Whether ``token`` is one of the model's end-of-generation tokens. A finished grammar
        allows each of them (SmolLM2's greedy pick is then ``<|endoftext|>``, not its EOS
        ``<|im_end|>``); llama.cpp's server stops at any."""
        return bool(self._llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))

    def _evaluate(self, tokens: list[int], cancel: Optional[CancelToken] = None) -> PromptState:
        """The state after evaluating ``tokens`` line by line, from the longest cached prefix;
        each line's state is kept. With the cache off, from the start, keeping nothing: slower,
        and the same numbers (a prompt is always split at the same places). ``cancel`` is
        checked between lines, and by llama.cpp within one (:meth:`_stoppable`): a line's state is
        kept only once it is evaluated whole."""
        key = tuple(tokens)
        self.stats.prompt_tokens += len(tokens)
        cuts = [i + 1 for i, t in enumerate(tokens[:-1]) if self._ends_line(t)] + [len(tokens)]
        start, state = 0, None
        if self.prompt_cache_mb <= 0:
            self._states.clear()
        for cut in reversed(cuts):
            state = self._states.get(key[:cut])
            if state is not None:
                start = cut
                break
        if state is None:
            self.llm.reset()
        elif start < len(tokens):
            self._load(state)
        keep = self.prompt_cache_mb > 0
        for cut in cuts:
            if cut > start:
                if cancel is not None:
                    cancel.check()
                self._stoppable(cancel, self.llm.eval, tokens[start:cut])
                self.stats.prompt_evaluated += cut - start
                start = cut
                if keep or cut == len(tokens):   # with the cache off, only the whole prompt's state
                    state = self._save()
                    self._states.put(key[:cut], state)
        assert state is not None
        return state

    def _last_logprobs(self) -> np.ndarray:
        ptr = self._llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        return _log_softmax(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)))

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

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...],
                            cancel: Optional[CancelToken] = None) -> list[float]:
        """log p(first token of each candidate | prompt); questions that differ only in their
        last lines cost those lines."""
        tokens = self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        self._check_fits(len(tokens), 1)
        firsts = [self.llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)[0] for c in candidates]
        def compute() -> np.ndarray:
            started = time.perf_counter()
            self._load(self._evaluate(tokens, cancel))
            gen = self.llm.generate(tokens, temp=0.0, reset=True)   # replays the last token: its logits
            next(gen)
            lp = self._last_logprobs()
            gen.close()
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - started
            return lp
        lp = self._compute(compute, cancel)
        return [float(lp[t]) for t in firsts]

    def continuation_logprobs(self, prompt: str, continuations: Sequence[str],
                              cancel: Optional[CancelToken] = None) -> list[tuple[float, ...]]:
        """Each continuation's token log-probs after ``prompt``: the prompt is evaluated once
        (from the cached prefix), then the continuations in token order, each decoding only what
        follows the tokens it shares with the one before (their cache entries and logits are the
        same: "Ann's mug is on the desk" after "Ann's mug is in the cupboard" decodes 4 tokens of 7);
        the prompt's last token is replayed for the first token's logits."""
        tokens = self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        cont = [self.llm.tokenize(c.encode("utf-8"), add_bos=False, special=False) for c in continuations]
        longest = max((len(c) for c in cont), default=0)
        if len(tokens) + longest > self.n_ctx:
            raise PromptTooLong(f"a prompt of {len(tokens)} tokens and a continuation of {longest} do not fit "
                                f"the LLM's context of {self.n_ctx} tokens; raise llm_context")
        if longest + 1 > self.llm.n_batch:   # decoded in one batch
            raise PromptTooLong(f"a continuation of {longest} tokens does not fit llama.cpp's batch of "
                                f"{self.llm.n_batch} tokens; shorten the candidates")
        out: dict[int, tuple[float, ...]] = {}

        def compute() -> None:
            started = time.perf_counter()
            self._load(self._evaluate(tokens, cancel))
            ctx, batch, n_past = self.llm._ctx, self.llm._batch, len(tokens) - 1
            inputs: list[int] = []   # what the cache holds after the prompt: the last token, then a continuation
            rows = np.empty((0, self.n_vocab))   # log-probs of the token after each of ``inputs``
            for i in sorted(range(len(cont)), key=lambda i: cont[i]):
                if cancel is not None:
                    cancel.check()
                ids = cont[i]
                want = [tokens[-1]] + ids[:-1]
                same = 0
                while same < min(len(want), len(inputs)) and want[same] == inputs[same]:
                    same += 1
                ctx.kv_cache_seq_rm(-1, n_past + same, -1)
                if same < len(want):
                    batch.set_batch(batch=want[same:], n_past=n_past + same, logits_all=True)
                    self._stoppable(cancel, ctx.decode, batch)
                    self.stats.prompt_evaluated += len(want) - same
                    new = _log_softmax(np.ctypeslib.as_array(ctx.get_logits(), shape=(len(want) - same, self.n_vocab)))
                    rows = np.concatenate([rows[:same], new])
                inputs = want
                out[i] = tuple(float(rows[k, t]) for k, t in enumerate(ids))
            ctx.kv_cache_seq_rm(-1, n_past, -1)
            self.llm.n_tokens = n_past
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - started
        self._compute(compute, cancel)
        return [out[i] for i in range(len(cont))]

    def _complete_tokens(self, tokens: list[int], n: int, params: SamplingParams,
                         cancel: Optional[CancelToken]) -> list[Completion]:
        self._check_fits(len(tokens), params.max_tokens)
        out: list[Completion] = []

        def compute() -> None:
            started = time.perf_counter()
            grammar = None if params.constraint is None else self.grammar(params.constraint)
            prompt_state = self._evaluate(tokens, cancel)
            for i in range(n):
                seed = (params.seed if params.seed is not None else self.seed) + i
                self._load(prompt_state)   # every sample from the same evaluated prompt
                out.append(self._sample(tokens, params, seed, cancel, grammar))
            self.stats.record(out, started)
        self._compute(compute, cancel)
        return out

    def _sample(self, prompt_tokens: list[int], params: SamplingParams, seed: int,
                cancel: Optional[CancelToken], grammar: Any = None) -> Completion:
        self.llm.set_seed(seed)
        text = b""
        logprobs: list[float] = []
        finish = "length"
        gen = self.llm.generate(prompt_tokens, temp=params.temperature, top_p=params.top_p,
                                top_k=0 if params.temperature > 0 else 40, min_p=0.0,
                                frequency_penalty=params.frequency_penalty,
                                presence_penalty=params.presence_penalty,
                                repeat_penalty=params.repetition_penalty, reset=True, grammar=grammar)
        for token in gen:
            if cancel is not None:
                cancel.check()
            if token == self.eos or (grammar is not None and self._ends_generation(token)):
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
            if params.stop_at_repeat and SENTENCE_END.search(piece.decode("utf-8", errors="ignore")) \
                    and said_again(text.decode("utf-8", errors="ignore")):
                finish = "stop"
                break
        gen.close()
        decoded, _ = cut_at_stop(text.decode("utf-8", errors="replace"), params.stop)
        return Completion(text=decoded, token_logprobs=tuple(logprobs), finish_reason=finish,
                          constrained=grammar is not None)
