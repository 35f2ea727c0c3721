"""Classroom versions of the lab notebooks: nbgrader-style exercises and a student copy without solutions.

    python -m uncertainty_lab.classroom [NOTEBOOK_DIR] [--out build/student]      (``make student``)
    python -m uncertainty_lab.classroom grade SUBMISSION.ipynb [--source notebooks]

The markers and cell metadata are nbgrader's, so an instructor who uses nbgrader can run
``nbgrader generate_assignment`` on the same notebooks; this module does the one step a class needs
without it. An **exercise** is a code cell with ``metadata.nbgrader.solution = true``; the lines between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` become ``# YOUR CODE HERE`` and ``raise
NotImplementedError()`` at the marker's indentation. A **check** is a code cell with
``metadata.nbgrader.grade = true``; the lines between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN
TESTS`` are left out of the student copy. Outputs and execution counts are cleared.

In the lab notebooks an exercise defines a function and the check after it calls that function, so in a
student copy the only errors are ``NotImplementedError`` raised from an exercise, and the rest of the
notebook (which never uses the student's functions) runs as before.

**Grading** puts the instructor's check cells (hidden tests included) back into a submission by
``grade_id``, runs it in a fresh kernel, and gives each check its points when its cell raised nothing.
:func:`grade` does it for one notebook with the live model; a whole class (``uncertainty-lab class grade``: replayed
answers, a guarded kernel per submission in a folder of its own, in parallel, resumable, a gradebook and feedback
pages) is :mod:`.grading`, with :mod:`.submission` (one submission), :mod:`.guard` (inside the kernel) and
:mod:`.gradebook` (the files written).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .. import untrusted

__all__ = [
    "CheckResult",
    "ClassroomError",
    "GradedCell",
    "clear_solutions",
    "grade",
    "graded_cells",
    "main",
    "remove_hidden_tests",
    "student_version",
    "write_student_versions",
]

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
_MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)


class ClassroomError(ValueError):
    """A notebook's exercise markers or metadata are malformed; the message names the cell and the fix."""


@dataclass(frozen=True)
class GradedCell:
    """One exercise (``role="solution"``) or check (``role="check"``) cell of a notebook."""

    index: int
    role: str
    grade_id: str
    points: float


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _regions(lines: list[str], begin: str, end: str, where: str) -> list[tuple[int, int]]:
    """(begin, end) line indices of each ``begin``…``end`` region; unbalanced or nested markers raise."""
    regions, start = [], None
    for i, line in enumerate(lines):
        text = line.strip()
        if text == begin:
            if start is not None:
                raise ClassroomError(f"{where}: {begin!r} on line {i + 1} inside another one opened on line "
                                     f"{start + 1}; close it with {end!r} first")
            start = i
        elif text == end:
            if start is None:
                raise ClassroomError(f"{where}: {end!r} on line {i + 1} without a {begin!r} before it")
            regions.append((start, i))
            start = None
    if start is not None:
        raise ClassroomError(f"{where}: {begin!r} on line {start + 1} is never closed; add {end!r}")
    return regions


def clear_solutions(source: str, where: str = "cell") -> str:
    """``source`` with each solution region replaced by the stub, indented like its ``### BEGIN`` line."""
    lines = source.splitlines()
    regions = _regions(lines, BEGIN_SOLUTION, END_SOLUTION, where)
    if not regions:
        raise ClassroomError(f"{where}: an exercise cell needs a {BEGIN_SOLUTION!r} … {END_SOLUTION!r} region")
    for start, end in reversed(regions):
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        lines[start:end + 1] = [indent + s for s in STUB]
    return "\n".join(lines)


def remove_hidden_tests(source: str, where: str = "cell") -> str:
    """``source`` without its hidden-test regions (markers included)."""
    lines = source.splitlines()
    for start, end in reversed(_regions(lines, BEGIN_HIDDEN, END_HIDDEN, where)):
        del lines[start:end + 1]
    return "\n".join(lines)


