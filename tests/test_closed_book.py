"""Short-answer questions from every question loader (issue 21, item 6): HotpotQA and MuSiQue closed book through
the orchestration lab's ``data`` setting (the CLI accepts them), GSM8K's final numbers, StrategyQA's
question/answer/steps layout, and the documented config of every row of benchmarks/real_data.md
(examples/real_data/), which the benchmark script runs as it is."""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from pathlib import Path

import pytest

from uncertainty_lab.cli import main
from uncertainty_lab.cli.run import _experiment
from uncertainty_lab.configfile import read_mapping
from uncertainty_lab.datasets import DatasetFormatError, load, load_strategyqa_json
from uncertainty_lab.datasets.closed_book import load_questions
from uncertainty_lab.datasets.gsm8k import load_gsm8k_jsonl
from uncertainty_lab.orchestration.config import OrchestrationConfig, describe_data, select_items

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
EXAMPLES = sorted((ROOT / "examples" / "real_data").glob("*.toml"))


def _hotpot_rows() -> list[dict]:
    """Two HotpotQA records in the published layout: a comparison (yes) and a bridge question."""
    ctx = [["Alpha", ["Alpha is a town.", " It has 3 bridges."]], ["Beta", ["Beta is a river."]]]
    return [{"_id": "h1", "question": "Are Alpha and Beta both places?", "answer": "yes", "type": "comparison",
             "supporting_facts": [["Alpha", 0], ["Beta", 0]], "context": ctx, "level": "easy"},
            {"_id": "h2", "question": "How many bridges has Alpha?", "answer": "3", "type": "bridge",
             "supporting_facts": [["Alpha", 1]], "context": ctx, "level": "easy"}]


def _hotpot(path: Path) -> Path:
    path.write_text(json.dumps(_hotpot_rows()), encoding="utf-8")
    return path


def test_hotpotqa_and_musique_become_closed_book_items(tmp_path):
    yes, three = load_questions("hotpotqa", _hotpot(tmp_path / "h.json"))
    assert (yes.id, yes.category, yes.answers, yes.incorrect) == ("h1", "yes_no_multistep", ("yes", "true"),
                                                                   ("no", "false"))
    assert (three.category, three.answers, three.source) == ("factual", ("3",), "hotpotqa")
    assert three.meta["closed_book"] is True and three.facts == () and three.decomposition == ()
    full = load_questions("musique", DATA / "musique" / "musique_full_v1.0_dev.jsonl", split="dev")
    raw = [json.loads(line) for line in (DATA / "musique" / "musique_full_v1.0_dev.jsonl").read_text().splitlines()]
    answerable = [r for r in raw if r.get("answerable", True)]
    assert [i.id for i in full] == [r["id"] for r in answerable] and len(answerable) < len(raw)
    assert [i.answers for i in full] == [(r["answer"], *r["answer_aliases"]) for r in answerable]
    with pytest.raises(ValueError, match=r"'gdelt' is not a question loader \(it holds no questions"):
        load_questions("gdelt", tmp_path)


def test_hotpotqa_skip_leaves_out_questions_without_all_their_paragraphs(tmp_path):
    """missing_support="skip" (fullwiki files): a question whose retrieved context lacks a supporting paragraph, or
    has none, is left out with its paragraphs; the rest load as in the distractor setting."""
    rows = _hotpot_rows()
    rows.append({**rows[1], "_id": "h3", "supporting_facts": [["Gamma", 0]]})  # Gamma was not retrieved
    rows.append({**rows[1], "_id": "h4", "context": []})
    path = tmp_path / "fullwiki.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    docs, questions = load("hotpotqa", path, missing_support="skip")
    assert [q.id for q in questions] == ["h1", "h2"] and {d.title for d in docs} == {"Alpha", "Beta"}
    assert load("hotpotqa", path, missing_support="skip", sample=1, seed=0)[1][0].id in ("h1", "h2")
    with pytest.raises(ValueError, match="'Gamma' is not in the record's context"):
        load("hotpotqa", path)


