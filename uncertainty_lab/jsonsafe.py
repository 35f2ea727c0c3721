"""JSON-safe values: what run journals, configs and results files hold.

``jsonable(x)`` turns numpy scalars and arrays into Python numbers and lists, tuples into lists, mapping keys
into strings, NaN/±inf into ``None`` (strict JSON has no NaN: "missing is not a number"), and any other object
into its ``label``, ``name`` or type name — never its ``repr``, which can hold a memory address and would make
two identical configurations compare unequal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["canonical", "jsonable"]


def jsonable(x: Any) -> Any:
    """``x`` as JSON values (see the module doc)."""
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        return jsonable(x.item())
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, (str, int, bool)) or x is None:
        return x
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in (sorted(x, key=repr) if isinstance(x, (set, frozenset)) else x)]
    for attr in ("label", "name"):
        value = getattr(x, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(x).__name__


def canonical(x: Any) -> Any:
    """``jsonable(x)`` after a JSON round trip: the value exactly as a journal will read it back."""
    return json.loads(json.dumps(jsonable(x), ensure_ascii=False))
