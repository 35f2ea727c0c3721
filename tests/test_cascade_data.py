"""The cascade's ``data`` setting: the shipped cascade by default, a file in its schema, or GDELT files mapped to
nodes; the old ``dataset`` setting as a deprecated alias; and GDELT done honestly — with timestamps tied within
one 15-minute export spread by the loader, the fit says when the decay it chose is that spreading."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeLLM, HashEmbedder

from uncertainty_lab.cascade import CascadeError
from uncertainty_lab.cascade.config import CascadeConfig, load_config
from uncertainty_lab.cascade.experiment import prepare, run_experiment
from uncertainty_lab.datasets.news import NODES, news_cascade_path

DOMAINS = {"reuters.com": "general_news", "msn.com": "mass_market", "ft.com": "business_finance"}


def write_gkg(path, hours: int = 48, seed: int = 0) -> int:
    """A tiny GDELT GKG 2.1 file: one export an hour, each with 0–3 articles per outlet stamped with the export's
    time (as GDELT does), so articles of one node tie. Returns the number of rows."""
    rng = np.random.default_rng(seed)
    lines, n = [], 0
    start = datetime(2031, 9, 2, tzinfo=UTC)
    for hour in range(hours):
        stamp = f"{start + timedelta(hours=hour):%Y%m%d%H%M%S}"
        for domain in DOMAINS:
            for _ in range(int(rng.integers(0, 4))):
                n += 1
                fields = [""] * 27
                fields[:5] = [f"{stamp}-{n}", stamp, "1", domain, f"https://www.{domain}/news/{n}"]
                fields[26] = f"<PAGE_TITLE>Halyard report {n} from {domain}</PAGE_TITLE>"
                lines.append("\t".join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


@pytest.fixture(scope="module")
def gkg(tmp_path_factory):
    path = tmp_path_factory.mktemp("gdelt") / "20310902000000.gkg.csv"
    write_gkg(path)
    return path


def gdelt(path, **options):
    return {"loader": "gdelt", "path": str(path), "domain_to_node": DOMAINS, **options}


# --- the setting ------------------------------------------------------------------------------------------------


def test_the_default_is_the_shipped_cascade():
    config = CascadeConfig()
    assert config.data == {"loader": "shipped_news"} and config.dataset is None
    setup = prepare(config)
    assert len(setup.events) == 248 and setup.nodes == NODES and setup.data_report is None
    assert setup.describe().startswith("data: shipped_news: the package's own data\n")
    assert setup.fit.warnings == []


def test_the_old_dataset_setting_still_works_with_a_future_warning(tmp_path):
    path = news_cascade_path()
    with pytest.warns(FutureWarning, match=r"'dataset' is deprecated.*data = \{loader = 'shipped_news', path = "):
        old = CascadeConfig(dataset=str(path))
    assert old.data == {"loader": "shipped_news", "path": str(path)} and old.dataset is None
    new = CascadeConfig(data={"loader": "shipped_news", "path": str(path)})
    assert old.fingerprint() == new.fingerprint()
    assert prepare(old).model.beta == prepare(new).model.beta
    with pytest.raises(CascadeError, match="give only data"):
        CascadeConfig(dataset=str(path), data={"loader": "shipped_news", "path": str(path)})
    toml = tmp_path / "old.toml"
    toml.write_text(f"dataset = {json.dumps(str(path))}\n", encoding="utf-8")
    with pytest.warns(FutureWarning):
        assert load_config(toml).data["path"] == str(path)


@pytest.mark.parametrize(("data", "match"), [
    ({"loader": "musique", "path": "x.jsonl"}, r"data.loader must be one of 'shipped_news', 'gdelt', 'world' \('musique' "
                                                r"gives another kind"),
    ({"loader": "gdelt", "domain_to_node": DOMAINS}, "loader 'gdelt' reads a file you downloaded; give its path"),
    ({"loader": "gdelt", "path": "x.csv"}, "loader 'gdelt' needs domain_to_node"),
    ({"loader": "shipped_news", "smaple": 3}, "data.smaple: loader 'shipped_news' takes no such option"),
    ({"loader": "shipped_news", "sample": 0}, "data.sample must be a positive number"),
    ({"loader": "shipped_news", "path": 3}, "data.path must be a file or folder name"),
    ([1, 2], "data must be a table"),
])
def test_a_bad_data_setting_is_an_error_naming_it(data, match):
    with pytest.raises(CascadeError, match=match):
        CascadeConfig(data=data)


def test_a_missing_file_is_found_when_the_data_is_loaded(tmp_path):
    config = CascadeConfig(data=gdelt(tmp_path / "none.gkg.csv"))  # the config reads no file
    with pytest.raises(CascadeError, match=r"data = gdelt: .*none\.gkg\.csv.*no such file"):
        prepare(config)


# --- GDELT -------------------------------------------------------------------------------------------------------


def test_gdelt_ties_spread_by_the_loader_make_the_fit_warn(gkg):
    with pytest.warns(UserWarning, match="sits at the scale of the tie window"):
        setup = prepare({"data": gdelt(gkg), "n_train": 60})
    ties = setup.data_report.ties_report
    assert ties.how == "spread" and ties.n_moved > 0 and ties.window_hours == 0.25
    assert setup.nodes == NODES  # the mapping names shipped nodes: their ids and instructions stay
    assert setup.model.beta == 5.0 and setup.model.spectral_radius() > 0.1  # excitation made by the spreading
    (warning,) = setup.fit.warnings
    assert "1/β = 0.2 h is within 3× the 0.25 h tie window" in warning and "largest value of the grid" in warning
    assert "ties='merge'" in warning and "bin_hours" in warning and "real publication times" in warning
    lines = setup.describe().splitlines()
    assert lines[0] == f"WARNING: {warning}" and lines[1].startswith("data: gdelt: ")
    assert "same-node ties (spread" in setup.describe()


def test_gdelt_with_ties_merged_warns_once_and_leaves_beta_undetermined(gkg):
    with pytest.warns(UserWarning) as caught:
        setup = prepare({"data": gdelt(gkg, ties="merge"), "n_train": 60})
    assert len(caught) == 1 and setup.data_report.ties_report.n_moved == 0
    (warning,) = setup.fit.warnings
    ties = setup.train_stream.ties
    assert ties.how == "merge" and ties.n_dropped > 0 and ties.n_events == len(setup.train) + ties.n_dropped
    assert f"{ties.n_tied} of {ties.n_events} events ({ties.share:.0%}) tied" in warning and "merged" in warning
    assert setup.model.spectral_radius() < 1e-6  # one event per node and export: no excitation left
    assert setup.fit.beta is None and "β is undetermined" in warning  # flat likelihood: no arbitrary grid pick
    assert setup.describe().startswith("WARNING") and "β = undetermined" in setup.describe()


def test_gdelt_nodes_default_to_the_data_when_they_are_not_the_shipped_ones(gkg):
    mapping = {"reuters.com": "wire", "msn.com": "portal", "ft.com": "markets"}
    instructions = {n: f"Write one {n} headline." for n in mapping.values()}
    with pytest.warns(UserWarning):
        setup = prepare({"data": {**gdelt(gkg), "domain_to_node": mapping}, "n_train": 60,
                         "node_instructions": instructions})
    assert setup.nodes == ("markets", "portal", "wire")
    with pytest.raises(CascadeError, match="n_train: n_train must be between 1 and len"):
        prepare({"data": gdelt(gkg, limit=20), "n_train": 198})


def _one_export_setup():
    """The Events export of tests/data/gdelt (one 15-minute file: every row at one time) with its GKG for titles,
    prepared: the fit warns once, with no timing information, no excitation and no β."""
    folder = Path(__file__).resolve().parent / "data" / "gdelt"
    mapping = {"timesofindia.indiatimes.com": "local_tv", "reuters.com": "general_news", "msn.com": "mass_market"}
    with pytest.warns(UserWarning, match=r"ties: 4 of 5 events \(80%\) tied") as caught:
        setup = prepare({"n_train": 5, "data": {"loader": "gdelt", "path": str(folder / "20310902163000.export.CSV"),
                                                "format": "events", "gkg": str(folder / "20310902163000.gkg.csv"),
                                                "domain_to_node": mapping}})
    assert len(caught) == 1 and "the stream has no timing information" in setup.fit.warnings[0]
    assert setup.fit.beta is None and not setup.model.alpha.any() and "β = undetermined" in setup.describe()
    return setup


def test_gdelt_events_without_a_headline_are_fitted_but_are_no_references():
    setup = _one_export_setup()
    assert setup.train_stream.n_events == 5 and len(setup.test) == 4
    untitled = [e for e in setup.test if not e.headline]
    assert untitled and len(setup.references) == len(setup.test) - len(untitled)
    assert all(r.text for r in setup.references)
    assert f"{len(untitled)} held-out events have no headline: not references" in setup.describe()


def test_on_one_export_the_report_says_beta_is_undetermined_and_the_hawkes_memory_empty(tmp_path):
    """The issue's GDELT run: every row of one export at one time; the report and results.json say that β is
    undetermined, that no node has timing information, and that the hawkes selector remembered nothing."""
    setup = _one_export_setup()
    config = {"n_train": 5, "selectors": ["hawkes", "recency"], "runs": 1, "steps": 3, "progress": False,
              "figure": False, "out_dir": str(tmp_path / "out")}
    result = run_experiment(config, llm=FakeLLM(), embedder=HashEmbedder(), setup=setup)
    report = result.report()
    assert "β undetermined on the grid" in report and "no timing information: all 5 events are at one time" in report
    assert "selector `hawkes` (k = 3) had an EMPTY memory at every step" in report
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert saved["fit"]["beta"] is None and saved["fit"]["beta_note"].startswith("β is undetermined")
    speaking = [name for name in setup.nodes if any(e.node == name for e in setup.train)]
    assert saved["fit"]["untimed_sources"] == speaking and saved["fit"]["stream_ties"]["n_tied"] == 4
    assert [r["memory_empty"] for r in saved["table"]] == [1.0, 0.0]
    untitled = [e for e in setup.test if not e.headline]
    assert untitled and len(setup.references) == len(setup.test) - len(untitled)
    assert all(r.text for r in setup.references)
    assert f"{len(untitled)} held-out events have no headline: not references" in setup.describe()


def test_the_report_and_results_carry_the_tie_warning_first(gkg, tmp_path):
    config = {"data": gdelt(gkg), "n_train": 60, "selectors": ["hawkes"], "runs": 1, "steps": 2, "progress": False,
              "figure": False, "out_dir": str(tmp_path / "out")}
    with pytest.warns(UserWarning, match="tie window"):
        result = run_experiment(config, llm=FakeLLM(), embedder=HashEmbedder())
    report = result.report().splitlines()
    assert report[0] == "## HawkesLLM cascade experiment"
    assert report[2].startswith("**Warning:** ties: 56 of 60 events (93%) tied") and "spread" in report[2]
    assert "β = 5 /h sits at the scale of the tie window" in report[2]  # one warning: the share, then the scale
    assert report[4].startswith("Data: gdelt: ") and "nodes local_tv, mass_market" in report[4]
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert saved["fit"]["warnings"] == result.setup.fit.warnings
    assert saved["fit"]["ties"]["how"] == "spread" and saved["fit"]["ties"]["n_moved"] > 0
    st = saved["fit"]["stream_ties"]
    assert (st["how"], st["n_tied"], st["n_events"]) == ("spread", 56, 60) and sum(st["tied_per_node"].values()) == 56
    assert saved["fit"]["beta"] == 5.0 and saved["fit"]["beta_note"] == "" and saved["fit"]["untimed_sources"] == []
    assert saved["config"]["data"]["loader"] == "gdelt"