def graded_cells(nb: nbformat.NotebookNode, name: str = "notebook") -> list[GradedCell]:
    """The exercise and check cells of ``nb``, validated: markers only where the metadata allows them,
    balanced, unique ``grade_id``s, and every exercise followed (before the next exercise) by a check."""
    found, seen = [], {}
    for i, cell in enumerate(nb.cells):
        meta, where = _meta(cell), f"{name}, cell {i}"
        source = cell.get("source", "")
        solution, grade = bool(meta.get("solution")), bool(meta.get("grade"))
        has = {m for m in _MARKERS if any(line.strip() == m for line in source.splitlines())}
        if has & {BEGIN_SOLUTION, END_SOLUTION} and not solution:
            raise ClassroomError(f"{where} has solution markers but no metadata nbgrader.solution = true; "
                                 "mark it as an exercise or remove the markers")
        if has & {BEGIN_HIDDEN, END_HIDDEN} and not grade:
            raise ClassroomError(f"{where} has hidden-test markers but no metadata nbgrader.grade = true; "
                                 "mark it as a check or remove the markers")
        if not (solution or grade):
            continue
        if cell.cell_type != "code":
            raise ClassroomError(f"{where}: exercises and checks are code cells here, not {cell.cell_type}")
        if solution and grade:
            raise ClassroomError(f"{where}: a cell is an exercise or a check, not both; split it in two")
        grade_id = meta.get("grade_id")
        if not grade_id:
            raise ClassroomError(f"{where}: set metadata nbgrader.grade_id to a name unique in the notebook")
        if grade_id in seen:
            raise ClassroomError(f"{where}: grade_id {grade_id!r} is used by cell {seen[grade_id]} too; rename one")
        seen[grade_id] = i
        if solution:
            clear_solutions(source, where)
        else:
            remove_hidden_tests(source, where)
        found.append(GradedCell(i, "solution" if solution else "check", grade_id, float(meta.get("points", 0))))
    for k, a in enumerate(found):
        if a.role == "solution" and (k + 1 == len(found) or found[k + 1].role != "check"):
            raise ClassroomError(f"{name}: exercise {a.grade_id!r} (cell {a.index}) has no check cell after it; "
                                 "add a cell with metadata nbgrader.grade = true that calls the exercise")
    return found


