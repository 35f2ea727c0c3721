"""Gates calibrated on a dev split (orchestration/calibration.py) and the report's gate sections (report.py): the
threshold rule and its ties, the dev split, the config, and an experiment with a scripted model that escalates
every question until it is calibrated."""

from __future__ import annotations

import json
import math
import zlib

import pytest

from uncertainty_lab.orchestration import (
    EXPERIMENT,
    CalibrationSpec,
    OrchestrationConfig,
    OrchestrationRun,
    Signals,
    calibrate,
    choose_threshold,
    get_policy,
    run_experiment,
    split_dev,
)
from uncertainty_lab.orchestration.scripted import ScriptedLLM

# -------------------------------------------------------------------------------------------- the rule


def test_each_threshold_sits_halfway_between_dev_values_at_the_nearest_rate():
    ent = [0.0, 0.0, 0.311, 0.418, 0.59, 0.655, 0.828, 0.0, 1.0, 1.0]
    g = choose_threshold(ent, "entropy", 0.3)
    assert g.threshold == pytest.approx((0.655 + 0.828) / 2) and g.dev_rate == pytest.approx(0.3) and not g.note
    assert sum(v > g.threshold for v in ent) == 3
    d = choose_threshold([0.15, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.67, 0.62], "density", 0.3)
    assert d.threshold == pytest.approx(0.35) and d.dev_rate == pytest.approx(0.3)


def test_ties_are_never_split_and_an_equal_distance_goes_to_the_lower_rate():
    # four questions tie at 1.0: the rates on offer are 0.0, 0.4, 0.8 (and 1.0); 0.2 is as near 0.0 as 0.4
    values = [0.2, 0.2, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 0.9, 0.9]
    g = choose_threshold([0.3, 0.3, 0.6, 0.6, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0], "entropy", 0.2)
    assert g.dev_rate == 0.0 and g.threshold is None and "switched off" in g.note and "4 of 10" in g.note
    assert choose_threshold(values, "density", 0.3).dev_rate == pytest.approx(0.2)  # 0.2 and 0.4 are equally near
    assert choose_threshold(values, "density", 0.31).dev_rate == pytest.approx(0.4)


def test_a_gate_that_must_fire_on_everything_or_nothing_is_switched_off():
    """The issue's case: with 5 samples most first rounds have H/ln n = 1, so 30% is out of reach."""
    ent = [1.0] * 7 + [0.828, 0.655, 0.0]
    off = choose_threshold(ent, "entropy", 0.3)
    assert off.threshold is None and off.dev_rate == 0.0 and "7 of 10 dev questions tie" in off.note
    on = choose_threshold(ent, "entropy", 0.6)  # 0.7 is nearer 0.6 than 0.2 is
    assert on.threshold == pytest.approx((0.828 + 1.0) / 2) and on.dev_rate == pytest.approx(0.7)
    far = choose_threshold([1.0] * 10, "density", 0.3)  # every dev answer unanimous: nothing can fire
    assert far.threshold == 1.0 and far.dev_rate == 0.0 and "out of reach" in far.note


def test_missing_values_always_fire_and_count_in_the_rate():
    g = choose_threshold([0.15, 0.2, 0.3, math.nan, 0.45, 0.5, 0.55, 0.6, 0.67, 0.62], "density", 0.3)
    assert g.missing == 1 and g.dev_rate == pytest.approx(0.3) and g.threshold == pytest.approx(0.25)
    with pytest.raises(Exception, match="all 2 missing"):
        choose_threshold([math.nan, math.nan], "density", 0.3)
    with pytest.raises(ValueError, match="gate must be"):
        choose_threshold([0.1], "length", 0.3)


