"""The grader audit of a run (``uncertainty-lab audit``, orchestration/hand_labels.py, orchestration/audit_report.py,
semantic/agreement.py, widgets/audit.py): stratified sampling, the labels file, κ and the Rogan–Gladen correction
against independent computations, the command end to end and the terminal loop with scripted input."""

import csv
import io
import itertools
import json
import math
import shutil

import numpy as np
import pytest
from fakes import ByQuestion
from sklearn.metrics import cohen_kappa_score

from uncertainty_lab.cli import main
from uncertainty_lab.cli.audit import BY
from uncertainty_lab.orchestration import run_experiment
from uncertainty_lab.orchestration.audit_report import _grader, audit_report
from uncertainty_lab.orchestration.hand_labels import (
    STRATA,
    AuditAnswer,
    HandLabel,
    LabelStore,
    allocate,
    load_answers,
)
from uncertainty_lab.semantic.agreement import (
    cohen_kappa,
    corrected_accuracy,
    kappa_interval,
    rogan_gladen,
    sensitivity_specificity,
    stratum_weights,
)
from uncertainty_lab.semantic.correctness import LABELS
from uncertainty_lab.semantic.grading_audit import agreement

IDS = [f"factual-{i:03d}" for i in range(1, 11)] + [f"decline-{i:03d}" for i in range(1, 5)]
#: right on two factual questions, wrong on one, a refusal everywhere else (right on the decline items only)
SCRIPT = {"What is the capital city of Australia": ["Canberra"], "How many legs": ["Eight"],
          "What is the chemical symbol": ["Ag"], "": ["I cannot help with that."]}


@pytest.fixture(scope="module")
def made_run(tmp_path_factory):
    """A two-policy run of 14 questions with a scripted backend (no model): 2 correct, 1 wrong, 11 refused."""
    out = tmp_path_factory.mktemp("audited") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        run_experiment({"ids": IDS, "policies": ["none", "both"], "judge": "exact", "n_samples": 3, "max_tokens": 8,
                        "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"},
                        "progress": False, "figure": False, "llm": ByQuestion(script=SCRIPT), "out_dir": str(out)})
    return out


@pytest.fixture
def run_dir(made_run, tmp_path):
    """A private copy of the run, so each test writes its own labels."""
    return shutil.copytree(made_run, tmp_path / "run")


# --- sampling ------------------------------------------------------------------------------------------------


def test_identical_answers_of_two_policies_are_one_answer_standing_for_both(run_dir):
    answers = load_answers(run_dir)
    assert sorted(answers.runs) == ["scripted_script__both", "scripted_script__none"]
    assert len(answers.answers) == 14 and all(a.size == 2 for a in answers.answers)
    assert answers.totals() == {"correct": 4, "wrong": 2, "refused": 22}  # 14 questions x 2 runs
    assert answers.totals("category") == {"correct · factual": 4, "wrong · factual": 2, "refused · factual": 14,
                                          "refused · decline": 8}
    assert answers.grader["method"] == "strict"


def test_allocation_is_equal_capped_and_grows_with_the_sample():
    sizes = {"a": 2, "b": 50, "c": 30}
    assert allocate(sizes, 12) == {"a": 2, "b": 5, "c": 5}
    assert allocate(sizes, 100) == sizes
    for n in range(1, 82):
        smaller, larger = allocate(sizes, n), allocate(sizes, n + 1)
        assert sum(smaller.values()) == n and all(larger[h] >= smaller[h] for h in sizes)


def test_the_sample_is_stratified_seeded_and_grows_without_changing(run_dir):
    answers = load_answers(run_dir)
    sample = answers.sample(3, seed=1)
    assert sorted(a.graded for a in sample) == ["correct", "refused", "wrong"]  # every stratum, strata take turns
    assert [a.key for a in answers.sample(3, seed=1)] == [a.key for a in sample]
    seeds = {tuple(a.key for a in answers.sample(6, seed=s)) for s in range(5)}
    assert len(seeds) > 1
    big = answers.sample(8, seed=1)
    assert {a.key for a in sample} <= {a.key for a in big}
    assert [a.graded for a in big].count("wrong") == 1 and [a.graded for a in big].count("correct") == 2
    by_category = answers.sample(4, seed=0, by="category")
    assert {a.stratum("category") for a in by_category} == set(answers.totals("category"))
    with pytest.raises(ValueError, match="sample of 2 cannot hold one answer of each of the 3 strata.*at least 3"):
        answers.sample(2)
    assert STRATA == ("label", "category", "source") == BY  # the command line spells them without importing the lab


