"""The graders' error on hand labels of real answers, and the HASSUM rows' accuracy corrected for it (issue #21).

Measure (no model call when ``--work-dir`` holds the audit runs of ``grading_audit_real.py``; ~4 min otherwise):

    python benchmarks/real_data_audit.py --truthfulqa /work/data/TruthfulQA.csv \\
        --strategyqa /work/data/strategyqa_train.json [--work-dir /tmp/gar]

Every distinct answer of the audit runs that has a hand label (``grading_audit_real/labels.csv``) is graded by the
old ``strict`` grader (the package at :data:`OLD_COMMIT`, the one the HASSUM rows of ``real_data.json`` were graded
with; run from ``git archive`` in a subprocess), by the default before issue #21's third round
(:data:`PREVIOUS_COMMIT`, likewise) and by the current default ``QAGrader()``. The JSON section
``grader_audit`` receives only counts: per grader, data set and split, the 3 × 5 table hand label (``correct``,
``wrong``, ``refused``) × grade (``correct``, ``wrong``, ``refused``, ``uncertain``, anything else). Everything the
report shows is computed from those counts when it is rendered (``real_data.py --render``):

- truth = hand ``correct`` (a hand ``refused`` is not right); graded right = grade ``correct`` (``uncertain`` is not
  right); Se = P(graded right | truly right), Sp = P(graded not right | truly not right) on the splits named in
  ``correction_splits``;
- the corrected accuracy p = (p_obs + Sp − 1) / (Se + Sp − 1) (Rogan–Gladen) with the interval of
  :func:`uncertainty_lab.semantic.agreement.corrected_accuracy`: bootstrap over the audit answers (one stratum per
  data set) and the row's own binomial. Not given when Se + Sp − 1 ≤ 0, or when more than (1 − level)/2 of the
  bootstrap replicates have Se* + Sp* ≤ 1 (then the interval has no bound on that side);
- κ with its percentile-bootstrap interval (:func:`~uncertainty_lab.semantic.agreement.kappa_interval`, a grade
  outside the three hand labels is a disagreement), agreement, hand-wrong graded correct, uncertain share.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HAND = ("correct", "wrong", "refused")
GRADES = ("correct", "wrong", "refused", "uncertain", "other")
#: the package as it was when the HASSUM rows were graded (before issue #21's rule changes)
OLD_COMMIT = "ab7cf42bc08a521f8d16c7253fe7de2cf0657d7e"
#: the default grader of issue #21's seventh round of rules (tuned on dev … heldout5; heldout6 was labelled blind
#: and measured once, then tuned on in the eighth round)
PREVIOUS_COMMIT = "2c620b8039e53a9c05f76c4d82a2ea511a0028a3"
#: splits labelled blind, each before a round of tuning: shown as rows of their own (heldout6 was tuned on after its
#: one look; heldout7 and heldout8 never were)
FRESH_SPLITS = ("heldout6", "heldout7", "heldout8")
LEVEL, N_BOOT, SEED = 0.95, 2000, 0
#: grading code run under ``PYTHONPATH=<a git archive of the commit>``: JSON lines {item, answer} in, labels out
_GRADE_SNIPPET = """
import json, sys
from uncertainty_lab.orchestration.grading import QAGrader
g = QAGrader()
out = [g(r["item"], r["answer"])["label"] or "other" for r in map(json.loads, open(sys.argv[1], encoding="utf-8"))]
json.dump(out, sys.stdout)
"""


# --- counts (measured) --------------------------------------------------------------------------------------------


def confusion(hand: list[str], graded: list[str]) -> list[list[int]]:
    """The 3 × 5 counts: rows :data:`HAND`, columns :data:`GRADES` (a grade outside them counts as ``other``)."""
    table = np.zeros((len(HAND), len(GRADES)), dtype=int)
    for h, g in zip(hand, graded, strict=True):
        table[HAND.index(h), GRADES.index(g) if g in GRADES else len(GRADES) - 1] += 1
    return table.tolist()


def grade_at(commit: str, rows: list[dict[str, Any]], repo: Path = REPO) -> list[str]:
    """Each row's label from ``QAGrader()`` of the package at ``commit`` (``git archive`` into a temporary folder,
    graded in a subprocess so that the current package is not imported beside it)."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit, "uncertainty_lab"],
                             check=True, capture_output=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        answers = Path(tmp) / "answers.jsonl"
        answers.write_text("".join(json.dumps({"item": r["item"], "answer": r["answer"]}) + "\n" for r in rows),
                           encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", _GRADE_SNIPPET, str(answers)], capture_output=True, text=True,
                              env={"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"}, cwd=tmp)
        if done.returncode:
            raise RuntimeError(f"grading at {commit[:7]} failed:\n{done.stderr[-2000:]}")
        labels = json.loads(done.stdout)
    if len(labels) != len(rows):
        raise RuntimeError(f"grading at {commit[:7]} returned {len(labels)} labels for {len(rows)} answers")
    return labels