def test_gsm8k_reads_the_final_number(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"question": "How many? ", "answer": "2 + 2 = 4\n#### 1,204"}) + "\n"
                    + json.dumps({"question": "Owe?", "answer": "so\n#### -3.5"}) + "\n", encoding="utf-8")
    a, b = load_gsm8k_jsonl(path, split="test")
    assert (a.id, a.question, a.answers, a.note, b.answers) == ("gsm8k-00001", "How many?", ("1204",), "2 + 2 = 4",
                                                                 ("-3.5",))
    path.write_text(json.dumps({"question": "Q", "answer": "no final line"}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"column 'answer': answer must be the solution ending in '####"):
        load_gsm8k_jsonl(path)


def test_strategyqa_reads_the_question_answer_steps_layout(tmp_path):
    rows = [{"question": "Is ice cold?", "answer": "Yes.", "steps": ["Ice is frozen water.", "Frozen is cold."]},
            {"question": "Is fire wet?", "answer": "no", "steps": []}]
    path = tmp_path / "strategyqa_valid.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    yes, no = load_strategyqa_json(path, split="valid")
    assert yes.id == "strategyqa-q-" + hashlib.sha1(b"Is ice cold?").hexdigest()[:12]
    assert (yes.answers, yes.incorrect, yes.facts) == (("yes", "true"), ("no", "false"), tuple(rows[0]["steps"]))
    assert no.answers == ("no", "false") and no.facts == ()
    path.write_text(json.dumps([{"question": "Is it?", "answer": "Maybe.", "steps": []}]), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"column 'answer': answer must be \"Yes.\" or \"No.\""):
        load_strategyqa_json(path)


def test_the_cli_runs_a_closed_book_config(tmp_path, capsys):
    hotpot = _hotpot(tmp_path / "hotpot_dev_distractor_v1.json")
    config = tmp_path / "closed.toml"
    config.write_text(f'llm = "embedded"\npolicies = ["none"]\nout_dir = "{tmp_path / "out"}"\n'
                      f'data = {{loader = "hotpotqa", path = "{hotpot}", split = "dev_distractor"}}\n', encoding="utf-8")
    assert main(["orchestrate", "run", "--config", str(config), "--check"]) == 0
    assert "nothing was run" in capsys.readouterr().out
    cfg = OrchestrationConfig.coerce(config)
    assert [i.id for i in select_items(cfg)] == ["h1", "h2"]
    assert "closed book: the question only" in describe_data(cfg)
    with pytest.raises(ValueError, match=r"data.loader 'gdelt' is not a question loader.*hotpotqa, musique"):
        OrchestrationConfig(data={"loader": "gdelt", "path": str(tmp_path)})


#: a small public-layout file (and its split) for each loader the examples name (their sample sizes are dropped)
SMALL = {"truthfulqa": (DATA / "truthfulqa" / "TruthfulQA.csv", None),
         "strategyqa": (DATA / "strategyqa" / "strategyqa_train.jsonl", "train"),
         "hotpotqa": (DATA / "hotpotqa" / "hotpot_dev_distractor_v1.json", "dev_distractor"),
         "musique": (DATA / "musique" / "musique_full_v1.0_dev.jsonl", "dev")}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_a_real_data_example_says_its_row_and_passes_check(path, tmp_path, capsys):
    text = path.read_text(encoding="utf-8")
    lab = path.stem.split("_", 1)[0]
    assert "benchmarks/real_data.md" in text and "What it runs:" in text
    assert f"#   .venv/bin/uncertainty-lab {lab} run --config examples/real_data/{path.name}\n" in text
    settings = read_mapping(path)
    assert settings["out_dir"] == f"build/examples/real_data/{path.stem}"
    if "data" in settings:
        assert settings["data"]["path"].startswith("data/")  # the folder git ignores
        data = {k: v for k, v in settings["data"].items() if k not in ("sample", "split")}
        if data["loader"] == "gsm8k":
            small, split = tmp_path / "test.jsonl", "test"
            small.write_text(json.dumps({"question": "Q?", "answer": "#### 7"}) + "\n", encoding="utf-8")
        else:
            small, split = SMALL[data["loader"]]
        settings["data"] = {**data, "path": str(small), **({"split": split} if split else {})}
    if lab != "search" or settings["llm"] != "oracle":
        settings["llm"] = "embedded"
    copy = tmp_path / f"{path.stem}.json"  # the same settings, the data swapped for a small file
    copy.write_text(json.dumps(settings), encoding="utf-8")
    _experiment(lab).config_class.coerce(copy)
    if lab == "cascade":  # its --check fits the Hawkes model (seconds); tests/test_examples.py checks one already
        return
    assert main([lab, "run", "--config", str(copy), "--check", "--out-dir", str(tmp_path / "out")]) == 0
    assert "nothing was run" in capsys.readouterr().out


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    yield importlib.import_module("real_data")
    for name in ("real_data_tables", "real_data", "machine"):
        sys.modules.pop(name, None)


class _Ran(Exception):
    pass


@pytest.mark.parametrize("name", ["hotpotqa", "musique", "gsm8k", "truthfulqa"])
def test_the_benchmark_runs_the_example_config_of_each_row(runner, name, tmp_path, monkeypatch):
    """No private converter: the benchmark's config is the row's example with your file, sample and work folder."""
    seen = {}

    def fake_run(config):
        seen.update(config)
        raise _Ran

    monkeypatch.setattr("uncertainty_lab.orchestration.experiment.run_experiment", fake_run)
    args = runner.parse_args([f"--{name}", str(SMALL.get(name, SMALL["hotpotqa"])[0]),
                              "--only", "hassum", "--qa-sample", f"{name}=2", "--work-dir", str(tmp_path)])
    with pytest.raises(_Ran):
        runner.plan(args)[0].run()
    example = read_mapping(ROOT / "examples" / "real_data" / f"{runner.HASSUM_EXAMPLES[name]}.toml")
    assert seen["data"] == {**example["data"], "path": getattr(args, name), "sample": 2, "seed": 0}
    assert {k: v for k, v in seen.items() if k not in ("data", "out_dir", "progress", "figure")} == \
        {k: v for k, v in example.items() if k not in ("data", "out_dir")}
    assert not (tmp_path / "closed_book").exists()
