"""Hostile inputs to the core and the base: broken config files, invalid text, huge texts, unreadable model
replies, non-finite times, bad seeds, damaged journals, duplicate passage ids. Each test is named for what it
breaks; each failed before its fix (a traceback, a silent NaN or number, an obscure error, minutes of work)."""

from __future__ import annotations

import json
import math
import signal
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from fakes import CannedLLM, FakeEmbedder, TableNLIJudge, unit

from uncertainty_lab import cli, embeddings, registry
from uncertainty_lab.hawkes import HawkesError, HawkesModel, simulate
from uncertainty_lab.hawkes.excitation import excitation
from uncertainty_lab.journal import JournalFormat
from uncertainty_lab.search.gates import ExhaustionGate
from uncertainty_lab.search.record import SearchStep
from uncertainty_lab.semantic import SampleSet, SemanticDensity, cluster
from uncertainty_lab.semantic.lexical import LexicalSimilarity
from uncertainty_lab.semantic.text import InvalidTextWarning
from uncertainty_lab.semantic.verbalized import parse_confidence, read_confidence

# --- config files -------------------------------------------------------------------------------------------

#: (lab command, a number setting it has)
LAB_NUMBERS = [("cascade", "temperature"), ("orchestrate", "temperature"), ("search", "level")]


def _run_lab(capsys, lab: str, path) -> tuple[int, list[str]]:
    """``<lab> run --check`` on the config at ``path`` (a config that passes only prints the plan): the exit code
    and the lines on stderr."""
    out = path.parent / "out"
    code = cli.main([lab, "run", "--config", str(path), "--no-progress", "--check", "--out-dir", str(out)])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize(("lab", "setting"), LAB_NUMBERS)
def test_config_with_a_string_number_names_the_setting_and_file(tmp_path, capsys, lab, setting):
    path = tmp_path / "hot.json"
    path.write_text(json.dumps({setting: "hot"}), encoding="utf-8")
    code, err = _run_lab(capsys, lab, path)
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith("error: ") and str(path) in err[0]
    assert f"{setting} must be a number, got 'hot'" in err[0]


@pytest.mark.parametrize("lab", ["cascade", "orchestrate", "search"])
def test_config_with_a_number_for_llm_is_one_error_line_not_a_traceback(tmp_path, capsys, lab):
    path = tmp_path / "llm.toml"
    path.write_text("llm = 42\n", encoding="utf-8")
    code, err = _run_lab(capsys, lab, path)
    assert code == 1 and len(err) == 1, err
    assert str(path) in err[0] and "llm must be a model spec string" in err[0] and "got 42" in err[0]


