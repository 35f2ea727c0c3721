"""What :func:`~uncertainty_lab.datasets.gdelt.load_gdelt` read, kept and left out: every row is counted somewhere,
and the tie report says how far the loader moved timestamps."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from uncertainty_lab.datasets.news import NewsEvent
from uncertainty_lab.datasets.ties import TieReport

__all__ = ["GdeltEvents", "GdeltReport"]


@dataclass
class GdeltReport:
    """What :func:`~uncertainty_lab.datasets.gdelt.load_gdelt` read, kept and left out — nothing is dropped
    without being counted here.

    ``unmapped`` counts rows per source domain that ``domain_to_node`` does not cover; ``malformed`` lists the
    first rows skipped with ``on_error="skip"`` (file, line, why); ``n_duplicates`` counts rows dropped as the
    same URL or the same normalised title as an earlier row; ``n_off_topic`` rows matched no ``keywords``;
    ``n_ties`` events were moved (``ties="spread"``) or dropped (``"merge"``) because their node already had
    an event at that time, and ``ties_report`` says how many were tied and how far times moved;
    ``n_untitled`` kept events have no headline (no page title, and a URL slug that is an id, not words; or a
    tag / category / topic / index page, ``n_listing`` of the rows read);
    ``n_not_sampled`` events were left out by ``sample`` / ``limit``; ``tie_counts`` maps the id of an event a
    merge kept to the number of tied events it stands for (so a Hawkes stream can still count them per node). ``t0`` is the wall-clock time of hour 0
    (the first kept event).
    """

    files: tuple[str, ...]
    format: str
    n_rows: int = 0
    n_malformed: int = 0
    malformed: list[str] = field(default_factory=list)
    n_unmapped: int = 0
    unmapped: dict[str, int] = field(default_factory=dict)
    n_off_topic: int = 0
    n_duplicates: int = 0
    n_ties: int = 0
    ties: str = "spread"
    ties_report: TieReport = field(default_factory=TieReport)
    bin_hours: float | None = None
    n_untitled: int = 0
    n_listing: int = 0
    n_titles_from_gkg: int = 0
    n_not_sampled: int = 0
    tie_counts: dict[str, int] = field(default_factory=dict)
    n_kept: int = 0
    per_node: dict[str, int] = field(default_factory=dict)
    t0: str | None = None

    def summary(self) -> str:
        """A few lines saying what was read and what happened to every row."""
        top = ", ".join(f"{d} {n}" for d, n in list(self.unmapped.items())[:5])
        lines = [
            f"GDELT {self.format}: {self.n_rows} rows from {len(self.files)} file(s); kept {self.n_kept} events",
            f"  unmapped domains: {self.n_unmapped} rows" + (f" (top: {top})" if self.unmapped else ""),
            f"  duplicates dropped: {self.n_duplicates}; off-topic: {self.n_off_topic}; malformed skipped: "
            f"{self.n_malformed}; left out by sample/limit: {self.n_not_sampled}",
            f"  ties at a node: {self.ties_report.summary()}; bin_hours: {self.bin_hours}",
            f"  headlines: {self.n_titles_from_gkg} from GKG page titles, {self.n_untitled} events without one "
            f"(tag / category / topic / index pages, no headline: {self.n_listing} rows)",
            f"  per node: {self.per_node}; hour 0 = {self.t0}",
        ]
        return "\n".join(lines)


class GdeltEvents(list):
    """The events :func:`~uncertainty_lab.datasets.gdelt.load_gdelt` kept (a plain ``list`` of
    :class:`NewsEvent`), with ``.report`` (:class:`GdeltReport`) and ``.ties_report``."""

    report: GdeltReport

    def __init__(self, events: Iterable[NewsEvent], report: GdeltReport):
        super().__init__(events)
        self.report = report

    @property
    def ties_report(self) -> TieReport:
        """How many events were tied at a node and how far the loader moved their times."""
        return self.report.ties_report
