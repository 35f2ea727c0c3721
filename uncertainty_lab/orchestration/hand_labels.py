"""Hand labels for the answers of an orchestration run: the answers of an ``out_dir`` (:func:`load_answers`), a
seeded stratified sample of them (:meth:`RunAnswers.sample`), and the labels file kept next to the run
(:class:`LabelStore`: ``<out_dir>/audit/labels.jsonl``, appended one label a line, never rewritten).

An answer is one final answer to one question (:class:`AuditAnswer`); the same answer text to the same question in
several runs of the ``out_dir`` (policies that accepted the same first answer) is one answer, labelled once, that
stands for all of them (its ``size``). A label names the question id and the sha256 of the answer text; when the
run's answer changes (a rerun), the label no longer matches and is reported stale, never used.

Strata: the run grader's label (``correct``, ``wrong``, ``refused``, ``unjudged`` for an ungraded answer), with
``by="category"`` or ``by="source"`` also the item's category or data set. Within a stratum the sample is a seeded
random order, so a larger sample with the same seed keeps the smaller one's answers; strata take turns, so the
first answers shown cover every stratum.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..datasets.files import PACKAGE_SOURCE
from ..journal import JournalFormat
from ..seeds import derive_rng
from .errors import OrchestrationError
from .grading import grade_label
from .record import OrchestrationRun

__all__ = ["HAND_LABELS", "KEYS", "LABEL_FORMAT", "STRATA", "AuditAnswer", "HandLabel", "LabelStore", "Resolved",
           "RunAnswers", "allocate", "answer_hash", "answer_text", "load_answers"]

#: what a hand label says of an answer
HAND_LABELS = ("correct", "wrong", "refused")
#: the terminal's keys for them
KEYS = {"c": "correct", "w": "wrong", "r": "refused"}
#: how a sample may be stratified besides the grader's label
STRATA = ("label", "category", "source")
#: the labels file's format (a journal: a header, then one ``label`` record a line)
LABEL_FORMAT = JournalFormat("uncertainty_lab.orchestration.hand_labels/1", body=("label",), end="end",
                             error=OrchestrationError, resume_error=OrchestrationError, what="hand-label file")
LABEL_CONFIG = {"holds": "hand labels of this out_dir's answers"}
#: a labels file larger than this is refused (files are untrusted input)
MAX_LABEL_BYTES = 50 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def answer_text(answer: str, raw: str | None) -> str:
    """What the labeller reads: the extracted answer, then the whole completion when it says more than the answer
    (beyond spaces and a final full stop or exclamation mark)."""
    answer, raw = answer or "", (raw or "").strip()
    same = raw.rstrip(".!").strip() == answer.strip().rstrip(".!").strip()
    return answer if not raw or same else f"{answer}\n\n[whole completion]\n{raw}"


def answer_hash(text: str) -> str:
    """sha256 (hex) of an answer text (:func:`answer_text`)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AuditAnswer:
    """One distinct final answer to one question: the journal's ``item`` (question, references), the ``answer``
    and ``raw`` completion, the run grader's ``grade``, and the ``runs`` that gave it (its ``size``)."""

    id: str
    item: Mapping[str, Any]
    answer: str
    raw: str
    grade: Mapping[str, Any] | None
    runs: tuple[str, ...]

    @property
    def text(self) -> str:
        return answer_text(self.answer, self.raw)

    @property
    def sha256(self) -> str:
        return answer_hash(self.text)

    @property
    def key(self) -> tuple[str, str]:
        return (self.id, self.sha256)

    @property
    def size(self) -> int:
        return len(self.runs)

    @property
    def graded(self) -> str:
        """The run grader's label, ``unjudged`` when it gave none."""
        label = grade_label(self.grade)
        return label if label in HAND_LABELS else "unjudged"

    @property
    def graded_correct(self) -> bool | None:
        return None if self.graded == "unjudged" else bool(self.grade["correct"])

    def stratum(self, by: str = "label") -> str:
        """The stratum: the grader's label, with ``by`` = category / source also the item's category / data set."""
        if by not in STRATA:
            raise ValueError(f"by must be one of {list(STRATA)}, got {by!r}")
        if by == "label":
            return self.graded
        value = self.item.get(by) or (PACKAGE_SOURCE if by == "source" else "?")  # the shipped items omit their source
        return f"{self.graded} · {value}"

    def references(self, kind: str = "answers") -> list[str]:
        return [str(x) for x in (self.item.get(kind) or ())]


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Equal allocation of ``n`` draws over strata of ``sizes``, capped at each size (a small stratum is taken
    whole and its share goes to the others); the remainder goes to the larger strata."""
    out, left = {}, n
    order = sorted(sizes, key=lambda h: (sizes[h], h))
    for i, h in enumerate(order):
        out[h] = min(sizes[h], left // (len(order) - i))
        left -= out[h]
    return out


@dataclass
class RunAnswers:
    """The distinct final ``answers`` of every run of an ``out_dir`` (``runs``: name → run) and the ``grader`` the
    runs' headers name."""

    out_dir: Path
    runs: dict[str, OrchestrationRun]
    answers: list[AuditAnswer]
    grader: dict[str, Any] = field(default_factory=dict)

    @property
    def labels_path(self) -> Path:
        return self.out_dir / "audit" / "labels.jsonl"

    def by_key(self) -> dict[tuple[str, str], AuditAnswer]:
        return {a.key: a for a in self.answers}

    def totals(self, by: str = "label") -> dict[str, int]:
        """Per stratum, how many run answers (distinct answers times their ``size``) it holds."""
        out: dict[str, int] = {}
        for a in self.answers:
            out[a.stratum(by)] = out.get(a.stratum(by), 0) + a.size
        return out

    def sample(self, size: int, *, seed: int = 0, by: str = "label") -> list[AuditAnswer]:
        """A stratified sample of ``size`` distinct answers (module doc): equal allocation over the strata
        (:func:`allocate`), a seeded random order within each, the strata taking turns."""
        strata: dict[str, list[AuditAnswer]] = {}
        for a in self.answers:
            strata.setdefault(a.stratum(by), []).append(a)
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"sample size must be a positive integer, got {size!r}")
        if size < len(strata):
            raise ValueError(f"a sample of {size} cannot hold one answer of each of the {len(strata)} strata "
                             f"({', '.join(sorted(strata))}); ask for a sample of at least {len(strata)}")
        counts = allocate({h: len(v) for h, v in strata.items()}, size)
        picked = {h: [strata[h][i] for i in derive_rng(seed, "hand-label sample", h).permutation(len(strata[h]))]
                  [:counts[h]] for h in sorted(strata)}
        return [picked[h][i] for i in range(max(counts.values())) for h in sorted(picked) if i < len(picked[h])]