@pytest.mark.parametrize("lab", ["cascade", "orchestrate", "search"])
def test_config_that_is_a_binary_file_says_it_is_not_utf8_text(tmp_path, capsys, lab):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00\x01{\x89PNG")
    code, err = _run_lab(capsys, lab, path)
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {path}, line 1: not UTF-8 text (invalid start byte at byte 0, near ")
    assert err[0].endswith("; save the file as UTF-8; a config must be a small JSON or TOML file")
    assert "\\xff" in err[0] and "\xff" not in err[0]  # the bytes are quoted escaped, never raw


@pytest.mark.parametrize(("lab", "text", "message"), [
    ("cascade", 'top_p = "high"\n', "top_p must be a number, got 'high'"),
    ("cascade", 'overwrite = "yes"\n', "overwrite must be true or false, got 'yes'"),
    ("cascade", "node_instructions = {local_tv = 3}\n", "node_instructions must be a table/dict of strings, got"),
    ("orchestrate", 'share_cache = "no"\n', "share_cache must be true or false, got 'no'"),
    ("orchestrate", "extra_metrics = [1, 2]\n", "extra_metrics must be a list of strings, got [1, 2]"),
    ("search", "policies = 7\n", "policies must be a list of strings, got 7"),
    ("search", 'loop_threshold = "x"\n', "loop_threshold must be a number, got 'x'"),
])
def test_config_with_a_value_of_the_wrong_kind_says_what_the_setting_takes(tmp_path, capsys, lab, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    code, err = _run_lab(capsys, lab, path)
    assert code == 1 and len(err) == 1 and message in err[0] and str(path) in err[0], err


# --- invalid text -------------------------------------------------------------------------------------------

SURROGATE = "caf\ud800"


def _metrics_that_read_texts():
    """Every built-in metric, with the real embedder behind the judges (where the tokenizer broke)."""
    llm = CannedLLM(lambda prompt: "80")
    judged = ["semantic_entropy", "discrete_semantic_entropy", "num_semantic_sets", "eigval_laplacian", "degree",
              "eccentricity"]
    out = [registry.create("metrics", name, judge="embedding") for name in judged]
    out += [registry.create("metrics", "semantic_density", judge="embedding", variant=v)
            for v in ("embedding_response", "embedding_set", "mean_cosine")]
    out += [registry.create("metrics", "lexical_similarity"), registry.create("metrics", "predictive_entropy"),
            registry.create("metrics", "verbalized_confidence", llm=llm)]
    return out


def test_answer_with_a_lone_surrogate_is_scored_by_every_metric_with_a_warning_naming_it():
    with pytest.warns(InvalidTextWarning):
        samples = SampleSet.from_texts([SURROGATE, "cafe", "tea"], logprobs=[[-0.1], [-0.2], [-0.3]], question="Drink?")
    for m in _metrics_that_read_texts():
        with warnings.catch_warnings():
            warnings.simplefilter("error", InvalidTextWarning)  # the set is already clean: no second warning
            r = m.score(samples)
        assert not r.missing and math.isfinite(r.confidence), (m.name, r)
    with pytest.warns(InvalidTextWarning, match=r"texts\[0\] \('caf\\ud800'\).*U\+D800.*U\+FFFD"):
        s = SampleSet.from_texts(["tea", "x", SURROGATE][::-1])
    assert s.texts[0] == "caf\ufffd"
    s.to_json().encode("utf-8")  # a journal can hold it


def test_every_builtin_metric_is_covered_by_the_invalid_text_test():
    from uncertainty_lab.registry import describe

    shipped = {i.name for i in describe("metrics") if i.distribution == "uncertainty-lab"}
    assert shipped == {m.name for m in _metrics_that_read_texts()}


def test_cluster_with_a_lone_surrogate_replaces_it_and_names_the_text():
    with pytest.warns(InvalidTextWarning, match=r"texts\[1\]"):
        c = cluster(["cafe", SURROGATE, "cafe"], "embedding")
    assert c.texts[1] == "caf\ufffd" and c.labels[0] == c.labels[2]
    with pytest.warns(InvalidTextWarning):
        assert embeddings.Embedder().encode([SURROGATE]).shape == (1, 384)
    with pytest.warns(InvalidTextWarning, match="question"):
        SampleSet.from_texts(["a"], question="why\udfff")


# --- huge texts ---------------------------------------------------------------------------------------------


@contextmanager
def _within(seconds: int):
    """Fail (rather than hang) when the block takes longer than ``seconds``."""
    def stop(*_):
        raise AssertionError(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _long_texts(n_chars: int = 100_000, k: int = 3) -> list[str]:
    rng = np.random.default_rng(0)
    vocab = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=rng.integers(2, 10))) for _ in range(2000)]
    out = []
    for _ in range(k):
        words = rng.choice(vocab, size=n_chars // 5)
        out.append(" ".join(words)[:n_chars])
    return out


def test_lexical_similarity_of_three_100k_character_texts_takes_seconds_not_minutes():
    texts = _long_texts()
    with _within(60):  # 510 s with the O(|a|·|b|) Python LCS
        r = LexicalSimilarity().score(texts)
    assert 0.0 < r.confidence < 1.0 and r.details["truncated"] == 0 and r.details["max_tokens"] == 100_000


def test_lexical_similarity_cuts_each_text_at_max_tokens_and_says_so():
    texts = ["a b c d e f g h", "a b c d x y z w", "a b"]
    r = LexicalSimilarity(max_tokens=4).score(texts)
    assert r.details["truncated"] == 2 and r.details["max_tokens"] == 4
    assert r.details["rouge_l"][0][1] == 1.0  # only "a b c d" of each counts


def test_embedding_density_of_texts_beyond_the_embedder_window_counts_them_and_warns_once(monkeypatch):
    monkeypatch.setattr(embeddings, "_warned_truncation", set())
    base = "the launch was delayed because of the weather " * 40
    texts = [base + "and it flew on Monday", base + "and it never flew", "short answer"]
    for variant in ("embedding_response", "embedding_set", "mean_cosine"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = SemanticDensity(variant=variant, weighting="uniform").score(texts)
        assert r.details["truncated"] == 2, variant
        cut = [w for w in caught if issubclass(w.category, embeddings.EmbedderTruncationWarning)]
        assert len(cut) == (1 if variant == "embedding_response" else 0), variant  # once per model
    assert "256 word pieces" in str(cut[0].message) if cut else True
    emb = embeddings.Embedder()
    assert emb.max_tokens == 256 and emb.truncated(texts) == [0, 1]
    fake = FakeEmbedder({t: unit(i) for i, t in enumerate(texts)})
    assert SemanticDensity(variant="embedding_set", embedder=fake).score(texts).details["truncated"] is None


# --- unreadable model replies -------------------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "why"), [
    ("-5", "negative"), ("Confidence: -20%", "negative"), ("1e999", "scientific notation"), ("1e2", "scientific"),
    ("0x50", "hexadecimal"), ("inf", "not a finite number"), ("NaN", "not a finite number"), ("∞", "finite"),
    ("85th", "not a plain number"), ("3/0", "divides by zero"), ("150%", "above 100"), ("sure!", "no number"),
])
def test_verbalized_confidence_that_is_not_a_plain_0_to_100_number_is_missing_with_the_reason(reply, why):
    assert parse_confidence(reply) is None
    assert why in read_confidence(reply)[1]
    r = registry.create("metrics", "verbalized_confidence", llm=CannedLLM(lambda p: reply)).score(["Rome"])
    assert r.missing and why in r.details["missing"] and r.details["raw"] == reply


def test_verbalized_confidence_written_plainly_still_reads():
    for reply, value in [("85", 85.0), ("+85", 85.0), ("Confidence - 85", 85.0), (".85", 85.0), ("80 / 100", 80.0)]:
        assert parse_confidence(reply) == value, reply


# --- non-finite times and bad seeds -------------------------------------------------------------------------

MODEL = HawkesModel.exponential([0.5, 0.2], [[0.3, 0.1], [0.0, 0.2]], beta=1.0)


@pytest.mark.parametrize("t", [math.nan, math.inf, [1.0, math.nan], [0.5, -math.inf]])
def test_hawkes_intensity_at_a_nan_or_infinite_time_is_an_error_naming_t(t):
    with pytest.raises(HawkesError, match=r"^t must be finite times, got (nan|inf|-inf)"):
        MODEL.intensity(t, ([0.1], [0]))
    with pytest.raises(HawkesError, match=r"^t must be finite times"):
        MODEL.compensator(t, ([0.1], [0]))
    with pytest.raises(HawkesError, match=r"^query must be finite times"):
        excitation(MODEL.kernel, np.array([0.1]), np.array([0]), 2, np.atleast_1d(t))


@pytest.mark.parametrize("seed", [-1, 2.5, "7", True])
def test_hawkes_simulate_with_a_negative_or_non_integer_seed_says_what_a_seed_is(seed):
    with pytest.raises(HawkesError, match=r"seed must be a non-negative integer or a numpy Generator.*got"):
        simulate(MODEL, T=5.0, seed=seed)
    with pytest.raises(HawkesError, match=r"rng must be a non-negative integer or a numpy Generator"):
        MODEL.sample_next(None, 0.0, rng=seed)
    assert simulate(MODEL, T=5.0, seed=np.int64(3)).n_events == simulate(MODEL, T=5.0, seed=3).n_events


# --- damaged journals ---------------------------------------------------------------------------------------

FORMAT = JournalFormat("uncertainty_lab.test/1", body=("step",), what="test run")


def test_journal_with_a_garbage_line_in_the_middle_says_how_to_recover(tmp_path):
    path = tmp_path / "run 1.jsonl"
    header = {"type": "header", "format": FORMAT.name, "config": {}}
    path.write_text("\n".join([json.dumps(header), json.dumps({"type": "step"}), "#%&garbage",
                               json.dumps({"type": "step"})]) + "\n", encoding="utf-8")
    for action in (lambda: FORMAT.read(path), lambda: FORMAT.open(path, {})):
        with pytest.raises(ValueError, match=r"line 3 is not JSON") as info:
            action()
        message = str(info.value)
        assert f"mv '{path}' '{path}.damaged'" in message and "rerun to start that unit afresh" in message
        assert "delete line 3" in message


def test_journal_with_an_unknown_record_or_a_second_header_says_how_to_recover(tmp_path):
    header = {"type": "header", "format": FORMAT.name, "config": {}}
    for name, records, line in (("unknown.jsonl", [header, {"type": "mystery"}], 2),
                                ("twice.jsonl", [header, {"type": "step"}, header], 3)):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        with pytest.raises(ValueError, match=rf"line {line}.*mv {path} {path}\.damaged.*delete line {line}"):
            FORMAT.read(path)


# --- duplicate passage ids ----------------------------------------------------------------------------------


def test_exhaustion_gate_counts_a_passage_retrieved_twice_in_a_round_once():
    gate = ExhaustionGate()
    gate.update(SearchStep("first query", ("d1",)))
    signals = gate.update(SearchStep("second query", ("d2", "d1", "d1", "d1"))).signals
    assert signals["upr"] == 0.5  # |{d2, d1} \ {d1}| / |{d2, d1}|; was 1/4 over the list
    assert (signals["n_passages"], signals["n_distinct"], signals["n_new"]) == (4, 2, 1)


# --- semantic density's self pair ---------------------------------------------------------------------------


class _SpyNLI(TableNLIJudge):
    def probabilities_many(self, question, directed):
        self.requested = [*getattr(self, "requested", []), *directed]
        return super().probabilities_many(question, directed)


def test_semantic_density_nli_does_not_request_the_discarded_self_pair_judgement():
    judge = _SpyNLI(table={}, default=(0.2, 0.3, 0.5))
    s = SampleSet.from_texts(["T", "X", "T", "Y"], greedy="G")
    r = SemanticDensity(judge=judge, weighting="uniform").score(s)
    assert judge.requested and all(p != h for p, h in judge.requested)
    assert {p for p, _ in judge.requested} | {h for _, h in judge.requested} == {"G", "T", "X", "Y"}
    assert r.details["kernel"][r.details["references"].index("G")] == 1.0  # K(y*, y*) = 1
    assert r.details["self_pair"] == "K(y*, y*) = 1, not judged"


@pytest.mark.parametrize(("lab", "setting", "value"), [
    ("orchestration", "policies", "both"), ("orchestration", "ids", "factual-001"),
    ("cascade", "selectors", "hawkes"), ("search", "beliefs", "predicate"),
])
def test_one_item_for_a_list_setting_is_a_list_of_it_not_its_characters(lab, setting, value):
    import importlib

    config_class = importlib.import_module(f"uncertainty_lab.{lab}.experiment").EXPERIMENT.config_class
    config = config_class.from_mapping({setting: value})
    assert getattr(config, setting) == [value]


@pytest.mark.parametrize("metric", ["discrete_semantic_entropy", "num_semantic_sets"])
def test_embedding_judged_entropy_says_how_many_samples_the_embedder_cut(metric):
    """Texts that differ only after the embedder's 256 word pieces cluster together; the result says so."""
    from uncertainty_lab import registry

    base = "the launch was delayed because of the weather " * 40
    texts = [base + "and it flew on Monday", base + "and it never flew", "short answer"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = registry.create("metrics", metric, judge="embedding").score(texts)
    assert r.details["truncated"] == 2
    assert "truncated" not in registry.create("metrics", metric, judge="exact").score(texts).details
