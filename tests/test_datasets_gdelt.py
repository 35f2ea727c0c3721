"""The GDELT loader on small files we write in GDELT 2.0's formats (tab-separated, no header), the URL and
headline normalisers, and the tie report."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import numpy as np
import pytest

from uncertainty_lab.datasets.files import DatasetFormatError
from uncertainty_lab.datasets.gdelt import EVENTS_COLUMNS, GKG_COLUMNS, load_gdelt
from uncertainty_lab.datasets.gdelt_report import GdeltEvents
from uncertainty_lab.datasets.news import NODES, news_event_stream
from uncertainty_lab.datasets.urls import normalise_domain, normalise_title, normalise_url, title_from_url

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


# ---------------------------------------------------------------------------------------------------------------
# Article ids are never headlines; page titles come from the GKG; ties are reported
# ---------------------------------------------------------------------------------------------------------------

DATA = Path(__file__).resolve().parent / "data" / "gdelt"
EXPORT = DATA / "20310902163000.export.CSV"
GKG = DATA / "20310902163000.gkg.csv"
NEWS_MAPPING = {"indiatimes.com": "general_news", "reuters.com": "business_finance", "msn.com": "mass_market"}


@pytest.mark.parametrize(("url", "title"), [
    # Times of India: the page kind and the numeric id are skipped, the slug before them is the headline
    ("https://timesofindia.indiatimes.com/city/pune/halyard-crew-lands-safely/articleshow/70000001.cms",
     "Halyard crew lands safely"),
    ("https://timesofindia.indiatimes.com/articleshow/70000003.cms", ""),
    # Reuters: an id-only URL has no headline; an id at the end of a slug is dropped from it
    ("https://www.reuters.com/article/idAFL2N9ZZ01A", ""),
    ("https://www.reuters.com/article/us-space-halyard-launch-idUSKBN9ZZ02B", "Us space halyard launch"),
    # MSN: the ar-/vi- id, the locale and the section are skipped
    ("https://www.msn.com/en-us/news/world/halyard-crew-returns-home/ar-BB1zzQxY", "Halyard crew returns home"),
    ("https://www.msn.com/en-us/news/ar-BBzQxYw", ""),
    ("https://www.msn.com/en-gb/money/vi-AAbCdEf12", ""),
    # a section name alone is not a headline either
    ("https://example.org/world/", ""),
    ("https://example.org/2031/09/02/BBNtJPu-XQz7Lm2", ""),
])
def test_title_from_url_never_makes_an_id_into_a_headline(url, title):
    assert title_from_url(url) == title


def test_ids_do_not_collapse_distinct_articles_and_gkg_gives_titles():
    out = load_gdelt(EXPORT, NEWS_MAPPING, format="events", gkg=GKG)
    rep = out.report
    # nine distinct articles (the tenth row repeats the first URL with a tracking parameter): none merged on a
    # title made from an article id
    assert rep.n_rows == 10 and rep.n_duplicates == 1 and len(out) == 9
    by_url = {e.url: e for e in out}
    assert by_url["https://timesofindia.indiatimes.com/articleshow/70000003.cms"].headline == \
        "Halyard II countdown resumes after a short hold"  # from the GKG's PAGE_TITLE
    assert by_url["https://www.reuters.com/article/idAFL2N9ZZ01A"].headline == \
        "Brightwater wins tender for the lunar relay"
    assert by_url["https://www.reuters.com/article/idUSKBN9ZZ03C"].headline == ""  # no title, id-only URL
    assert rep.n_titles_from_gkg == 2 and rep.n_untitled == 3
    assert "2 from GKG page titles, 3 events without one" in rep.summary()
    # without the GKG the two titled rows have no headline either, and are still not merged
    bare = load_gdelt(EXPORT, NEWS_MAPPING, format="events")
    assert len(bare) == 9 and bare.report.n_untitled == 5


def test_tie_report_counts_tied_events_and_how_far_they_moved():
    out = load_gdelt(EXPORT, NEWS_MAPPING, format="events", gkg=GKG)
    ties = out.ties_report
    assert ties is out.report.ties_report
    # one 15-minute export: every row has the same time, three nodes with three events each
    assert (ties.n_groups, ties.n_tied, ties.n_moved, ties.n_dropped) == (3, 9, 6, 0)
    assert ties.window_hours == 0.25
    assert ties.max_shift_hours == pytest.approx(2 * 0.25 / 3)
    assert ties.mean_shift_hours == pytest.approx(0.125)
    assert out.report.n_ties == 6 and "9 events in 3 same-node ties" in ties.summary()
    assert sorted({e.timestamp for e in out}) == ["2031-09-02T16:30:00Z"]  # the GDELT time is kept
    # the fit can warn when its beta sits at the scale of the tie window
    assert "tie window" in ties.decay_warning(10.0)
    assert ties.decay_warning(0.01) is None
    merged = load_gdelt(EXPORT, NEWS_MAPPING, format="events", ties="merge").ties_report
    assert (merged.n_tied, merged.n_moved, merged.n_dropped) == (9, 0, 6) and merged.decay_warning(10.0) is None
    # the Hawkes stream of the loaded events carries the same ties, per node, from the loader's report
    st = news_event_stream(out).ties
    assert (st.how, st.n_tied, st.n_events, st.n_moved, st.untimed) == ("spread", 9, 9, 6, True)
    assert "by the loader (ties='spread')" in st.reason and sorted(t for t in st.tied if t) == [3, 3, 3]
    sm = news_event_stream(load_gdelt(EXPORT, NEWS_MAPPING, format="events", ties="merge")).ties
    assert (sm.how, sm.n_tied, sm.n_events, sm.n_dropped) == ("merge", 9, 9, 6)
    assert news_event_stream(list(out)).ties.how == "none"  # no report: a shared timestamp alone proves nothing


def _wide(n):
    return "\t".join(["x"] * n)


@pytest.mark.parametrize(("width", "fmt", "named"), [
    (57, "events", "GDELT 1.0 historical"),
    (58, "events", "GDELT 1.0"),
    (16, "events", "Mentions table"),
    (6, "events", r"6 columns looks like an extract.*Events export \(61 columns\)"),
    (61, "gkg", "format='events'"),
])
def test_files_in_another_format_are_named_and_refused_even_when_skipping(tmp_path, width, fmt, named):
    path = write_lines(tmp_path / "other.csv", [_wide(width), _wide(width)])
    with pytest.raises(DatasetFormatError, match=named):
        load_gdelt(path, NEWS_MAPPING, format=fmt, on_error="skip")


def test_cut_short_files_say_so(tmp_path):
    text = EXPORT.read_text(encoding="utf-8")
    cut = tmp_path / "cut.export.CSV"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    last = text[: len(text) // 2].count("\n") + 1
    with pytest.raises(DatasetFormatError, match=rf"cut\.export\.CSV ends in the middle of a record at line {last} "
                                                 r"\(the file looks truncated: download it again\)"):
        load_gdelt(cut, NEWS_MAPPING, format="events")
    data = gzip.compress(text.encode())
    (tmp_path / "cut.export.CSV.gz").write_bytes(data[: len(data) - 30])
    with pytest.raises(DatasetFormatError, match="looks truncated") as info:
        load_gdelt(tmp_path / "cut.export.CSV.gz", NEWS_MAPPING, format="events")
    assert info.value.truncated


def test_max_bytes_counts_decompressed_bytes(tmp_path):
    text = EXPORT.read_text(encoding="utf-8")
    big = tmp_path / "many.export.CSV.gz"
    big.write_bytes(gzip.compress((text * 200).encode()))  # small on disk, 400 kB decompressed
    assert big.stat().st_size < 20_000
    with pytest.raises(DatasetFormatError, match=r"more than max_bytes=100000 .*pass a larger max_bytes="):
        load_gdelt(big, NEWS_MAPPING, format="events", max_bytes=100_000, warn=False)
    assert len(load_gdelt(big, NEWS_MAPPING, format="events", max_bytes=None, warn=False)) == 9
    with pytest.raises(ValueError, match="max_bytes must be a positive number"):
        load_gdelt(EXPORT, NEWS_MAPPING, format="events", max_bytes=0)


def test_sample_and_limit_keep_time_order():
    full = load_gdelt(EXPORT, NEWS_MAPPING, format="events", gkg=GKG)
    some = load_gdelt(EXPORT, NEWS_MAPPING, format="events", gkg=GKG, sample=4, seed=3)
    assert len(some) == 4 and some.report.n_not_sampled == 5 and some.report.n_kept == 4
    assert [e.id for e in some] == [e.id for e in full if e.id in {s.id for s in some}]
    assert [e.id for e in load_gdelt(EXPORT, NEWS_MAPPING, format="events", limit=2)] == [e.id for e in full[:2]]