def _run_files(out_dir: Path) -> dict[str, list[Path]]:
    runs = out_dir / "runs"
    found: dict[str, list[Path]] = {}
    if runs.is_dir():
        for entry in sorted(runs.iterdir()):
            files = sorted(entry.glob("*.jsonl")) if entry.is_dir() else [entry] if entry.suffix == ".jsonl" else []
            if files:
                found[entry.stem if entry.is_file() else entry.name] = files
    return found


def load_answers(out_dir: str | os.PathLike) -> RunAnswers:
    """Every run journal under ``out_dir/runs`` (one file per run, or a folder of chunk files), read with
    :meth:`OrchestrationRun.load`, as distinct answers (module doc)."""
    out = Path(out_dir)
    if not out.is_dir():
        raise FileNotFoundError(f"OUT_DIR {out} is not a folder; pass the out_dir of `uncertainty-lab orchestrate run`")
    files = _run_files(out)
    if not files:
        raise FileNotFoundError(f"no run journals in {out / 'runs'}: OUT_DIR must be the out_dir of `uncertainty-lab "
                                "orchestrate run` (it holds runs/<model>__<policy>/q*.jsonl); run that first")
    runs = {name: OrchestrationRun.joined([OrchestrationRun.load(p) for p in paths]) for name, paths in files.items()}
    merged: dict[tuple[str, str], AuditAnswer] = {}
    for name, run in runs.items():
        for rec in run.records:
            final = rec.trace.final
            a = AuditAnswer(rec.id, rec.item, final.answer, final.raw, rec.grade, (name,))
            if a.key in merged:
                merged[a.key] = AuditAnswer(a.id, a.item, a.answer, a.raw, merged[a.key].grade,
                                            merged[a.key].runs + (name,))
            else:
                merged[a.key] = a
    first = next(iter(runs.values()))
    return RunAnswers(out, runs, list(merged.values()), dict(first.grader or {}))


