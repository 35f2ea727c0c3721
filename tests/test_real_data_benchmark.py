"""benchmarks/real_data.py (issue #12, item 5) without a model: its tables render from a results dict we write, it
refuses a missing data file by name before anything runs, and it rewrites only the generated block of its report."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    """The benchmark scripts as modules (they import each other as top-level names, as `python benchmarks/x.py`)."""
    monkeypatch.syspath_prepend(str(BENCH))
    tables, runner = importlib.import_module("real_data_tables"), importlib.import_module("real_data")
    yield tables, runner
    for name in ("real_data_tables", "real_data", "machine"):
        sys.modules.pop(name, None)


def _ci(est, low, high):
    return {"estimate": est, "low": low, "high": high}


def _results() -> dict:
    auroc = {"n": 40, "wrong": 30, "missing": 0}
    graded = {"n": 40, "wrong": 30, "refused": 2, "accuracy": {**_ci(0.25, 0.142, 0.403), "correct": 10},
              "auroc": {"entropy": {**auroc, **_ci(0.612, 0.455, 0.77)},
                        "density": {**auroc, **_ci(0.587, 0.401, 0.752)}}}
    tqa = {"lab": "orchestration", "dataset": "truthfulqa", "closed_book": False, "model": "embedded:tiny",
           "grader": "strict", "n_samples": 5, "wall_s": 330.0, **graded,
           "regraded": {"hassum": {**graded, "wrong": 20, "accuracy": {**_ci(0.5, 0.352, 0.648), "correct": 20}}}}
    diff = {"difference": 0.0, "low": -0.05, "high": 0.05, "p_value": 1.0, "only_with": 0, "only_without": 0}
    saving = {"policy": "heuristic", "belief": "implicit", "with": "a", "without": "b", "n": 100,
              "accuracy_with": 0.61, "accuracy_without": 0.61, "accuracy_same": True, "accuracy_note": "",
              "accuracy_difference": diff,
              "context_tokens": {"saving": 0.58, "low": 0.55, "high": 0.61, "without": 2800.0, "with": 1176.0},
              "model_tokens": {"saving": None, "low": None, "high": None, "without": 0.0, "with": 0.0}}
    cgdp = {"lab": "search", "dataset": "hotpotqa", "model": "oracle:gold-reader-1", "savings": [saving], "wall_s": 9}
    row = {"selector": "hawkes", "runs": 3, "steps": 12, "mean_S": 0.201, "mean_S_ci": [0.15, 0.25], "late_S": 0.22,
           "late_S_ci": [0.1, 0.34], "trend": "flat", "global_drift": 0.3, "global_drift_sd": 0.02,
           "local_drift": 0.1, "local_drift_sd": 0.03}
    paired = {"selector": "hawkes", "baseline": "recency", "verdict": "not shown", "late_verdict": "not shown",
              "difference": {"mean": 0.01, "low": -0.02, "high": 0.04, "n": 3},
              "late_difference": {"mean": 0.02, "low": -0.05, "high": 0.09, "n": 3}}
    hawkes = {"lab": "cascade", "data_label": "shipped invented cascade", "model": "embedded:tiny",
              "embedder": "all-MiniLM-L6-v2", "rows": [row], "paired": [paired]}
    return {"machine": "a test machine", "updated": "2031-01-01", "hassum": {"truthfulqa/N5/embedded": tqa},
            "cgdp": {"hotpotqa/oracle": cgdp}, "hawkes": {"shipped/embedded": hawkes}}


def test_render_puts_measured_next_to_published(bench):
    tables, _ = bench
    text = tables.render(_results())
    assert text.startswith("Machine: a test machine. Last measured 2031-01-01.")
    tqa = next(line for line in text.splitlines() if line.startswith("| TruthfulQA | strict"))
    assert "| 40 (30 / 10) | 2 | 25.0% [14.2%, 40.3%] | not given: this grader was not audited | 0.612 [0.455, 0.770] | 0.587 [0.401, 0.752] | 90 (51 / 39) | " \
           "0.501 / 0.634 (no interval) | 5.5 min |" in tqa
    # the regraded row's 20 wrong of 40 is fine; a published AUROC on 6 wrong answers of 24 is not quoted
    assert "| TruthfulQA, same answers | hassum | 5 | 40 (20 / 20) | 2 | 50.0%" in text
    assert ("| StrategyQA | | — | not run (no file here) | | | | | | 24 (6 / 18) | not quoted: 18 right answers and 6 "
            "wrong ones; at least 10 of each are needed | |") in text and "0.870" not in text
    # a row stored before the AUROCs carried their method: the interval is named as it was made, not recomputed
    assert "- TruthfulQA: 95% percentile bootstrap over questions (right and wrong resampled together), resamples " \
           "not recorded — these rows stored no per-question scores" in text
    cgdp = next(line for line in text.splitlines() if line.startswith("| hotpotqa · oracle"))
    assert "61% → 61%" in cgdp and "+58% [+55%, +61%] (2,800 → 1,176)" in cgdp and "yes: right on exactly" in cgdp
    hawkes = next(line for line in text.splitlines() if "HawkesLLM (hawkes)" in line)
    assert "3 × 12 | 0.201 [0.150, 0.250] | 0.220 [0.100, 0.340] | flat | 0.300 ± 0.020" in hawkes
    assert "0.636 / 0.682 / increasing" in hawkes and "| 0.450 ± 0.019 | 0.185 ± 0.072 |" in text
    assert "hawkes − recency: mean S_t +0.010 [-0.020, +0.040]" in text and "+0.055 mean, +0.141 late" in text
    assert "| 0.100 ± 0.030 | — | — | 0.636" in hawkes  # memory empty and copies not recorded: a dash, not a 0


def test_the_cascade_table_shows_empty_memories_and_copies(bench):
    tables, _ = bench
    results = _results()
    record = results["hawkes"]["shipped/embedded"]
    record["rows"][0].update(memory_empty=1.0, copies=0.64)
    record["memory_empty_from"] = "replayed without the model"
    text = tables.render(results)
    hawkes = next(line for line in text.splitlines() if "HawkesLLM (hawkes)" in line)
    assert "| 0.100 ± 0.030 | 100% | 64% | 0.636" in hawkes
    assert "| memory empty | copies | published mean / late / trend |" in text
    assert "**shipped invented cascade · hawkes: EMPTY memory at 100% of the steps**" in text
    assert "shipped invented cascade: memory empty replayed without the model." in text


def test_replay_fills_the_memory_empty_share_of_a_shipped_record(bench):
    from uncertainty_lab.cascade.experiment import prepare
    from uncertainty_lab.cascade.memory_use import memory_schedule

    _, runner = bench
    record = {"config": {"seed": 0, "selectors": ["hawkes", "recency"], "ks": [3], "runs": 2, "steps": 5},
              "rows": [{"selector": "hawkes"}, {"selector": "recency"}]}
    assert runner.replay_memory(record) and "replayed without the model" in record["memory_empty_from"]
    setup = prepare({})
    for row in record["rows"]:
        runs = [memory_schedule(setup, row["selector"], 3, r, 5) for r in (0, 1)]
        assert row["memory_empty"] == pytest.approx(sum(s.count(0) / len(s) for s in runs) / 2)
    assert not runner.replay_memory(record)  # already there: nothing replayed
    assert not runner.replay_memory({"config": {"data": {"loader": "gdelt"}}, "rows": [{"selector": "hawkes"}]})


def test_outputs_rewrite_only_the_generated_block(bench, tmp_path):
    _, runner = bench
    md, js = tmp_path / "real_data.md", tmp_path / "real_data.json"
    md.write_text(f"# Title\n\nhand-written\n\n{runner.BEGIN}\nSTALE BLOCK\n{runner.END}\n\nafter\n", encoding="utf-8")
    runner.update_outputs(_results(), js, md)
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nhand-written\n\n") and text.endswith(f"{runner.END}\n\nafter\n")
    assert "STALE BLOCK" not in text and "| TruthfulQA | strict" in text and js.exists()


def test_missing_data_file_is_refused_by_name(bench, capsys):
    _, runner = bench
    with pytest.raises(SystemExit) as stop:
        runner.parse_args(["--truthfulqa", "no/such/TruthfulQA.csv", "--only", "hassum"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--truthfulqa no/such/TruthfulQA.csv: no such file" in err and "downloads nothing" in err
    assert "github.com/sylinrl/TruthfulQA" in err


def test_sample_sizes_by_data_set(bench, tmp_path):
    _, runner = bench
    csv = tmp_path / "TruthfulQA.csv"
    csv.write_text("", encoding="utf-8")
    args = runner.parse_args(["--truthfulqa", str(csv), "--qa-sample", "20", "strategyqa=8"])
    assert runner.qa_sample(args, "truthfulqa") == 20 and runner.qa_sample(args, "strategyqa") == 8
    assert runner.qa_sample(runner.parse_args([]), "hotpotqa") == runner.QA_SAMPLE["hotpotqa"]
    jobs = runner.plan(args)
    assert [(j.section, j.key, j.signature["sample"]) for j in jobs] == [("hassum", "truthfulqa/N5/embedded", 20)]
    with pytest.raises(SystemExit):
        runner.parse_args(["--qa-sample", "gsm9k=3"])


def test_auroc_cells_carry_their_evidence(bench):
    import numpy as np

    tables, runner = bench
    correct = np.arange(40) >= 30  # 30 wrong, 10 right
    entropy = runner._auroc_ci(np.arange(40.0), correct, 200, 0)
    assert (entropy["value"], entropy["n"], entropy["n_pos"], entropy["n_neg"]) == (1.0, 40, 30, 10)
    density = np.where(np.arange(40) >= 33, np.nan, np.arange(40.0))  # 7 right answers without a value
    results = _results()
    tqa = results["hassum"]["truthfulqa/N5/embedded"]
    tqa["auroc"] = {"entropy": entropy, "density": runner._auroc_ci(density, correct, 200, 0)}
    text = tables.render(results)
    row = next(line for line in text.splitlines() if line.startswith("| TruthfulQA | strict"))
    assert ("| 1.000 [1.000, 1.000] | not given: 3 right answers and 30 wrong ones; at least 10 of each are needed "
            "(n = 33, 7 without a value) |") in row
    assert "- TruthfulQA: 95% stratified percentile bootstrap, 200 resamples, seed 0\n" in text