def _commit(repo: Path = REPO) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """The ``grader_audit`` section: label counts of the old and the current grader on every labelled answer."""
    import grading_audit_real as gar

    from uncertainty_lab.orchestration.grading import QAGrader

    labels = gar.read_labels(args.labels)
    paths = {"truthfulqa": args.truthfulqa, "strategyqa": args.strategyqa}
    rows = [r for r in gar.all_answers(paths, args.work_dir) if (r["dataset"], r["question_id"], r["sha"]) in labels]
    hand = [labels[(r["dataset"], r["question_id"], r["sha"])] for r in rows]
    current = QAGrader()
    grades = {"old": grade_at(OLD_COMMIT, rows), "previous": grade_at(PREVIOUS_COMMIT, rows),
              "current": [current(r["item"], r["answer"])["label"] or "other" for r in rows]}
    old_code = subprocess.run(["git", "-C", str(REPO), "show", f"{OLD_COMMIT}:uncertainty_lab/orchestration/grading.py"],
                              check=True, capture_output=True, text=True).stdout
    graders = {"old": {"name": "strict", "commit": OLD_COMMIT, "what": "before issue #21; graded the HASSUM rows",
                       "uncertain_label": '"uncertain"' in old_code, "rows": sorted(args.rows)},
               "previous": {"name": "strict", "commit": PREVIOUS_COMMIT, "what": "the seventh round of issue #21; "
                            "tuned on dev … heldout5; heldout6 labelled blind, measured once frozen", "uncertain_label": True,
                            "rows": []},
               "current": {"name": current.name, "commit": _commit(), "what": "the current default QAGrader(), eighth "
                           "round; tuned on dev … heldout6; heldout7 and heldout8 labelled blind, measured once frozen",
                           "uncertain_label": True, "rows": []}}
    for key, g in graders.items():
        g["counts"] = {ds: {split: confusion([h["label"] for h, r in zip(hand, rows, strict=True) if
                                              r["dataset"] == ds and h["split"] == split],
                                             [x for x, h, r in zip(grades[key], hand, rows, strict=True) if
                                              r["dataset"] == ds and h["split"] == split])
                            for split in gar.SPLITS} for ds in paths}
    text = args.labels.read_bytes()
    return {"labels": "benchmarks/grading_audit_real/labels.csv", "labels_sha256": hashlib.sha256(text).hexdigest(),
            "labelled_found": len(rows), "correction_splits": list(args.splits), "level": LEVEL, "n_boot": N_BOOT,
            "seed": SEED, "hand": list(HAND), "grades": list(GRADES), "graders": graders}


# --- statistics from the counts (rendered) ------------------------------------------------------------------------


def pooled(audit: dict[str, Any], grader: str, dataset: str, splits: list[str] | None = None) -> np.ndarray:
    """The 3 × 5 counts of ``grader`` on ``dataset`` summed over ``splits`` (default: the correction splits)."""
    counts = audit["graders"][grader]["counts"].get(dataset, {})
    splits = audit["correction_splits"] if splits is None else splits
    return sum((np.array(counts[s]) for s in splits if s in counts), np.zeros((len(HAND), len(GRADES)), dtype=int))


def expand(table: np.ndarray) -> tuple[list[str], list[str]]:
    """The (hand, grade) label pairs a count table stands for, one per answer."""
    hand, graded = [], []
    for i, h in enumerate(HAND):
        for j, g in enumerate(GRADES):
            hand += [h] * int(table[i, j])
            graded += [g] * int(table[i, j])
    return hand, graded


def se_sp_counts(table: np.ndarray) -> dict[str, int]:
    """Truly right (hand correct) / not right, and how many of each the grader graded right (grade correct)."""
    t = np.asarray(table)
    return {"right": int(t[0].sum()), "right_graded_right": int(t[0, 0]),
            "not_right": int(t[1:].sum()), "not_right_graded_not_right": int(t[1:].sum() - t[1:, 0].sum())}


