"""How a cascade used its memory: empty memories and copies, computed in one place, in the table, results.json and
the report; and the replay of a run's memories without a language model."""

import json
import math

import pytest
from fakes import FakeLLM, HashEmbedder

from uncertainty_lab.cascade import CascadeRun, CascadeStep, Event, MemoryItem, NodeSpec, simulate_cascade
from uncertainty_lab.cascade.experiment import prepare, run_experiment
from uncertainty_lab.cascade.memory_use import memory_schedule, memory_use
from uncertainty_lab.hawkes import HawkesModel


def _run(steps):
    run = CascadeRun({}, Event(0.0, 0, "Crew safe!"), (NodeSpec("a", "x"), NodeSpec("b", "y")))
    for i, (text, memory) in enumerate(steps, start=1):
        run.steps.append(CascadeStep(i, float(i), i % 2, text, tuple(MemoryItem(m, 0, 1.0 / len(memory))
                                                                   for m in memory), "", 0))
    return run


def test_memory_use_counts_empty_memories_and_both_kinds_of_copy():
    run = _run([
        ("crew safe", [0]),       # copies the seed, which is in its memory: both kinds of copy
        ("New text", []),         # empty memory
        ("new text.", [0]),       # repeats step 2 (not in its memory): a copy, not a copy of memory
        ("Other", [1, 2]),        # new
    ])
    use = memory_use(run)
    assert use == {"memory_empty": 1 / 4, "copies": 2 / 4, "copies_memory": 1 / 4}
    assert all(math.isnan(v) for v in memory_use(_run([])).values())


def test_the_replayed_memories_are_the_runs_own():
    """Texts never change which memory a step gets for these selectors: the replay without a model matches a run
    with one, step by step."""
    setup = prepare({})
    for selector in ("hawkes", "recency", "random"):
        run = simulate_cascade(setup.seed_event, setup.model, selector, FakeLLM(), steps=8, k=3, seed=4,
                               node_specs=setup.node_specs, progress=False)
        assert memory_schedule(setup, selector, 3, 4, 8) == [len(s.memory) for s in run.steps]
    with pytest.raises(Exception, match="memory_schedule replays selectors that ignore texts"):
        memory_schedule(setup, "semantic", 3, 4, 8)


def test_a_hawkes_selector_without_excitation_is_reported_empty(tmp_path):
    """With α = 0 the hawkes selector remembers nothing: the table, results.json, the report and the figure's legend
    say so at every step, next to the baselines' full memories."""
    setup = prepare({})
    setup.fit.model = HawkesModel(setup.model.mu, 0.0 * setup.model.alpha, setup.model.kernel)
    config = {"selectors": ["hawkes", "recency"], "runs": 1, "steps": 4, "progress": False, "figure": False,
              "out_dir": str(tmp_path / "out")}
    result = run_experiment(config, llm=FakeLLM(), embedder=HashEmbedder(), setup=setup)
    rows = {r["selector"]: r for r in result.rows()}
    assert rows["hawkes"]["memory_empty"] == 1.0 and rows["recency"]["memory_empty"] == 0.0
    assert rows["hawkes"]["copies_memory"] == 0.0  # nothing shown, nothing copied from it
    assert "| memory empty | copies | copies of memory |" in result.table()
    assert "selector `hawkes` (k = 3) had an EMPTY memory at every step" in result.report()
    assert "recency` (k = 3) had an EMPTY" not in result.report()
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [r["memory_empty"] for r in saved["table"]] == [1.0, 0.0]
    assert {r["selector"]: r["copies"] for r in saved["runs"]} == {s: r["copies"] for s, r in rows.items()}
    import matplotlib

    matplotlib.use("Agg")
    labels = result.figure().axes[0].get_legend_handles_labels()[1]
    assert any(lab.startswith("hawkes (memory empty 100%, copies ") for lab in labels)
