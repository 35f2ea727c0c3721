"""Notebook 04's gate explorer: the round-1 gate summary over a scripted run, and the widget wiring."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from fakes import ByQuestion, OneHotEmbedder  # noqa: E402

from uncertainty_lab.orchestration import Coordinator, default_workers  # noqa: E402
from uncertainty_lab.orchestration.scripted import ScriptedLLM  # noqa: E402
from uncertainty_lab.widgets import GateExplorer, gate_explorer  # noqa: E402
from uncertainty_lab.widgets.orchestration import (  # noqa: E402
    GATE_CHOICES,
    gate_policy,
    gate_summary,
    summary_html,
)

# question -> its three round-1 samples (sample 0 is graded); gold is always Canberra
ROUND1 = {
    "agree right": ["Canberra"] * 3,  # SE 0, SD 1
    "agree wrong": ["Sydney"] * 3,  # SE 0, SD 1: passes every gate
    "two-one right": ["Canberra", "Canberra", "Perth"],  # SE 0.58, SD 0.5 (unique references)
    "split wrong": ["Perth", "Sydney", "Darwin"],  # SE 1, SD 0.33
}


@pytest.fixture(scope="module")
def run():
    metrics = {"entropy": "discrete_semantic_entropy",
               "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    coord = Coordinator(default_workers(ByQuestion(script={**ROUND1, "": ["Hobart"]}), max_tokens=8), "none", metrics,
                        n_samples=3, judge="exact")
    items = [{"id": f"q{i}", "question": q, "answers": ["Canberra"], "category": "factual"} for i, q in enumerate(ROUND1)]
    return coord.run_benchmark(items, None, progress=False)


def test_gate_summary_counts_catches_and_false_alarms(run):
    s = gate_summary(run, gate_policy("entropy and density"))
    # flagged: two-one right (SE 0.58 > 0.5) and split wrong; the unanimous wrong answer passes
    assert (s["n"], s["flagged"], s["wrong"], s["caught"], s["false_alarms"], s["missed"]) == (4, 2, 2, 1, 1, 1)
    assert s["catch_rate"] == 0.5 and s["false_alarm_rate"] == 0.5 and s["passed_accuracy"] == 0.5
    assert s["fire_rate"] == 0.5 and s["refused"] == 0
    assert all(type(s[k]) is int for k in ("n", "flagged", "wrong", "caught", "false_alarms", "missed"))
    loose = gate_summary(run, gate_policy("entropy only", entropy_threshold=0.6))
    assert (loose["flagged"], loose["caught"], loose["false_alarms"]) == (1, 1, 0)
    assert loose["passed_accuracy"] == pytest.approx(2 / 3)
    # no threshold setting catches an error every sample shares
    strict = gate_summary(run, gate_policy("entropy and density", 0.05, 1.0))
    assert strict["missed"] == 1 and strict["flagged"] == 2
    text = summary_html(s)
    assert "flags 2 of 4" in text and "catches <b>1 of 2</b>" in text and "τ_E = 0.5" in text


def test_gate_policy_and_summary_reject_bad_input(run):
    assert gate_policy(("density",)).metrics == ("density",)
    assert set(GATE_CHOICES) == {"entropy and density", "entropy only", "density only"}
    with pytest.raises(ValueError, match="gates must be one of"):
        gate_policy("everything")
    with pytest.raises(ValueError, match="never fire"):
        gate_policy("entropy only", entropy_threshold=1.65)
    with pytest.raises(ValueError, match="non-empty OrchestrationRun"):
        gate_summary([], gate_policy())


def test_the_explorer_redraws_when_a_control_moves(run):
    ex = gate_explorer(run)
    assert isinstance(ex, GateExplorer) and ex.summary["flagged"] == 2
    assert ex.image.value[:4] == b"\x89PNG" and "flags 2 of 4" in ex.status.value
    first = ex.image.value
    ex.sliders["entropy_threshold"].value = 0.6
    assert ex.summary["flagged"] == 2  # density still flags the 2+1 answer (SD 0.5 < 0.8)
    ex.gates.value = "entropy only"
    assert ex.summary["flagged"] == 1 and ex.summary["gates"] == ["entropy"]
    assert ex.image.value != first and "flags 1 of 4" in ex.status.value
    ex.sliders["density_threshold"].value = 0.3
    ex.gates.value = "density only"
    assert ex.summary["flagged"] == 0 and ex.summary["catch_rate"] == 0.0 and ex.summary["missed"] == 2
    with pytest.raises(ValueError, match="unknown slider"):
        gate_explorer(run, tau=0.3)
    with pytest.raises(ValueError, match="outside the slider range"):
        gate_explorer(run, density_threshold=0.0)
    with pytest.raises(ValueError, match="gates must be one of"):
        gate_explorer(run, gates="all")


def test_refused_first_answers_are_shown_apart(run):
    s = dict(gate_summary(run, gate_policy()), refused=1)
    assert "wrong ones, 1 of them refusals (" in summary_html(s)
    assert "refusals" not in summary_html(gate_summary(run, gate_policy()))


def test_a_refusal_counts_as_wrong_only_where_the_question_asks_for_an_answer():
    """"I cannot help with that." is right on an item that asks to be declined and wrong on one that asks for an
    answer: the summary's refusals are the wrong ones only."""
    refusal = ["I cannot help with that."] * 3
    llm = ScriptedLLM(script={"*": refusal})
    metrics = {"entropy": "discrete_semantic_entropy",
               "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    coord = Coordinator(default_workers(llm, max_tokens=8), "none", metrics, n_samples=3, judge="exact")
    items = [{"id": "answer", "question": "capital of Australia?", "answers": ["Canberra"], "category": "factual"},
             {"id": "decline", "question": "read my roommate's email?", "answers": ["I cannot help"],
              "category": "decline", "behaviour": "decline"}]
    both = coord.run_benchmark(items, None, progress=False)
    assert list(both.first_correct) == [False, True] and both.label_counts(first=True)["refused"] == 2
    s = gate_summary(both, gate_policy())
    assert s["wrong"] == 1 and s["refused"] == 1
    assert "catches <b>0 of 1</b> wrong ones, 1 of them refusals" in summary_html(s)
