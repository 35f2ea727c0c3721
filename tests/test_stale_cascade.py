"""Cascade runs that cannot go stale: each run file records the data file's hash and the hashes of the training
events and the held-out references; edited held-out headlines are said once and the diagnostics use the current
ones (no model asked), an edited training event — a different fit and seed event — is refused saying the data
changed (cascade/run.py, cascade/experiment.py)."""

from __future__ import annotations

import json

import pytest
from fakes import CannedLLM, HashEmbedder

from uncertainty_lab.cascade.experiment import run_experiment
from uncertainty_lab.cascade.record import FORMAT, CascadeResumeError
from uncertainty_lab.datasets.news import N_TRAIN, news_cascade_path
from uncertainty_lab.provenance import StaleResultWarning

TINY = {"selectors": ["recency"], "ks": [1], "runs": 1, "steps": 2, "max_tokens": 12, "progress": False,
        "figure": False}


def _data(tmp_path, edit=None) -> dict:
    rows = [json.loads(x) for x in news_cascade_path().read_text(encoding="utf-8").splitlines() if x.strip()]
    if edit is not None:
        edit(rows)
    path = tmp_path / "news.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"loader": "shipped_news", "path": str(path)}


def _run(tmp_path, data, llm):
    return run_experiment({**TINY, "data": data}, out_dir=str(tmp_path / "out"), llm=llm, embedder=HashEmbedder())


def _held_out(rows):
    for r in rows[N_TRAIN:]:
        r["headline"] = "Edited: " + r["headline"]


def _train(rows):
    rows[N_TRAIN - 1]["headline"] = "An edited seed headline"


def test_edited_references_are_said_and_used_without_a_model_call(tmp_path):
    _run(tmp_path, _data(tmp_path), CannedLLM(lambda p: "Crew safe after splashdown"))
    (path,) = (tmp_path / "out" / "runs").glob("*.jsonl")
    before = FORMAT.load(path).header["depends"]
    assert set(before) == {"data", "train", "references"} and list(before["data"]["files"].values())[0]
    llm = CannedLLM(lambda p: "Crew safe after splashdown")
    with pytest.warns(StaleResultWarning, match="data, references changed; the diagnostics are computed"):
        _run(tmp_path, _data(tmp_path, _held_out), llm)
    assert llm.prompts == []
    after = FORMAT.load(path).header["depends"]
    assert after["train"] == before["train"] and after["references"] != before["references"]


def test_an_edited_training_event_is_refused_saying_the_data_changed(tmp_path):
    _run(tmp_path, _data(tmp_path), CannedLLM(lambda p: "Crew safe after splashdown"))
    llm = CannedLLM(lambda p: "Crew safe after splashdown")
    with pytest.raises(CascadeResumeError, match="the data changed since it was made.*overwrite = true"):
        _run(tmp_path, _data(tmp_path, _train), llm)
    assert llm.prompts == []
