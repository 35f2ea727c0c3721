"""``uncertainty-lab class``: ``student`` (the student copies of the notebooks) and ``grade`` (a whole class)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..executors.plan import EXECUTORS

__all__ = ["add_parser", "cmd_class"]


def _student(args) -> int:
    from ..classroom import main as classroom_main

    return classroom_main([args.notebooks, "--out", args.out])


def _progress_line(done: int, total: int, label: str, seconds: float) -> None:
    print(f"[{done}/{total}] {label} ({seconds:.1f} s)", file=sys.stderr, flush=True)


def _grade(args) -> int:
    from ..classroom import ClassroomError
    from ..classroom.grading import GradingError, grade_class
    from ..outdir import OutDirError

    tty = sys.stderr.isatty()
    try:
        book = grade_class(submitted=args.submitted, source=args.source, recording=args.recording,
                           out_dir=args.out, timeout=args.timeout, fast=args.fast, executor=args.executor,
                           workers=args.workers, scheduler=args.scheduler, progress=tty,
                           log=None if tty else _progress_line)
    except (GradingError, ClassroomError, OutDirError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(book.report())
    shown = [p for k, p in book.files.items() if not k.startswith("feedback:")]
    pages = sum(k.startswith("feedback:") for k in book.files)
    print("\nwrote " + ", ".join(map(str, shown)) + f" and {pages} feedback page(s) in {Path(args.out) / 'feedback'}")
    return 0


def cmd_class(args) -> int:
    return _student(args) if args.action == "student" else _grade(args)


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    from ..classroom.grading import DEFAULT_TIMEOUT

    p = sub.add_parser("class", help="run a class: student copies of the notebooks, grading every submission")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    student = actions.add_parser("student", help="write the student copies: solutions stubbed, hidden tests removed")
    student.add_argument("notebooks", nargs="?", default="notebooks", help="the instructor notebooks (notebooks)")
    student.add_argument("--out", default="build/student", help="output folder (build/student)")
    grade = actions.add_parser(
        "grade", help="grade submitted/<student>/<lab>/<notebook>.ipynb against the class recording",
        description="Grade every submission in nbgrader's layout SUBMITTED_DIR/<student>/<lab>/<notebook>.ipynb: each "
                    "runs in a fresh folder and a guarded kernel with the instructor's checks (hidden tests included), "
                    "replaying the class recording (no model runs). Writes gradebook.csv, summary.md and "
                    "feedback/<student>.html; a rerun grades only what changed.")
    grade.add_argument("submitted", nargs="?", default="submitted", help="the submissions folder (submitted)")
    grade.add_argument("--source", default="notebooks", help="the instructor notebooks, matched by file name (notebooks)")
    grade.add_argument("--recording", default="class.sqlite",
                       help="the class recording, as `uncertainty-lab cache export` wrote it (class.sqlite)")
    grade.add_argument("--out", default="grades", help="output folder (grades)")
    grade.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                       help=f"seconds one cell may run before it is interrupted ({DEFAULT_TIMEOUT})")
    grade.add_argument("--executor", choices=EXECUTORS, default="processes",
                       help="where the kernels are driven from: processes (default), dask or serial")
    grade.add_argument("--workers", type=int, default=None, help="submissions graded at once (the CPU count)")
    grade.add_argument("--scheduler", default=None, help="a running dask scheduler (with --executor dask)")
    mode = grade.add_mutually_exclusive_group()
    mode.add_argument("--fast", dest="fast", action="store_const", const=True, default=None,
                      help="fast mode (UL_FAST=1); default: the mode the recording holds (full when both or unsaid)")
    mode.add_argument("--full", dest="fast", action="store_const", const=False, help="full mode (UL_FAST unset)")
    p.set_defaults(func=cmd_class)
