"""Grading one submission: a fresh working folder, the instructor's checks put back, a guarded kernel in replay mode.

:func:`grade_submission` copies the student's notebook — only the notebook, not other files beside it — into a
folder of its own (nothing of the student's folder is touched), replaces its check cells by the instructor's (hidden tests included) by ``grade_id``, drops the cells after
the last check (cells run in order, so a later cell cannot change how a check went), puts a hidden first cell that
installs :mod:`.guard`, and runs it in a fresh kernel with ``UL_LLM=replay`` on its own copy of the class recording,
a per-cell timeout (a cell that runs over is interrupted and the next cell runs; after :data:`MAX_TIMEOUTS` the
kernel is stopped). The outcome is a plain dict (the per-submission result file's body): one entry per check
with ``points``, ``status`` and ``reason``. A student's problem is a status, never an exception here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat

from ..untrusted import excerpt
from . import ClassroomError, _meta, read_submission

__all__ = ["MAX_TIMEOUTS", "STATUSES", "checks_of", "grade_submission", "reference_embeddings"]

#: cells that may time out before the kernel is stopped (an interrupt the code ignores would cost a timeout a cell)
MAX_TIMEOUTS = 2
#: seconds the hidden first cell (the guard) may take, whatever the cells' timeout
GUARD_TIMEOUT = 120
#: the largest file a submission may write (RLIMIT_FSIZE), bytes
MAX_FILE_BYTES = 256 * 2**20
#: a check's status: passed, or why it scored 0 (a problem in an earlier cell names the check's status too)
STATUSES = ("passed", "failed", "missing", "timeout", "refused", "unrecorded", "not-run", "unreadable", "grader-error")
#: errors that name a problem rather than a wrong answer (the grader interrupts a cell only when it runs over)
_KIND = {"CellTimeoutError": "timeout", "KeyboardInterrupt": "timeout", "SubmissionRefused": "refused",
         "ReplayMissError": "unrecorded"}
_REASON_CHARS = 2000


def checks_of(teacher: nbformat.NotebookNode, graded: list) -> dict[str, tuple[str, float]]:
    """``{grade_id: (instructor source, points)}`` of the instructor notebook's checks."""
    return {g.grade_id: (teacher.cells[g.index].source, g.points) for g in graded if g.role == "check"}


def _prepared(nb: nbformat.NotebookNode, checks: dict[str, tuple[str, float]], guard: str) -> dict[str, int]:
    """Put the instructor's checks into ``nb``, drop the cells after the last one, put ``guard`` first; returns the
    index of each check cell found."""
    where = {}
    for i, cell in enumerate(nb.cells):
        meta = _meta(cell)
        if cell.cell_type == "code" and meta.get("grade") and meta.get("grade_id") in checks:
            if meta["grade_id"] not in where:  # a duplicated check counts once, where it first is
                cell.source = checks[meta["grade_id"]][0]
                where[meta["grade_id"]] = i
    last = max(where.values(), default=-1)
    nb.cells = [nbformat.v4.new_code_cell(guard)] + nb.cells[: last + 1]
    return {gid: i + 1 for gid, i in where.items()}


def _guard_source(work: Path, log: Path, read: list[str], cpu_seconds: int) -> str:
    """The hidden first cell: :mod:`.guard` loaded from its file (not the package, whose import is the notebook's)."""
    from . import guard

    return (f"import importlib.util as _ul_u\n_ul_s = _ul_u.spec_from_file_location('_ul_guard', {guard.__file__!r})\n"
            "_ul_g = _ul_u.module_from_spec(_ul_s)\n_ul_s.loader.exec_module(_ul_g)\n"
            f"_ul_g.install({str(work)!r}, read={tuple(read)!r}, log={str(log)!r}, cpu_seconds={cpu_seconds}, "
            f"file_bytes={MAX_FILE_BYTES})\ndel _ul_u, _ul_s, _ul_g")


