"""The shipped Halyard II news cascade, its generator, and the GDELT loader (on small files in GDELT's formats)."""

from __future__ import annotations

import gzip
import json
import zipfile
from collections import Counter
from datetime import datetime, timedelta

import numpy as np
import pytest

from uncertainty_lab.datasets import build_news_cascade as build
from uncertainty_lab.datasets.gdelt import EVENTS_COLUMNS, GKG_COLUMNS, load_gdelt
from uncertainty_lab.datasets.gdelt_report import GdeltEvents
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
from uncertainty_lab.datasets.urls import normalise_domain, normalise_title, normalise_url, title_from_url
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


# ---------------------------------------------------------------------------------------------------------------
# GDELT: small files in the real column formats (tab-separated, no header)
# ---------------------------------------------------------------------------------------------------------------

MAPPING = {
    "capecoast7.example": "local_tv",
    "https://www.blink.example/": "mass_market",
    "orbit-instrument.example": "specialist_science_tech",
    "markets.example": "business_finance",
    "wire.example": "general_news",
}


def gkg_line(rid, date, domain, url, title=None, *, collection="1") -> str:
    fields = [""] * len(GKG_COLUMNS)
    fields[0], fields[1], fields[2], fields[3], fields[4] = rid, date, collection, domain, url
    fields[7] = "SPACE;TAX_FNCACT_ASTRONAUT;"
    fields[15] = "-1.25,2.5,3.75,6.25,21.3,0.5,312"
    if title is not None:
        fields[26] = f"<PAGE_LINKS>{url}</PAGE_LINKS><PAGE_AUTHORS>Staff</PAGE_AUTHORS><PAGE_TITLE>{title}</PAGE_TITLE>"
    return "\t".join(fields)


def event_line(eid, dateadded, url) -> str:
    fields = [""] * len(EVENTS_COLUMNS)
    fields[0], fields[1], fields[2], fields[3], fields[4] = eid, dateadded[:8], dateadded[:6], dateadded[:4], "2031.6685"
    fields[5], fields[6] = "USA", "UNITED STATES"
    fields[25], fields[26], fields[27], fields[28], fields[29] = "1", "043", "043", "04", "1"
    fields[30], fields[31], fields[32], fields[33], fields[34] = "2.8", "10", "1", "10", "1.9"
    fields[59], fields[60] = dateadded, url
    return "\t".join(fields)