def corrected(successes: int, n: int, table: np.ndarray, level: float = LEVEL, n_boot: int = N_BOOT,
              seed: int = SEED) -> tuple[Any, str | None]:
    """The Rogan–Gladen correction of ``successes`` / ``n`` with Se and Sp from ``table`` (module doc) and why it is
    not given (None when it is)."""
    from uncertainty_lab.semantic.agreement import corrected_accuracy

    c = se_sp_counts(table)
    if not c["right"] or not c["not_right"]:
        return None, (f"not given: the audit has {c['right']} truly right and {c['not_right']} not-right answers "
                      "(Se and Sp need both)")
    hand, graded = expand(table)
    truth = [h == "correct" for h in hand]
    right = [g == "correct" for g in graded]
    res = corrected_accuracy([True] * successes + [False] * (n - successes), truth, right, [0] * len(truth),
                             level=level, n_boot=n_boot, seed=seed)
    j = res.se + res.sp - 1
    if j <= 0:
        return res, f"not given: Se + Sp − 1 = {j:.2f} ≤ 0, the grader tells right from wrong no better than chance"
    if res.corrected.dropped > (1 - level) / 2 * n_boot:
        return res, (f"not given: Se + Sp − 1 = {j:.2f}, but in {res.corrected.dropped / n_boot:.0%} of the "
                     f"resamples Se + Sp ≤ 1, so the interval has no bound")
    return res, None


def row_grader(audit: dict[str, Any] | None, key: str) -> str | None:
    """The audited grader that graded the HASSUM row ``key`` (``dataset/N/model``, a regraded one ``.../grader``)."""
    for name, g in (audit or {}).get("graders", {}).items():
        if key in g.get("rows", ()):
            return name
    return None


def corrected_cell(audit: dict[str, Any] | None, key: str, dataset: str, acc: dict[str, Any], n: int,
                   splits: list[str] | None = None) -> str:
    """The corrected accuracy of one HASSUM row with its interval, or why it is not given (Se and Sp from the
    labels of ``splits``, default the correction splits)."""
    grader = row_grader(audit, key)
    if grader is None:
        return "not given: this grader was not audited"
    table = pooled(audit, grader, dataset, splits)
    if not table.sum():
        return "not given: no hand labels of this data set's answers"
    res, why = corrected(acc["correct"], n, table, audit["level"], audit["n_boot"], audit["seed"])
    if why:
        return why
    iv = res.corrected
    return f"{iv.estimate:.1%} [{iv.low:.1%}, {iv.high:.1%}] (Se {res.se:.2f}, Sp {res.sp:.2f})"


def _audit_row(audit: dict[str, Any], grader: str, dataset: str, splits: list[str]) -> str:
    from uncertainty_lab.semantic.agreement import kappa_interval, sensitivity_specificity

    g = audit["graders"][grader]
    table = pooled(audit, grader, dataset, splits)
    hand, graded = expand(table)
    kappa = kappa_interval(hand, graded, [0] * len(hand), labels=HAND, level=audit["level"], n_boot=audit["n_boot"],
                           seed=audit["seed"])
    c = se_sp_counts(table)
    se, sp = sensitivity_specificity([h == "correct" for h in hand], [x == "correct" for x in graded])
    wrong = table[1]
    unsure = f"{table[:, 3].sum() / table.sum():.1%}" if g["uncertain_label"] else "— (no such grade)"
    return "| " + " | ".join([
        f"{dataset_name(dataset)}", f"{g['name']} @ `{g['commit'][:7]}` ({g['what']})", ", ".join(splits),
        str(int(table.sum())), str(kappa), f"{np.trace(table[:, :3]) / table.sum():.1%}",
        f"{wrong[0] / wrong.sum():.1%} of {int(wrong.sum())}" if wrong.sum() else "—",
        f"{se:.3f} ({c['right_graded_right']}/{c['right']})",
        f"{sp:.3f} ({c['not_right_graded_not_right']}/{c['not_right']})", unsure]) + " |"


def dataset_name(key: str) -> str:
    from real_data_tables import QA_NAMES

    return QA_NAMES.get(key, key)


def _sensitivity(audit: dict[str, Any], hassum: dict[str, Any]) -> list[str]:
    """Each corrected row again with Se and Sp from the held-out labels alone (when the correction uses more)."""
    if audit["correction_splits"] == ["heldout"]:
        return []
    out = []
    for key, m in hassum.items():
        if row_grader(audit, key) and pooled(audit, row_grader(audit, key), m["dataset"]).sum():
            out.append(f"- {dataset_name(m['dataset'])}: "
                       f"{corrected_cell(audit, key, m['dataset'], m['accuracy'], m['n'], ['heldout'])}")
    return ["With Se and Sp from the heldout labels alone:", "", *out, ""] if out else []


