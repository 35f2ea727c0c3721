"""The graders against hand labels of REAL answers (issue #21): the embedded model's sampled answers to TruthfulQA
and StrategyQA questions, each distinct answer labelled by hand (``correct`` / ``wrong`` / ``refused``) after
reading the question and both reference lists. The repository holds only ids, hashes and labels
(``grading_audit_real/labels.csv``); the answers are regenerated here from the public files you downloaded.

Run (the model runs once, ~4 min on 2 cores; then the journals are read back):

    python benchmarks/grading_audit_real.py --truthfulqa /work/data/TruthfulQA.csv \\
        --strategyqa /work/data/strategyqa_train.json [--graders strict contains hassum] [--dump FILE]

- The runs (:data:`RUNS`): ``orchestrate run``, policy ``none``, 5 samples at temperature 0.7, 32 tokens; 60
  TruthfulQA and 50 StrategyQA questions drawn with seed 11, 40 more TruthfulQA questions with seed 12, 30 of each
  with seed 13, 50 TruthfulQA and 40 StrategyQA with seed 14, 12 TruthfulQA with seed 15, 50 TruthfulQA and 36
  StrategyQA with seed 16, 50 TruthfulQA and 40 StrategyQA with seed 17, 50 TruthfulQA and 60 StrategyQA with
  seed 19, 60 of each with seed 20, 60 of each with seed 21, 60 of each with seed 22 (StrategyQA rows without a
  ``qid`` get ``row<index>``, in a copy in the work folder).
- Each distinct sample (whitespace collapsed) is keyed by ``sha256`` of that text, joined with the labels by
  (data set, question id, hash). ``split`` (by question, :data:`SPLITS`): the data the rules were tuned on, or
  held out.
- Per grader and split: Cohen's κ with a 95% percentile-bootstrap interval over answers (1,000 resamples), κ on the
  answers the grader decided (``uncertain`` left out, a point estimate), the agreement, the share of hand-wrong answers graded correct, the share graded ``uncertain`` (a grade other than
  the three hand labels counts as a disagreement).
- ``--dump FILE``: every answer with its question, references, hand label and grades, as JSON lines (outside the
  repository: it holds data-set text), for reading the disagreements.
- ``--labelling FILE``: the answers without a label, grouped by question with both reference lists and no grade
  (what a person labels; add the rows to ``labels.csv``).
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
LABELS_CSV = HERE / "grading_audit_real" / "labels.csv"
ADVERSARIAL = HERE / "grading_audit_real" / "adversarial.jsonl"
FIELDS = ("dataset", "question_id", "answer_sha256", "label", "failure_mode", "split")
HAND = ("correct", "wrong", "refused")
SETTINGS = {"llm": "embedded", "seed": 11, "policies": ["none"], "n_samples": 5, "max_tokens": 32,
            "temperature": 0.7, "figure": False, "progress": False}
#: (data set, questions, seed): the seed draws the questions and seeds the run
RUNS = (("truthfulqa", 60, 11), ("strategyqa", 50, 11), ("truthfulqa", 40, 12), ("truthfulqa", 30, 13),
        ("strategyqa", 30, 13), ("truthfulqa", 50, 14), ("strategyqa", 40, 14), ("truthfulqa", 12, 15),
        ("truthfulqa", 50, 16), ("strategyqa", 36, 16), ("truthfulqa", 50, 17), ("strategyqa", 40, 17),
        ("truthfulqa", 50, 19), ("strategyqa", 60, 19), ("truthfulqa", 60, 20), ("strategyqa", 60, 20),
        ("truthfulqa", 60, 21), ("strategyqa", 60, 21), ("truthfulqa", 60, 22), ("strategyqa", 60, 22))
#: ``dev``: the rules were tuned on it (first round); ``dev2``: held out in the first round (its numbers then are the
#: first round's honest estimate), tuned on in the second; ``heldout``: the seed-13 runs, labelled without the
#: grader's output in view after the second round's rules were frozen, tuned on in the third round (its numbers
#: then are the second round's honest estimate); ``heldout2``: the questions of the seed-14 and seed-15 runs that no
#: earlier run drew, labelled blind (no grade in view) before the third round's tuning began, looked at once after
#: it, tuned on in the fourth round; ``heldout3``: the new questions of the seed-16 runs, labelled blind after the
#: fourth round's rules were frozen, never tuned on; ``heldout4``: the questions of the seed-17 runs that no earlier
#: run drew, labelled blind after the fifth round's rules were frozen, never tuned on; ``heldout5``: the questions
#: of the seed-19 runs that no earlier run drew, labelled blind after the sixth round's rules were frozen, never tuned
#: on; ``heldout6``: the questions of the seed-20 runs that no earlier run drew, labelled blind after the seventh
#: round's rules were frozen, never tuned on; ``heldout7``: the questions of the seed-21 runs that no earlier run
#: drew, labelled blind after the eighth round's rules were frozen, never tuned on; ``heldout8``: the questions of the
#: seed-22 runs that no earlier run drew, labelled blind after the eighth round's rules were frozen, never tuned on: a
#: second fresh split for the same rules as heldout7
SPLITS = ("dev", "dev2", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7",
          "heldout8")


def answer_key(text: str) -> str:
    """sha256 of the answer with its whitespace collapsed (the key the labels are stored under)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def read_labels(path: Path = LABELS_CSV) -> dict[tuple[str, str, str], dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["dataset"], r["question_id"], r["answer_sha256"]): r for r in csv.DictReader(f)}


