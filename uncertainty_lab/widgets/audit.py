"""Notebook 04's grader audit: label a stratified sample of a run's answers with buttons (correct / wrong / refused /
skip), saved next to the run like ``uncertainty-lab audit`` does, and see the graders' agreement and the accuracy
corrected for the grader's errors (:func:`~uncertainty_lab.orchestration.audit_report.audit_report`).

:class:`AuditLabeller` (from :func:`audit_labeller`) only wires :mod:`~uncertainty_lab.orchestration.hand_labels`
to buttons: :meth:`AuditLabeller.label` is what a button does, so code (and a test) can label without a browser.
The grader's verdict is not shown with the answer, so the labels are blind to it.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path

import ipywidgets as widgets

from ..orchestration.audit_report import AuditReport, audit_report
from ..orchestration.hand_labels import HAND_LABELS, AuditAnswer, LabelStore, load_answers

__all__ = ["AuditLabeller", "answer_html", "audit_labeller"]


def _list(values: Sequence[str]) -> str:
    return " · ".join(html.escape(v) for v in values) if values else "<i>(none)</i>"


def answer_html(answer: AuditAnswer) -> str:
    """One answer as the labeller reads it: question, correct and incorrect references, the answer."""
    decline = ("<div style='color:#a60'>this item asks to be declined: a refusal is the right answer</div>"
               if answer.item.get("behaviour") == "decline" else "")
    text = html.escape(answer.text).replace("\n", "<br>")
    return (f"<div><b>{html.escape(answer.id)}</b> <span style='color:gray'>({html.escape(str(answer.item.get('category') or '?'))}; "
            f"in {html.escape(', '.join(answer.runs))})</span></div>"
            f"<div><b>question:</b> {html.escape(str(answer.item.get('question', '')))}</div>"
            f"<div><b>correct references:</b> {_list(answer.references('answers'))}</div>"
            f"<div><b>incorrect references:</b> {_list(answer.references('incorrect'))}</div>{decline}"
            f"<div style='margin-top:4px;padding:4px;background:#f4f4f4'><b>answer:</b> {text}</div>")


class AuditLabeller(widgets.VBox):
    """Buttons over the unlabelled answers of a stratified sample of ``out_dir``'s runs. ``.todo`` the answers still
    to label, ``.position`` the one shown, ``.buttons`` (dict), ``.card`` / ``.status`` / ``.output`` (HTML);
    :meth:`label` saves a label (or skips) and shows the next answer, :meth:`report` computes and shows the report."""

    def __init__(self, out_dir: str | os.PathLike, *, sample: int = 40, seed: int = 0, by: str = "label",
                 graders: Sequence[str] = (), labeller: str = "notebook", labels_path: str | os.PathLike | None = None,
                 n_boot: int = 1000):
        super().__init__()
        self.answers = load_answers(out_dir)
        self.store = LabelStore(Path(labels_path) if labels_path is not None else self.answers.labels_path)
        self.sample = self.answers.sample(sample, seed=seed, by=by)
        resolved = self.store.resolve(self.answers)
        self.todo = [a for a in self.sample if a.key not in resolved.usable]
        self.position = 0
        self.by, self.graders, self.labeller, self.seed, self.n_boot = by, list(graders), labeller, seed, n_boot
        self.buttons = {name: widgets.Button(description=name, layout={"width": "110px"})
                        for name in (*HAND_LABELS, "skip")}
        for name, button in self.buttons.items():
            button.on_click(lambda _b, name=name: self.label(name))
        report = widgets.Button(description="report", button_style="info", layout={"width": "110px"})
        report.on_click(lambda _b: self.report())
        self.card, self.status, self.output = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.children = (self.card, widgets.HBox([*self.buttons.values(), report]), self.status, self.output)
        self._show()

    @property
    def current(self) -> AuditAnswer | None:
        return self.todo[self.position] if self.position < len(self.todo) else None

    def _show(self) -> None:
        answer = self.current
        done = len(self.sample) - len(self.todo) + self.position
        self.card.value = answer_html(answer) if answer is not None else "<b>every sampled answer is labelled or skipped</b>"
        self.status.value = (f"<span style='color:gray'>{done} of {len(self.sample)} sampled answers done; labels go to "
                             f"{html.escape(str(self.store.path))}</span>")
        for button in self.buttons.values():
            button.disabled = answer is None

    def label(self, value: str) -> None:
        """Save ``value`` (``correct``, ``wrong``, ``refused``) for the answer shown, or ``skip`` it; show the next."""
        answer = self.current
        if answer is None:
            raise ValueError("no answer left to label; call report() or draw a larger sample")
        if value != "skip":
            self.store.add(answer, value, self.labeller)
        self.position += 1
        self._show()

    def report(self) -> AuditReport:
        """The report of every usable label so far (also shown under the buttons)."""
        result = audit_report(self.answers, self.store.resolve(self.answers), self.graders, by=self.by,
                              seed=self.seed, n_boot=self.n_boot)
        self.output.value = result._repr_html_()
        return result


def audit_labeller(out_dir: str | os.PathLike, **options) -> AuditLabeller:
    """The labeller over ``out_dir`` (the out_dir of a run; ``options``: ``sample``, ``seed``, ``by``, ``graders``,
    ``labeller``, ``labels_path``, ``n_boot``)."""
    return AuditLabeller(out_dir, **options)
