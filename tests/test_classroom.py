"""Classroom versions: the nbgrader-style converter on small notebooks, then the real lab notebooks — every lab
has exercises with checks. The replay of a recorded class (every student copy run offline on the instructor's
answers) is in ``test_notebooks.py``, beside the recording it replays."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from class_recording import RELATIVE_CACHE

from uncertainty_lab.classroom import (
    ClassroomError,
    clear_solutions,
    grade,
    graded_cells,
    main,
    remove_hidden_tests,
    student_version,
    write_student_versions,
)
from uncertainty_lab.tour import errors_of, execute, kernel_env

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LABS = sorted(p for p in NOTEBOOKS.glob("0[1-5]_*.ipynb"))
MIN_EXERCISES = 2  # "a few per lab"


def exercise(source: str, grade_id: str = "ex_double") -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": True, "task": False}})


def check(source: str, grade_id: str = "check_double") -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": True, "grade_id": grade_id, "locked": True, "points": 1, "schema_version": 3, "solution": False,
        "task": False}})


DOUBLE = '''def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    y = x + x
    return y
    ### END SOLUTION'''
CHECK = '''assert double(2) == 4
### BEGIN HIDDEN TESTS
assert double(-3) == -6, "negative numbers"
### END HIDDEN TESTS
print("ok")'''


def tiny_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Tiny"), exercise(DOUBLE), check(CHECK),
                nbformat.v4.new_code_cell("print('after')")]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="old output")]
    nb.cells[1].execution_count = 3
    return nb


# --- the converter -------------------------------------------------------------------------------------

def test_solution_becomes_a_stub_at_the_marker_indentation():
    assert clear_solutions(DOUBLE) == ('def double(x):\n    """Twice x."""\n'
                                       "    # YOUR CODE HERE\n    raise NotImplementedError()")
    two = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n  ### BEGIN SOLUTION\n  c\n  ### END SOLUTION"
    assert clear_solutions(two) == ("# YOUR CODE HERE\nraise NotImplementedError()\nb = 2\n"
                                    "  # YOUR CODE HERE\n  raise NotImplementedError()")


def test_hidden_tests_are_removed_with_their_markers():
    assert remove_hidden_tests(CHECK) == 'assert double(2) == 4\nprint("ok")'
    assert remove_hidden_tests("x = 1") == "x = 1"


@pytest.mark.parametrize("source, match", [
    ("### BEGIN SOLUTION\nx", "never closed"),
    ("x\n### END SOLUTION", "without a '### BEGIN SOLUTION'"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside another one opened on line 1"),
    ("x = 1", "needs a '### BEGIN SOLUTION'"),
])
def test_malformed_solution_regions_are_named(source, match):
    with pytest.raises(ClassroomError, match=match):
        clear_solutions(source, "nb, cell 4")


def test_student_version_stubs_hides_and_clears_without_touching_the_original():
    nb = tiny_notebook()
    before = nbformat.writes(nb)
    student = student_version(nb, "tiny.ipynb")
    assert nbformat.writes(nb) == before
    assert "raise NotImplementedError()" in student.cells[1].source and "x + x" not in student.cells[1].source
    assert "double(-3)" not in student.cells[2].source and "double(2) == 4" in student.cells[2].source
    assert student.cells[1].outputs == [] and student.cells[1].execution_count is None
    assert student.cells[3].source == nb.cells[3].source
    assert [(g.index, g.role, g.grade_id) for g in graded_cells(nb)] == [
        (1, "solution", "ex_double"), (2, "check", "check_double")]


def test_student_version_runs_into_not_implemented_at_the_check(tmp_path):
    """The shape every lab exercise has: the exercise cell defines, the check calls, later cells still run."""
    student = student_version(tiny_notebook())
    execute(student, cwd=tmp_path, env=kernel_env(fast=True), timeout=60, allow_errors=True)
    errors = errors_of(student)
    assert len(errors) == 1 and errors[0].startswith("cell 2: NotImplementedError"), errors
    assert student.cells[3].outputs[0]["text"] == "after\n"


@pytest.mark.parametrize("mutate, match", [
    (lambda nb: nb.cells[1].metadata.pop("nbgrader"), "solution markers but no metadata nbgrader.solution"),
    (lambda nb: nb.cells[2].metadata.pop("nbgrader"), "hidden-test markers but no metadata nbgrader.grade"),
    (lambda nb: nb.cells[2].metadata.nbgrader.update(grade_id="ex_double"), "grade_id 'ex_double' is used by cell 1"),
    (lambda nb: nb.cells[1].metadata.nbgrader.update(grade_id=""), "set metadata nbgrader.grade_id"),
    (lambda nb: nb.cells.pop(2), "exercise 'ex_double' \\(cell 1\\) has no check cell after it"),
    (lambda nb: nb.cells[1].metadata.nbgrader.update(grade=True), "an exercise or a check, not both"),
    (lambda nb: nb.cells.insert(1, nbformat.v4.new_markdown_cell("answer", metadata=nb.cells[1].metadata)),
     "code cells here, not markdown"),
])
def test_malformed_exercise_notebooks_are_refused(mutate, match):
    nb = tiny_notebook()
    mutate(nb)
    with pytest.raises(ClassroomError, match=match):
        student_version(nb, "tiny.ipynb")


def test_nothing_is_written_when_one_notebook_is_malformed(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    nbformat.write(tiny_notebook(), src / "a.ipynb")
    bad = tiny_notebook()
    bad.cells.pop(2)
    nbformat.write(bad, src / "b.ipynb")
    with pytest.raises(ClassroomError, match="b.ipynb"):
        write_student_versions(src, out)
    assert not out.exists()
    assert main([str(src), "--out", str(out)]) == 2
    (src / "b.ipynb").unlink()
    assert main([str(src), "--out", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == ["a.ipynb"]
    with pytest.raises(FileNotFoundError, match="no notebooks"):
        write_student_versions(tmp_path / "empty", out)


def test_make_student_writes_every_notebook(tmp_path):
    out = tmp_path / "student"
    done = subprocess.run(["make", "--no-print-directory", "student", f"STUDENT_OUT={out}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in out.glob("*.ipynb")) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    for lab in LABS:
        assert f"{lab.name} (" in done.stdout and "exercises" in done.stdout
        text = (out / lab.name).read_text(encoding="utf-8")
        assert "### BEGIN SOLUTION" not in text and "### BEGIN HIDDEN TESTS" not in text
        assert "raise NotImplementedError()" in text


def test_grading_uses_the_hidden_tests_and_scores_each_check(tmp_path, capsys):
    source, submissions = tmp_path / "source", tmp_path / "submitted"
    source.mkdir()
    submissions.mkdir()
    nbformat.write(tiny_notebook(), source / "tiny.ipynb")
    env = kernel_env(fast=True)

    def submit(body: str | None) -> Path:
        nb = student_version(tiny_notebook())
        if body is not None:
            nb.cells[1].source = nb.cells[1].source.replace("    # YOUR CODE HERE\n    raise NotImplementedError()", body)
        path = submissions / "tiny.ipynb"
        nbformat.write(nb, path)
        return path

    (solved,) = grade(submit("    return 2 * x"), source, env=env, timeout=60)
    assert (solved.grade_id, solved.points, solved.max_points, solved.error) == ("check_double", 1.0, 1.0, "")
    # passes the visible check (double(2) == 4) but not the hidden one (double(-3) == -6)
    (sloppy,) = grade(submit("    return 4 if x == 2 else 0"), source, env=env, timeout=60)
    assert sloppy.points == 0.0 and sloppy.error == "AssertionError: negative numbers"
    (unsolved,) = grade(submit(None), source, env=env, timeout=60)
    assert unsolved.points == 0.0 and unsolved.error.startswith("NotImplementedError")
    deleted = student_version(tiny_notebook())
    deleted.cells.pop(2)
    nbformat.write(deleted, submissions / "tiny.ipynb")
    (missing,) = grade(submissions / "tiny.ipynb", source, env=env, timeout=60)
    assert missing.points == 0.0 and "deleted" in missing.error
    assert main(["grade", str(submit("    return x + x")), "--source", str(source)]) == 0
    assert capsys.readouterr().out.splitlines() == ["check_double: 1/1", "total: 1/1"]
    assert main(["grade", str(submissions / "tiny.ipynb"), "--source", str(tmp_path)]) == 2
    assert "no instructor notebook" in capsys.readouterr().err


# --- the lab notebooks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", LABS, ids=[p.name for p in LABS])
def test_every_lab_has_a_few_exercises_each_with_a_check(path):
    graded = graded_cells(nbformat.read(path, as_version=4), path.name)
    solutions = [g for g in graded if g.role == "solution"]
    assert len(solutions) >= MIN_EXERCISES, f"{path.name} has {len(solutions)} exercises"
    checks = [g for g in graded if g.role == "check"]
    assert all(c.points > 0 for c in checks)


def test_kernels_and_the_lab_get_the_cache_folder_meant_where_the_command_ran(tmp_path, monkeypatch):
    """A relative UL_CACHE_DIR means the folder the command was started in: the tour's and the grader's kernels
    (kernel_env) and `uncertainty-lab lab` (whose kernels start in the notebooks' folder) get it as an absolute path."""
    from uncertainty_lab.cli import main as cli_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UL_CACHE_DIR", RELATIVE_CACHE)
    assert kernel_env()["UL_CACHE_DIR"] == str(tmp_path / RELATIVE_CACHE)
    assert kernel_env(cache_dir="other")["UL_CACHE_DIR"] == str(tmp_path / "other")
    assert kernel_env(cache_dir="~/c")["UL_CACHE_DIR"] == str(Path.home() / "c")
    monkeypatch.delenv("UL_CACHE_DIR")
    assert "UL_CACHE_DIR" not in kernel_env(base={"PATH": ""})  # unset stays unset: the user cache
    monkeypatch.setenv("UL_CACHE_DIR", RELATIVE_CACHE)
    seen = []
    monkeypatch.setattr(os, "execvp", lambda file, argv: seen.append(os.environ["UL_CACHE_DIR"]))
    assert cli_main(["lab", str(NOTEBOOKS), "--no-browser"]) == 0
    assert seen == [str(tmp_path / RELATIVE_CACHE)]


@pytest.mark.parametrize("content, why", [
    (b"[" * 100_000 + b"]" * 100_000, "nested 100000 levels deep"),
    (b"\xff\xfe not json", "not UTF-8"),
    (b'{"cells": "not a list"}', "could not be converted"),
])
def test_a_hostile_submission_is_one_error_naming_it(tmp_path, content, why):
    from uncertainty_lab.classroom import read_submission

    path = tmp_path / "03_semantic_uncertainty.ipynb"
    path.write_bytes(content)
    with pytest.raises(ClassroomError, match=f"03_semantic_uncertainty.ipynb is not a notebook that can be graded.*{why}"):
        read_submission(path)
    os.remove(path)
    os.mkfifo(path)
    with pytest.raises(ClassroomError, match="named pipe"):
        read_submission(path)
