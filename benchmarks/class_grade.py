"""Grading a class of lab 03 (issue #24: 60 submissions in ≤ 10 minutes on a 2-core machine).

Makes ``--n`` submissions of ``notebooks/03_semantic_uncertainty.ipynb`` in nbgrader's layout
(``submitted/student-NN/lab03/…``): a third solved (the instructor's solutions), a third unsolved (the student copy),
a third partly solved (the first exercise only), and one hostile (it deletes a sentinel file outside its folder);
grades them with ``uncertainty-lab class grade`` on the class recording, and reports the wall time and where a
submission's time goes (kernel start, the guard cell, each notebook cell; the kernel's CPU seconds, which a busy
shared machine does not inflate). The recording is made first when ``--recording`` is not given: the tour of
notebook 03 alone, with the embedded model, in the mode graded (a few minutes). Usage, from the repository root:

    python benchmarks/class_grade.py [--n 60] [--workers 2] [--recording class03.sqlite] [--fast] [--write]

``--write`` replaces the "Grading a class" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine  # noqa: E402
from uncertainty_lab.classroom import graded_cells, student_version  # noqa: E402

LAB = "03_semantic_uncertainty.ipynb"
SECTION = "## Grading a class — `benchmarks/class_grade.py`"


def make_submissions(folder: Path, n: int, sentinel: Path) -> dict[str, int]:
    """``n`` submissions of lab 03 under ``folder``; returns how many of each kind."""
    teacher = nbformat.read(ROOT / "notebooks" / LAB, as_version=4)
    student = student_version(teacher, LAB)
    first = next(g for g in graded_cells(teacher, LAB) if g.role == "solution")
    partly = nbformat.from_dict(json.loads(json.dumps(student)))
    partly.cells[first.index].source = teacher.cells[first.index].source
    hostile = nbformat.from_dict(json.loads(json.dumps(partly)))
    hostile.cells[first.index].source += f"\n\nimport os\nos.remove({str(sentinel)!r})"
    kinds = {"solved": teacher, "unsolved": student, "partly": partly}
    counts: dict[str, int] = {}
    for i in range(n):
        kind = "hostile" if i == n - 1 else list(kinds)[i % 3]
        nb = hostile if kind == "hostile" else kinds[kind]
        target = folder / f"student-{i:02d}" / "lab03"
        target.mkdir(parents=True)
        nbformat.write(nb, target / LAB)
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def record(work: Path, fast: bool) -> Path:
    """The class recording of notebook 03 (the tour of that notebook alone, then an export)."""
    (work / "nb").mkdir()
    shutil.copy(ROOT / "notebooks" / LAB, work / "nb" / LAB)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "uncertainty_lab.tour", str(work / "nb"), "--out", str(work / "tour"),
               "--cache-dir", str(work / "cache")] + (["--fast"] if fast else [])
    subprocess.run(command, check=True, env=env)
    subprocess.run([sys.executable, "-m", "uncertainty_lab.cli", "cache", "export", str(work / "class03.sqlite")],
                   check=True, env=dict(env, UL_CACHE_DIR=str(work / "cache")))
    return work / "class03.sqlite"


def breakdown(out: Path) -> tuple[list[dict], dict[str, float]]:
    """Every result file, and the mean seconds per submission by part."""
    teacher = nbformat.read(ROOT / "notebooks" / LAB, as_version=4)
    records = [json.loads(p.read_text()) for p in sorted((out / "submissions").rglob("*.json"))]
    parts: dict[str, list[float]] = {}
    for r in records:
        cells = dict((int(i), s) for i, s in r["cell_seconds"])
        parts.setdefault("kernel start and stop, copying", []).append(r["seconds"] - sum(cells.values()))
        for i, s in cells.items():
            name = "guard cell (hidden)" if i == 0 else f"cell {i - 1}: " + teacher.cells[i - 1].source.splitlines()[0][:60]
            parts.setdefault(name, []).append(s)
    means = {k: sum(v) / len(records) for k, v in parts.items()}
    return records, dict(sorted(means.items(), key=lambda kv: -kv[1]))


def markdown(args, counts, wall, records, means, load_before, load_after, command) -> str:
    seconds = [r["seconds"] for r in records]
    cpu = [r.get("kernel_cpu_seconds", 0.0) for r in records]
    statuses: dict[str, int] = {}
    for r in records:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    per_60 = wall / len(records) * 60
    idle_60 = statistics.mean(cpu) * 60 / args.workers
    lines = [SECTION, "",
             f"`{command}` ({time.strftime('%Y-%m-%d')}, {machine()}; 1-minute load average {load_before} before, "
             f"{load_after} after: the run's own two kernels add about 2, more is other work on the machine). "
             f"{len(records)} submissions of lab 03 ({', '.join(f'{v} {k}' for k, v in counts.items())}), "
             f"{'fast' if args.fast else 'full'} mode, replaying the class recording, {args.workers} workers.", "",
             f"- wall time: **{wall:.0f} s** for {len(records)} ({wall / len(records):.1f} s a submission with "
             f"{args.workers} at once); scaled to 60: {per_60 / 60:.1f} min",
             f"- per submission: {statistics.mean(seconds):.1f} s wall (median {statistics.median(seconds):.1f}), "
             f"kernel CPU {statistics.mean(cpu):.1f} s (user + system); 60 submissions on {args.workers} idle cores "
             f"≈ 60 × {statistics.mean(cpu):.1f} / {args.workers} = {idle_60 / 60:.1f} min (the CPU time does not grow "
             "with other people's load; the wall time does)",
             f"- statuses: {', '.join(f'{v} {k}' for k, v in sorted(statuses.items()))}", "",
             "Where a submission's wall time goes (mean seconds; cells after the last check are not run):", "",
             "| part | s |", "|---|---|"]
    lines += [f"| {k.replace('|', '/')} | {v:.2f} |" for k, v in list(means.items())[:10]]
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    path = ROOT / "benchmarks" / "RESULTS.md"
    old = path.read_text(encoding="utf-8")
    if SECTION in old:
        start = old.index(SECTION)
        end = old.find("\n## ", start + len(SECTION))
        old = old[:start] + old[end + 1:] if end != -1 else old[:start]
    path.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--recording", default=None, help="a class recording of notebook 03 (default: make one)")
    parser.add_argument("--work", default="build/bench-class-grade", help="scratch folder (emptied first)")
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--write", action="store_true", help="write the section into benchmarks/RESULTS.md")
    args = parser.parse_args()
    work = Path(args.work).absolute()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    recording = Path(args.recording).absolute() if args.recording else record(work, args.fast)
    sentinel = work / "sentinel.txt"
    sentinel.write_text("keep")
    counts = make_submissions(work / "submitted", args.n, sentinel)
    command = (f"uncertainty-lab class grade submitted --source notebooks --recording {recording.name} --out grades "
               f"--workers {args.workers}" + (" --fast" if args.fast else ""))
    load_before = f"{os.getloadavg()[0]:.1f}"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "uncertainty_lab.cli", "class", "grade", str(work / "submitted"),
                    "--source", str(ROOT / "notebooks"), "--recording", str(recording), "--out", str(work / "grades"),
                    "--workers", str(args.workers)] + (["--fast"] if args.fast else []),
                   check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    load_after = f"{os.getloadavg()[0]:.1f}"
    assert sentinel.read_text() == "keep", "the hostile submission deleted the sentinel"
    records, means = breakdown(work / "grades")
    text = markdown(args, counts, wall, records, means, load_before, load_after, command)
    print(text)
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
