"""A failed model call is retried a bounded number of times with doubling waits, then raised with the last error
(its own class kept) — never turned into an answer (llm/retry.py, LLMBackend._one)."""

from __future__ import annotations

import pytest

from uncertainty_lab.llm import LLMBackend, LLMCapabilityError, LLMError, LLMUnavailableError
from uncertainty_lab.llm.retry import ModelCallFailed, call_with_retries


class Flaky:
    """Fails with ``errors`` in turn, then answers."""

    def __init__(self, *errors):
        self.errors, self.calls = list(errors), 0

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_a_transient_failure_is_retried_with_doubling_waits(monkeypatch):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "3")
    monkeypatch.setenv("UL_LLM_RETRY_DELAY", "0.5")
    waits = []
    fn = Flaky(LLMError("HTTP 500"), LLMError("HTTP 502"))
    assert call_with_retries(fn, "a request", sleep=waits.append) == "ok"
    assert fn.calls == 3 and waits == [0.5, 1.0]


def test_past_the_attempts_the_last_error_is_raised_in_its_own_class(monkeypatch):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "2")
    monkeypatch.setenv("UL_LLM_RETRY_DELAY", "1")
    waits = []
    fn = Flaky(LLMError("a"), LLMUnavailableError("the Ollama server at http://h:1 is down"))
    with pytest.raises(LLMUnavailableError, match=r"a request to x failed after 2 attempts: .*http://h:1 is down"):
        call_with_retries(fn, "a request to x", sleep=waits.append)
    assert fn.calls == 2 and len(waits) == 1
    with pytest.raises(ModelCallFailed, match="failed after 2 attempts: b"):
        call_with_retries(Flaky(LLMError("a"), LLMError("b")), "a request", sleep=waits.append)


def test_a_missing_capability_and_other_errors_are_not_retried(monkeypatch):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "5")
    for error in (LLMCapabilityError("no logprobs"), KeyError("bug")):
        fn = Flaky(error)
        with pytest.raises(type(error)):
            call_with_retries(fn, "a request", sleep=lambda s: None)
        assert fn.calls == 1


def test_a_bad_setting_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "many")
    with pytest.raises(ValueError, match=r"\$UL_LLM_ATTEMPTS must be a number"):
        call_with_retries(lambda: 1, "a request")


class Broken(LLMBackend):
    """A backend whose first ``fail`` generations fail with HTTP 500."""

    name = "broken"

    def __init__(self, fail):
        super().__init__()
        self.fail, self.calls = fail, 0

    def model_id(self):
        return "m"

    def _generate(self, messages, **kwargs):
        self.calls += 1
        if self.calls <= self.fail:
            raise LLMError("the server at http://gpu:1 answered HTTP 500")
        return {"text": "Paris"}


def test_every_backend_retries_its_generations(monkeypatch):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "3")
    llm = Broken(fail=2)
    assert [c.text for c in llm.complete("q", seed=None)] == ["Paris"] and llm.calls == 3
    with pytest.raises(LLMError, match="a request to broken:m failed after 3 attempts: .*HTTP 500"):
        Broken(fail=3).complete("q", seed=None)
