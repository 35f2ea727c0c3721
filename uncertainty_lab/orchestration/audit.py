"""``python -m uncertainty_lab.orchestration.audit``: every answer grader against our hand-labelled audit set
(``datasets/data/grader_audit.jsonl``) — accuracy, Cohen's κ and the confusion counts per grader — so the grader an
experiment uses can be chosen, and its report trusted, on evidence.

``--split dev|holdout`` keeps one part (``holdout``: answers written after the ``strict`` rules were frozen);
``--lexical`` skips the graders that load the embedding model; ``--disagreements NAME`` lists where one grader and
the hand labels differ. :func:`audit` is the same in code (notebook 04 calls it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..semantic.grading_audit import AUDIT_GRADERS, LEXICAL, audit_graders, audit_table, disagreements, make_grader
from ..table import Table

__all__ = ["audit", "main"]


def audit(graders: Sequence[str] | None = None, *, split: str | None = None, lexical: bool = False,
          embedder=None) -> Table:
    """The agreement table of ``graders`` (names of :data:`~uncertainty_lab.semantic.grading_audit.AUDIT_GRADERS`;
    default all, or with ``lexical`` those that need no embedding model) on the audit set (``split``: ``dev``,
    ``holdout`` or None for both)."""
    from ..datasets.audit import load_grader_audit

    items = load_grader_audit(split=split)
    names = list(graders) if graders is not None else [g for g in AUDIT_GRADERS if not lexical or g in LEXICAL]
    part = f"{split} split, " if split else ""
    return audit_table(audit_graders(names, items, embedder=embedder),
                       title=f"grader agreement with our hand labels ({part}{len(items)} answers)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m uncertainty_lab.orchestration.audit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "holdout"), help="one part of the audit set (default: both)")
    parser.add_argument("--lexical", action="store_true", help="only the graders that need no embedding model")
    parser.add_argument("--disagreements", metavar="NAME",
                        help="list the answers where this grader (a row of the table or a registered grader's name) "
                             "and the hand labels differ")
    args = parser.parse_args(argv)
    print(audit(split=args.split, lexical=args.lexical))
    if args.disagreements:
        from ..datasets.audit import load_grader_audit

        try:
            grader = make_grader(args.disagreements, what="--disagreements")
        except (LookupError, ValueError) as exc:
            parser.error(f"{exc}; the table's rows are {list(AUDIT_GRADERS)}")
        print()
        print(disagreements(grader, load_grader_audit(split=args.split)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