def test_an_ungraded_answer_is_its_own_stratum(run_dir):
    answers = load_answers(run_dir)
    a = answers.answers[0]
    ungraded = AuditAnswer(a.id, a.item, a.answer, a.raw, None, a.runs)
    assert ungraded.graded == "unjudged" and ungraded.graded_correct is None and ungraded.key == a.key
    assert ungraded.stratum("source") == "unjudged · uncertainty_lab"
    answers.answers[0] = ungraded
    assert answers.totals()["unjudged"] == 2 and "unjudged" in {x.graded for x in answers.sample(4)}


# --- the labels file -----------------------------------------------------------------------------------------


def _files(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_labels_are_appended_next_to_the_run_resumed_and_go_stale_when_the_answer_changes(run_dir):
    before = _files(run_dir)
    answers = load_answers(run_dir)
    store = LabelStore(answers.labels_path)
    first, second = answers.sample(3, seed=0)[:2]
    store.add(first, "c", "ana", time="2026-01-01T00:00:00+00:00")
    store.add(second, "wrong", "ben")
    assert store.path == run_dir / "audit" / "labels.jsonl"
    assert {p: b for p, b in _files(run_dir).items() if p != store.path} == before  # no other file touched
    lines = [json.loads(x) for x in store.path.read_text().splitlines()]
    assert lines[0]["type"] == "header" and [x["label"] for x in lines[1:]] == ["correct", "wrong"]
    assert lines[1] == {"type": "label", "item": first.id, "answer_sha256": first.sha256, "label": "correct",
                        "labeller": "ana", "time": "2026-01-01T00:00:00+00:00"}
    # an interrupted write (a line cut short) loses nothing else; the next label appends after the good lines
    with open(store.path, "a") as f:
        f.write('{"type": "label", "item": "fac')
    assert [h.label for h in LabelStore(store.path).read()] == ["correct", "wrong"]
    store.add(first, "r", "ana")
    resolved = store.resolve(answers)
    assert resolved.usable[first.key].label == "refused" and len(resolved.usable) == 2  # the latest label counts
    # the run is redone with another answer to factual-001: its label no longer matches and is not used
    for path in (run_dir / "runs").rglob("q0000-q0009.jsonl"):
        path.write_text(path.read_text().replace("Canberra", "Perth"))
    canberra = next(a for a in answers.answers if a.id == "factual-001")
    store.add(canberra, "correct", "ana")
    changed = load_answers(run_dir)
    resolved = store.resolve(changed)
    assert [h.item for h in resolved.stale] == ["factual-001"] and canberra.key not in resolved.usable
    other = HandLabel("no-such-question", "0" * 64, "wrong", "ana", "t")
    assert store.resolve(changed, [other]).unknown == [other]
    with pytest.raises(ValueError, match="label must be one of"):
        store.add(first, "maybe", "ana")


# --- the statistics against independent computations ----------------------------------------------------------


def _brute_kappa(hand, graded, weights):
    total = sum(weights)
    p_o = sum(w for h, g, w in zip(hand, graded, weights, strict=True) if h == g) / total
    p_e = 0.0
    for k in LABELS:
        p_e += (sum(w for h, w in zip(hand, weights, strict=True) if h == k) / total) * (
            sum(w for g, w in zip(graded, weights, strict=True) if g == k) / total)
    return (p_o - p_e) / (1 - p_e)


def test_kappa_matches_brute_force_and_sklearn_with_and_without_weights():
    rng = np.random.default_rng(3)
    hand = list(rng.choice(LABELS, size=60, p=[0.5, 0.3, 0.2]))
    graded = [h if rng.random() < 0.7 else str(rng.choice(LABELS)) for h in hand]
    weights = rng.uniform(0.5, 4.0, size=60)
    for w in (np.ones(60), weights):
        ours = cohen_kappa(hand, graded, weights=w)
        assert ours == pytest.approx(_brute_kappa(hand, graded, w), abs=1e-12)
        assert ours == pytest.approx(cohen_kappa_score(hand, graded, labels=list(LABELS), sample_weight=w), abs=1e-12)
        assert agreement(hand, graded, weights=w).kappa == pytest.approx(ours, abs=1e-12)
    # an 'unjudged' grader label is a disagreement and in no marginal (the existing agreement() convention)
    unjudged = ["unjudged"] + graded[1:]
    assert cohen_kappa(hand, unjudged) == pytest.approx(_brute_kappa(hand, unjudged, [1] * 60), abs=1e-12)


def _fce_se(hand, graded):
    """Fleiss, Cohen & Everitt (1969): the large-sample standard error of κ̂."""
    n = len(hand)
    p = np.array([[sum(1 for h, g in zip(hand, graded, strict=True) if h == a and g == b) / n for b in LABELS] for a in LABELS])
    rows, cols = p.sum(1), p.sum(0)
    p_o, p_e = np.trace(p), rows @ cols
    k = (p_o - p_e) / (1 - p_e)
    a = sum(p[i, i] * (1 - (rows[i] + cols[i]) * (1 - k)) ** 2 for i in range(3))
    b = (1 - k) ** 2 * sum(p[i, j] * (cols[i] + rows[j]) ** 2 for i, j in itertools.product(range(3), repeat=2) if i != j)
    c = (k - p_e * (1 - k)) ** 2
    return math.sqrt((a + b - c) / (n * (1 - p_e) ** 2))


def test_the_kappa_interval_agrees_with_the_analytic_large_sample_error():
    rng = np.random.default_rng(5)
    hand = list(rng.choice(LABELS, size=400, p=[0.5, 0.3, 0.2]))
    graded = [h if rng.random() < 0.75 else str(rng.choice(LABELS)) for h in hand]
    ci = kappa_interval(hand, graded, ["all"] * 400, n_boot=4000, seed=1)
    half = 1.959964 * _fce_se(hand, graded)
    # 400 answers: κ̂ is close to normal; 4000 resamples put the percentiles within a few % of their limit
    assert ci.low == pytest.approx(ci.estimate - half, abs=0.1 * half)
    assert ci.high == pytest.approx(ci.estimate + half, abs=0.1 * half)
    assert ci.method == "stratified percentile bootstrap" and ci.dropped == 0


def test_rogan_gladen_matches_the_closed_form():
    assert rogan_gladen(0.62, 0.9, 0.8) == pytest.approx(0.6)  # (0.62 + 0.8 − 1) / (0.9 + 0.8 − 1)
    assert rogan_gladen(0.1, 0.9, 0.8) == 0.0 and rogan_gladen(0.99, 0.9, 0.95) == 1.0  # clipped
    assert math.isnan(rogan_gladen(0.5, 0.5, 0.4))  # Se + Sp ≤ 1: undefined
    np.testing.assert_allclose(rogan_gladen([0.62, 0.76], 0.9, 0.8), [0.6, 0.8])


def test_weighted_se_sp_and_the_correction_equal_the_direct_stratified_estimate():
    # a run of 1000 answers: 600 graded correct, 400 not; 20 labelled in each stratum, 18 and 3 of them truly right
    totals = {"pos": 600, "neg": 400}
    strata = ["pos"] * 20 + ["neg"] * 20
    truth = [True] * 18 + [False] * 2 + [True] * 3 + [False] * 17
    graded = [True] * 20 + [False] * 20
    w = stratum_weights(strata, totals)
    assert list(w) == [30.0] * 20 + [20.0] * 20
    se, sp = sensitivity_specificity(truth, graded, w)
    assert se == pytest.approx(600 * 0.9 / (600 * 0.9 + 400 * 0.15))
    assert sp == pytest.approx(400 * 0.85 / (600 * 0.1 + 400 * 0.85))
    c = corrected_accuracy([True] * 600 + [False] * 400, truth, graded, strata, weights=w, n_boot=500)
    assert c.raw == 0.6 and c.raw_low < 0.6 < c.raw_high
    assert c.corrected.estimate == pytest.approx((600 * 0.9 + 400 * 0.15) / 1000)  # Σ_h (M_h / M) · q_h


def test_the_corrected_interval_agrees_with_closed_forms():
    # a perfect grader (Se = Sp = 1 in every resample): only p_obs varies, the Wald interval of 0.6 on 1000 answers
    strata = ["pos"] * 50 + ["neg"] * 50
    exact = corrected_accuracy([True] * 600 + [False] * 400, [True] * 50 + [False] * 50, [True] * 50 + [False] * 50,
                               strata, weights=stratum_weights(strata, {"pos": 600, "neg": 400}), n_boot=4000, seed=2)
    half = 1.959964 * math.sqrt(0.6 * 0.4 / 1000)
    assert exact.corrected.low == pytest.approx(0.6 - half, abs=0.006) and exact.corrected.high == pytest.approx(0.6 + half, abs=0.006)
    # an imperfect grader: the delta method, p = f(p_obs, q_pos, q_neg) linearised, from its numerical gradient
    n, m, q_pos, q_neg = 1000, 200, 0.9, 0.15
    strata = ["pos"] * m + ["neg"] * m
    truth = [True] * 180 + [False] * 20 + [True] * 30 + [False] * 170  # q_pos · m, q_neg · m truly right
    graded = [True] * m + [False] * m
    c = corrected_accuracy([True] * 600 + [False] * 400, truth, graded, strata,
                           weights=stratum_weights(strata, {"pos": 600, "neg": 400}), n_boot=4000, seed=3)

    def f(p_obs, a, b):
        se = 600 * a / (600 * a + 400 * b)
        sp = 400 * (1 - b) / (600 * (1 - a) + 400 * (1 - b))
        return (p_obs + sp - 1) / (se + sp - 1)

    x, h = np.array([0.6, q_pos, q_neg]), 1e-6
    grad = [(f(*(x + h * e)) - f(*(x - h * e))) / (2 * h) for e in np.eye(3)]
    var = [0.6 * 0.4 / n, q_pos * (1 - q_pos) / m, q_neg * (1 - q_neg) / m]
    half = 1.959964 * math.sqrt(sum(g * g * v for g, v in zip(grad, var, strict=True)))
    assert c.corrected.estimate == pytest.approx(f(*x))
    assert c.corrected.high - c.corrected.low == pytest.approx(2 * half, rel=0.1)


# --- the command ---------------------------------------------------------------------------------------------


def test_the_command_exports_imports_labels_and_reports(run_dir, tmp_path, capsys):
    sheet = tmp_path / "sample.csv"
    assert main(["audit", str(run_dir), "--sample", "6", "--export", str(sheet)]) == 0
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert len(rows) == 6 and {r["stratum"] for r in rows} == {"correct", "wrong", "refused"}
    assert main(["audit", str(run_dir), "--sample", "6", "--export", str(sheet)]) == 1
    assert "exists; choose another file name" in capsys.readouterr().err
    # a labeller agrees with the grader everywhere but on one refusal of a decline item, which they call wrong
    for r in rows:
        r["label"] = "w" if r["item"] == "decline-001" else r["grader_label"][0]
    rows[0]["label"] = ""  # left blank: not imported
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["audit", str(run_dir), "--labels", str(sheet), "--labeller", "ana", "--graders", "contains",
                 "--bootstrap", "200"]) == 0
    out = capsys.readouterr().out
    assert "imported 5 new label(s)" in out and "strict (the run's)" in out and "contains" in out
    assert "Rogan–Gladen" in out and "scripted_script__none" in out
    assert main(["audit", str(run_dir), "--labels", str(sheet), "--bootstrap", "200"]) == 0
    assert "imported 0 new label(s)" in capsys.readouterr().out  # importing again adds nothing


