"""Parameter declarations read from dataclass fields, and their validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from uncertainty_lab.parameters import Parameter, ParameterError, parameters, validate


@dataclass
class Plugin:
    k: int = field(default=3, metadata={"min": 1, "max": 10, "help": "how many"})
    rate: float | None = field(default=None, metadata={"min": 0.0})
    rule: Literal["strict", "loose"] = "strict"
    label: str = "x"
    secret: object = field(default=None, metadata={"hidden": True})
    _private: int = 0


def test_declared_parameters():
    ps = {p.name: p for p in parameters(Plugin)}
    assert list(ps) == ["k", "rate", "rule", "label"]
    assert (ps["k"].type, ps["k"].min, ps["k"].max, ps["k"].help) == (int, 1, 10, "how many")
    assert ps["rate"].type is float and ps["rate"].default is None
    assert ps["rule"].choices == ("strict", "loose") and ps["rule"].type is str
    assert parameters(object) == []


def test_validate_normalises_and_rejects():
    assert validate(Plugin, {"k": 10, "rate": 2, "rule": "loose"}) == {"k": 10, "rate": 2.0, "rule": "loose"}
    assert validate(Plugin, {"rate": None}) == {"rate": None}
    with pytest.raises(ParameterError, match=r"'k' must be <= 10"):
        validate(Plugin, {"k": 11})
    with pytest.raises(ParameterError, match=r"'k' must be int, got float"):
        validate(Plugin, {"k": 2.5})
    with pytest.raises(ParameterError, match=r"'rule' must be one of \['strict', 'loose'\].*did you mean 'strict'"):
        validate(Plugin, {"rule": "strikt"})
    with pytest.raises(ParameterError, match="must be one of"):
        Parameter("flag", int, 1, choices=(1, 2)).validate(True)  # True == 1, but it is not a choice
    with pytest.raises(ParameterError, match="has no parameter 'secret'"):
        validate(Plugin, {"secret": 1})
