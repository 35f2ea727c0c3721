"""benchmarks/real_data_audit.py without a model: the HASSUM rows' accuracy corrected for grader error (Rogan–Gladen
with Se and Sp from hand-label counts) renders beside the raw one, equals the closed form, and is not given when
the grader is no better than chance; the grader-audit table is computed from the counts."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def audit_mod(monkeypatch):
    """The benchmark scripts as modules (they import each other as top-level names, as `python benchmarks/x.py`)."""
    monkeypatch.syspath_prepend(str(BENCH))
    yield importlib.import_module("real_data_audit"), importlib.import_module("real_data_tables")
    for name in ("real_data_audit", "real_data_tables"):
        sys.modules.pop(name, None)


def _table(rr, rw, rf, ru, wr, ww, fr, ff):
    """3 × 5 counts (hand correct / wrong / refused × grade correct / wrong / refused / uncertain / other)."""
    return [[rr, rw, 0, ru, 0], [wr, ww, 0, 0, 0], [fr, 0, ff, 0, 0]]


def _audit(table_old, table_new=None, n_boot=300):
    counts = {"truthfulqa": {"heldout": table_old, "dev2": _table(0, 0, 0, 0, 0, 0, 0, 0)}}
    return {"labels": "benchmarks/grading_audit_real/labels.csv", "labels_sha256": "ab" * 32, "level": 0.95,
            "n_boot": n_boot, "seed": 0, "correction_splits": ["heldout"],
            "graders": {"old": {"name": "strict", "commit": "a" * 40, "what": "old", "uncertain_label": False,
                                "rows": ["truthfulqa/N5/embedded"], "counts": counts},
                        "current": {"name": "strict", "commit": "b" * 40, "what": "current", "uncertain_label": True,
                                    "rows": [], "counts": {"truthfulqa": {"heldout": table_new or table_old}}}}}


def _results(audit):
    auroc = {"n": 40, "wrong": 30, "missing": 0, "estimate": 0.6, "low": 0.5, "high": 0.7}
    row = {"lab": "orchestration", "dataset": "truthfulqa", "closed_book": False, "model": "embedded:tiny",
           "grader": "strict", "n_samples": 5, "n": 40, "wrong": 30, "refused": 0,
           "accuracy": {"estimate": 0.25, "low": 0.142, "high": 0.403, "correct": 10},
           "auroc": {"entropy": auroc, "density": auroc}}
    return {"machine": "m", "updated": "2031-01-01", "hassum": {"truthfulqa/N5/embedded": row},
            "grader_audit": audit}


def test_corrected_equals_the_closed_form(audit_mod):
    audit, _ = audit_mod
    # truly right: 18 correct-hand answers, 15 graded correct (2 wrong, 1 uncertain: uncertain is not right);
    # not right: 40 wrong + 10 refused hand answers, 4 + 1 graded correct
    table = _table(15, 2, 0, 1, 4, 36, 1, 9)
    res, why = audit.corrected(10, 40, np.array(table), n_boot=300)
    se, sp = 15 / 18, 45 / 50
    assert why is None and res.se == pytest.approx(se) and res.sp == pytest.approx(sp)
    assert res.corrected.estimate == pytest.approx((10 / 40 + sp - 1) / (se + sp - 1))
    assert res.corrected.low < res.corrected.estimate < res.corrected.high


def test_render_shows_raw_and_corrected_side_by_side(audit_mod):
    _, tables = audit_mod
    text = tables.render(_results(_audit(_table(15, 2, 0, 1, 4, 36, 1, 9))))
    row = next(line for line in text.splitlines() if line.startswith("| TruthfulQA | strict"))
    p = (0.25 + 0.9 - 1) / (15 / 18 + 0.9 - 1)
    assert f"| 25.0% [14.2%, 40.3%] | {p:.1%} [" in row and "(Se 0.83, Sp 0.90) | 0.600 [0.500, 0.700]" in row
    assert "Grader audit on real answers" in text and "**Assumption**" in text
    old = next(line for line in text.splitlines() if "`aaaaaaa`" in line)
    assert "| heldout | 68 |" in old and "0.833 (15/18)" in old and "0.900 (45/50)" in old
    assert "10.0% of 40" in old and "— (no such grade)" in old  # hand-wrong graded correct: 4 of 40
    new = next(line for line in text.splitlines() if "`bbbbbbb`" in line)
    assert new.endswith("| 1.5% |")  # 1 uncertain of 68


def test_not_given_when_the_grader_is_no_better_than_chance(audit_mod):
    audit, tables = audit_mod
    # Se = 5/10, Sp = 4/10: Se + Sp − 1 = −0.1
    text = tables.render(_results(_audit(_table(5, 5, 0, 0, 6, 4, 0, 0))))
    row = next(line for line in text.splitlines() if line.startswith("| TruthfulQA | strict"))
    assert "| 25.0% [14.2%, 40.3%] | not given: Se + Sp − 1 = -0.10 ≤ 0" in row
    # a grader with no audit, and a data set without labels, say so
    assert audit.corrected_cell(None, "truthfulqa/N5/embedded", "truthfulqa", {"correct": 1}, 4) == \
        "not given: this grader was not audited"
    a = _audit(_table(5, 5, 0, 0, 6, 4, 0, 0))
    a["graders"]["old"]["rows"].append("hotpotqa/N5/embedded")
    assert audit.corrected_cell(a, "hotpotqa/N5/embedded", "hotpotqa", {"correct": 1}, 4) == \
        "not given: no hand labels of this data set's answers"


def test_not_given_when_the_interval_has_no_bound(audit_mod):
    audit, _ = audit_mod
    # Se = 2/3, Sp = 0.5: J = 1/6 > 0, but with 3 right answers many resamples have Se* + Sp* ≤ 1
    res, why = audit.corrected(10, 40, np.array(_table(2, 1, 0, 0, 5, 5, 0, 0)), n_boot=300)
    assert res.se + res.sp - 1 > 0 and res.corrected.dropped > 0.025 * 300
    assert why.startswith("not given: Se + Sp − 1 = 0.17, but in ") and "no bound" in why


def test_confusion_counts_every_grade(audit_mod):
    audit, _ = audit_mod
    got = audit.confusion(["correct", "correct", "wrong", "refused"], ["uncertain", "unjudged", "correct", "refused"])
    assert got == [[0, 0, 0, 1, 1], [1, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    assert audit.se_sp_counts(np.array(got)) == {
        "right": 2, "right_graded_right": 0, "not_right": 2, "not_right_graded_not_right": 1}
