"""The shapes the completion cache stores: a request (what was asked) and a completion record (what came back).

Checked wherever a stored row is trusted again (a cache hit, a replay, ``cache import``), so a damaged or forged
row is reported as such instead of failing later with a ``KeyError``. Each check returns the first problem found
as a short phrase, or ``""`` when the value is well formed; :func:`request_key` is a request's cache key.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

REQUEST_FIELDS = ("backend", "model", "messages", "params", "seed", "index")


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request (backend, model, messages, params, seed, index)."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def request_problem(request: Any) -> str:
    """What is wrong with a stored request (``backend``, ``model``, ``messages``, ``params``, ``seed``, ``index``)."""
    if not isinstance(request, dict):
        return f"the request is a JSON {type(request).__name__}, not an object"
    missing = [f for f in REQUEST_FIELDS if f not in request]
    if missing:
        return f"the request lacks {', '.join(missing)}"
    if not isinstance(request["backend"], str) or not isinstance(request["model"], str):
        return "the request's backend and model must be strings"
    messages = request["messages"]
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages):
        return "the request's messages must be a list of {role, content} strings"
    if not isinstance(request["params"], dict):
        return "the request's params must be an object"
    if not _is_int(request["seed"]) or not _is_int(request["index"]) or request["index"] < 0:
        return "the request's seed and index must be integers"
    return ""


def _logprobs_problem(logprobs: Any) -> str:
    if logprobs is None:
        return ""
    if not isinstance(logprobs, list):
        return "logprobs must be a list or null"
    for i, t in enumerate(logprobs):
        if not isinstance(t, dict) or not isinstance(t.get("token"), str) or not _is_number(t.get("logprob")):
            return f"logprobs[{i}] must have a string token and a numeric logprob"
        top = t.get("top", [])
        if not isinstance(top, list) or not all(
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and _is_number(a[1]) for a in top):
            return f"logprobs[{i}].top must be a list of [token, logprob] pairs"
    return ""


def completion_problem(record: Any) -> str:
    """What is wrong with a stored completion record (``Completion.to_record()``: text, finish_reason, backend,
    model, seed, index, logprobs)."""
    if not isinstance(record, dict):
        return f"the answer is a JSON {type(record).__name__}, not an object"
    for name in ("text", "finish_reason", "backend", "model"):
        if not isinstance(record.get(name), str):
            return f"the answer's {name} is {'missing' if name not in record else 'not a string'}"
    if record.get("seed") is not None and not _is_int(record["seed"]):
        return "the answer's seed must be an integer or null"
    if not _is_int(record.get("index", 0)):
        return "the answer's index must be an integer"
    return _logprobs_problem(record.get("logprobs"))


def pair_problem(request: dict[str, Any], record: dict[str, Any]) -> str:
    """Whether a well-formed answer belongs to a well-formed request (same backend, model, seed and index)."""
    for name in ("backend", "model", "seed", "index"):
        if record.get(name, 0 if name == "index" else None) != request[name]:
            return f"the answer's {name} {record.get(name)!r} is not the request's {request[name]!r}"
    return ""
