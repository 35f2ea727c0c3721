"""The decision function over hand-made signals: every branch, every preset, unreachable thresholds, the
best-round rule by hand."""

import math

import pytest

from uncertainty_lab.orchestration import (
    ACTIONS,
    PRESETS,
    Decision,
    Policy,
    Signals,
    best_round,
    get_policy,
    selection_key,
)

CLEAN = Signals(entropy=0.0, density=0.95, entropy_raw=0.0, n_samples=5)
SPLIT = Signals(entropy=0.86, density=0.95, n_samples=5)  # contradiction: entropy high, density fine
VAGUE = Signals(entropy=0.0, density=0.55, n_samples=5)  # vagueness: entropy fine, density low
MISSING = Signals(missing={"entropy": "0 samples (sampling failed: down)", "density": "0 samples"})
INVALID = Signals(entropy=0.0, density=1.0, answer_valid=False, problem="answer extraction failed")


def d(action):
    return Decision(action, "earlier round", None, ("x",))


# ----------------------------------------------------------------------------------- presets


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_accepts_clean_signals_in_round_one(name):
    dec = get_policy(name).decide(CLEAN, 1)
    assert dec.action == "accept" and dec.signals is CLEAN and dec.concerns == ()


def test_none_preset_is_the_plain_hierarchy_it_accepts_whatever_it_gets():
    p = get_policy("none")
    assert p.metrics == () and p.max_rounds == 1
    for s in (SPLIT, VAGUE, MISSING, INVALID):
        dec = p.decide(s, 1)
        assert dec.action == "accept" and "plain hierarchy" in dec.reason


@pytest.mark.parametrize("name, split, vague", [
    ("entropy_only", "reprompt", "accept"),
    ("density_only", "accept", "reprompt"),
    ("both", "reprompt", "reprompt"),
])
def test_each_gate_sees_its_own_failure_signature(name, split, vague):
    p = get_policy(name)
    assert p.decide(SPLIT, 1).action == split
    assert p.decide(VAGUE, 1).action == vague


def test_thresholds_are_strict_on_the_boundary():
    p = Policy(entropy_threshold=0.5, density_threshold=0.8)
    assert p.decide(Signals(entropy=0.5, density=0.8), 1).action == "accept"
    assert p.decide(Signals(entropy=0.5001, density=0.8), 1).action == "reprompt"
    assert p.decide(Signals(entropy=0.5, density=0.7999), 1).action == "reprompt"


# ----------------------------------------------------------------------------------- the ladder


def test_escalation_ladder_reprompt_reassign_delegate_then_final_select():
    p = get_policy("both", max_rounds=10)
    history = []
    seen = []
    for r in range(1, 6):
        dec = p.decide(SPLIT, r, history)
        seen.append(dec.action)
        assert dec.rung == len(history) and dec.round == r
        assert dec.signals is SPLIT and dec.concerns and "entropy 0.86 > 0.5" in dec.concerns[0]
        history.append(dec)
        if dec.action == "final_select":
            break
    assert seen == ["reprompt", "reassign", "delegate", "final_select"]
    assert "first concern" in history[0].reason and "acceptance criteria" in history[0].reason
    assert "reprompt did not clear it" in history[1].reason
    assert "reassign did not clear it" in history[2].reason
    assert "ladder is used up" in history[3].reason


def test_a_cleared_concern_after_a_remedy_is_accepted():
    p = get_policy("both")
    assert p.decide(CLEAN, 2, [d("reprompt")]).action == "accept"
    assert p.decide(CLEAN, 4, [d("reprompt"), d("reassign"), d("delegate")]).action == "accept"


def test_the_round_cap_forces_final_select_and_accept_still_wins_at_the_cap():
    p = get_policy("both", max_rounds=2)
    dec = p.decide(SPLIT, 2, [d("reprompt")])
    assert dec.action == "final_select" and "round cap 2" in dec.reason
    assert p.decide(CLEAN, 2, [d("reprompt")]).action == "accept"
    assert get_policy("entropy_only", max_rounds=1).decide(SPLIT, 1).action == "final_select"


def test_more_reprompts_before_reassigning():
    p = get_policy("both", max_rounds=10, max_reprompts=2)
    assert p.ladder() == ["reprompt", "reprompt", "reassign", "delegate"]
    dec = p.decide(SPLIT, 2, [d("reprompt")])
    assert dec.action == "reprompt" and "repeated concern" in dec.reason


def test_disabled_actions_and_a_single_worker_are_skipped():
    assert get_policy("both", reassign=False).decide(SPLIT, 2, [d("reprompt")]).action == "delegate"
    assert get_policy("both", reprompt=False).decide(SPLIT, 1).action == "reassign"
    one = get_policy("both", max_rounds=5)
    assert one.ladder(n_workers=1) == ["reprompt"]
    assert one.decide(SPLIT, 2, [d("reprompt")], n_workers=1).action == "final_select"
    nothing = get_policy("both", reprompt=False, reassign=False, delegate=False)
    dec = nothing.decide(SPLIT, 1)
    assert dec.action == "final_select" and "no remedy enabled" in dec.reason


