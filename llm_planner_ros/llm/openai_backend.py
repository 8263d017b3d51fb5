"""OpenAI-compatible backend (OpenAI, vLLM, llama.cpp server, Ollama, ...) via the ``openai`` client.

Uses the completions API with ``logprobs`` where the server has it; the chat API otherwise,
asking for log-probs and reporting none (NaN mean log-prob) where the server gives none.
Retries with back-off are the client's own (``max_retries``); the key comes from an environment
variable and is never logged.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Literal, Optional

from llm_planner_ros.core.errors import CancelToken, LLMError
from llm_planner_ros.llm.base import Completion, SamplingParams, UsageStats, cut_at_stop

log = logging.getLogger(__name__)

CHAT_SYSTEM = ("Continue the user's text exactly where it stops. Write only the continuation: "
               "one short line, no explanation.")


class OpenAIBackend:
    def __init__(self, base_url: str, model: str, *, api: Literal["completions", "chat"] = "completions",
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 60.0, max_retries: int = 2) -> None:
        import openai

        if not model:
            raise LLMError("the OpenAI-compatible backend needs a model name (openai_model)")
        self._openai = openai
        key = os.environ.get(api_key_env) or "not-needed"
        self.client = openai.OpenAI(base_url=base_url or None, api_key=key, timeout=timeout_s,
                                    max_retries=max_retries)
        self.model = model
        self.api = api
        self.name = f"openai:{model}@{base_url or 'api.openai.com'}"
        self.has_logprobs = api == "completions"
        self.stats = UsageStats()

    def complete(self, prompt: str, n: int, params: SamplingParams,
                 cancel: Optional[CancelToken] = None) -> list[Completion]:
        return self._sample(prompt, None, n, params, cancel)

    def chat(self, user: str, n: int, params: SamplingParams,
             cancel: Optional[CancelToken] = None) -> list[Completion]:
        """``n`` answers to one user message, through the chat API."""
        return self._sample(user, [{"role": "user", "content": user}], n, params, cancel)

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...]) -> list[float]:
        """log p(each candidate as the next token), from the completions API's top log-probs;
        a candidate outside the top 20 gets -inf. Needs a server that returns log-probs."""
        if self.api != "completions":
            raise LLMError(f"{self.name}: yes/no probabilities need token log-probs, which the chat API "
                           "setting does not return; use openai_api: completions")
        try:
            resp = self.client.completions.create(model=self.model, prompt=prompt, max_tokens=1, temperature=0.0,
                                                  logprobs=20)
            top = resp.choices[0].logprobs.top_logprobs[0] if resp.choices[0].logprobs else None
        except self._openai.APIError as exc:
            raise LLMError(f"{self.name}: {_short(str(exc))}") from None
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.name}: no log-probs in the response ({_short(str(exc))})") from None
        if not top:
            raise LLMError(f"{self.name} returned no log-probs; the tracker and Eliminate need them")
        return [float(top.get(c, float("-inf"))) for c in candidates]

    def _sample(self, prompt: str, messages: Optional[list[dict]], n: int, params: SamplingParams,
                cancel: Optional[CancelToken]) -> list[Completion]:
        started = time.perf_counter()
        out: list[Completion] = []
        # Some servers (llama.cpp's) ignore n > 1: ask again until there are n samples.
        while len(out) < n:
            if cancel is not None:
                cancel.check()
            seed = None if params.seed is None else params.seed + len(out)
            got = self._request(prompt, n - len(out), params, seed, messages)
            if not got:
                raise LLMError(f"{self.name} returned no choices")
            out.extend(got)
        out = out[:n]
        self.stats.record(out, started)
        return out

    def _request(self, prompt: str, n: int, params: SamplingParams, seed: Optional[int],
                 messages: Optional[list[dict]] = None) -> list[Completion]:
        common = dict(model=self.model, n=n, temperature=params.temperature, top_p=params.top_p,
                      frequency_penalty=params.frequency_penalty, presence_penalty=params.presence_penalty,
                      max_tokens=params.max_tokens, stop=list(params.stop)[:4], seed=seed)
        try:
            if self.api == "completions" and messages is None:
                resp = self.client.completions.create(prompt=prompt, logprobs=1, **common)
                return [self._from_completion(c, params) for c in resp.choices]
            resp = self.client.chat.completions.create(
                messages=messages or [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": prompt}],
                logprobs=True, **common)
            return [self._from_chat(c, params) for c in resp.choices]
        except self._openai.APIStatusError as exc:
            raise LLMError(f"{self.name}: HTTP {exc.status_code}: {_short(exc.message)}") from None
        except self._openai.APITimeoutError:
            raise LLMError(f"{self.name}: timed out") from None
        except self._openai.APIConnectionError as exc:
            raise LLMError(f"{self.name}: cannot connect: {_short(str(exc))}") from None
        except (AttributeError, TypeError, ValueError) as exc:
            raise LLMError(f"{self.name}: malformed response: {_short(str(exc))}") from None

    @staticmethod
    def _from_completion(choice, params: SamplingParams) -> Completion:
        text, stopped = cut_at_stop(choice.text or "", params.stop)
        lps = None
        if choice.logprobs is not None and choice.logprobs.token_logprobs is not None:
            lps, consumed = [], 0
            for tok, lp in zip(choice.logprobs.tokens or [], choice.logprobs.token_logprobs):
                if consumed >= len(text) or lp is None:
                    break
                lps.append(float(lp))
                consumed += len(tok)
            lps = tuple(lps)
        return Completion(text=text, token_logprobs=lps,
                          finish_reason="stop" if stopped else (choice.finish_reason or "stop"))

    @staticmethod
    def _from_chat(choice, params: SamplingParams) -> Completion:
        text, stopped = cut_at_stop(choice.message.content or "", params.stop)
        lps = None
        if choice.logprobs is not None and choice.logprobs.content:
            lps = tuple(float(t.logprob) for t in choice.logprobs.content)
        return Completion(text=text, token_logprobs=lps,
                          finish_reason="stop" if stopped else (choice.finish_reason or "stop"))


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
