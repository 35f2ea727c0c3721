"""The HawkesLLM experiment runner: configuration (JSON / TOML, validation), the fit on the training events only,
a tiny real run with the embedded model (the table's rows and values, the files, the shared event schedule),
resume after an interruption, the per-step uncertainty column, the CLI, and the text helpers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fakes import Counting

from uncertainty_lab.cascade import CascadeError, CascadeRun, Event, History, NodeSpec
from uncertainty_lab.cascade.config import DEFAULT_NODE_INSTRUCTIONS, CascadeConfig, load_config
from uncertainty_lab.cascade.experiment import (
    EXPERIMENT,
    CascadeContext,
    CascadeExperiment,
    prepare,
    run_experiment,
    run_seed,
)
from uncertainty_lab.cascade.headlines import clean_headline, copy_rate
from uncertainty_lab.cascade.prompt import headline_prompt
from uncertainty_lab.cli import main
from uncertainty_lab.contracts import MemoryItem
from uncertainty_lab.datasets.news import NODES, load_news_cascade, news_cascade_path
from uncertainty_lab.llm import CompletionCache, get_llm

TINY = {"selectors": ["hawkes", "recency"], "ks": [3], "runs": 2, "steps": 3, "max_tokens": 12, "progress": False}
TRENDS = {"increasing", "decreasing", "flat", "undetermined"}


@pytest.fixture(scope="module")
def shared_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cascade_shared_cache")


@pytest.fixture(scope="module")
def llm(shared_cache_dir):
    return get_llm("embedded", cache=CompletionCache(shared_cache_dir / "completions.sqlite"))


@pytest.fixture(scope="module")
def setup():
    return prepare(CascadeConfig())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, llm, setup):
    out = tmp_path_factory.mktemp("tiny_experiment")
    return run_experiment(TINY, out_dir=str(out), llm=llm, setup=setup)


# --- the tiny real run --------------------------------------------------------------------------------------


def test_tiny_run_produces_the_table(tiny):
    rows = tiny.rows()
    assert [(r["selector"], r["k"]) for r in rows] == [("hawkes", 3), ("recency", 3)]
    for r in rows:
        assert r["runs"] == 2 and r["steps"] == 3
        assert r["trend"] in TRENDS and sum(r["run_trends"].values()) == 2
        assert set(r["run_trends"]) <= TRENDS
        assert 0.0 <= r["S_defined"] <= 1.0
        if r["S_defined"] > 0:  # the seed sits just before the held-out window: references exist
            assert -1.0 <= r["mean_S"] <= 1.0 and -1.0 <= r["late_S"] <= 1.0
            assert math.isfinite(r["mean_S_sd"]) and r["mean_S_sd"] >= 0
        for key in ("global_drift", "local_drift"):
            assert 0.0 <= r[key] <= 2.0 and math.isfinite(r[f"{key}_sd"])
        assert 0 <= r["global_exceeds_local"] <= 2
        assert 0.0 <= r["copies"] <= 1.0
        assert math.isnan(r["uncertainty"])  # nothing sampled
    runs = tiny.run_rows()
    assert len(runs) == 4 and {(r["selector"], r["run"]) for r in runs} == {(s, i) for s in ("hawkes", "recency") for i in (0, 1)}
    assert {r["seed"] for r in runs} == {run_seed(0, 0), run_seed(0, 1)} == {0, 1}
    table = tiny.table()
    lines = table.splitlines()
    assert lines[0].startswith("| selector | k | runs | mean S ± sd | trend") and len(lines) == 2 + 2
    assert lines[2].startswith("| hawkes | 3 | 2 |") and lines[3].startswith("| recency | 3 | 2 |")
    report = tiny.report()
    assert "all-MiniLM-L6-v2" in report and "independent of the generator" in report
    assert "198 training events only" in report


def test_runs_are_complete_seeded_and_share_the_schedule(tiny, setup):
    for (sel, k, r), run in tiny.runs.items():
        assert run.stop_reason == "steps" and len(run) == 3
        assert run.config["seed"] == r and run.config["k"] == k == 3
        assert run.config["selector"]["name"] == sel
        assert run.config["prompt_fn"] == "uncertainty_lab.cascade.prompt.headline_prompt"
        assert run.config["postprocess"] == "uncertainty_lab.cascade.headlines.clean_headline"
        assert run.seed_event == setup.seed_event
        for t, s in enumerate(run.steps, start=1):
            assert len(s.memory) <= 3
            assert not s.memory or math.isclose(sum(m.weight for m in s.memory), 1.0)
            assert s.text == clean_headline(s.raw_text if s.raw_text is not None else s.text)
            assert run.prompt(t)  # the run's own template is found from its config and matches the stored hash
    for r in (0, 1):  # the same seed gives the same event times and nodes whatever the selector
        a, b = tiny.runs[("hawkes", 3, r)], tiny.runs[("recency", 3, r)]
        assert np.array_equal(a.times, b.times) and np.array_equal(a.nodes, b.nodes)
    assert not np.array_equal(tiny.runs[("hawkes", 3, 0)].times, tiny.runs[("hawkes", 3, 1)].times)


def test_files_are_written_and_reload(tiny):
    out = tiny.out_dir
    assert set(tiny.files) == {"table", "results", "figure"}
    assert tiny.files["figure"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| hawkes | 3 | 2 |" in tiny.files["table"].read_text()
    data = json.loads(tiny.files["results"].read_text())
    assert [(r["selector"], r["k"]) for r in data["table"]] == [("hawkes", 3), ("recency", 3)]
    assert data["fit"]["n_events"] == 198 and len(data["runs"]) == 4
    assert data["embedder"] == "all-MiniLM-L6-v2"
    assert len(data["curves"]["hawkes/k3/run0"]["alignment"]) == 3
    files = sorted(p.name for p in (out / "runs").glob("*.jsonl"))
    assert files == ["hawkes__k3__run0.jsonl", "hawkes__k3__run1.jsonl", "recency__k3__run0.jsonl",
                     "recency__k3__run1.jsonl"]
    loaded = CascadeRun.load(out / "runs" / "hawkes__k3__run0.jsonl")
    assert loaded.steps == tiny.runs[("hawkes", 3, 0)].steps


def test_figure_has_alignment_and_difference_panels_per_k_and_a_drift_panel(tiny):
    fig = tiny.figure()
    axes = fig.axes
    assert len(axes) == 3
    assert "k = 3" in axes[0].get_title() and "S_t − S_t(recency), k = 3" in axes[1].get_title()
    assert "drift" in axes[2].get_title()
    assert len(axes[2].collections) == 4  # one point per run


def test_units_are_selector_by_k_by_run_each_with_its_seed_and_file(tmp_path):
    """The lab contract: one unit per selector × k × run, seeded from the config alone, each journalled to its
    own file; the experiment object is what run_experiment drives."""
    assert isinstance(EXPERIMENT, CascadeExperiment) and EXPERIMENT.config_class is CascadeConfig
    config = CascadeConfig(selectors=["hawkes", {"name": "hawkes", "ranking": "score"}], ks=[3, 5], runs=2, seed=4,
                           out_dir=str(tmp_path))
    context = CascadeContext(None, {s["label"]: None for s in config.selector_specs}, None, None, "", None, "")
    units = EXPERIMENT.units(config, context)
    assert [u.key for u in units] == [(s, k, r) for s in ("hawkes", "hawkes(ranking=score)") for k in (3, 5)
                                      for r in (0, 1)]
    assert [u.spec["seed"] for u in units] == [4, 5] * 4
    assert units[0].path == tmp_path / "runs" / "hawkes__k3__run0.jsonl"
    assert units[-1].path == tmp_path / "runs" / "hawkes_ranking_score__k5__run1.jsonl"
    assert units[-1].label == "hawkes(ranking=score), k=5, run 1"
    assert len({u.path for u in units}) == len(units)


# --- no leakage -----------------------------------------------------------------------------------------------


def test_fit_uses_the_training_events_only(setup):
    train, test = setup.train, setup.test
    assert len(train) == 198 and len(test) == 50
    assert setup.train_stream.n_events == 198 == setup.fit.n_events
    assert setup.train_stream.end_time == train[-1].time_h < test[0].time_h
    assert setup.seed_event == Event(train[-1].time_h, NODES.index(train[-1].node), train[-1].headline)
    assert [r.time for r in setup.references] == [e.time_h for e in test]
    assert setup.model.spectral_radius() < 1


def test_changing_the_held_out_events_does_not_change_the_fit(setup, tmp_path):
    """Move every held-out event to another node and time: the fitted μ, α and β stay exactly the same."""
    events = load_news_cascade()
    lines = news_cascade_path().read_text(encoding="utf-8").splitlines()
    ids = {e.id for e in setup.test}
    out = []
    for line in lines:
        rec = json.loads(line)
        if rec["id"] in ids:
            rec["node"] = "specialist_science_tech" if rec["node"] != "specialist_science_tech" else "local_tv"
            rec["time_h"] = round(rec["time_h"] + 1.5, 6)
        out.append(json.dumps(rec))
    path = tmp_path / "moved.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    moved = prepare(CascadeConfig(data={"loader": "shipped_news", "path": str(path)}))
    assert len(events) == len(moved.events)
    assert moved.model.beta == setup.model.beta
    assert np.array_equal(moved.model.mu, setup.model.mu) and np.array_equal(moved.model.alpha, setup.model.alpha)
    assert [r.node for r in moved.references] != [r.node for r in setup.references]


# --- resume ---------------------------------------------------------------------------------------------------


def test_resume_after_an_interruption_reuses_finished_runs(tiny, llm, setup, tmp_path):
    out = tmp_path / "resumed"
    crashing = Counting(llm, fail_after=7)  # hawkes run 0 and run 1 (3 + 3 calls), then 1 step of recency run 0
    with pytest.raises(RuntimeError, match="simulated interruption"):
        run_experiment(TINY, out_dir=str(out), llm=crashing, setup=setup)
    runs_dir = out / "runs"
    finished = {p.name: p.read_bytes() for p in runs_dir.glob("hawkes__*.jsonl")}
    assert len(finished) == 2
    partial = CascadeRun.load(runs_dir / "recency__k3__run0.jsonl")
    assert len(partial) == 1 and not partial.complete
    counting = Counting(llm)
    result = run_experiment(TINY, out_dir=str(out), llm=counting, setup=setup)
    assert counting.calls == 12 - 7  # only the missing steps asked the model
    assert {p.name: p.read_bytes() for p in runs_dir.glob("hawkes__*.jsonl")} == finished
    for key, run in result.runs.items():  # identical to the uninterrupted experiment
        assert run.steps == tiny.runs[key].steps
    assert result.table() == tiny.table()
    again = Counting(llm)
    run_experiment(TINY, out_dir=str(out), llm=again, setup=setup)
    assert again.calls == 0


def test_a_changed_configuration_is_not_mixed_into_old_runs(tiny, llm, setup):
    with pytest.raises(CascadeError, match="overwrite = true"):
        run_experiment(TINY | {"temperature": 0.5}, out_dir=str(tiny.out_dir), llm=llm, setup=setup, save=False)


# --- per-step uncertainty --------------------------------------------------------------------------------------


def test_samples_per_step_adds_the_uncertainty_column(llm, setup, tmp_path):
    cfg = {"selectors": ["hawkes"], "ks": [3], "runs": 1, "steps": 2, "max_tokens": 8, "progress": False,
           "samples_per_step": 2, "metric": "num_semantic_sets"}
    result = run_experiment(cfg, out_dir=str(tmp_path), llm=llm, setup=setup)
    (row,) = result.rows()
    assert 1.0 <= row["uncertainty"] <= 2.0 and math.isnan(row["uncertainty_sd"])
    run = result.runs[("hawkes", 3, 0)]
    assert all(len(s.samples) == 2 and s.metric["metric"] == "num_semantic_sets" for s in run.steps)
    assert "uncertainty ± sd" in result.table()
    assert len(result.figure().axes) == 3


# --- CLI ------------------------------------------------------------------------------------------------------


def test_cli_writes_its_files(shared_cache_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("UL_CACHE_DIR", str(shared_cache_dir))  # the completions of the tiny run, reused
    cfg = tmp_path / "cascade.toml"
    cfg.write_text('selectors = ["hawkes", "recency"]\nks = [3]\nruns = 2\nsteps = 3\nmax_tokens = 12\n'
                   'llm = "embedded"\nout_dir = "ignored"\n', encoding="utf-8")
    out = tmp_path / "cli_out"
    assert main(["cascade", "run", "--config", str(cfg), "--out-dir", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| hawkes | 3 | 2 |" in printed and "wrote:" in printed
    for name in ("table.md", "results.json", "figure.png"):
        assert (out / name).is_file()
    assert len(list((out / "runs").glob("*.jsonl"))) == 4
    assert not (tmp_path / "ignored").exists()


def test_cli_reports_a_bad_config(tmp_path, capsys):
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps({"selector": ["hawkes"]}), encoding="utf-8")
    assert main(["cascade", "run", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "unknown cascade setting 'selector'" in err and "did you mean 'selectors'" in err
    assert main(["cascade", "run", "--config", str(tmp_path / "missing.toml")]) == 1
    assert "no config file" in capsys.readouterr().err
    cfg.write_text(json.dumps({"selectors": ["hawk"], "out_dir": str(tmp_path / "o")}), encoding="utf-8")
    assert main(["cascade", "run", "--config", str(cfg), "--no-progress"]) == 2  # a plugin error, as in the others
    err = capsys.readouterr().err
    assert "selector 'hawk'" in err and "closest match: 'hawkes'" in err
    assert not (tmp_path / "o" / "runs").exists()  # refused before any run started


# --- configuration --------------------------------------------------------------------------------------------


def test_config_defaults_follow_the_paper():
    c = CascadeConfig()
    assert (c.temperature, c.top_p, c.max_tokens, c.n_train, c.ks, c.runs) == (0.35, 0.9, 75, 198, [3], 3)
    assert (c.window, c.wide_window) == (12.0, 24.0)
    assert [s["label"] for s in c.selector_specs] == ["hawkes", "recency", "random"]
    assert set(DEFAULT_NODE_INSTRUCTIONS) == set(NODES)


def test_config_from_files_and_validation(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('selectors = ["hawkes", {name = "hawkes", ranking = "score", label = "hawkes_score"}]\n'
                    'ks = [3, 5, 7]\nwide_window = false\n[node_instructions]\nlocal_tv = "Write a local headline."\n',
                    encoding="utf-8")
    c = load_config(toml)
    assert [s["label"] for s in c.selector_specs] == ["hawkes", "hawkes_score"]
    assert c.selector_specs[1]["params"] == {"ranking": "score"} and c.ks == [3, 5, 7] and c.wide_window is None
    js = tmp_path / "c.json"
    js.write_text(json.dumps({"selectors": [{"name": "hawkes", "ranking": "score"}], "runs": 1}), encoding="utf-8")
    assert load_config(js).selector_specs[0]["label"] == "hawkes(ranking=score)"
    assert c.fingerprint() != load_config(js).fingerprint()
    assert c.fingerprint() == CascadeConfig.from_mapping(c.to_dict() | {"out_dir": "elsewhere"}).fingerprint()
    for bad, match in (({"ks": [0]}, "ks must be"), ({"selectors": []}, "selectors is empty"),
                       ({"selectors": ["hawkes", "hawkes"]}, "unique"), ({"runs": 0}, "runs must be"),
                       ({"prompt": "fancy"}, "prompt must be one of"), ({"beta_grid": [0.0]}, "beta_grid"),
                       ({"temprature": 0.3}, "did you mean 'temperature'")):
        with pytest.raises(CascadeError, match=match):
            CascadeConfig.from_mapping(bad)
    (tmp_path / "c.yaml").write_text("x: 1")
    with pytest.raises(CascadeError, match=".json or .toml"):
        load_config(tmp_path / "c.yaml")
    with pytest.raises(CascadeError, match="not among the nodes"):
        prepare({"node_instructions": {"radio": "Write for radio."}})


def test_node_instructions_override_the_defaults():
    s = prepare({"node_instructions": {"local_tv": "Write a local headline."}})
    assert s.node_specs[0] == NodeSpec("local_tv", "Write a local headline.")
    assert s.node_specs[1].instruction == DEFAULT_NODE_INSTRUCTIONS["mass_market"]


# --- text helpers ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw, clean", [
    ("[weight 0.58] (business_finance, t=210.8 h) Aldmark raises guidance\n\nThis", "Aldmark raises guidance"),
    ('- "Aldmark signs new contract" (business finance, weight 0.58)', "Aldmark signs new contract"),
    ("The next item for mass_market is:\nCrew safe after splashdown", "Crew safe after splashdown"),
    ("Here is the headline:\n**Moon flyby a success**", "Moon flyby a success"),
    ("Headline: 'Crew safe'", "Crew safe"),
    ("Aldmark raises guidance on orders. (100%)", "Aldmark raises guidance on orders."),
    ('"Crew safe after splashdown" (mass market, 58%)', "Crew safe after splashdown"),
    ("Crew returns home (2031)", "Crew returns home (2031)"),
    ("Crew of 4 returns (250)", "Crew of 4 returns (250)"),
    ("Old style echo (general_news, weight 0.40)", "Old style echo"),
    ('A new headline: "Crew safe after splashdown"', "Crew safe after splashdown"),
    ("The recent headlines and how much each one influences you:\nCrew safe", "Crew safe"),
    ('"Moon" talks continue', '"Moon" talks continue'),
    ("3 astronauts return home", "3 astronauts return home"),
    ("[weight 0.02] (general_news, t=208.6 h) Calder", "Calder"),  # one word: the best there is
    ("[weight 0.15] (specialist_science_tech, t=207.9 h", "[weight 0.15] (specialist_science_tech, t=207.9 h"),
    ("", ""),
])
def test_clean_headline(raw, clean):
    assert clean_headline(raw) == clean


def test_headline_prompt_contract():
    specs = [NodeSpec("local_tv", "Write a local headline."), NodeSpec("business_finance", "Write about money.")]
    h = History(specs, [Event(0.0, 1, "Shares rise"), Event(1.0, 0, "Crowds gather")])
    mem = [MemoryItem(1, 0, 0.75), MemoryItem(0, 1, 0.25)]
    msgs = headline_prompt(2.5, 1, specs[1], mem, h, specs)
    assert msgs == headline_prompt(2.5, 1, specs[1], mem, h, specs)
    assert msgs[0] == {"role": "system", "content": "Write about money. Reply with the headline only: one line, "
                                                     "no explanation."}
    user = msgs[1]["content"].splitlines()
    assert user[0] == "Recent headlines, with the share of influence each has on your next headline:"
    assert user[1:3] == ['- "Crowds gather" (local TV, 75%)', '- "Shares rise" (business finance, 25%)']
    assert user[-1] == "Now, at t = 2.5 h, write one new headline for business finance."
    empty = headline_prompt(2.5, 0, specs[0], [], h, specs)[1]["content"]
    assert empty == "Now, at t = 2.5 h, write one new headline for local TV."


def test_copy_rate():
    specs = [NodeSpec("a", "x")]
    run = CascadeRun({}, Event(0.0, 0, "Crew safe!"), tuple(specs))
    assert math.isnan(copy_rate(run))
    from uncertainty_lab.cascade import CascadeStep

    for i, text in enumerate(["crew safe", "New text", "new text.", "Other"], start=1):
        run.steps.append(CascadeStep(i, float(i), 0, text, (), "", 0))
    assert copy_rate(run) == pytest.approx(2 / 4)