def test_missing_is_a_concern_never_confident():
    for name in ("entropy_only", "density_only", "both"):
        dec = get_policy(name).decide(MISSING, 1)
        assert dec.action == "reprompt"
        assert any("missing" in c and "sampling failed" in c or "missing: 0 samples" in c for c in dec.concerns)
    # a metric that was not computed at all (NaN, no reason) is missing too
    assert get_policy("density_only").concerns(Signals(entropy=0.0)) == ["density missing: not computed"]


def test_an_invalid_answer_is_a_concern_for_gated_policies():
    dec = get_policy("both").decide(INVALID, 1)
    assert dec.action == "reprompt" and dec.concerns == ("invalid answer: answer extraction failed",)
    assert get_policy("both", verify_answer=False).decide(INVALID, 1).action == "accept"


def test_decide_checks_its_inputs():
    p = get_policy("both")
    with pytest.raises(TypeError, match="Signals"):
        p.decide({"entropy": 0.1}, 1)
    with pytest.raises(ValueError, match="round must be a positive integer"):
        p.decide(CLEAN, 0)
    with pytest.raises(ValueError, match="action must be one of"):
        Decision("retry", "no")
    assert set(ACTIONS) == {"accept", "reprompt", "reassign", "delegate", "final_select"}


# ----------------------------------------------------------------------------------- thresholds


def test_unreachable_entropy_threshold_is_refused_with_a_pointer_to_the_normalised_scale():
    with pytest.raises(ValueError, match=r"normalised scale H/ln n.*1\.65 exceeds ln 5 = 1\.609"):
        Policy(entropy_threshold=1.65)
    with pytest.raises(ValueError, match="never fire"):
        Policy(entropy_threshold=1.0)
    with pytest.raises(ValueError, match=r"can never fire with 5 samples.*ln 5 = 1\.609"):
        Policy.from_raw_entropy_threshold(1.65, 5)
    p = Policy.from_raw_entropy_threshold(1.1, 5)
    assert p.entropy_threshold == pytest.approx(1.1 / math.log(5))
    # 1.1 nats at n = 5 fires only on the partitions 2+1+1+1 and 1+1+1+1+1 (H = 1.332, 1.609)
    assert p.decide(Signals(entropy=1.055 / math.log(5), density=1.0), 1).action == "accept"
    assert p.decide(Signals(entropy=1.332 / math.log(5), density=1.0), 1).action == "reprompt"


@pytest.mark.parametrize("kwargs, match", [
    ({"density_threshold": 0.0}, "never fires"),
    ({"density_threshold": 1.2}, "always fires"),
    ({"entropy_threshold": -0.1}, r"\[0, 1\)"),
    ({"metrics": ("entropy", "lexical")}, "gates on"),
    ({"max_rounds": 0}, "max_rounds must be an integer >= 1"),
    ({"max_rounds": 50}, "above the cap"),
    ({"delegate_k": 1}, "delegate_k"),
])
def test_bad_policies_are_refused_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Policy(**kwargs)


def test_get_policy_from_names_dicts_and_instances():
    both = get_policy("both", entropy_threshold=0.6)
    assert both.name == "both" and both.entropy_threshold == 0.6
    assert get_policy({"preset": "density_only", "density_threshold": 0.7}).density_threshold == 0.7
    custom = get_policy({"name": "mine", "metrics": ["entropy"], "entropy_threshold": 0.3})
    assert custom.metrics == ("entropy",) and custom.name == "mine"
    assert get_policy(custom) is custom
    assert get_policy(both.to_dict()) == both
    with pytest.raises(ValueError, match="did you mean 'both'"):
        get_policy("bth")
    with pytest.raises(ValueError, match="unknown policy field"):
        get_policy({"name": "x", "threshold": 1})


# ----------------------------------------------------------------------------------- best round


def test_best_round_is_argmin_concern_then_minus_density_then_entropy_by_hand():
    p = get_policy("both")
    rounds = [
        Signals(entropy=0.9, density=0.95),  # concerned (entropy)
        Signals(entropy=0.3, density=0.85),  # clean
        Signals(entropy=0.1, density=0.85),  # clean, same density, lower entropy  <- best
        Signals(entropy=0.0, density=0.99, answer_valid=False),  # best numbers, but invalid
    ]
    keys = [selection_key(s, p) for s in rounds]
    assert keys[0] == (False, True, -0.95, 0.9)
    assert keys[2] == (False, False, -0.85, 0.1)
    assert best_round(rounds, p) == 2
    # without the concern term the highest density wins
    assert best_round(rounds[:3]) == 0
    # ties go to the earliest round; a missing value ranks last
    assert best_round([Signals(entropy=0.2, density=0.9), Signals(entropy=0.2, density=0.9)], p) == 0
    assert best_round([Signals(entropy=0.2), Signals(entropy=0.4, density=0.1)]) == 1
    with pytest.raises(ValueError, match="no answer to select"):
        best_round([])


def test_signals_round_trip_with_missing_values():
    s = Signals(entropy=0.4, missing={"density": "too few"}, extra={"lexical": math.nan})
    back = Signals.from_dict(s.to_dict())
    assert s.to_dict()["density"] is None
    assert back.entropy == 0.4 and math.isnan(back.density) and math.isnan(back.extra["lexical"])
    dec = Decision("reprompt", "why", s, ("c",), 2, 1)
    assert Decision.from_dict(dec.to_dict()).to_dict() == dec.to_dict()