def _error(cell) -> tuple[str, str] | None:
    """``(ename, "Name: value")`` of a cell's first error output, or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            name = str(out.get("ename", "Error"))
            text = f"{name}: {out['evalue']}" if out.get("evalue") else name
            if name == "KeyboardInterrupt":
                text = "the cell ran over the time limit and was interrupted (KeyboardInterrupt)"
            return name, excerpt(text, _REASON_CHARS, quote=False)
    return None


def _seconds(cell) -> float | None:
    meta = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.fromisoformat(meta["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(meta["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError, AttributeError):
        return None
    return round((end - start).total_seconds(), 2)


def _check_rows(nb, where: dict[str, int], checks: dict, refusals: list[str], stopped: str,
                timeouts: dict[int, str]) -> list[dict[str, Any]]:
    """One row per instructor check, from the executed ``nb`` (``timeouts``: the cells that ran over, by index; such a
    cell may have no error output, when the kernel was still busy with an earlier one)."""

    def error_of(i: int) -> tuple[str, str] | None:
        return ("CellTimeoutError", timeouts[i]) if i in timeouts else _error(nb.cells[i])

    rows = []
    for grade_id, (_, points) in checks.items():
        row = {"grade_id": grade_id, "points": 0.0, "max_points": points, "status": "passed", "reason": ""}
        rows.append(row)
        if grade_id not in where:
            row.update(status="missing", reason="the check cell was deleted from the submission")
            continue
        cell = nb.cells[where[grade_id]]
        error = error_of(where[grade_id])
        earlier = next((e for i in range(1, where[grade_id]) if (e := error_of(i)) and e[0] in _KIND), None)
        if refusals:
            row.update(status="refused", reason=f"{len(refusals)} access(es) refused; the first: the submission "
                                                 f"{excerpt(refusals[0], 500, quote=False)}")
        elif cell.get("execution_count") is None and not cell.get("outputs"):
            row.update(status="not-run", reason=stopped or "the kernel stopped before this check")
        elif error is None:
            row["points"] = points
        elif error[0] in _KIND:
            row.update(status=_KIND[error[0]], reason=error[1])
        elif earlier is not None:
            row.update(status=_KIND[earlier[0]], reason=f"{earlier[1]} (in an earlier cell); then the check: {error[1]}")
        else:
            row.update(status="failed", reason=error[1])
    return rows


def _run(nb, work: Path, env: dict[str, str], timeout: int) -> tuple[str, dict[int, str]]:
    """Execute ``nb`` (see the module doc); returns why it stopped early (or ``""``) and the cells that ran over."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from ..tour import execute

    timeouts: dict[int, str] = {}
    over = f"the cell ran over the {timeout} s limit and was interrupted"

    def on_executed(cell, cell_index, execute_reply, **_):
        if (execute_reply or {}).get("content", {}).get("ename") == "CellTimeoutError":
            timeouts[cell_index] = over
            if len(timeouts) >= MAX_TIMEOUTS:
                raise CellTimeoutError(f"{MAX_TIMEOUTS} cells ran over the {timeout} s limit (cells "
                                       f"{', '.join(map(str, timeouts))}); the kernel was stopped")

    try:
        execute(nb, cwd=work, env=env, timeout=timeout, allow_errors=True, interrupt_on_timeout=True,
                error_on_timeout={"ename": "CellTimeoutError", "evalue": over},
                on_cell_executed=on_executed, record_timing=True,
                timeout_func=lambda cell: GUARD_TIMEOUT if cell is nb.cells[0] else timeout)
    except CellTimeoutError as exc:
        return str(exc).splitlines()[0], timeouts
    except DeadKernelError:
        return "the kernel died (a CPU, file-size or memory limit, or a crash) before this check", timeouts
    return "", timeouts


