"""The policy comparison (experiment.py, config.py, result.py): with the real embedded model on a handful of
shipped questions, the lab contract (units, any order, resume) with a scripted model, and the headless
``uncertainty-lab orchestrate run`` command."""

import json
import math

import pytest

from uncertainty_lab.cli import main
from uncertainty_lab.orchestration import (
    EXPERIMENT,
    ExperimentConfig,
    ExperimentResult,
    OrchestrationConfig,
    OrchestrationResult,
    OrchestrationResumeError,
    OrchestrationRun,
    load_config,
    run_experiment,
    select_items,
)
from uncertainty_lab.orchestration.scripted import ScriptedLLM

# two factual, one ambiguous, one false-premise, one yes/no, one decline item
IDS = ["factual-001", "factual-002", "ambiguous-001", "false_premise-002", "yes_no_multistep-001", "decline-004"]
FAST = {"n_samples": 3, "max_tokens": 12, "max_rounds": 2, "progress": False}


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("orchestration_cache")


@pytest.fixture(autouse=True)
def _share_completions(shared_cache, monkeypatch):
    """The experiment and the CLI test share one completion cache: the CLI run repeats questions already asked."""
    monkeypatch.setenv("UL_CACHE_DIR", str(shared_cache))


def test_four_policies_on_six_questions_with_the_embedded_model(tmp_path):
    result = run_experiment({"ids": IDS, "out_dir": str(tmp_path / "exp"), **FAST})
    assert result.policies == ["none", "entropy_only", "density_only", "both"]
    (model,) = result.models
    assert model.startswith("embedded:")
    rows = result.summary_rows()
    assert len(rows) == 4
    for row in rows:
        assert row["n"] == 6 and 0.0 <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= 1.0
        assert row["ci_high"] - row["ci_low"] > 0.2  # six questions: wide Wilson intervals
        assert row["calls_per_question"] >= 3 and row["wall_s_per_question"] >= 0
    none = next(r for r in rows if r["policy"] == "none")
    assert none["calls_per_question"] == 3 and none["rounds_per_question"] == 1 and none["accepted_first_round"] == 6
    for row in rows:  # gated policies never spend more than two rounds (max_rounds=2, one re-prompt)
        assert row["rounds_per_question"] <= 2 and row["calls_per_question"] <= 6

    # the first round is the same question, seed, worker and prompt in every policy
    firsts = {p: [t.rounds[0].candidate.answer.answer for t in result.runs[(model, p)].traces] for p in result.policies}
    assert len({tuple(v) for v in firsts.values()}) == 1

    table = result.summary_table()
    assert "accuracy [95% Wilson]" in table and table.count("\n") == 5 and "/6)" in table
    aurocs = result.auroc_rows()
    assert [r["signal"] for r in aurocs] == ["entropy", "density", "no concern (both)"]
    for r in aurocs:
        assert r["n"] + r["missing"] == 6 and (math.isnan(r["auroc"]) or 0.0 <= r["auroc"] <= 1.0)
    pairs = result.paired()
    assert len(pairs) == 6 and all(pc.n == 6 and pc.verdict for _, pc in pairs)
    report = result.report()
    assert "Paired comparisons" in report and "Pair-judgement cache" in report and "consistency is not correctness" in report

    files = result.files
    assert {"summary", "results", "figure"} <= set(files)
    assert files["figure"].stat().st_size > 5000 and files["figure"].read_bytes()[:4] == b"\x89PNG"
    saved = json.loads(files["results"].read_text())
    assert len(saved["summary"]) == 4 and saved["judge_cache"]["hits"] > 0
    assert saved["config"]["llm"] == "embedded" and "backend" not in saved["config"]
    # one folder per (model, policy), one run file per chunk of questions_per_unit (10) questions
    runs = sorted((tmp_path / "exp" / "runs").glob("*/*.jsonl"))
    assert [p.name for p in runs] == ["q0000-q0005.jsonl"] * 4 and all(OrchestrationRun.load(p).complete for p in runs)
    assert sorted(result.written()) == sorted([*files.values(), *(p.parent for p in runs)])
    decline = next(r for r in result.runs[(model, "none")].records if r.id == "decline-004")
    assert decline.grade["method"] == "refusal"

    # run again: every run file is complete, so nothing is recomputed and the numbers are the same
    again = run_experiment({"ids": IDS, "out_dir": str(tmp_path / "exp"), **FAST}, save=False)
    assert again.summary_rows() == rows


