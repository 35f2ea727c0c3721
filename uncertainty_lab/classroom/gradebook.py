"""What grading a class writes: ``gradebook.csv`` (one row per student, lab and check), ``summary.md`` and one
feedback page per student (``feedback/<student>.html``: each lab, each check, its points and the error).

Student text (names, error messages) is untrusted: the HTML escapes every piece of it and carries a Content Security
Policy that allows no script; a CSV cell that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab,
carriage return first) gets a leading ``'``. Every file is written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import csv
import html
import io
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..executors.remote import write_atomic
from ..lab import LabResult
from ..outdir import Manifest, check_out_dir, unit_file_name

__all__ = ["COLUMNS", "Gradebook", "csv_safe"]

COLUMNS = ("student", "lab", "notebook", "exercise", "points", "max_points", "status", "reason")
_CSS = """body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: .4em .6em; text-align: left; vertical-align: top; }
.passed { color: #176f2c; } .problem { color: #a32020; }
pre { white-space: pre-wrap; font-size: .85em; background: #fbeeee; padding: .4em; margin: 0; }"""


def csv_safe(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, with a leading ``'``; anything else unchanged."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


@dataclass
class Gradebook(LabResult):
    """The graded class: ``records`` (one per submission, as its run file holds it) and the ``skipped`` files."""

    config: Any
    records: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    out_dir: str | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One row per student, lab, notebook and check (:data:`COLUMNS`)."""
        return [{"student": r["student"], "lab": r["lab"], "notebook": r["notebook"], "exercise": c["grade_id"],
                 "points": c["points"], "max_points": c["max_points"], "status": c["status"], "reason": c["reason"]}
                for r in self.records for c in r["checks"]]

    def totals(self) -> dict[tuple[str, str], tuple[float, float, str]]:
        """``{(student, lab): (points, max points, status)}``."""
        out: dict[tuple[str, str], list] = {}
        for r in self.records:
            got = out.setdefault((r["student"], r["lab"]), [0.0, 0.0, r["status"]])
            got[0] += sum(c["points"] for c in r["checks"])
            got[1] += sum(c["max_points"] for c in r["checks"])
            if r["status"] != "graded":
                got[2] = r["status"]
        return {k: tuple(v) for k, v in out.items()}

    def report(self) -> str:
        mode = "fast" if any(r.get("fast") for r in self.records) else "full"
        lines = [f"# Grades: {len(self.records)} submissions", "",
                 f"Replayed answers of `{self.config.recording}`, {mode} mode, {self.config.timeout} s a cell.", "",
                 "| student | lab | points | status |", "|---|---|---|---|"]
        for (student, lab), (points, most, status) in sorted(self.totals().items()):
            lines.append(f"| {_md(student)} | {_md(lab)} | {points:g}/{most:g} | {status} |")
        if self.skipped:
            lines += ["", "Not graded:", ""] + [f"- {_md(s)}" for s in self.skipped]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"submissions": self.records, "skipped": self.skipped}

    def csv_text(self) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in self.rows():
            writer.writerow({k: csv_safe(v) for k, v in row.items()})
        return buffer.getvalue()

    def feedback_pages(self) -> dict[str, str]:
        """``{student: HTML}``."""
        by_student: dict[str, list] = defaultdict(list)
        for r in self.records:
            by_student[r["student"]].append(r)
        return {s: feedback_html(s, sorted(rs, key=lambda r: (r["lab"], r["notebook"]))) for s, rs in by_student.items()}

    def save(self, out_dir: str | os.PathLike | None = None, *, figure: bool = True) -> dict[str, Path]:
        """Write ``gradebook.csv``, ``summary.md`` and ``feedback/<student>.html`` atomically into ``out_dir``."""
        out = check_out_dir(out_dir or self.config.out_dir, create=True)
        files = {"gradebook": out / "gradebook.csv", "summary": out / "summary.md"}
        write_atomic(files["gradebook"], self.csv_text().encode("utf-8"))
        write_atomic(files["summary"], (self.report() + "\n").encode("utf-8"))
        Manifest(out).record([files["gradebook"], files["summary"]])
        for student, page in sorted(self.feedback_pages().items()):
            path = out / "feedback" / f"{unit_file_name(student)}.html"
            write_atomic(path, page.encode("utf-8"))
            files[f"feedback:{student}"] = path
        self.files.update(files)
        return files


def _md(text: str) -> str:
    return html.escape(str(text)).replace("|", "\\|").replace("\n", " ")


def feedback_html(student: str, records: list[dict[str, Any]]) -> str:
    """One student's page: a table per notebook, every piece of student text escaped, no script allowed."""
    e = html.escape
    parts = []
    for r in records:
        got, most = sum(c["points"] for c in r["checks"]), sum(c["max_points"] for c in r["checks"])
        rows = []
        for c in r["checks"]:
            kind = "passed" if c["status"] == "passed" else "problem"
            reason = f"<pre>{e(c['reason'])}</pre>" if c["reason"] else ""
            rows.append(f'<tr><td>{e(c["grade_id"])}</td><td>{c["points"]:g}/{c["max_points"]:g}</td>'
                        f'<td class="{kind}">{e(c["status"])}</td><td>{reason}</td></tr>')
        parts.append(f"<h2>{e(r['lab'])} / {e(r['notebook'])}: {got:g}/{most:g}</h2>\n<table><thead><tr><th>check"
                     "</th><th>points</th><th>status</th><th>what happened</th></tr></thead><tbody>\n"
                     + "\n".join(rows) + "\n</tbody></table>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Feedback for {e(student)}</title><style>{_CSS}</style></head>
<body>
<h1>Feedback for {e(student)}</h1>
{chr(10).join(parts)}
</body></html>
"""