def _strategyqa_copy(path: Path, work: Path) -> Path:
    """The StrategyQA file with a ``qid`` (``row<index>``) and a boolean answer on every row (the public
    question/answer/steps layout has neither)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, r in enumerate(rows):
        a = r["answer"]
        a = a if isinstance(a, bool) else str(a).strip().lower().rstrip(".") in ("yes", "true")
        out.append({"qid": str(r.get("qid") or f"row{i}"), "question": r["question"], "answer": a,
                    "facts": [s for s in r.get("facts", r.get("steps", [])) if isinstance(s, str)]})
    copy = work / "strategyqa_rows.json"
    copy.write_text(json.dumps(out), encoding="utf-8")
    return copy


def run(name: str, path: Path, work: Path, sample: int, seed: int) -> Path:
    """Run (or resume) the model on ``sample`` of ``name``'s questions drawn with ``seed``; the run folder."""
    from uncertainty_lab.orchestration.experiment import run_experiment

    data: dict[str, Any] = {"loader": name, "path": str(path), "sample": sample, "seed": seed}
    if name == "strategyqa":
        data.update(path=str(_strategyqa_copy(path, work)), split="train")
    out = work / f"{name}_s{seed}"
    run_experiment({**SETTINGS, "seed": seed, "data": data, "out_dir": str(out)})
    return out


def answers(name: str, folder: Path) -> list[dict[str, Any]]:
    """Every distinct sampled answer of a run: (data set, question id, hash, item, answer text)."""
    seen, out = set(), []
    for f in sorted(glob.glob(str(folder / "runs" / "*" / "*.jsonl"))):
        for line in open(f, encoding="utf-8"):
            rec = json.loads(line)
            if rec.get("type") != "question":
                continue
            item = rec["item"]
            qid = item["id"].removeprefix("strategyqa-")
            for cand in rec["trace"]["rounds"][0]["candidates"]:
                for text in cand["answer"]["samples"]["texts"]:
                    key = (name, qid, answer_key(text))
                    if key not in seen:
                        seen.add(key)
                        out.append({"dataset": name, "question_id": qid, "sha": key[2], "item": item, "answer": text})
    return out


def all_answers(paths: dict[str, Path], work: Path) -> list[dict[str, Any]]:
    """Every distinct answer of the :data:`RUNS` (run or resumed in ``work``), first seen first; ``paths`` maps a
    data set's name to its public file."""
    rows, seen = [], set()
    for name, sample, seed in RUNS:
        for r in answers(name, run(name, paths[name], work, sample, seed)):
            if (r["dataset"], r["question_id"], r["sha"]) not in seen:
                seen.add((r["dataset"], r["question_id"], r["sha"]))
                rows.append(r)
    return rows


def _kappa(hand: np.ndarray, graded: np.ndarray) -> float:
    from uncertainty_lab.semantic.grading_audit import agreement

    codes = (*HAND, "uncertain", "unjudged")
    return agreement([HAND[h] for h in hand], [codes[g] for g in graded], labels=HAND).kappa


def scores(hand: list[str], graded: list[str], seed: int = 0, n_boot: int = 1000) -> dict[str, Any]:
    """κ (with its 95% percentile-bootstrap interval), agreement, hand-wrong→correct and uncertain shares."""
    from uncertainty_lab.semantic.evaluation import bootstrap_ci

    codes = (*HAND, "uncertain", "unjudged")
    h = np.array([HAND.index(x) for x in hand])
    g = np.array([codes.index(x) if x in codes else len(codes) - 1 for x in graded])
    ci = bootstrap_ci(_kappa, h, g, n_boot=n_boot, seed=seed, vectorised=False)
    wrong = h == HAND.index("wrong")
    decided = g != codes.index("uncertain")
    return {"n": len(h), "kappa": ci.estimate, "low": ci.low, "high": ci.high, "agreement": float(np.mean(h == g)),
            "kappa_decided": _kappa(h[decided], g[decided]) if decided.any() else float("nan"),
            "wrong_graded_correct": float(np.mean(g[wrong] == 0)) if wrong.any() else float("nan"),
            "n_wrong": int(wrong.sum()), "uncertain": float(np.mean(g == codes.index("uncertain")))}