def test_the_report_numbers_follow_the_labels(run_dir):
    answers = load_answers(run_dir)
    store = LabelStore(answers.labels_path)
    for a in answers.answers:  # every answer labelled as the grader says: perfect agreement
        store.add(a, a.graded, "ana")
    report = audit_report(answers, store.resolve(answers), ["contains"], n_boot=200)
    own = report.graders[0]
    assert own.kappa.estimate == pytest.approx(1.0) and own.agreement.accuracy == 1.0 and own.false_pass == 0.0
    acc = report.accuracy["scripted_script__none"]
    assert acc.se == 1.0 and acc.sp == 1.0 and acc.corrected.estimate == pytest.approx(acc.raw) == 6 / 14
    # contains passes nothing it should not here, but calls the 14 refusals of questions asking for an answer wrong
    contains = report.graders[1]
    assert contains.agreement.accuracy == pytest.approx(14 / 28) and contains.false_pass == 0.0
    assert contains.agreement.n == 14
    assert _grader("strict+embedding").name == "strict+embedding"
    with pytest.raises(ValueError, match="unknown grader 'exact'"):
        _grader("exact")


def test_the_command_names_what_is_wrong(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "absent")]) == 1
    assert "is not a folder; pass the out_dir of `uncertainty-lab orchestrate run`" in capsys.readouterr().err
    assert main(["audit", str(tmp_path)]) == 1
    assert "no run journals in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", str(tmp_path), "--sample", "0"])
    assert "must be an integer ≥ 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", str(tmp_path), "--seed", "-1"])
    assert "--seed: must be an integer ≥ 0" in capsys.readouterr().err
    assert main(["audit", str(tmp_path), "--graders", "strict", "exact"]) == 1
    assert "--graders exact: no such grader; choose from strict," in capsys.readouterr().err