def test_cli_orchestrate_run_writes_its_outputs(tmp_path, capsys):
    config = tmp_path / "tiny.toml"
    config.write_text(
        'policies = ["none", "both"]\n'
        f'ids = {json.dumps(IDS[:2])}\n'
        'n_samples = 3\nmax_tokens = 12\nmax_rounds = 2\nprogress = false\n'
        f'out_dir = "{tmp_path / "cli_out"}"\n'
    )
    assert main(["orchestrate", "run", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "| none |" in out and "| both |" in out and "wrote:" in out
    for name in ("summary.md", "results.json", "figure.png"):
        assert (tmp_path / "cli_out" / name).is_file()
    assert len(list((tmp_path / "cli_out" / "runs").glob("*/*.jsonl"))) == 2

    bad = tmp_path / "bad.json"
    bad.write_text('{"n_sample": 3}')
    assert main(["orchestrate", "run", "--config", str(bad)]) == 1
    assert "did you mean 'n_samples'" in capsys.readouterr().err


def test_config_files_and_settings_are_checked(tmp_path):
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"categories": "factual", "per_category": 2, "raw_entropy_threshold": 1.0, "n_samples": 5}))
    cfg = load_config(j)
    assert [it.id for it in select_items(cfg)] == ["factual-001", "factual-002"]
    both = next(p for p in cfg.policy_objects() if p.name == "both")
    assert both.entropy_threshold == pytest.approx(1.0 / math.log(5))
    assert next(p for p in cfg.policy_objects() if p.name == "none").max_rounds == 1
    with pytest.raises(ValueError, match="can never fire with 5 samples"):
        OrchestrationConfig(raw_entropy_threshold=1.65, n_samples=5).policy_objects()
    with pytest.raises(ValueError, match="not in the shipped set"):
        select_items(OrchestrationConfig(ids=["nope"]))
    with pytest.raises(ValueError, match=r"\.json or \.toml"):
        (tmp_path / "c.yaml").write_text("x: 1")
        load_config(tmp_path / "c.yaml")
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.toml")


