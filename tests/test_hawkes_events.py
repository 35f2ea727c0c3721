"""EventStream: validation (every error names the argument and the fix), construction, files, windows."""

from __future__ import annotations

import numpy as np
import pytest

from uncertainty_lab.hawkes import EventStream, EventStreamError


def good():
    return EventStream([0.5, 1.0, 1.0, 2.5], [0, 1, 0, 2], 3, 3.0)


def test_a_valid_stream_and_its_views():
    s = good()
    assert len(s) == s.n_events == 4
    assert s.counts.tolist() == [2, 1, 1]
    assert s.times_of(0).tolist() == [0.5, 1.0]
    assert np.allclose(s.rates, [2 / 3, 1 / 3, 1 / 3])
    assert list(s) == [(0.5, 0), (1.0, 1), (1.0, 0), (2.5, 2)]
    assert "n_events=4" in repr(s) and "n_nodes=3" in repr(s)
    with pytest.raises(ValueError):
        s.times[0] = 9.0  # read-only: a validated stream stays valid


@pytest.mark.parametrize(
    "times, nodes, n_nodes, end_time, words",
    [
        ([0.0, 2.0, 1.0], [0, 0, 0], 1, 3.0, ["sorted ascending", "times[2]", "sort=True"]),
        ([0.0, 1.0, 1.0], [0, 1, 1], 2, 3.0, ["both at node 1", "ties='merge'", "ties='spread'"]),
        ([0.0, np.nan], [0, 0], 1, 3.0, ["times[1]", "finite"]),
        ([0.0, np.inf], [0, 0], 1, 3.0, ["times[1]", "finite"]),
        ([-1.0, 1.0], [0, 0], 1, 3.0, ["times[0]", "negative", "shift"]),
        ([0.0, 4.0], [0, 0], 1, 3.0, ["times[1]", "after end_time", "end_time >= 4.0"]),
        ([0.0, 1.0], [0, 3], 3, 3.0, ["nodes[1] = 3", "out of range", "n_nodes=4"]),
        ([0.0, 1.0], [0, -1], 3, 3.0, ["nodes[1] = -1", "out of range"]),
        ([0.0, 1.0], [0, 0.5], 3, 3.0, ["nodes[1]", "not an integer node id"]),
        ([0.0, 1.0], [0], 1, 3.0, ["same length"]),
        ([0.0, 1.0], [0, 0], 0, 3.0, ["n_nodes", "positive integer"]),
        ([0.0, 1.0], [0, 0], 1, np.nan, ["end_time", "finite"]),
        ([[0.0, 1.0]], [0, 0], 1, 3.0, ["times must be 1-D"]),
        (["a", "b"], [0, 0], 1, 3.0, ["times must be numbers"]),
    ],
)
def test_every_validation_error_names_the_argument_and_the_fix(times, nodes, n_nodes, end_time, words):
    with pytest.raises(EventStreamError) as info:
        EventStream(times, nodes, n_nodes, end_time)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert isinstance(info.value, ValueError)


def test_window_errors():
    with pytest.raises(EventStreamError, match="before start_time"):
        EventStream([0.5, 1.0], [0, 0], 1, 3.0, start_time=0.8)
    with pytest.raises(EventStreamError, match="start_time must be >= 0"):
        EventStream([], [], 1, 3.0, start_time=-1.0)
    with pytest.raises(EventStreamError, match="end_time=1.0 is before start_time=2.0"):
        EventStream([], [], 1, 1.0, start_time=2.0)
    with pytest.raises(EventStreamError, match="node_names has 1 names but n_nodes=2"):
        EventStream([], [], 2, 1.0, node_names=["a"])


def test_from_arrays_infers_sorts_and_maps_names():
    s = EventStream.from_arrays([2.0, 0.5, 1.0], ["tv", "web", "tv"], sort=True)
    assert s.times.tolist() == [0.5, 1.0, 2.0]
    assert s.node_names == ("tv", "web") and s.nodes.tolist() == [1, 0, 0]
    assert s.n_nodes == 2 and s.end_time == 2.0  # last event time, as tick does
    u = EventStream.from_arrays([0.1, 0.2])
    assert u.n_nodes == 1 and u.nodes.tolist() == [0, 0]
    with pytest.raises(EventStreamError, match="not in node_names"):
        EventStream.from_arrays([0.1], ["x"], node_names=["a", "b"])
    with pytest.raises(EventStreamError, match="ties must be"):
        EventStream.from_arrays([0.1], ties="drop")


def test_ties_merge_and_spread():
    times, nodes = [1.0, 1.0, 1.0, 2.0], [0, 0, 1, 0]
    with pytest.raises(EventStreamError, match="both at node 0"):
        EventStream.from_arrays(times, nodes)
    merged = EventStream.from_arrays(times, nodes, ties="merge")
    assert merged.times.tolist() == [1.0, 1.0, 2.0] and merged.nodes.tolist() == [0, 1, 0]
    spread = EventStream.from_arrays(times, nodes, ties="spread", end_time=3.0)
    assert spread.n_events == 4 and np.all(np.diff(spread.times) >= 0)
    assert spread.times[-1] == 2.0 and 1.0 < spread.times[2] < 2.0  # the duplicate moved, order kept


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_file_round_trip(tmp_path, kind):
    s = EventStream([0.1, 1 / 3, 2.0], [1, 0, 1], 2, 5.0, node_names=["a", "b"])
    path = tmp_path / f"events.{kind}"
    getattr(s, f"to_{kind}")(path)
    back = getattr(EventStream, f"from_{kind}")(path)
    assert back == s  # exact: floats are written with repr


def test_files_from_elsewhere(tmp_path):
    (tmp_path / "x.csv").write_text("node,time\nb,0.5\na,1.5\n")
    s = EventStream.from_csv(tmp_path / "x.csv", end_time=2.0)
    assert s.node_names == ("a", "b") and s.nodes.tolist() == [1, 0] and s.end_time == 2.0
    (tmp_path / "bad.csv").write_text("when,node\n1,0\n")
    with pytest.raises(EventStreamError, match="no 'time' column"):
        EventStream.from_csv(tmp_path / "bad.csv")
    (tmp_path / "unsorted.jsonl").write_text('{"time": 2, "node": 0}\n{"time": 1, "node": 0}\n')
    with pytest.raises(EventStreamError, match=r"unsorted\.jsonl: times must be sorted"):
        EventStream.from_jsonl(tmp_path / "unsorted.jsonl")
    assert EventStream.from_jsonl(tmp_path / "unsorted.jsonl", sort=True).times.tolist() == [1.0, 2.0]


def test_split_concat_append():
    s = EventStream([0.5, 1.0, 2.0, 2.5], [0, 1, 0, 1], 2, 3.0)
    early, late = s.split(1.0)
    assert early.times.tolist() == [0.5, 1.0] and early.end_time == 1.0
    assert late.times.tolist() == [2.0, 2.5] and late.start_time == 1.0 and late.end_time == 3.0
    assert early.concat(late) == s
    with pytest.raises(EventStreamError, match="continuation"):
        late.concat(early)
    with pytest.raises(EventStreamError, match="outside the window"):
        s.split(5.0)
    longer = s.append(4.0, 1)
    assert longer.n_events == 5 and longer.end_time == 4.0 and s.n_events == 4
    assert EventStream.empty(3, 1.0).counts.tolist() == [0, 0, 0]
