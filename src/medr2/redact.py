"""Keeping secrets out of what medr2 writes: credentials in URLs and API keys echoed by servers.

- :func:`redact_url` / :func:`redact_credentials`: ``http://user:password@host`` -> ``http://***@host``, and the
  values of query parameters that carry keys (``?api_key=...``, ``?key=...``, ``?token=...``) -> ``***``;
- :func:`redact_tree`: the same for every string of a JSON-like structure (the run manifest);
- :func:`scrub_secret`: a secret and every fragment of it of at least ``min_fragment`` characters removed from a
  text (a server that echoes a header may cut it anywhere).
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "***"
MIN_FRAGMENT = 8

# scheme://userinfo@ ; userinfo stops at the first "/", "@", whitespace or quote
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s\"'<>]+@")
_KEY_PARAM = re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|auth|password|secret|sig)=)[^&#\s\"'<>]+")
# a key given on a command line (a --serve command): ``--api-key sk-..``, ``--token=..``, ``OPENAI_API_KEY=..``
_KEY_FLAG = re.compile(r"(?i)(--?(?:api[_-]?key|token|access[_-]?token|password|secret)(?:=|\s+))[^\s\"'<>]+")
_KEY_ASSIGN = re.compile(r"\b([A-Za-z0-9_]*(?:API_KEY|APIKEY|TOKEN|SECRET|PASSWORD)=)[^\s\"'<>]+")


def redact_credentials(text: str) -> str:
    """``text`` with the user/password part of every URL in it, and key-carrying query values, masked."""
    if "://" in text or "=" in text:
        text = _KEY_PARAM.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", text))
    if "-" in text or "=" in text:
        text = _KEY_ASSIGN.sub(rf"\1{MASK}", _KEY_FLAG.sub(rf"\1{MASK}", text))
    return text


def redact_url(url: str) -> str:
    """A URL as it may be recorded: without the credentials it may carry."""
    return redact_credentials(url)


def redact_tree(obj: Any) -> Any:
    """A copy of a JSON-like structure with :func:`scrub_registered` (registered secrets, URL credentials,
    keys on command lines) applied to every string in it."""
    if isinstance(obj, str):
        return scrub_registered(obj)
    if isinstance(obj, dict):
        return {k: redact_tree(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_tree(v) for v in obj]
    return obj


def secret_grams(secret: str | None, min_fragment: int = MIN_FRAGMENT) -> frozenset[str]:
    """Every ``min_fragment``-character piece of ``secret`` (any longer fragment contains one of them)."""
    if not secret or len(secret) < min_fragment:
        return frozenset()
    return frozenset(secret[i:i + min_fragment] for i in range(len(secret) - min_fragment + 1))


def scrub_secret(text: str, secret: str | None, grams: frozenset[str] | None = None,
                 min_fragment: int = MIN_FRAGMENT) -> str:
    """``text`` with ``secret`` and every run of text made of its ``min_fragment``-character pieces masked.

    Each piece is searched with ``str.find`` (C speed), so the cost is linear in the text per piece and a text
    without any piece is returned after one pass per piece."""
    if not secret or not text:
        return text
    text = text.replace(secret, MASK)
    if grams is None:
        grams = secret_grams(secret, min_fragment)
    spans: list[tuple[int, int]] = []
    for g in grams:
        start = text.find(g)
        while start >= 0:
            spans.append((start, start + len(g)))
            start = text.find(g, start + 1)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    pos = 0
    cur_start, cur_end = spans[0]
    for s, e in spans[1:]:
        if s <= cur_end:  # overlapping or adjacent pieces are one fragment
            cur_end = max(cur_end, e)
            continue
        out.extend((text[pos:cur_start], MASK))
        pos, (cur_start, cur_end) = cur_end, (s, e)
    out.extend((text[pos:cur_start], MASK, text[cur_end:]))
    return "".join(out)


_REGISTERED: dict[str, frozenset[str]] = {}  # secrets this process read (API keys), with their grams


def register_secret(secret: str | None) -> None:
    """Remember a secret this process read (an API key), so :func:`scrub_registered` masks it on every output
    channel (the console writer :mod:`medr2.console`, error texts, logs, manifests)."""
    if secret and secret not in _REGISTERED:
        _REGISTERED[secret] = secret_grams(secret)


def scrub_registered(text: str) -> str:
    """``text`` with every registered secret (and its fragments) and URL credentials masked."""
    for secret, grams in _REGISTERED.items():
        text = scrub_secret(text, secret, grams)
    return redact_credentials(text)


_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_PLAIN_VAR = re.compile(r"[A-Z][A-Z0-9_]{0,63}")  # OPENAI_API_KEY: a name that is safe to show


def read_key(env_name: str, *, option: str = "--api-key-env") -> str:
    """The API key held by the environment variable ``env_name``, validated and registered for scrubbing
    (:func:`register_secret`). Refused (BadInput, exit 2) without ever showing the key: a name that is not a
    variable name (a key given by mistake), an unset variable, a value with control characters (a trailing
    CR/LF from a file) or characters an HTTP header cannot carry."""
    from medr2.errors import BadInput

    if not _VAR_NAME.fullmatch(env_name):
        raise BadInput(f"{option} takes the name of an environment variable (letters, digits and _); what was given "
                       "is not one and is not shown, since it may be the key itself", field=option)
    shown = env_name if _PLAIN_VAR.fullmatch(env_name) else "named by " + option + " (name not shown: it may be a key)"
    value = os.environ.get(env_name)
    if not value:
        register_secret(env_name if shown != env_name else None)
        raise BadInput(f"environment variable {shown} is not set", field=option)
    register_secret(value)
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise BadInput(f"the key in environment variable {shown} contains a control character (U+{ord(bad):04X}, "
                       "e.g. a trailing newline from a file); remove it (the key is not shown)", field=option)
    if not value.isascii() or value != value.strip():
        raise BadInput(f"the key in environment variable {shown} has characters an HTTP header cannot carry "
                       "(non-ASCII, or leading/trailing spaces); the key is not shown", field=option)
    return value