def test_an_ollama_model_runs_beside_the_embedded_one(tmp_path, monkeypatch):
    from fake_ollama import FakeOllama

    with FakeOllama(models=["smollm2:135m"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        result = run_experiment({"ids": IDS[:2], "policies": ["none"], "ollama_model": "smollm2:135m",
                                 "out_dir": str(tmp_path / "two"), **FAST})
    assert len(result.models) == 2 and result.models[1] == "ollama:smollm2:135m"
    assert [r["model"] for r in result.summary_rows()] == result.models
    assert "| ollama:smollm2:135m | none | 2 |" in result.summary_table()
    assert result.files["figure"].is_file() and len(list((tmp_path / "two" / "runs").glob("*/*.jsonl"))) == 2


def test_an_unreachable_ollama_server_is_reported_before_anything_runs(tmp_path, monkeypatch):
    from uncertainty_lab.llm import LLMUnavailableError

    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(LLMUnavailableError):
        run_experiment({"ids": IDS[:1], "ollama_model": "smollm2:135m", "out_dir": str(tmp_path / "x"), **FAST})
    assert not (tmp_path / "x").exists()


# --- the lab contract, with a scripted model (no LLM) ------------------------------------------------

#: the direct worker's first answers disagree (so the gate re-prompts), every other request agrees on Canberra
SCRIPT = {"direct:ask": ["Canberra", "Sydney", "Perth"], "*": ["Canberra"]}
CHEAP = {"ids": IDS[:3], "policies": ["none", "both"], "judge": "exact", "n_samples": 3, "max_tokens": 8,
         "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"}, "progress": False,
         "figure": False}


def _stable(run):
    """A run's records without what legitimately differs between two runs (timing, judge-cache counts)."""
    volatile = {"wall_time_s", "judge_hits", "judge_misses"}
    return [{k: v for k, v in r.to_dict()["trace"].items() if k not in volatile} | {"id": r.id, "grade": r.grade}
            for r in run.records]


def test_units_are_one_per_model_and_policy_and_run_in_any_order(tmp_path):
    llm = ScriptedLLM(script=SCRIPT)
    config = OrchestrationConfig.from_mapping({**CHEAP, "llm": llm, "out_dir": str(tmp_path / "backwards")})
    context = EXPERIMENT.prepare(config)
    units = EXPERIMENT.units(config, context)
    # (model, policy, chunk): three questions are one chunk of questions_per_unit = 10
    assert [u.key for u in units] == [("scripted:script", "none", 0), ("scripted:script", "both", 0)]
    assert [u.path for u in units] == [tmp_path / "backwards" / "runs" / f"scripted_script__{p}" / "q0000-q0002.jsonl"
                                       for p in ("none", "both")]
    backwards = {u.key: EXPERIMENT.run_unit(u, config, context) for u in reversed(units)}
    result = run_experiment(config, out_dir=str(tmp_path / "forwards"))
    assert isinstance(result, OrchestrationResult) and list(result.runs) == [u.key[:2] for u in units]
    for key, run in result.runs.items():
        assert _stable(run) == _stable(backwards[(*key, 0)]) and run.complete
    assert result.runs[("scripted:script", "both")].action_counts()["reprompt"] == 3
    assert result.report_name == "summary" and (tmp_path / "forwards" / "summary.md").is_file()
    assert not (tmp_path / "forwards" / "figure.png").exists()  # figure = false
    # a rerun resumes every finished run file: nothing is asked again
    again = run_experiment(config, out_dir=str(tmp_path / "forwards"), save=False, llm=ScriptedLLM(script={"*": ["?"]}))
    assert {k: _stable(r) for k, r in again.runs.items()} == {k: _stable(r) for k, r in result.runs.items()}


def test_the_old_setting_name_backend_still_works_with_a_warning(tmp_path):
    llm = ScriptedLLM(script=SCRIPT)
    with pytest.warns(FutureWarning, match="'backend' is now called 'llm'"):
        config = OrchestrationConfig.from_mapping({**CHEAP, "backend": llm})
    assert config.llm is llm
    with pytest.warns(FutureWarning, match="'backend' is now called 'llm'"):
        assert ExperimentConfig(backend=llm).llm is llm
    with pytest.raises(ValueError, match="give only 'llm'"):
        OrchestrationConfig.from_mapping({"backend": "embedded", "llm": "embedded"})
    with pytest.warns(FutureWarning, match="'backend' is now called 'llm'"):
        result = run_experiment({**CHEAP, "out_dir": str(tmp_path / "old")}, backend=llm, save=False)
    assert result.models == ["scripted:script"] and result.config.to_dict()["llm"] == "scripted:script"
    assert ExperimentConfig is OrchestrationConfig and ExperimentResult is OrchestrationResult  # the old names


def test_a_run_file_of_another_configuration_is_refused_with_the_way_out(tmp_path):
    llm = ScriptedLLM(script=SCRIPT)
    run_experiment({**CHEAP, "llm": llm, "out_dir": str(tmp_path)}, save=False)
    with pytest.raises(OrchestrationResumeError, match=r"n_samples.*choose another out_dir, or set overwrite = true"):
        run_experiment({**CHEAP, "llm": llm, "out_dir": str(tmp_path), "n_samples": 4}, save=False)
    fresh = run_experiment({**CHEAP, "llm": llm, "out_dir": str(tmp_path), "n_samples": 4, "overwrite": True}, save=False)
    assert all(r.config["coordinator"]["n_samples"] == 4 for r in fresh.runs.values())
