"""The orchestration lab prints its AUROCs with their evidence (issue 21): `orchestrate run` with a scripted model
on 10 questions with 1 right answer prints no AUROC but the sentence why, in the report and in results.json; on 20
questions with 10 right it prints the value, its interval and the counts, the value the one sklearn gives."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from sklearn.metrics import roc_auc_score

from uncertainty_lab import registry
from uncertainty_lab.cli import main
from uncertainty_lab.datasets.qa import load_qa_questions
from uncertainty_lab.orchestration import run_experiment
from uncertainty_lab.orchestration.scripted import ScriptedLLM

FACTUAL = load_qa_questions("factual")
SENTENCE = "not given: 1 right answer and 9 wrong ones; at least 10 of each are needed"
CHEAP = {"judge": "exact", "n_samples": 3, "max_tokens": 8, "policies": ["none"], "progress": False, "figure": False,
         "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"}}


def _script(right: int, total: int) -> dict[str, list[str]]:
    """Question -> samples: the gold answer three times for the first ``right`` questions, three different wrong
    answers for the rest (so the signals separate them)."""
    out = {q.question: [q.answers[0]] for q in FACTUAL[:right]}
    return out | {q.question: ["Purple", "Seven hundred", "Nobody"] for q in FACTUAL[right:total]}


@dataclass
class ByQuestion(ScriptedLLM):
    """The scripted backend keyed by the question (the prompt's first line); the CLI makes it with no settings."""

    script: dict = field(default_factory=lambda: _script(1, 10))

    def reply(self, system, user, index):
        texts = self.script[user.split("\n")[0]]
        return texts[index % len(texts)]


@pytest.fixture
def scripted_backend():
    registry.register("llm_backends", "evidence_scripted")(ByQuestion)
    yield "evidence_scripted"
    registry.unregister("llm_backends", "evidence_scripted")


def test_orchestrate_run_with_one_right_answer_in_ten_gives_no_auroc_but_the_reason(tmp_path, capsys,
                                                                                  scripted_backend):
    config = tmp_path / "ten.json"
    config.write_text(json.dumps({**CHEAP, "llm": scripted_backend, "ids": [q.id for q in FACTUAL[:10]],
                                  "out_dir": str(tmp_path / "out")}))
    assert main(["orchestrate", "run", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("| scripted:script | ")]
    signals = [line for line in lines if "| entropy (discrete_semantic_entropy) |" in line
               or "| density (num_semantic_sets) |" in line]  # the metric that fills each role is named
    assert len(signals) == 2 and all(f"| {SENTENCE} | 10 | 9 | 1 | 0 |" in line for line in signals)
    assert "1.000" not in "\n".join(signals) and "0.500" not in "\n".join(signals)
    assert "at least 10 wrong and 10 right answers" in out
    assert SENTENCE in (tmp_path / "out" / "summary.md").read_text()
    saved = json.loads((tmp_path / "out" / "results.json").read_text())["auroc"]
    assert [(r["signal"], r["value"], r["auroc"], r["n"], r["n_pos"], r["n_neg"]) for r in saved] == [
        ("entropy", None, None, 10, 9, 1), ("density", None, None, 10, 9, 1)]
    assert all(r["reason"] == SENTENCE.removeprefix("not given: ") for r in saved)


def test_ten_of_each_give_the_value_its_interval_and_the_counts(tmp_path):
    llm = ByQuestion(script=_script(10, 20))
    result = run_experiment({**CHEAP, "llm": llm, "ids": [q.id for q in FACTUAL[:20]], "seed": 3,
                             "out_dir": str(tmp_path)})
    run = result.runs[("scripted:script", "none")]
    assert run.first_correct.tolist() == [True] * 10 + [False] * 10
    rows = {r["signal"]: r for r in result.auroc_rows()}
    for role in ("entropy", "density"):
        r = rows[role]
        assert r["auroc"] == pytest.approx(roc_auc_score(run.first_correct, run.first_signal(role)))
        assert (r["n"], r["wrong"], r["right"], r["resamples"], r["seed"], r["level"]) == (20, 10, 10, 2000, 3, 0.95)
        assert r["low"] <= r["auroc"] <= r["high"] and r["reason"] == ""
    table = result.auroc_table()
    assert "| scripted:script | entropy (discrete_semantic_entropy) | 1.000 [1.000, 1.000] | 20 | 10 | 10 | 0 |" in table
    assert result.report().startswith("# Uncertainty-guided orchestration (HASSUM): scripted:script\n")
    assert "Interval: 95% stratified percentile bootstrap, 2000 resamples, seed 3" in table
    saved = json.loads((tmp_path / "results.json").read_text())["auroc"]
    assert saved[0]["value"] == 1.0 and saved[0]["low"] == 1.0 and saved[0]["n_neg"] == 10
