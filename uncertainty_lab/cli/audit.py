"""``uncertainty-lab audit OUT_DIR``: hand-label a stratified sample of an orchestration run's answers and see how far
its grader (and others) agree, and the run's accuracy corrected for the grader's errors.

Labels go to ``OUT_DIR/audit/labels.jsonl`` (appended; an interrupted session keeps every label given; a rerun
offers only the answers still unlabelled). Without ``--labels``, ``--export`` or ``--report`` it asks in the
terminal, one answer at a time (keys c / w / r / s / q, then Enter); the grader's verdict is not shown, so the
labels are blind to it.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from typing import Any

from .run import plain

#: the strata ``--by`` offers (:data:`uncertainty_lab.orchestration.hand_labels.STRATA`, spelt here so that building
#: the command line imports no lab)
BY = ("label", "category", "source")
PROMPT = "label? [c]orrect [w]rong [r]efused [s]kip [q]uit: "


def show(answer: Any, position: str) -> str:
    """One answer as the labeller reads it: the question, the references, the answer (not the grader's verdict)."""
    refs = answer.references("answers")
    wrong = answer.references("incorrect")
    lines = [f"\n[{position}] {answer.id} ({answer.item.get('category') or '?'}; in {', '.join(answer.runs)})",
             f"question: {answer.item.get('question', '')}",
             f"correct references: {' | '.join(refs) if refs else '(none)'}",
             f"incorrect references: {' | '.join(wrong) if wrong else '(none)'}"]
    if answer.item.get("behaviour") == "decline":
        lines.append("(this item asks to be declined: a refusal is the right answer)")
    lines.append(f"answer: {answer.text}")
    return "\n".join(lines)


def label_interactively(todo: list[Any], store: Any, labeller: str, *, read: Callable[[], str] | None = None,
                        write: Callable[[str], None] = print) -> int:
    """Ask for a label of each answer in ``todo`` (``read``: one line of input, default from stdin), saving each in
    ``store`` at once; ``s`` skips, ``q`` or the end of the input stops. Returns how many labels were saved."""
    from ..orchestration.hand_labels import KEYS

    read = read or (lambda: sys.stdin.readline())
    saved = 0
    for i, answer in enumerate(todo, start=1):
        write(show(answer, f"{i}/{len(todo)}"))
        while True:
            write(PROMPT)
            line = read()
            key = line.strip().lower()[:1]
            if not line or key == "q":
                return saved
            if key == "s" or key in KEYS:
                break
            write(f"'{line.strip()}' is not a key: type c, w, r, s or q, then Enter")
        if key in KEYS:
            store.add(answer, key, labeller)
            saved += 1
    return saved


def _import(answers: Any, store: Any, path: str, labeller: str) -> None:
    from ..orchestration.hand_labels import read_label_file

    labels, problems = read_label_file(path, labeller)
    resolved = store.resolve(answers, labels)
    have = {(h.key, h.label) for h in store.resolve(answers).usable.values()}
    new = [h for h in resolved.usable.values() if (h.key, h.label) not in have]
    store.write(new)
    for line in problems:
        print(f"warning: {line}", file=sys.stderr)
    print(f"imported {len(new)} new label(s) from {path} into {store.path}; {len(resolved.usable) - len(new)} "
          f"already there; not imported: {len(resolved.stale)} stale (the answer changed since the export), "
          f"{len(resolved.unknown)} of questions these runs do not hold")


def _session(args, answers: Any, store: Any) -> str | None:
    """The labelling part of the command; returns what to print before the report (None: nothing)."""
    from ..orchestration.hand_labels import export_sample

    if args.labels:
        _import(answers, store, args.labels, args.labeller)
        return None
    sample = answers.sample(args.sample, seed=args.seed, by=args.by)
    resolved = store.resolve(answers)
    if args.export:
        path = export_sample(sample, args.export, resolved, by=args.by)
        return f"wrote the sample of {len(sample)} answers to {path}; fill its label column and pass it to --labels"
    if args.report:
        return None
    todo = [a for a in sample if a.key not in resolved.usable]
    print(f"{len(sample) - len(todo)} of the {len(sample)} sampled answers are labelled; {len(todo)} to go "
          f"(labels go to {store.path})")
    saved = label_interactively(todo, store, args.labeller)
    return f"saved {saved} label(s) to {store.path}"


def cmd_audit(args) -> int:
    """Run the command; a missing run, a bad file or a bad argument is one ``error:`` line naming it, exit 1."""
    from ..orchestration.audit_report import GRADER_NAMES, audit_report
    from ..orchestration.errors import OrchestrationError
    from ..orchestration.hand_labels import LabelStore, load_answers

    unknown = [g for g in args.graders if g not in GRADER_NAMES]
    if unknown:
        print(f"error: --graders {' '.join(unknown)}: no such grader; choose from {', '.join(GRADER_NAMES)}",
              file=sys.stderr)
        return 1
    try:
        answers = load_answers(args.out_dir)
        store = LabelStore(answers.labels_path)
        message = _session(args, answers, store)
        if message:
            print(message)
        if args.export and not args.report:
            return 0
        resolved = store.resolve(answers)
        for line in store.problems:
            print(f"warning: {line}", file=sys.stderr)
        print(audit_report(answers, resolved, args.graders, by=args.by, seed=args.seed, n_boot=args.bootstrap))
    except (FileNotFoundError, FileExistsError, ValueError, OrchestrationError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; every label given so far is saved: rerun to go on", file=sys.stderr)
        return 130
    return 0


def _at_least(low: int):
    """An argparse type: an integer ≥ ``low``."""
    def parse(text: str) -> int:
        import argparse

        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}, got {text!r}")
        return value
    return parse


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    p = sub.add_parser("audit", help="hand-label a sample of an orchestration run's answers; grader agreement and "
                                     "the accuracy corrected for grader error",
                       description=plain(__doc__.split("\n\n")[0]))
    p.add_argument("out_dir", metavar="OUT_DIR", help="the out_dir of 'uncertainty-lab orchestrate run'")
    p.add_argument("--sample", type=_at_least(1), default=40, metavar="N",
                   help="how many distinct answers to sample (default 40; a larger N with the same seed keeps the "
                        "smaller sample)")
    p.add_argument("--seed", type=_at_least(0), default=0, help="the sample's seed (default 0)")
    p.add_argument("--by", choices=BY, default="label",
                   help="strata: the grader's label (default), or the label and the item's category / data set")
    p.add_argument("--graders", nargs="*", default=[], metavar="NAME",
                   help="other graders to compare with the hand labels: strict, strict+embedding, hassum, contains, "
                        "normalised, embedding (the embedding ones load the sentence-embedding model)")
    p.add_argument("--labels", metavar="FILE", help="import the labels of a CSV (the --export file, label column "
                                                    "filled with c/w/r) instead of asking")
    p.add_argument("--export", metavar="FILE", help="write the sample as a CSV to label in a spreadsheet (a new file)")
    p.add_argument("--report", action="store_true", help="only print the report of the labels so far")
    p.add_argument("--labeller", default=_user(), help="who labels (default: the login name)")
    p.add_argument("--bootstrap", type=_at_least(1), default=2000, metavar="B",
                   help="bootstrap resamples for the intervals (default 2000)")
    p.set_defaults(func=cmd_audit)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "anonymous"