def test_the_dev_split_is_seeded_disjoint_and_in_order():
    items = [f"q{i}" for i in range(20)]
    dev, rest = split_dev(items, CalibrationSpec(dev_fraction=0.3), seed=0)
    assert len(dev) == 6 and len(rest) == 14 and sorted(dev + rest) == sorted(items)
    assert dev == sorted(dev, key=items.index) and split_dev(items, CalibrationSpec(dev_fraction=0.3), 0)[0] == dev
    assert split_dev(items, CalibrationSpec(dev_fraction=0.3), 1)[0] != dev
    assert [len(p) for p in split_dev(items[:2], CalibrationSpec(dev_fraction=0.9), 0)] == [1, 1]
    with pytest.raises(Exception, match="at least 2 questions"):
        split_dev(items[:1], CalibrationSpec(), 0)


def test_a_calibration_applies_to_a_policy_and_drops_a_gate_that_is_off():
    signals = [Signals(entropy=e, density=d) for e, d in [(1.0, 0.2), (1.0, 0.4), (1.0, 0.6), (0.0, 0.9)] * 3]
    cal = calibrate(signals, [f"q{i}" for i in range(12)], CalibrationSpec(target_rate=0.3))
    assert cal.gates["entropy"].threshold is None  # 75% tie at 1.0: nearer 30% is none
    assert cal.gates["density"].threshold == pytest.approx(0.3) and cal.gates["density"].dev_rate == pytest.approx(0.25)
    both = cal.apply(get_policy("both"))
    assert both.metrics == ("density",) and both.density_threshold == pytest.approx(0.3)
    assert cal.apply(get_policy("entropy_only")).metrics == () and cal.apply(get_policy("none")) == get_policy("none")
    assert cal.union_rate == pytest.approx(0.25)
    assert json.loads(json.dumps(cal.to_dict()))["gates"]["entropy"]["threshold"] is None


def test_the_calibrate_setting_is_checked():
    assert OrchestrationConfig(calibrate={"target_rate": 0.2}).calibration == CalibrationSpec(0.2, 0.3)
    with pytest.raises(ValueError, match="did you mean 'target_rate'"):
        OrchestrationConfig(calibrate={"target": 0.2})
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        OrchestrationConfig(calibrate={"dev_fraction": 1.0})
    with pytest.raises(ValueError, match="drop density_threshold"):
        OrchestrationConfig(calibrate={}, density_threshold=0.5)
    with pytest.raises(ValueError, match="must be a table"):
        OrchestrationConfig(calibrate=0.3)


# -------------------------------------------------------------------------------------------- the experiment


SAMPLES = {"agree": ["Canberra"] * 3, "two-one": ["Canberra", "Canberra", "Perth"],  # H/ln n 0, 0.58
           "split": ["Perth", "Darwin", "Hobart"]}  # H/ln n = 1


def kind(question: str, unanimous: bool) -> str:
    k = zlib.crc32(question.encode()) % 10
    return "agree" if unanimous and k < 3 else ("two-one" if k < 6 else "split")


class Wobbly(ScriptedLLM):
    """No question gets unanimous samples: under the preset thresholds both gates fire on every one."""

    def reply(self, system, user, index):
        return SAMPLES[kind(user.split("\n")[0], False)][index % 3]


class ByQuestion(ScriptedLLM):
    """Some questions get unanimous samples, some two against one, some three different answers."""

    def reply(self, system, user, index):
        return SAMPLES[kind(user.split("\n")[0], True)][index % 3]


def experiment(tmp_path, name, llm, **changes):
    config = {"per_category": 3, "categories": ["factual", "ambiguous", "false_premise", "yes_no_multistep"],
              "policies": ["none", "both", "entropy_only"], "judge": "exact", "n_samples": 3, "max_tokens": 8,
              "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"},
              "llm": llm, "progress": False, "figure": False, "out_dir": str(tmp_path / name), **changes}
    return run_experiment(config)


