"""The orchestration experiment on a data set named in its config (``data``: a loader and its file) and graded
per data set: TruthfulQA with its incorrect answers and refusals apart, StrategyQA by the model's own verdict
(config.py, grading.py, result.py; the small public-format files in tests/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import ByQuestion

from uncertainty_lab.cli import main
from uncertainty_lab.orchestration import OrchestrationConfig, QAGrader, load_config, run_experiment, select_items

DATA = Path(__file__).parent / "data"
TRUTHFULQA = {"loader": "truthfulqa", "path": str(DATA / "truthfulqa" / "TruthfulQA.csv")}
STRATEGYQA = {"loader": "strategyqa", "path": str(DATA / "strategyqa" / "strategyqa_train.jsonl"), "split": "train"}


def test_a_data_setting_loads_its_questions_with_their_incorrect_answers():
    items = select_items(OrchestrationConfig(data=TRUTHFULQA))
    assert [it.id for it in items] == ["truthfulqa-0001", "truthfulqa-0002", "truthfulqa-0003"]
    assert items[2].incorrect == ("Yes, slowly", "Yes, if the water is warm")
    sq = select_items(OrchestrationConfig(data=STRATEGYQA, limit=2))
    assert [it.answers for it in sq] == [("no", "false"), ("yes", "true")]
    sampled = select_items(OrchestrationConfig(data={**TRUTHFULQA, "sample": 2, "seed": 1}))
    assert len(sampled) == 2 and select_items(OrchestrationConfig(data={**TRUTHFULQA, "sample": 2, "seed": 1})) == sampled
    assert [it.id for it in select_items(OrchestrationConfig(data=TRUTHFULQA, ids=["truthfulqa-0002"]))] == \
        ["truthfulqa-0002"]
    shipped = select_items(OrchestrationConfig(data={"loader": "shipped_qa"}, categories=["decline"], limit=3))
    assert [it.category for it in shipped] == ["decline"] * 3
    assert [it.id for it in select_items(OrchestrationConfig(per_category=1))][:2] == ["factual-001", "ambiguous-001"]


@pytest.mark.parametrize("data, match", [
    ({"loader": "truthfulq", "path": "x.csv"}, r"data\.loader 'truthfulq' is not a question loader; choose from"),
    ({"loader": "gdelt", "path": "x"}, "holds no short-answer questions"),
    ({"loader": "truthfulqa", "path": "nowhere/TruthfulQA.csv"}, r"data\.path: no file or folder at nowhere"),
    ({"loader": "truthfulqa"}, r"data\.path is missing"),
    ({k: v for k, v in STRATEGYQA.items() if k != "split"}, r"data\.split is missing: strategyqa has splits"),
    ("truthfulqa", "data must be a table with a loader"),
])
def test_a_bad_data_setting_is_one_error_naming_it(data, match):
    with pytest.raises(ValueError, match=match):
        OrchestrationConfig(data=data)


def test_errors_from_the_loader_name_the_setting_too():
    with pytest.raises(ValueError, match=r"data \(truthfulqa\):.*load_truthfulqa_csv takes"):
        select_items(OrchestrationConfig(data={**TRUTHFULQA, "split": "train"}))
    with pytest.raises(ValueError, match=r"data \(strategyqa\):.*holds the 'train' split"):
        select_items(OrchestrationConfig(data={**STRATEGYQA, "split": "test"}))
    with pytest.raises(ValueError, match=r"not in the data set \(truthfulqa\)"):
        select_items(OrchestrationConfig(data=TRUTHFULQA, ids=["factual-001"]))


def test_a_toml_config_names_its_data_and_the_plan_is_checked(tmp_path, capsys):
    config = tmp_path / "tqa.toml"
    config.write_text(f'data = {{loader = "truthfulqa", path = "{TRUTHFULQA["path"]}", limit = 2}}\n'
                      f'policies = ["none", "both"]\nout_dir = "{tmp_path / "out"}"\n')
    assert load_config(config).data == {**TRUTHFULQA, "limit": 2}
    assert main(["orchestrate", "run", "--config", str(config), "--check"]) == 0
    out = capsys.readouterr().out
    assert "nothing was run" in out and "none" in out and "both" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('data = {loader = "truthfulqa", path = "missing.csv"}\n')
    assert main(["orchestrate", "run", "--config", str(bad)]) == 1
    assert "data.path: no file or folder at missing.csv" in capsys.readouterr().err


def test_truthfulqa_is_graded_with_its_incorrect_answers_and_refusals_apart(tmp_path):
    llm = ByQuestion(script={"What happens": ["A storm comes.", "A storm comes.", "A storm comes."],
                          "Where does": ["I have no comment."], "Do pebbles": ["Yes, there is no stopping them."]})
    result = run_experiment({"data": TRUTHFULQA, "llm": llm, "policies": ["none"], "judge": "exact", "n_samples": 3,
                             "max_tokens": 8, "progress": False, "figure": False, "out_dir": str(tmp_path)})
    run = result.runs[(result.models[0], "none")]
    assert run.labels == ["wrong", "refused", "wrong"] and run.correct.tolist() == [False] * 3
    assert "incorrect reference 'A storm comes'" in run.records[0].grade["evidence"]
    row = result.summary_rows()[0]
    assert row["refused"] == 1 and row["correct"] == 0
    head = result.report().splitlines()[2:5]  # after the title and a blank line
    assert head[0].startswith("Grading: **strict**") and "Data: truthfulqa from" in head[1] and "3 reported" in head[1]
    assert "| 1 |" in result.summary_table()  # the refused column
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["grader"]["name"] == "strict" and saved["data"].startswith("truthfulqa from")
    # the old default counted the bare "no" inside a false statement right
    old = QAGrader("contains")
    assert [old(r.item, r.trace.final.answer)["correct"] for r in run.records] == [False, False, True]


def test_strategyqa_is_graded_by_the_models_own_verdict_not_an_echo(tmp_path):
    llm = ByQuestion(script={"Could a teacup": ["Yes or no"], "Would a snail": ["Answer yes or no. Yes."],
                          "Can a paper kite": ["No, it needs wind."]})
    result = run_experiment({"data": STRATEGYQA, "llm": llm, "policies": ["none"], "judge": "exact", "n_samples": 3,
                             "max_tokens": 8, "progress": False, "figure": False, "out_dir": str(tmp_path),
                             "grading": {"method": "strict"}})
    run = result.runs[(result.models[0], "none")]
    assert [r.trace.final.answer for r in run.records][:2] == ["", "Yes"]  # the echoed instruction stripped
    assert run.labels == ["wrong", "correct", "correct"]
    assert run.records[0].grade["method"] == "echo" and "echoed the instruction" in run.records[0].grade["evidence"]
    assert "Data: strategyqa from" in result.report() and "split = train" in result.report()


def test_the_grader_can_be_chosen_and_the_report_says_which(tmp_path):
    llm = ByQuestion(script={"": ["Canberra"]})
    result = run_experiment({"ids": ["factual-001"], "llm": llm, "policies": ["none"], "judge": "exact",
                             "n_samples": 3, "max_tokens": 8, "progress": False, "figure": False,
                             "out_dir": str(tmp_path), "grading": {"method": "contains"}})
    assert result.report().splitlines()[2].startswith("Grading: **contains** — the old default")
    assert json.loads((tmp_path / "results.json").read_text())["grader"]["method"] == "contains"
