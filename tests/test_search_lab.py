"""The search lab's shape: the experiment follows the lab contract (units seeded from the config alone, in any
order), every stop reason is counted (a gate plugin's new ``stop_kind`` included), the seeds recorded caches
replay with, the run-file format, the settings' help, and the old import paths."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import matplotlib
import pytest
from fakes import FakeEpisode

from uncertainty_lab import registry
from uncertainty_lab.contracts import GateDecision, StoppingGate
from uncertainty_lab.lab import Experiment, LabConfig, LabResult
from uncertainty_lab.search import Episode, EpisodeError, SearchStep, make_belief, make_policy, step_seed
from uncertainty_lab.search.config import Condition, SearchConfig
from uncertainty_lab.search.experiment import EXPERIMENT, SearchExperiment, run_experiment
from uncertainty_lab.search.record import FORMAT
from uncertainty_lab.search.result import SearchResult
from uncertainty_lab.search.scoring import EpisodeScore
from uncertainty_lab.seeds import derive_seed

matplotlib.use("Agg")

FAST = {"llm": "oracle", "progress": False, "figure": False}


# --- every stop reason is counted ---------------------------------------------------------------------------


@dataclass
class StopAtTwoGate(StoppingGate):
    """A gate plugin defined in this process whose stop reason no built-in gate uses."""

    name: ClassVar[str] = "stop_at_two"
    summary: ClassVar[str] = "stop after two steps, calling it 'satisficed'"
    stop_kind: ClassVar[str] = "satisficed"

    def __post_init__(self):
        self.reset()

    def reset(self) -> None:
        self._n = 0

    def update(self, step) -> GateDecision:
        self._n += 1
        return GateDecision(self._n >= 2, f"{self._n} steps", {"steps": self._n})


@pytest.fixture
def stop_at_two():
    registry.register("stopping_gates", "stop_at_two")(StopAtTwoGate)
    yield
    registry.unregister("stopping_gates", "stop_at_two")


def test_a_gate_plugin_with_a_new_stop_kind_is_counted_without_editing_anything(tmp_path, stop_at_two):
    result = run_experiment({**FAST, "limit": 3, "beliefs": ["implicit"], "figure": True, "out_dir": str(tmp_path),
                             "gate_sets": [["fixed_budget"], ["stop_at_two", "fixed_budget"]]})
    assert result.stop_kinds() == ["budget", "satisficed"]  # the built-ins first, then the plugin's own
    rows = {r["gates"]: r for r in result.summary_rows()}
    assert rows["stop_at_two+fixed_budget"]["stop_reasons"] == {"budget": 0, "satisficed": 3}
    assert rows["fixed_budget"]["stop_reasons"] == {"budget": 3, "satisficed": 0}
    assert "stops budget/satisficed" in result.summary_table() and "| 0/3 |" in result.summary_table()
    saved = json.loads(result.files["results"].read_text())
    assert [r["stop_reasons"] for r in saved["summary"]] == [{"budget": 3, "satisficed": 0},
                                                            {"budget": 0, "satisficed": 3}]
    labels = [t.get_text() for t in result.draw_stop_reasons().axes[0].get_legend().get_texts()]
    assert labels == ["budget", "satisficed"]
    assert result.table()[1]["satisficed"] == 3


def test_stop_kinds_known_first_in_a_stable_order_then_any_other_reason_found():
    cfg = SearchConfig(beliefs=["implicit"], llm="oracle")
    c = Condition("heuristic", "implicit", ("fixed_budget", "exhaustion", "llm_self_stop"))
    result = SearchResult(cfg, {c: [FakeEpisode("q1", "cancelled"), FakeEpisode("q2", "answered"),
                                    FakeEpisode("q3", "cancelled")]})
    # known: the three built-in kinds (in their own order, whatever the gate order) and budget; then what was found
    assert result.stop_kinds() == ["answered", "exhausted", "budget", "cancelled"]
    (row,) = result.summary_rows()
    assert row["stop_reasons"] == {"answered": 1, "exhausted": 0, "budget": 0, "cancelled": 2}
    assert sum(row["stop_reasons"].values()) == row["n"]
    assert "stops answered/exhausted/budget/cancelled" in result.summary_table()


# --- the lab contract ---------------------------------------------------------------------------------------


def test_the_experiment_follows_the_lab_contract_and_units_run_in_any_order(tmp_path):
    assert isinstance(EXPERIMENT, SearchExperiment) and isinstance(EXPERIMENT, Experiment)
    assert issubclass(SearchConfig, LabConfig) and issubclass(SearchResult, LabResult)
    assert SearchResult.report_name == "summary"
    cfg = SearchConfig.coerce({**FAST, "limit": 2, "beliefs": ["predicate"], "out_dir": str(tmp_path / "fwd")})
    whole = run_experiment(cfg)
    backwards = SearchConfig.coerce(cfg, {"out_dir": str(tmp_path / "back")})
    context = EXPERIMENT.prepare(backwards)
    units = EXPERIMENT.units(backwards, context)
    assert len(units) == len(whole.conditions) * 2 and len({u.path for u in units}) == len(units)
    assert units[0].path == tmp_path / "back" / "episodes" / "heuristic__predicate__fixed_budget" / "q001.jsonl"
    records = {u.key: EXPERIMENT.run_unit(u, backwards, context) for u in reversed(units)}
    result = EXPERIMENT.collect(backwards, context, records)
    for c in whole.conditions:
        assert [e.records() for e in whole.episodes[c]] == [e.records() for e in result.episodes[c]]
    assert result.summary_rows() == whole.summary_rows()
    written = whole.written()  # the outputs, then every episode file
    assert written[:2] == [tmp_path / "fwd" / "summary.md", tmp_path / "fwd" / "results.json"]
    assert written[2:] == [tmp_path / "fwd" / u.path.relative_to(tmp_path / "back") for u in units]


def test_every_setting_has_its_help_and_the_shared_settings_keep_their_names():
    helps = dict((name, text) for name, _, text in SearchConfig.settings_help())
    assert all(helps.values()), [n for n, h in helps.items() if not h]
    assert {"llm", "seed", "out_dir", "overwrite", "progress", "figure", "gate_sets", "beliefs"} <= set(helps)
    assert SearchConfig().out_dir == "search_results" and "oracle" in helps["llm"]


def test_beliefs_and_policies_are_resolved_like_plugins():
    b = make_belief({"name": "predicate", "max_findings": 4})
    assert b.name == "predicate" and b.max_findings == 4
    assert make_policy(("llm", {"max_tokens": 12})).max_tokens == 12
    with pytest.raises(ValueError, match="belief parameters go with a belief name"):
        make_belief(b, max_findings=3)
    with pytest.raises(registry.ParameterError, match="belief 'implicit' parameter 'budget'"):
        make_belief("implicit", budget=3)
    with pytest.raises(registry.RegistryError, match="policy must be a name.*propose"):
        make_policy(object())


# --- seeds and the run file ---------------------------------------------------------------------------------


def test_step_seeds_are_derive_seed_and_keep_their_recorded_values():
    """Recorded completion caches replay only if every call's seed stays what it was."""
    codes = {"init": 0, "policy": 1, "update": 2, "answer": 3, "convergence": 4}
    for seed in (0, 3, 99):
        for t in range(6):
            for purpose, code in codes.items():
                assert step_seed(seed, t, purpose) == derive_seed(seed, t, code)
    # pinned: the values the SeedSequence idiom gave before seeds.derive_seed existed
    assert [step_seed(0, 0, "init"), step_seed(0, 1, "policy"), step_seed(0, 2, "update"), step_seed(3, 0, "answer"),
            step_seed(7, 5, "convergence")] == [821328062, 901243215, 1425400168, 1636480977, 1658818098]