GKG_ROWS = [
    gkg_line("20310902163000-1", "20310902163000", "capecoast7.example",
             "https://capecoast7.example/news/port-aldwick-erupts-at-liftoff", "Port Aldwick erupts at liftoff &amp; cheers"),
    # same node, same GDELT batch: a tie at local_tv (subdomain of a mapped domain)
    gkg_line("20310902163000-2", "20310902163000", "news.capecoast7.example",
             "https://news.capecoast7.example/traffic-jam-on-the-causeway", "Traffic jam on the causeway"),
    gkg_line("20310902164500-3", "20310902164500", "wire.example",
             "https://wire.example/2031/09/02/crew-lifts-off-toward-moon.html", "Crew lifts off toward Moon - Wire Example"),
    gkg_line("20310902170000-4", "20310902170000", "other.example", "https://other.example/x/unrelated-story",
             "Unrelated story"),
    # the same article again (www., tracking parameter): a duplicate by URL
    gkg_line("20310902170000-5", "20310902170000", "wire.example",
             "http://www.wire.example/2031/09/02/crew-lifts-off-toward-moon.html?utm_source=feed", "Crew on its way"),
    # another outlet running the same wire headline: a duplicate by normalised title
    gkg_line("20310902171500-6", "20310902171500", "blink.example", "https://blink.example/crew-lifts-off",
             "Crew lifts off toward Moon | Blink"),
    # no PAGE_TITLE: the headline comes from the URL slug
    gkg_line("20310902171500-7", "20310902171500", "markets.example",
             "https://markets.example/2031/09/02/kestrel-heat-shield-stocks-rally-1234567.html"),
    gkg_line("20310902174000-8", "20310902174000", "another.example", "https://another.example/a-story-here",
             "A story"),
    gkg_line("20310902184000-9", "20310902184000", "orbit-instrument.example",
             "https://orbit-instrument.example/tli-burn-complete", "TLI burn complete"),
    gkg_line("20310902190000-10", "20310902190000", "another.example", "https://another.example/another-story",
             "Another story"),
]


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_gdelt_gkg_maps_dedupes_and_breaks_ties(tmp_path):
    path = write_lines(tmp_path / "20310902.gkg.csv", GKG_ROWS)
    with pytest.warns(UserWarning, match=r"3 of 10 rows .*another\.example \(2\)"):
        out = load_gdelt(path, MAPPING, format="gkg")
    assert isinstance(out, GdeltEvents) and isinstance(out, list)
    rep = out.report
    assert rep.n_rows == 10 and rep.n_unmapped == 3
    assert rep.unmapped == {"another.example": 2, "other.example": 1}
    assert rep.n_duplicates == 2 and rep.n_kept == 5 and rep.n_malformed == 0
    assert rep.t0 == "2031-09-02T16:30:00Z" and rep.n_ties == 1
    assert rep.per_node == {"business_finance": 1, "general_news": 1, "local_tv": 2, "specialist_science_tech": 1}
    assert "kept 5 events" in rep.summary()
    by_id = {e.id: e for e in out}
    assert set(by_id) == {"20310902163000-1", "20310902163000-2", "20310902164500-3", "20310902171500-7",
                          "20310902184000-9"}
    # earliest copy kept; titles unescaped; slug headline when there is no PAGE_TITLE
    assert by_id["20310902164500-3"].headline == "Crew lifts off toward Moon - Wire Example"
    assert by_id["20310902163000-1"].headline == "Port Aldwick erupts at liftoff & cheers"
    assert by_id["20310902171500-7"].headline == "Kestrel heat shield stocks rally"
    assert by_id["20310902163000-2"].node == "local_tv" and by_id["20310902163000-2"].source == "news.capecoast7.example"
    # hours since the first kept event; the tie at local_tv spread over the 15-minute batch, ordered by URL
    assert by_id["20310902163000-1"].time_h == 0.0
    assert by_id["20310902163000-2"].time_h == pytest.approx(0.125)
    assert by_id["20310902164500-3"].time_h == pytest.approx(0.25)
    assert by_id["20310902184000-9"].time_h == pytest.approx(130 / 60)
    assert by_id["20310902163000-2"].timestamp == "2031-09-02T16:30:00Z"  # the GDELT time is kept
    times = [e.time_h for e in out]
    assert times == sorted(times)
    stream = news_event_stream(out)
    assert stream.n_events == 5 and stream.counts.tolist() == [2, 0, 1, 1, 1]


def test_gdelt_binning_and_tie_rules(tmp_path):
    path = write_lines(tmp_path / "g.csv", GKG_ROWS)
    out = load_gdelt(path, MAPPING, bin_hours=1, warn=False)
    by_id = {e.id: e for e in out}
    # 16:30 → bin 0; 16:45 and 17:15 → bin 0 too; 18:40 → bin 2
    assert by_id["20310902164500-3"].time_h == 0.0
    assert by_id["20310902171500-7"].time_h == 0.0
    assert by_id["20310902184000-9"].time_h == 2.0
    # the two local_tv events share bin 0: spread across the bin (window = bin_hours)
    assert sorted(e.time_h for e in out if e.node == "local_tv") == [0.0, 0.5]
    assert out.report.bin_hours == 1.0
    merged = load_gdelt(path, MAPPING, bin_hours=1, ties="merge", warn=False)
    assert [e.id for e in merged if e.node == "local_tv"] == ["20310902163000-1"]
    assert merged.report.n_ties == 1
    kept = load_gdelt(path, MAPPING, bin_hours=1, ties="keep", warn=False)
    assert [e.time_h for e in kept if e.node == "local_tv"] == [0.0, 0.0]
    with pytest.raises(Exception, match="ties="):
        news_event_stream(kept)
    assert news_event_stream(kept, ties="spread").n_events == 5
    no_dedupe = load_gdelt(path, MAPPING, dedupe=False, warn=False)
    assert no_dedupe.report.n_duplicates == 0 and len(no_dedupe) == 7
    assert all(np.all(np.diff([e.time_h for e in no_dedupe if e.node == n]) > 0) for n in NODES)


