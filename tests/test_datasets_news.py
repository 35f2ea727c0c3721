"""The shipped Halyard II news cascade, its generator, its split and its Hawkes event stream."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta

import numpy as np
import pytest

from uncertainty_lab.datasets import build_news_cascade as build
from uncertainty_lab.datasets.news import (
    N_TRAIN,
    NODES,
    PHASES,
    SOURCES,
    NewsEvent,
    chronological_split,
    load_news_cascade,
    news_cascade_path,
    news_event_stream,
)
from uncertainty_lab.datasets.qa import DatasetFormatError
from uncertainty_lab.hawkes import EventStream, fit_hawkes

# ---------------------------------------------------------------------------------------------------------------
# The shipped cascade
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def events():
    return load_news_cascade()


def test_shipped_cascade_size_nodes_and_schema(events):
    assert 240 <= len(events) <= 260
    assert len(events) == 248
    assert all(isinstance(e, NewsEvent) for e in events)
    counts = Counter(e.node for e in events)
    assert set(counts) == set(NODES)
    assert min(counts.values()) >= 20
    assert len({e.id for e in events}) == len(events)
    assert all(e.source == SOURCES[e.node] for e in events)
    assert all(e.phase in PHASES for e in events)
    assert all(e.url is None for e in events)
    assert events[0].time == events[0].time_h and events[0].text == events[0].headline


def test_headlines_unique_nonempty_and_english_short(events):
    headlines = [e.headline for e in events]
    assert len(set(headlines)) == len(headlines)
    assert len({h.casefold() for h in headlines}) == len(headlines)
    assert all(10 <= len(h) <= 130 for h in headlines)
    assert not any("{" in h or "}" in h for h in headlines)  # every slot filled


def test_times_strictly_increasing_and_match_timestamps(events):
    times = np.array([e.time_h for e in events])
    assert np.all(np.diff(times) > 0)
    assert 0 <= times[0] and times[-1] <= build.T_END
    assert times[-1] - times[0] > 240  # about 11 days
    for node in NODES:
        t = np.array([e.time_h for e in events if e.node == node])
        assert np.all(np.diff(t) > 0)
    start = datetime(2031, 9, 1)
    for e in events:
        stamp = datetime.strptime(e.timestamp, "%Y-%m-%dT%H:%M:%SZ")
        assert abs((stamp - start) / timedelta(hours=1) - e.time_h) < 1e-5


def test_phases_in_story_order(events):
    ranks = [PHASES.index(e.phase) for e in events]
    assert ranks == sorted(ranks)
    assert set(ranks) == set(range(len(PHASES)))
    for e in events:
        assert build.phase_of(e.time_h) == e.phase


def _first(events, words):
    hits = [e.time_h for e in events if any(w in e.headline.casefold() for w in words)]
    assert hits, words
    return min(hits)


def test_headlines_consistent_with_their_time(events):
    liftoff = _first(events, ("lifts off", "liftoff:", "blasts toward"))
    fault = _first(events, ("fault", "cooling problem", "alarm"))
    flyby_done = _first(events, ("swings around the moon", "rounds the moon", "flies around the moon",
                                 "regains contact", "signal reacquired"))
    splash_done = _first(events, ("splashes down", "splash down", "splashdown!"))
    assert build.LAUNCH <= liftoff < fault < flyby_done < splash_done
    assert flyby_done >= build.FLYBY and splash_done >= build.SPLASHDOWN
    for e in events:
        text = e.headline.casefold()
        if e.time_h < build.SPLASHDOWN:
            assert not any(w in text for w in ("splashes down", "splash down", "splashdown!", "safe return")), e
        if e.time_h < build.ANOMALY:
            assert "fault" not in text and "loop b" not in text, e
        if e.time_h < build.LAUNCH:
            assert "liftoff:" not in text and "lifts off" not in text, e
        if e.time_h < build.HOMECOMING:
            assert "thousands line" not in text, e


def test_specialist_node_sparse_in_held_out_window(events):
    train, test = chronological_split(events)
    assert (len(train), len(test)) == (N_TRAIN, 50)
    spec_test = sum(e.node == "specialist_science_tech" for e in test)
    spec_train = sum(e.node == "specialist_science_tech" for e in train)
    assert spec_test <= 3
    assert spec_test / len(test) < 0.5 * spec_train / len(train)
    assert {e.node for e in test} >= {"local_tv", "mass_market", "business_finance", "general_news"}


def test_converts_to_event_stream(events):
    stream = news_event_stream(events, end_time=build.T_END)
    assert isinstance(stream, EventStream)
    assert stream.n_events == len(events) and stream.n_nodes == 5
    assert stream.node_names == NODES and stream.end_time == build.T_END
    assert stream.counts.tolist() == [sum(e.node == n for e in events) for n in NODES]
    # a later window (the held-out events) starts where training ended
    train, test = chronological_split(events)
    later = news_event_stream(test, start_time=train[-1].time_h)
    assert later.start_time == train[-1].time_h and later.n_events == 50


def test_hawkes_fit_on_training_events_is_stable_with_cross_excitation(events):
    train, _ = chronological_split(events, n_train=198)
    stream = news_event_stream(train)
    fit = fit_hawkes(stream, beta_grid=[0.1, 0.3, 1, 3])
    model = fit.model
    assert model.spectral_radius() < 1
    g = np.asarray(fit.alpha) / fit.beta
    off = g - np.diag(np.diag(g))
    assert off.max() > 0.05
    assert (off > 0.01).sum() >= 3
    assert np.all(np.isfinite(fit.mu)) and np.all(fit.mu >= 0)


def test_regeneration_is_byte_identical(tmp_path):
    jsonl, card = build.write_news_cascade(tmp_path)
    assert jsonl.read_bytes() == news_cascade_path().read_bytes()
    assert card.read_bytes() == news_cascade_path().with_name("news_cascade.md").read_bytes()
    assert build.main(["--check", "--out-dir", str(tmp_path)]) == 0
    (tmp_path / "news_cascade.md").write_text("stale\n", encoding="utf-8")
    assert build.main(["--check", "--out-dir", str(tmp_path)]) == 1
    assert load_news_cascade(jsonl) == load_news_cascade()


def test_card_reports_counts_and_split():
    card = news_cascade_path().with_name("news_cascade.md").read_text(encoding="utf-8")
    for word in ("fiction", "198", "specialist_science_tech", "Limits", "Intended use", "build_news_cascade"):
        assert word in card


def test_chronological_split_checks_and_sorts(events):
    shuffled = list(reversed(events))
    train, test = chronological_split(shuffled, n_train=10)
    assert [e.id for e in train] == [e.id for e in events[:10]]
    assert max(e.time_h for e in train) < min(e.time_h for e in test)
    for bad in (0, len(events), -1, 2.5, True):
        with pytest.raises(ValueError, match="n_train"):
            chronological_split(events, n_train=bad)


def test_news_event_stream_names_unknown_nodes(events):
    with pytest.raises(ValueError, match="node_names"):
        news_event_stream(events, node_names=NODES[:4])
    stream = news_event_stream(events[:3], node_names=("a", *NODES))
    assert stream.n_nodes == 6 and stream.counts[0] == 0


def test_load_news_cascade_reports_bad_lines(tmp_path, events):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(events[0].to_dict())
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"bad\.jsonl, line 2"):
        load_news_cascade(path)
    record = events[1].to_dict()
    record["time_h"] = -1
    path.write_text(good + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="line 2.*time_h"):
        load_news_cascade(path)
    record = events[1].to_dict() | {"extra": 1}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="unknown field"):
        load_news_cascade(path)
    path.write_text(json.dumps(events[1].to_dict()) + "\n" + good + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="time order"):
        load_news_cascade(path)