def test_the_terminal_asks_one_answer_at_a_time_and_resumes(run_dir, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("c\nmaybe\nw\ns\nq\n"))
    assert main(["audit", str(run_dir), "--sample", "5", "--labeller", "ana", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "0 of the 5 sampled answers are labelled; 5 to go" in out and "'maybe' is not a key" in out
    assert "saved 2 label(s)" in out and "grader" not in out.split("saved")[0].split("[1/5]")[1]  # blind to the grader
    sample = load_answers(run_dir).sample(5)
    labels = LabelStore(run_dir / "audit" / "labels.jsonl").read()
    assert [(h.item, h.label, h.labeller) for h in labels] == [(sample[0].id, "correct", "ana"),
                                                              (sample[1].id, "wrong", "ana")]
    monkeypatch.setattr("sys.stdin", io.StringIO("r\n"))  # the end of the input stops like q
    assert main(["audit", str(run_dir), "--sample", "5", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "2 of the 5 sampled answers are labelled; 3 to go" in out and f"] {sample[2].id} " in out
    assert "saved 1 label(s)" in out


def test_the_widget_labels_with_buttons_and_reports(run_dir):
    from uncertainty_lab.widgets import audit_labeller

    labeller = audit_labeller(run_dir, sample=4, graders=["contains"], labeller="ana", n_boot=100)
    assert len(labeller.todo) == 4 and labeller.todo[0].id in labeller.card.value
    first = labeller.todo[0]
    labeller.buttons["correct"].click()
    labeller.label("skip")
    assert labeller.position == 2 and "2 of 4" in labeller.status.value
    (saved,) = LabelStore(run_dir / "audit" / "labels.jsonl").read()
    assert (saved.item, saved.label, saved.labeller) == (first.id, "correct", "ana")
    report = labeller.report()
    assert report.graders[0].agreement.n == 1 and "Rogan" in labeller.output.value
    again = audit_labeller(run_dir, sample=4)  # resumes: the labelled answer is not offered again
    assert first.key not in {a.key for a in again.todo} and len(again.todo) == 3


def test_a_labels_file_that_is_not_an_export_is_refused_and_bad_rows_are_named(run_dir, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,verdict\nfactual-001,c\n", encoding="utf-8")
    assert main(["audit", str(run_dir), "--labels", str(bad)]) == 1
    assert "--labels" in (err := capsys.readouterr().err) and "no column(s) ['answer_sha256', 'label']" in err
    answer = load_answers(run_dir).answers[0]
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(f"item,answer_sha256,label\n{answer.id},{answer.sha256},maybe\n{answer.id},{answer.sha256},W\n",
                     encoding="utf-8")
    assert main(["audit", str(run_dir), "--labels", str(mixed), "--bootstrap", "50"]) == 0
    captured = capsys.readouterr()
    assert "row 2: label 'maybe'" in captured.err and "imported 1 new label(s)" in captured.out
    assert [h.label for h in LabelStore(run_dir / "audit" / "labels.jsonl").read()] == ["wrong"]