def grade_submission(data: bytes, name: str, teacher_checks: dict, *, recording: Path, env: dict[str, str],
                     timeout: int, read_roots: list[str], embeddings: str | None = None) -> dict[str, Any]:
    """Grade the notebook ``data`` (file name ``name``) in a fresh folder; see the module doc."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ul-grade-") as folder:
        work, private = Path(folder, "work"), Path(folder, "private")
        work.mkdir()
        (private / "cache").mkdir(parents=True)
        shutil.copyfile(recording, private / "cache" / recording.name)  # its own copy: a kernel harms no other
        (work / name).write_bytes(data)
        try:
            nb = read_submission(work / name)
        except ClassroomError as exc:
            return _whole(teacher_checks, "unreadable", str(exc), start)
        log = private / "refusals.log"
        log.touch()
        code_cells = sum(c.cell_type == "code" for c in nb.cells)
        roots = [*read_roots, str(private / "cache")] + ([embeddings] if embeddings else [])
        guard = _guard_source(work, log, roots, 2 * timeout * (code_cells + 1))
        where = _prepared(nb, teacher_checks, guard)
        kernel_env = dict(env, UL_CACHE_DIR=str(private / "cache"))
        if embeddings:
            kernel_env["UL_EMBEDDINGS_FILE"] = embeddings
        cpu = _children_cpu()
        try:
            stopped, timeouts = _run(nb, work, kernel_env, timeout)
        except Exception as exc:  # a kernel that would not start: the grader's problem, not the student's
            return _whole(teacher_checks, "grader-error", f"{type(exc).__name__}: {excerpt(str(exc), 500)}", start)
        guard_error = _error(nb.cells[0])
        if guard_error is not None:
            return _whole(teacher_checks, "grader-error", f"the guard did not install: {guard_error[1]}", start)
        refusals = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line]
        rows = _check_rows(nb, where, teacher_checks, refusals, stopped, timeouts)
        cpu = round(_children_cpu() - cpu, 2)
    cells = [(i, s) for i, c in enumerate(nb.cells) if (s := _seconds(c)) is not None]
    return {"checks": rows, "stopped": stopped, "refusals": refusals[:20], "seconds": round(time.perf_counter() - start, 2),
            "kernel_cpu_seconds": cpu, "cell_seconds": cells, "status": _overall(rows)}


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children: a stopped kernel's, once it is reaped."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reference_embeddings(teacher: Path, target: Path, *, recording: Path, env: dict[str, str], timeout: int) -> str:
    """Run the instructor notebook ``teacher`` (up to its last check) on the recording and save the embeddings it
    computed to ``target`` (:func:`uncertainty_lab.embeddings.save_embeddings`), which every submission's kernel starts
    from: the same texts are never embedded twice, and a kernel whose texts are all there never loads the model.
    ``""`` when written; else why not (a failed run writes nothing, and grading then embeds as usual)."""
    nb = nbformat.read(teacher, as_version=4)
    last = max((i for i, c in enumerate(nb.cells) if _meta(c).get("grade")), default=-1)
    with tempfile.TemporaryDirectory(prefix="ul-reference-") as folder:
        out = Path(folder, "embeddings.npz")
        nb.cells = nb.cells[: last + 1] + [nbformat.v4.new_code_cell(
            f"from uncertainty_lab.embeddings import save_embeddings\nsave_embeddings({str(out)!r})")]
        (Path(folder, "cache")).mkdir()
        shutil.copyfile(recording, Path(folder, "cache", recording.name))
        try:
            _run(nb, Path(folder), dict(env, UL_CACHE_DIR=str(Path(folder, "cache"))), timeout)
        except Exception as exc:  # noqa: BLE001 - an optimisation: grading goes on without it, and says why
            return f"{type(exc).__name__}: {excerpt(str(exc), 300)}"
        if not out.is_file():
            return "it wrote no embeddings"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(out, target)
    return ""


def _whole(checks: dict, status: str, reason: str, start: float) -> dict[str, Any]:
    """Every check at 0 with one ``status`` and ``reason`` (a submission that could not run)."""
    rows = [{"grade_id": g, "points": 0.0, "max_points": p, "status": status, "reason": reason}
            for g, (_, p) in checks.items()]
    return {"checks": rows, "stopped": reason, "refusals": [], "seconds": round(time.perf_counter() - start, 2),
            "cell_seconds": [], "status": status}


def _overall(rows: list[dict[str, Any]]) -> str:
    """The submission's status: the first problem among its checks' statuses, else ``graded``."""
    for status in ("grader-error", "refused", "timeout", "unrecorded", "not-run"):
        if any(r["status"] == status for r in rows):
            return status
    return "graded"
