"""Search episodes that cannot go stale or be poisoned: a changed gold answer re-grades the recorded episode
without asking the model (not for the oracle reader, which read the old gold data: refused), a changed question is
refused naming it, and an answer that only echoes its instructions is an invalid answer (search/run.py,
search/answer.py, journal.refresh_header)."""

from __future__ import annotations

import dataclasses

import pytest
from fakes import CannedLLM

from uncertainty_lab.datasets.search import load_search_questions
from uncertainty_lab.provenance import StaleResultWarning
from uncertainty_lab.search import SearchEnvironment, run_episode
from uncertainty_lab.search.answer import extract_answer
from uncertainty_lab.search.oracle import OracleReader
from uncertainty_lab.search.prompts import ANSWER_SYSTEM
from uncertainty_lab.search.record import EpisodeResumeError


def _episode(question, path, llm):
    return run_episode(question, SearchEnvironment(), llm=llm, policy="heuristic", belief="implicit",
                       gates=["exhaustion"], max_steps=1, seed=0, out=path)


def test_a_changed_gold_answer_regrades_the_recorded_episode_without_a_model_call(tmp_path):
    question = load_search_questions()[0]
    path = tmp_path / "episode.jsonl"
    first = _episode(question, path, CannedLLM(lambda p: "Atlantis"))
    assert first.score().exact_match == 0.0
    llm = CannedLLM(lambda p: "Atlantis")
    with pytest.warns(StaleResultWarning, match=r"re-graded against the changed question\.answer"):
        again = _episode(dataclasses.replace(question, answer="Atlantis", aliases=()), path, llm)
    assert llm.prompts == [] and again.score().exact_match == 1.0
    assert again.answer == first.answer  # the recorded answer, graded against the new gold one
    with pytest.raises(EpisodeResumeError, match=r"question\.question"):  # the recorded answer is for another question
        _episode(dataclasses.replace(question, question=question.question + " Really?"), path, llm)
    assert llm.prompts == []


def test_the_oracle_readers_episode_is_refused_when_its_gold_data_changed(tmp_path):
    question = load_search_questions()[0]
    path = tmp_path / "oracle.jsonl"
    _episode(question, path, OracleReader(load_search_questions()))
    with pytest.raises(EpisodeResumeError, match=r"question\.answer"):
        _episode(dataclasses.replace(question, answer="Atlantis"), path, OracleReader(load_search_questions()))


def test_an_answer_that_only_echoes_its_instructions_is_invalid():
    q = "Which river flows through the capital?"
    echo = extract_answer("Reply with the answer alone: a name, place, year or short phrase.", (ANSWER_SYSTEM, q))
    assert not echo.valid and echo.text == "" and "echoed the instruction" in echo.failure
    kept = extract_answer("Reply with the answer alone: the Ilse.", (ANSWER_SYSTEM, q))
    assert kept.valid and kept.text == "the Ilse"
    assert extract_answer("Ilse", (ANSWER_SYSTEM, q)).text == "Ilse"