def test_run_file_format_and_damage(tmp_path):
    assert (FORMAT.name, FORMAT.body, FORMAT.end) == ("uncertainty_lab.search/1", ("start", "step"), "final")
    step = SearchStep("q", ["d-1"], t=1)
    ep = Episode({"question": {"id": "x", "question": "q"}}, {"init": {}, "belief": {}}, [step],
                 {"stop_reason": "budget", "answer": {"text": "a"}})
    path = ep.save(tmp_path / "ep.jsonl")
    assert Episode.load(path).records() == ep.records()
    lines = path.read_text().splitlines()
    gap = tmp_path / "gap.jsonl"
    gap.write_text("\n".join([*lines[:2], lines[2].replace('"t": 1', '"t": 2')]) + "\n")
    with pytest.raises(EpisodeError, match="step 2 where step 1 was expected"):
        Episode.load(gap)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(lines[0].replace("search/1", "cascade/1") + "\n")
    with pytest.raises(EpisodeError, match="not 'uncertainty_lab.search/1'"):
        Episode.load(foreign)
    with pytest.raises(FileNotFoundError):
        Episode.load(tmp_path / "missing.jsonl")


# --- old import paths ---------------------------------------------------------------------------------------


def test_old_import_paths_still_work():
    from uncertainty_lab.search import SearchExperimentResult
    from uncertainty_lab.search.episode import Episode as OldEpisode
    from uncertainty_lab.search.episode import EpisodeScore as OldScore
    from uncertainty_lab.search.episode import SearchStep as OldStep
    from uncertainty_lab.search.episode import step_seed as old_step_seed
    from uncertainty_lab.search.experiment import OracleReader, load_config  # noqa: F401
    from uncertainty_lab.search.experiment import SearchConfig as OldConfig
    from uncertainty_lab.search.oracle import OracleReader as NewOracle

    assert (OldEpisode, OldStep, OldScore, old_step_seed) == (Episode, SearchStep, EpisodeScore, step_seed)
    assert SearchExperimentResult is SearchResult and OracleReader is NewOracle and OldConfig is SearchConfig