def audit_lines(audit: dict[str, Any] | None, hassum: dict[str, Any] | None = None) -> list[str]:
    """The assumption behind the corrected column and the table "grader audit on real answers" (``hassum``: the
    HASSUM rows, for the corrected accuracies on the held-out labels alone)."""
    if not audit:
        return []
    splits = audit["correction_splits"]
    head = ["data set", "grader", "hand labels", "n", "κ [95% boot]", "agreement", "hand-wrong → correct",
            "Se (right → right)", "Sp (not right → not right)", "uncertain"]
    lines = ["#### Grader audit on real answers", "",
             f"Hand labels: `{audit['labels']}` (sha256 `{audit['labels_sha256'][:16]}…`), the embedded model's own "
             "answers to other TruthfulQA and StrategyQA questions of the same files (`grading_audit_real.py`); "
             "HotpotQA answers were not labelled. Right = hand `correct`; a hand `refused` is not right; a grade "
             "counts as right only when it is `correct` (an `uncertain` grade is not right). κ over the three hand "
             f"labels (any other grade a disagreement), {audit['n_boot']} bootstrap resamples over answers, seed "
             f"{audit['seed']}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    datasets = list(next(iter(audit["graders"].values()))["counts"])
    for ds in datasets:
        for grader in audit["graders"]:
            fresh = tuple((f,) for f in FRESH_SPLITS if pooled(audit, grader, ds, [f]).sum())
            for use in dict.fromkeys((("heldout",), tuple(splits), *fresh)):
                lines.append(_audit_row(audit, grader, ds, list(use)))
    lines += ["", f"**Corrected accuracy** (the column beside the raw accuracy above): Rogan–Gladen, "
              "p = (p_obs + Sp − 1) / (Se + Sp − 1), clipped to [0, 1], with Se and Sp of the grader that graded "
              f"the row, from the {' + '.join(splits)} labels of its data set; the interval is a percentile "
              f"bootstrap ({audit['n_boot']} resamples, seed {audit['seed']}) over the audit answers and the row's "
              "own binomial, as `uncertainty_lab.semantic.agreement.corrected_accuracy` computes it. " + _why_splits(splits)
              + " **Assumption**: "
              "the grader's error rates measured on the audit runs (same model, same files, other questions, "
              "every distinct sampled answer rather than the first-round answer) hold for the benchmark rows. Not "
              "given where Se + Sp − 1 ≤ 0 or where more than "
              f"{(1 - audit['level']) / 2:.1%} of the resamples have Se + Sp ≤ 1 (no bound on the interval).", "",
              *_sensitivity(audit, hassum or {})]
    return [*lines[:-1]] if lines[-1] == "" else lines


def _why_splits(splits: list[str]) -> str:
    """Why the correction reads these label splits."""
    if "dev2" not in splits:
        return ""
    return ("dev2 is added to heldout because the held-out labels hold few truly right TruthfulQA answers (the Se "
            "column); the old grader's rules predate every label, so dev2 was never tuned on for it, while the "
            "seventh-round grader was tuned on every split up to heldout5 and the current one up to heldout6 (their heldout + dev2 rows "
            f"flatter them; the honest rows are the seventh-round grader's {FRESH_SPLITS[0]} and the current grader's "
            f"{FRESH_SPLITS[1]} and {FRESH_SPLITS[2]}).")


# --- command line -------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--truthfulqa", type=Path, required=True)
    p.add_argument("--strategyqa", type=Path, required=True)
    p.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "uncertainty_lab_grading_audit",
                   help="the audit runs of grading_audit_real.py (resumed; made when missing)")
    p.add_argument("--labels", type=Path, default=HERE / "grading_audit_real" / "labels.csv")
    p.add_argument("--splits", nargs="+", default=["heldout", "dev2"], help="the label splits Se and Sp are taken from")
    p.add_argument("--rows", nargs="+", default=["truthfulqa/N5/embedded", "strategyqa/N5/embedded",
                                                 "hotpotqa/N5/embedded"],
                   help="the HASSUM rows of real_data.json graded by the old grader")
    p.add_argument("--json", type=Path, default=HERE / "real_data.json")
    p.add_argument("--markdown", type=Path, default=HERE / "real_data.md")
    args = p.parse_args(argv)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    from real_data import update_outputs

    results = json.loads(args.json.read_text(encoding="utf-8"))
    results["grader_audit"] = measure(args)
    update_outputs(results, args.json, args.markdown)
    print("\n".join(audit_lines(results["grader_audit"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