@dataclass(frozen=True)
class HandLabel:
    """One hand label: the question ``item`` id, the ``sha256`` of the answer text, the ``label``, who gave it and
    when (ISO 8601, UTC)."""

    item: str
    sha256: str
    label: str
    labeller: str
    time: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.item, self.sha256)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "label", "item": self.item, "answer_sha256": self.sha256, "label": self.label,
                "labeller": self.labeller, "time": self.time}


def _label_of(rec: Mapping[str, Any]) -> HandLabel | None:
    fields = (rec.get("item"), rec.get("answer_sha256"), rec.get("label"), rec.get("labeller"), rec.get("time"))
    if not all(isinstance(x, str) for x in fields) or fields[2] not in HAND_LABELS or not _SHA256.match(fields[1]):
        return None
    return HandLabel(fields[0][:200], fields[1], fields[2], fields[3][:100], fields[4][:40])


@dataclass
class Resolved:
    """Labels matched to the current answers: ``usable`` (the latest label of each answer), ``stale`` (the
    question's answer has changed since), ``unknown`` (a question the runs do not hold)."""

    usable: dict[tuple[str, str], HandLabel]
    stale: list[HandLabel]
    unknown: list[HandLabel]


class LabelStore:
    """The labels file at ``path`` (a :data:`LABEL_FORMAT` journal): :meth:`read` them, :meth:`add` one (appended and
    flushed at once, so an interrupted session keeps every label given), :meth:`resolve` against the answers."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.problems: list[str] = []

    def read(self) -> list[HandLabel]:
        """Every valid label in file order; a record that is not one is skipped and described in ``problems``."""
        self.problems = []
        if not self.path.is_file():
            return []
        self._check_size()
        out = []
        for i, rec in enumerate(LABEL_FORMAT.read(self.path).body):
            label = _label_of(rec)
            if label is None:
                self.problems.append(f"{self.path}: label record {i + 1} is not a valid label, skipped: {str(rec)[:80]}")
            else:
                out.append(label)
        return out

    def _check_size(self) -> None:
        if self.path.is_file() and self.path.stat().st_size > MAX_LABEL_BYTES:
            raise OrchestrationError(f"{self.path} is larger than {MAX_LABEL_BYTES >> 20} MB; it is not a labels file "
                                     "this command wrote. Move it aside to start a new one")

    def add(self, answer: AuditAnswer, label: str, labeller: str, *, time: str | None = None) -> HandLabel:
        """Append ``label`` (``correct`` / ``wrong`` / ``refused``, or its key c / w / r) of ``answer``."""
        label = KEYS.get(label, label)
        if label not in HAND_LABELS:
            raise ValueError(f"label must be one of {list(HAND_LABELS)} (or {list(KEYS)}), got {label!r}")
        hand = HandLabel(answer.id, answer.sha256, label, str(labeller)[:100] or "anonymous",
                         time or datetime.now(UTC).isoformat(timespec="seconds"))
        self.write([hand])
        return hand

    def write(self, labels: Iterable[HandLabel]) -> None:
        """Append ``labels`` (the file is created with its header when new; nothing already there is rewritten)."""
        self._check_size()
        _, writer = LABEL_FORMAT.open(self.path, LABEL_CONFIG, resume=True, allow_nan=False)
        with writer:
            for hand in labels:
                writer.write(hand.to_dict())

    def resolve(self, answers: RunAnswers, labels: list[HandLabel] | None = None) -> Resolved:
        """Match ``labels`` (default: the file's) to ``answers`` (:class:`Resolved`)."""
        labels = self.read() if labels is None else labels
        current = answers.by_key()
        ids = {a.id for a in answers.answers}
        usable: dict[tuple[str, str], HandLabel] = {}
        stale, unknown = [], []
        for hand in labels:
            if hand.key in current:
                usable[hand.key] = hand
            else:
                (stale if hand.item in ids else unknown).append(hand)
        return Resolved(usable, stale, unknown)


# --- a sample as a spreadsheet, and the labels back ------------------------------------------------------------

#: the columns of an exported sample; an import reads ``item``, ``answer_sha256``, ``label`` (and ``labeller``)
EXPORT_COLUMNS = ("item", "answer_sha256", "stratum", "runs", "question", "correct_references", "incorrect_references",
                  "answer", "grader_label", "label", "labeller")
MAX_IMPORT_BYTES = 20 << 20
MAX_IMPORT_ROWS = 100_000


def _cell(text: str) -> str:
    """A spreadsheet cell that cannot run as a formula (a leading = + - @ gets a quote)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def export_sample(sample: list[AuditAnswer], path: str | os.PathLike, resolved: Resolved | None = None, *,
                  by: str = "label") -> Path:
    """Write ``sample`` as a CSV for labelling in a spreadsheet (:data:`EXPORT_COLUMNS`; ``label`` and ``labeller``
    hold the usable label when there is one). An existing file is never overwritten."""
    import csv

    path = Path(path)
    if path.exists():
        raise FileExistsError(f"--export {path} exists; choose another file name (nothing is overwritten)")
    usable = resolved.usable if resolved is not None else {}
    with open(path, "x", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(EXPORT_COLUMNS)
        for a in sample:
            hand = usable.get(a.key)
            writer.writerow([_cell(str(x)) for x in (
                a.id, a.sha256, a.stratum(by), " | ".join(a.runs), a.item.get("question", ""),
                " | ".join(a.references("answers")), " | ".join(a.references("incorrect")), a.text, a.graded,
                hand.label if hand else "", hand.labeller if hand else "")])
    return path


def read_label_file(path: str | os.PathLike, labeller: str) -> tuple[list[HandLabel], list[str]]:
    """The labels of a CSV with columns ``item``, ``answer_sha256``, ``label`` (c / w / r or correct / wrong /
    refused; empty: not labelled) and optionally ``labeller`` (else ``labeller``), and the rows it skipped, why."""
    import csv

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--labels {path} is not a file; pass a CSV written by --export with its label column filled")
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise ValueError(f"--labels {path} is larger than {MAX_IMPORT_BYTES >> 20} MB; pass the labelled sample only")
    try:
        return _read_rows(path, labeller)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"--labels {path} is not a UTF-8 CSV this command can read ({exc}); pass the file --export "
                         "wrote, saved as CSV (UTF-8)") from None


def _read_rows(path: Path, labeller: str) -> tuple[list[HandLabel], list[str]]:
    import csv

    now = datetime.now(UTC).isoformat(timespec="seconds")
    out, problems = [], []
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("item", "answer_sha256", "label") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"--labels {path} has no column(s) {missing}; it needs item, answer_sha256 and label "
                             "(the file --export writes)")
        for row_no, row in enumerate(reader, start=2):
            if row_no > MAX_IMPORT_ROWS + 1:
                problems.append(f"stopped after {MAX_IMPORT_ROWS} rows")
                break
            text = (row.get("label") or "").strip().lower()
            if not text:
                continue
            hand = _label_of({"item": (row.get("item") or "").lstrip("'"), "answer_sha256": (row.get("answer_sha256") or "").strip(),
                              "label": KEYS.get(text, text), "labeller": (row.get("labeller") or "").strip() or labeller,
                              "time": now})
            if hand is None:
                problems.append(f"{path} row {row_no}: label {text!r} or its answer_sha256 is not valid "
                                f"(labels: {', '.join(HAND_LABELS)} or {', '.join(KEYS)}); skipped")
            else:
                out.append(hand)
    return out, problems