def grade(rows: list[dict[str, Any]], method: str) -> list[str]:
    from uncertainty_lab.orchestration.grading import QAGrader

    grader = QAGrader() if method == "strict" else QAGrader(method=method)
    return [grader(r["item"], r["answer"])["label"] or "unjudged" for r in rows]


def adversarial(method: str) -> tuple[float, int, list[dict[str, Any]]]:
    """Agreement on our adversarial answers (``adversarial.jsonl``) and the misses."""
    from uncertainty_lab.orchestration.grading import QAGrader

    grader = QAGrader() if method == "strict" else QAGrader(method=method)
    items = [json.loads(line) for line in ADVERSARIAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    misses = []
    for it in items:
        got = grader({"question": it["question"], "answers": it["correct"], "incorrect": it["incorrect"]},
                     it["answer"])["label"]
        if got != it["label"]:
            misses.append({"id": it["id"], "hand": it["label"], "grader": got, "tag": it["failure_mode"]})
    return 1 - len(misses) / len(items), len(items), misses


def _row(name: str, split: str, s: dict[str, Any]) -> str:
    return (f"| {name} | {split} | {s['n']} | {s['kappa']:.3f} [{s['low']:.3f}, {s['high']:.3f}] | "
            f"{s['kappa_decided']:.3f} | {s['agreement']:.1%} | {s['wrong_graded_correct']:.1%} of {s['n_wrong']} | "
            f"{s['uncertain']:.1%} |")


def _for_labelling(rows: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        last = None
        for r in rows:
            if (r["dataset"], r["question_id"]) != last:
                last = (r["dataset"], r["question_id"])
                it = r["item"]
                f.write(f"\n## {r['dataset']} {r['question_id']} Q: {it['question']}\n  C: {' | '.join(it['answers'])}\n"
                        f"  I: {' | '.join(it['incorrect'])}\n")
            f.write(f"  {r['sha'][:12]} {r['answer']!r}\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--truthfulqa", type=Path, required=True)
    p.add_argument("--strategyqa", type=Path, required=True)
    p.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "uncertainty_lab_grading_audit")
    p.add_argument("--labels", type=Path, default=LABELS_CSV)
    p.add_argument("--graders", nargs="+", default=["strict", "contains"])
    p.add_argument("--dump", type=Path, help="write every answer, its labels and grades here (JSON lines)")
    p.add_argument("--labelling", type=Path, help="write the unlabelled answers here, for labelling (no grades shown)")
    args = p.parse_args(argv)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    labels = read_labels(args.labels)
    rows = all_answers({"truthfulqa": args.truthfulqa, "strategyqa": args.strategyqa}, args.work_dir)
    found = [r for r in rows if (r["dataset"], r["question_id"], r["sha"]) in labels]
    if args.labelling:
        _for_labelling([r for r in rows if (r["dataset"], r["question_id"], r["sha"]) not in labels], args.labelling)
    print(f"{len(rows)} distinct answers, {len(found)} of them labelled ({len(labels)} labels in {args.labels.name})")
    graded = {m: grade(found, m) for m in args.graders}
    print("\n| grader | split | n | κ [95% CI] | κ of the decided | agreement | hand-wrong → correct | uncertain |"
          "\n|---|---|---|---|---|---|---|---|")
    for m in args.graders:
        for ds in ("truthfulqa", "strategyqa", "all"):
            for split in SPLITS:
                idx = [i for i, r in enumerate(found) if ds in ("all", r["dataset"])
                       and labels[(r["dataset"], r["question_id"], r["sha"])]["split"] == split]
                if not idx:
                    continue
                hand = [labels[(found[i]["dataset"], found[i]["question_id"], found[i]["sha"])]["label"] for i in idx]
                print(_row(f"{m} {ds}", split, scores(hand, [graded[m][i] for i in idx])))
    for m in args.graders:
        acc, n, misses = adversarial(m)
        print(f"\nadversarial ({n} answers we wrote), {m}: agreement {acc:.1%}; misses: "
              + ", ".join(f"{x['id']} ({x['tag']}: hand {x['hand']}, graded {x['grader']})" for x in misses))
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            for r in rows:
                lab = labels.get((r["dataset"], r["question_id"], r["sha"]), {})
                f.write(json.dumps({"dataset": r["dataset"], "question_id": r["question_id"], "sha": r["sha"],
                                    "question": r["item"]["question"], "correct": r["item"]["answers"],
                                    "incorrect": r["item"]["incorrect"], "answer": r["answer"],
                                    "hand": lab.get("label"), "split": lab.get("split"),
                                    "grades": {m: grade([r], m)[0] for m in args.graders}}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