def student_version(nb: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """A copy of ``nb`` for students: solutions stubbed, hidden tests removed, outputs cleared."""
    graded = {g.index: g for g in graded_cells(nb, name)}
    out = copy.deepcopy(nb)
    for i, cell in enumerate(out.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if i in graded:
            where = f"{name}, cell {i}"
            if graded[i].role == "solution":
                cell.source = clear_solutions(cell.source, where)
            else:
                cell.source = remove_hidden_tests(cell.source, where)
    out.metadata.pop("widgets", None)
    return out


def write_student_versions(notebooks: str | Path, out: str | Path) -> list[Path]:
    """Write the student version of every ``*.ipynb`` in ``notebooks`` into ``out``; returns the paths.
    Every notebook is checked before anything is written, so a malformed one leaves ``out`` untouched."""
    notebooks, out = Path(notebooks), Path(out)
    paths = sorted(notebooks.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    versions = [(p, student_version(nbformat.read(p, as_version=4), p.name)) for p in paths]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path, nb in versions:
        nbformat.validate(nb)
        nbformat.write(nb, out / path.name)
        written.append(out / path.name)
    return written


@dataclass(frozen=True)
class CheckResult:
    """How one check of a graded submission went: ``error`` is ``"Name: message"`` or empty."""

    grade_id: str
    points: float
    max_points: float
    error: str


#: the largest submitted notebook read (bytes)
MAX_SUBMISSION_BYTES = 64 * 2**20


def read_submission(path: str | os.PathLike) -> nbformat.NotebookNode:
    """A student's notebook through the bounded reader (a regular file of at most :data:`MAX_SUBMISSION_BYTES`,
    nesting checked before parsing); a file that is not a notebook is a :class:`ClassroomError` naming it."""
    try:
        text = untrusted.read_text(path, what="the submission", max_bytes=MAX_SUBMISSION_BYTES)
        untrusted.load_json(text, path)
        return nbformat.reads(text, as_version=4)
    except (ValueError, KeyError, TypeError, AttributeError, nbformat.reader.NotJSONError,
            nbformat.ValidationError) as exc:  # what nbformat raises on a file that is JSON but no notebook
        raise ClassroomError(f"{untrusted.excerpt(str(path), 200, quote=False)} is not a notebook that can be "
                             f"graded ({untrusted.excerpt(str(exc), 200, quote=False)}); ask for the .ipynb file "
                             "again") from None


def grade(submission: str | Path, source: str | Path = "notebooks", *, env: dict[str, str] | None = None,
          timeout: int | None = None) -> list[CheckResult]:
    """Grade ``submission`` against the notebook of the same name in ``source``: its check cells are replaced
    by the instructor's (hidden tests included), it runs in a fresh kernel in the submission's folder, and a
    check scores its points when its cell raised nothing. A check missing from the submission scores 0."""
    from ..tour import CELL_TIMEOUT, execute

    submission = Path(submission)
    original = Path(source) / submission.name
    if not original.is_file():
        raise FileNotFoundError(f"no instructor notebook {original} for {submission.name}; pass --source, the "
                                "folder of the notebooks with solutions")
    teacher = nbformat.read(original, as_version=4)
    checks = {c.grade_id: c for c in graded_cells(teacher, original.name) if c.role == "check"}
    nb = read_submission(submission)
    where = {}
    for i, cell in enumerate(nb.cells):
        grade_id = _meta(cell).get("grade_id")
        if grade_id in checks and _meta(cell).get("grade"):
            cell.source = teacher.cells[checks[grade_id].index].source
            where[grade_id] = i
    execute(nb, cwd=submission.parent, env=env, timeout=timeout or CELL_TIMEOUT, allow_errors=True)
    results = []
    for grade_id, check in checks.items():
        if grade_id not in where:
            results.append(CheckResult(grade_id, 0.0, check.points, "missing: the check cell was deleted"))
            continue
        errors = [o for o in nb.cells[where[grade_id]].get("outputs", []) if o.get("output_type") == "error"]
        error = f"{errors[0]['ename']}: {errors[0]['evalue']}" if errors else ""
        results.append(CheckResult(grade_id, 0.0 if error else check.points, check.points, error))
    return results


def _count(path: Path) -> str:
    roles = [g.role for g in graded_cells(nbformat.read(path, as_version=4), path.name)]
    return f"{roles.count('solution')} exercises, {roles.count('check')} checks"


def _student_lines(argv: list[str]) -> list[str]:
    parser = argparse.ArgumentParser(
        prog="python -m uncertainty_lab.classroom",
        description="Write student versions of the notebooks: solutions stubbed, hidden tests removed.")
    parser.add_argument("notebooks", nargs="?", default="notebooks", help="folder of notebooks (default: notebooks)")
    parser.add_argument("--out", default="build/student", help="output folder (default: build/student)")
    args = parser.parse_args(argv)
    return [f"wrote {path} ({_count(Path(args.notebooks) / path.name)})"
            for path in write_student_versions(args.notebooks, args.out)]


def _grade_lines(argv: list[str]) -> list[str]:
    parser = argparse.ArgumentParser(prog="python -m uncertainty_lab.classroom grade",
                                     description="Grade a submission with the instructor's checks, hidden ones included.")
    parser.add_argument("submission", help="a student's notebook")
    parser.add_argument("--source", default="notebooks", help="the folder of the instructor notebooks (default: notebooks)")
    args = parser.parse_args(argv)
    results = grade(args.submission, args.source)
    return [f"{r.grade_id}: {r.points:g}/{r.max_points:g}" + (f"  ({r.error})" if r.error else "") for r in results] + [
        f"total: {sum(r.points for r in results):g}/{sum(r.max_points for r in results):g}"]


def main(argv: list[str] | None = None) -> int:
    """``[NOTEBOOK_DIR] [--out DIR]`` writes the student copies; ``grade SUBMISSION [--source DIR]`` grades one.
    A malformed notebook or a missing file is one ``error:`` line and exit code 2."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        lines = _grade_lines(argv[1:]) if argv[:1] == ["grade"] else _student_lines(argv)
    except (FileNotFoundError, ClassroomError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