def test_a_policy_that_escalates_every_question_is_named_in_the_first_lines(tmp_path):
    result = experiment(tmp_path, "fixed", Wobbly(script={"*": ["unused"]}), max_rounds=2)
    title, blank, *first = result.report().splitlines()[:6]  # the warnings come right after the title
    assert title.startswith("# Uncertainty-guided orchestration (HASSUM)") and blank == ""
    assert first[0].startswith("**Warning.** policy 'both'") and "raised a concern in round 1 on 12 of 12" in first[0]
    assert "calibrate = {target_rate = 0.3, dev_fraction = 0.3}" in first[0] and "the model calls of 'none'" in first[0]
    assert any("Grading: **strict**" in line for line in first) and any("Data: the shipped QA set" in line for line in first)
    saved = json.loads(result.files["results"].read_text())
    assert len(saved["warnings"]) == 2 and saved["grader"]["name"] == "strict" and saved["calibration"] == {}
    assert saved["fire_rates"]["scripted:script/both"][0] == {"round": 1, "asked": 12, "concerned": 12, "rate": 1.0}
    assert "## How often the gates fired" in result.report() and "12/12 (100%)" in result.report()


def test_calibrated_gates_report_their_thresholds_and_fire_rates(tmp_path):
    fixed = experiment(tmp_path, "fixed", ByQuestion(script={"*": ["unused"]}), per_category=5)
    result = experiment(tmp_path, "cal", ByQuestion(script={"*": ["unused"]}), per_category=5,
                        calibrate={"target_rate": 0.3, "dev_fraction": 0.3})
    (model,) = result.models
    cal = result.calibrations[model]
    assert len(cal.dev_ids) == 6 and all(len(r) == 14 for r in result.runs.values())
    assert not set(cal.dev_ids) & set(result.runs[(model, "none")].ids)  # dev questions are never reported
    dev = OrchestrationRun.load(tmp_path / "cal" / "calibration" / "scripted_script" / "q0000-q0005.jsonl")
    assert dev.complete and dev.ids == cal.dev_ids and dev.policy == "none"
    both = result.runs[(model, "both")].config["coordinator"]["policy"]
    for gate in both["metrics"]:
        assert both[f"{gate}_threshold"] == cal.gates[gate].threshold
    # the preset gates fire on every question that is not unanimous; the calibrated ones on fewer
    preset_rate = fixed.runs[(model, "both")].concern_rates()[0]["rate"]
    calibrated_rate = result.runs[(model, "both")].concern_rates()[0]["rate"]
    assert calibrated_rate < preset_rate
    report = result.report()
    assert "## Calibrated gates" in report and "6 dev questions" in report and "ties never split" in report
    assert "| entropy (fires when H/ln n > τ_E) | 0.5 |" in report and "dev round 1" in report
    assert "6 more were kept out as the calibration dev split" in report
    saved = json.loads(result.files["results"].read_text())
    assert saved["calibration"][model]["dev_ids"] == cal.dev_ids and "rule" in saved["calibration"][model]
    assert dev.path.parent in result.written()  # the folder of the dev chunks


def test_calibration_does_not_depend_on_the_order_of_the_units(tmp_path):
    config = OrchestrationConfig.from_mapping({
        "per_category": 2, "policies": ["both", "none"], "judge": "exact", "n_samples": 3, "max_tokens": 8,
        "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"},
        "llm": ByQuestion(script={"*": ["unused"]}), "progress": False, "figure": False,
        "calibrate": {"target_rate": 0.5}, "out_dir": str(tmp_path / "backwards")})
    context = EXPERIMENT.prepare(config)
    assert len(context.dev) == 3 and len(context.items) == 7 and not context.calibrations  # prepare asks no model
    units = EXPERIMENT.units(config, context)
    backwards = {u.key: EXPERIMENT.run_unit(u, config, context) for u in reversed(units)}
    forwards = run_experiment(config, out_dir=str(tmp_path / "forwards"), save=False)
    for key, run in forwards.runs.items():
        assert run.config["coordinator"] == backwards[(*key, 0)].config["coordinator"]
        assert [r.trace.final.answer for r in run.records] == [r.trace.final.answer for r in backwards[(*key, 0)].records]
    again = run_experiment(config, out_dir=str(tmp_path / "forwards"), save=False,
                           llm=ScriptedLLM(script={"*": ["?"]}))  # everything is journalled: nothing is asked
    assert {k: r.correct.tolist() for k, r in again.runs.items()} == {k: r.correct.tolist() for k, r in forwards.runs.items()}