def test_gdelt_deterministic_regardless_of_file_order(tmp_path):
    a = load_gdelt(write_lines(tmp_path / "a.csv", GKG_ROWS), MAPPING, warn=False)
    b = load_gdelt(write_lines(tmp_path / "b.csv", list(reversed(GKG_ROWS))), MAPPING, warn=False)
    assert [(e.id, e.time_h) for e in a] == [(e.id, e.time_h) for e in b]


def test_gdelt_malformed_lines_name_file_line_and_column(tmp_path):
    rows = [*GKG_ROWS[:3], "20310902170000-x\t20310902170000\t1\twire.example", *GKG_ROWS[3:]]
    path = write_lines(tmp_path / "broken.gkg.csv", rows)
    with pytest.raises(DatasetFormatError, match=r"broken\.gkg\.csv, line 4: expected 27 tab-separated columns"):
        load_gdelt(path, MAPPING)
    skipped = load_gdelt(path, MAPPING, on_error="skip", warn=False)
    assert skipped.report.n_malformed == 1 and "line 4" in skipped.report.malformed[0]
    assert len(skipped) == 5
    bad_date = GKG_ROWS[0].replace("20310902163000\t1\t", "2031-09-02 16:30\t1\t")
    path = write_lines(tmp_path / "date.csv", [GKG_ROWS[1], bad_date])
    with pytest.raises(DatasetFormatError, match=r"date\.csv, line 2, column 'V2\.1DATE'.*YYYYMMDDHHMMSS"):
        load_gdelt(path, MAPPING)
    path = write_lines(tmp_path / "month.csv", [GKG_ROWS[0].replace("\t20310902163000\t", "\t20311302163000\t")])
    with pytest.raises(DatasetFormatError, match="not a valid date-time"):
        load_gdelt(path, MAPPING)
    # an Events export read as GKG: the column count says which format it is
    path = write_lines(tmp_path / "export.csv", [event_line("1", "20310902163000", "https://wire.example/a-b")])
    with pytest.raises(DatasetFormatError, match="format='events'"):
        load_gdelt(path, MAPPING, format="gkg")
    path.write_text("id,date,url\n1,2,3\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="no tabs"):
        load_gdelt(path, MAPPING)


def test_gdelt_events_export(tmp_path):
    rows = [
        event_line("1001", "20310902163000", "https://www.wire.example/2031/09/02/halyard-ii-lifts-off-with-four-astronauts.html"),
        # a second event coded from the same article: duplicate URL
        event_line("1002", "20310902163000", "https://wire.example/2031/09/02/halyard-ii-lifts-off-with-four-astronauts.html"),
        event_line("1003", "20310902171500", "https://tv.capecoast7.example/story/port-aldwick-erupts-at-halyard-liftoff"),
        event_line("1004", "20310902171500", "https://elsewhere.example/halyard-elsewhere"),
        event_line("1005", "20310902180000", "https://markets.example/brightwater-shares-jump-on-launch"),
    ]
    path = write_lines(tmp_path / "20310902.export.CSV", rows)
    with pytest.warns(UserWarning, match="elsewhere.example"):
        out = load_gdelt(path, MAPPING, format="events")
    assert [e.id for e in out] == ["1001", "1003", "1005"]
    assert out[0].headline == "Halyard ii lifts off with four astronauts"
    assert out[0].source == "wire.example" and out[1].node == "local_tv"
    assert [e.time_h for e in out] == [0.0, 0.75, 1.5]
    assert out.report.n_duplicates == 1 and out.report.unmapped == {"elsewhere.example": 1}
    topical = load_gdelt(path, MAPPING, format="events", keywords=["halyard"], warn=False)
    assert [e.id for e in topical] == ["1001", "1003"] and topical.report.n_off_topic == 1
    bad = event_line("1006", "2031090218", "https://wire.example/x-y")
    write_lines(path, [rows[0], bad])
    with pytest.raises(DatasetFormatError, match=r"line 2, column 'DATEADDED'"):
        load_gdelt(path, MAPPING, format="events")
    write_lines(path, ["\t".join(["x"] * 58)])
    with pytest.raises(DatasetFormatError, match="GDELT 1.0"):
        load_gdelt(path, MAPPING, format="events")


def test_gdelt_reads_zip_gz_lists_and_folders(tmp_path):
    plain = load_gdelt(write_lines(tmp_path / "plain.csv", GKG_ROWS), MAPPING, warn=False)
    folder = tmp_path / "downloads"
    folder.mkdir()
    with zipfile.ZipFile(folder / "20310902163000.gkg.csv.zip", "w") as zf:
        zf.writestr("20310902163000.gkg.csv", "".join(r + "\n" for r in GKG_ROWS[:5]))
    with gzip.open(folder / "20310902174500.gkg.csv.gz", "wt", encoding="utf-8") as f:
        f.write("".join(r + "\n" for r in GKG_ROWS[5:]))
    from_folder = load_gdelt(folder, MAPPING, warn=False)
    from_list = load_gdelt(sorted(folder.iterdir()), MAPPING, warn=False)
    assert [(e.id, e.time_h) for e in from_folder] == [(e.id, e.time_h) for e in plain]
    assert [(e.id, e.time_h) for e in from_list] == [(e.id, e.time_h) for e in plain]
    assert len(from_folder.report.files) == 2
    (folder / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(DatasetFormatError, match="bad.zip"):
        load_gdelt(folder / "bad.zip", MAPPING)
    with pytest.raises(ValueError, match="no such file"):
        load_gdelt(tmp_path / "missing.csv", MAPPING)


def test_gdelt_argument_checks(tmp_path):
    path = write_lines(tmp_path / "g.csv", GKG_ROWS)
    with pytest.raises(ValueError, match="format"):
        load_gdelt(path, MAPPING, format="mentions")
    with pytest.raises(ValueError, match="domain_to_node"):
        load_gdelt(path, {})
    with pytest.raises(ValueError, match="both"):
        load_gdelt(path, {"wire.example": "general_news", "www.wire.example": "local_tv"})
    with pytest.raises(ValueError, match="bin_hours"):
        load_gdelt(path, MAPPING, bin_hours=0)
    with pytest.raises(ValueError, match="ties"):
        load_gdelt(path, MAPPING, ties="drop")
    with pytest.raises(ValueError, match="on_error"):
        load_gdelt(path, MAPPING, on_error="ignore")


def test_normalisers():
    assert normalise_domain("https://WWW.News.Example.com:443/path?q=1") == "news.example.com"
    assert normalise_domain("www2.example.org") == "example.org"
    assert normalise_url("https://www.ex.com/a/b/?utm_source=x&id=3#top") == "ex.com/a/b?id=3"
    assert normalise_url("http://ex.com/a/b?id=3") == "ex.com/a/b?id=3"
    assert normalise_title("Crew lands safely &amp; smiles | Example News") == "crew lands safely smiles"
    assert normalise_title("Crew lands safely & smiles") == "crew lands safely smiles"
    assert normalise_title("Q&A - Moon") == "q a moon"  # a short headline keeps its tail
    assert title_from_url("https://ex.com/2031/09/02/crew-lifts-off-toward-moon-1234567.html") == "Crew lifts off toward moon"
    assert title_from_url("https://ex.com/news/story/a1b2c3d4e5f6/index.html") == ""
    assert title_from_url("https://ex.com/") == ""
