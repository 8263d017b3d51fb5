"""Keep credentials out of everything the stack writes: results, feedback, topics, logs, traces.

A secret is the value of an environment variable whose name looks like a credential, a value
registered by the code that reads it (the OpenAI backend registers the key it was given,
whatever its variable is called), or text shaped like a bearer token or an API key."""
from __future__ import annotations

import os
import re
import threading
from typing import Optional

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
    """``text`` with every secret replaced by ``***``; ``known``: :func:`secrets`, when the caller
    redacts many strings at once."""
    for value in secrets() if known is None else known:
        text = text.replace(value, "***")
    return _SHAPED.sub("***", text)
