"""Keep credentials out of everything the stack writes: results, feedback, topics, logs, traces.

A secret is the value of an environment variable whose name looks like a credential, a value
registered by the code that reads it (the OpenAI backend registers the key it was given,
whatever its variable is called), or text shaped like a bearer token or an API key. A part of a
key-like secret counts too, once it is ``PART`` characters long or longer: a server that echoes a
key cut off by a few characters, or a key split across two lines, leaks it all the same. Case
does not matter: a server may echo a key upper-cased."""
from __future__ import annotations

import functools
import os
import re
import threading
from typing import Optional

PART = 12   # a run of this many characters of a secret, or more, is redacted wherever it stands

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_SHAPED = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|(?<=Bearer )[A-Za-z0-9._~+/\-]{8,}=*", re.IGNORECASE)
_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Never write ``value`` anywhere (an API key read from a variable of any name)."""
    if value and len(value) >= 6:
        with _lock:
            _registered.add(value)


def secrets() -> list[str]:
    """Known secret values, longest first."""
    with _lock:
        values = set(_registered)
    values |= {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    return sorted(values, key=len, reverse=True)


def redact(text: str, known: Optional[list[str]] = None) -> str:
    """``text`` with every secret, and every run of ``PART`` or more characters of a key-like
    secret, replaced by ``***``; ``known``: :func:`secrets`, when the caller redacts many strings
    at once."""
    values = tuple(secrets() if known is None else known)
    if values:
        text = _whole(values).sub("***", text)
    windows = _windows(values)
    if windows and len(text) >= PART:
        lowered = text.lower()
        if len(lowered) != len(text):   # a character whose lower case is longer: compare as written
            lowered = text
        spans: list[list[int]] = []
        for start in range(len(text) - PART + 1):   # every start of a secret's PART-character window
            if lowered[start:start + PART] in windows:
                if spans and start <= spans[-1][1]:
                    spans[-1][1] = start + PART
                else:
                    spans.append([start, start + PART])
        for start, end in reversed(spans):
            text = text[:start] + "***" + text[end:]
    return _SHAPED.sub("***", text)


def redact_all(value, known: Optional[list[str]] = None):
    """``value`` (strings, and dicts and lists of them, nested) with every string redacted, keys
    too: what is serialised afterwards (JSON escapes quotes, backslashes and non-ASCII) carries no
    secret, however the serialiser would have spelled it."""
    known = secrets() if known is None else known
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, dict):
        return {redact_all(k, known): redact_all(v, known) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_all(v, known) for v in value]
    return value


@functools.lru_cache(maxsize=8)
def _whole(values: tuple[str, ...]) -> re.Pattern[str]:
    """Any of ``values`` (longest first), whatever its case."""
    return re.compile("|".join(map(re.escape, values)), re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def _windows(values: tuple[str, ...]) -> frozenset[str]:
    """Every ``PART``-character window of the key-like secrets among ``values``: a run of windows
    that overlap or touch in a text is a part of a secret. Not of a path, a URL or text with
    spaces (a variable named like a credential that holds a keystore's folder, say: a part of it
    is ordinary text), nor of one over 512 characters (a PEM block is replaced whole)."""
    keys = [v for v in values if PART <= len(v) <= 512 and not v.startswith(("/", "~", "."))
            and "://" not in v and not any(c.isspace() for c in v)]
    windows = {v[i:i + PART] for v in keys for i in range(len(v) - PART + 1)}
    return frozenset(windows | {w.lower() for w in windows})   # as written too: see redact
