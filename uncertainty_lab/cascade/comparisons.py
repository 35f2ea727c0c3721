"""Paired comparisons of memory selectors in a cascade experiment. Run r of every selector is seeded seed + r, so
the runs of two selectors share the event schedule (times, nodes, hence the references) and differ only in the
memory. Their difference is therefore taken run by run and step by step,

    d_{r,t} = S^a_{r,t} − S^b_{r,t},   d_r = mean of d_{r,t} over the steps t where both are defined,

and over runs the mean of d_r with a two-sided t-interval (n − 1 degrees of freedom). The runs are the
independent units: the steps of one run depend on each other through the memory. The difference of two cosines
lies in [−2, 2], and the interval is clipped to that range. A difference is *within noise* when its interval
contains 0; one run gives no interval at all. A per-run number (the copy rate) is paired the same way:
d_r = x^a_r − x^b_r.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .diagnostics import Interval, interval

__all__ = ["baseline_of", "comparison_rows", "headline", "paired_difference", "paired_run_difference", "paired_steps",
           "selector_table", "verdict"]


def baseline_of(result: Any, preferred: str = "recency") -> str:
    """The selector the others are compared with: ``preferred`` when the experiment ran it, else the first."""
    labels = list(dict.fromkeys(s for s, _ in result.conditions))
    return preferred if preferred in labels else labels[0]


def paired_steps(result: Any, selector: str, baseline: str, k: int, name: str = "alignment") -> np.ndarray:
    """d_{r,t} for the runs both conditions have (matched by run index): shape (runs, steps), NaN where either
    value is undefined."""
    def by_run(sel: str) -> dict[int, np.ndarray]:
        return {key[2]: np.asarray(c, dtype=float) for key, c in zip(result.keys(sel, k),
                                                                      result.curves(name, sel, k), strict=True)}

    a, b = by_run(selector), by_run(baseline)
    runs = sorted(set(a) & set(b))
    if not runs:
        return np.zeros((0, 0))
    length = max(max(a[r].size, b[r].size) for r in runs)
    out = np.full((len(runs), length), math.nan)
    for i, r in enumerate(runs):
        n = min(a[r].size, b[r].size)
        out[i, :n] = a[r][:n] - b[r][:n]
    return out


def _clipped(iv: Interval, bound: float) -> Interval:
    lo = max(-bound, iv.ci_low) if math.isfinite(iv.ci_low) else iv.ci_low
    hi = min(bound, iv.ci_high) if math.isfinite(iv.ci_high) else iv.ci_high
    return Interval(iv.mean, iv.sd, iv.n, lo, hi, iv.level)


def paired_difference(result: Any, selector: str, baseline: str, k: int, *, late: bool = False,
                      name: str = "alignment", level: float = 0.95) -> Interval:
    """Mean over runs of d_r (over the late window of the last ceil(late_fraction · L) steps when ``late``), with
    its t-interval clipped to [−2, 2]; ``n`` is the number of runs with a defined d_r."""
    d = paired_steps(result, selector, baseline, k, name)
    if late and d.size:
        width = max(1, math.ceil(result.config.late_fraction * d.shape[1]))
        d = d[:, -width:]
    per_run = [float(np.mean(row[np.isfinite(row)])) if np.isfinite(row).any() else math.nan for row in d]
    return _clipped(interval(per_run, level=level), 2.0)


def paired_run_difference(result: Any, selector: str, baseline: str, k: int, field: str = "copies", *,
                          level: float = 0.95) -> Interval:
    """Mean over runs of x^a_r − x^b_r for a per-run number ``field`` of :meth:`CascadeResult.run_rows` (e.g.
    "copies", a share in [0, 1], so the interval is clipped to [−1, 1]), with its t-interval."""
    rows = result.run_rows()
    a = {r["run"]: r[field] for r in rows if r["selector"] == selector and r["k"] == k}
    b = {r["run"]: r[field] for r in rows if r["selector"] == baseline and r["k"] == k}
    return _clipped(interval([a[r] - b[r] for r in sorted(set(a) & set(b))], level=level), 1.0)


def verdict(iv: Interval) -> str:
    """"within noise" when the interval holds 0, "higher" / "lower" when it lies above / below 0, "no interval"
    with fewer than two runs."""
    if not math.isfinite(iv.ci_low):
        return "no interval (fewer than 2 runs)" if math.isfinite(iv.mean) else "undefined"
    if iv.ci_low <= 0.0 <= iv.ci_high:
        return "within noise"
    return "higher" if iv.ci_low > 0 else "lower"


def comparison_rows(result: Any, k: int | None = None, baseline: str | None = None) -> list[dict[str, Any]]:
    """One row per selector at budget ``k`` (the first k by default), best mean S first: its ``rank``, ``mean_S``,
    ``late_S`` and ``copies`` (from :meth:`CascadeResult.rows`) with ``mean_S_ci`` (the t-interval over runs,
    clipped to [−1, 1], the range of a cosine), and for every selector but the ``baseline`` (:func:`baseline_of`
    by default) the paired ``difference``, ``late_difference`` and ``copies_difference`` to it (Intervals), each
    with its :func:`verdict` (``verdict``, ``late_verdict``, ``copies_verdict``)."""
    k = result.conditions[0][1] if k is None else k
    baseline = baseline_of(result) if baseline is None else baseline
    rows = []
    for r in result.rows():
        if r["k"] != k:
            continue
        lo, hi = r["mean_S_ci"]
        row = {"selector": r["selector"], "k": k, "runs": r["runs"], "mean_S": r["mean_S"], "late_S": r["late_S"],
               "mean_S_ci": [max(-1.0, lo), min(1.0, hi)] if math.isfinite(lo) else [lo, hi],
               "copies": r["copies"], "baseline": baseline}
        if r["selector"] != baseline:
            sel = r["selector"]
            row["difference"] = paired_difference(result, sel, baseline, k)
            row["late_difference"] = paired_difference(result, sel, baseline, k, late=True)
            row["copies_difference"] = paired_run_difference(result, sel, baseline, k, "copies")
            for key, name in (("verdict", "difference"), ("late_verdict", "late_difference"),
                              ("copies_verdict", "copies_difference")):
                row[key] = verdict(row[name])
            if getattr(getattr(result, "setup", None), "truth", None) is not None:  # known truth: precision paired too
                row["precision_difference"] = paired_difference(result, sel, baseline, k, name="memory_precision")
                row["precision_verdict"] = verdict(row["precision_difference"])
        rows.append(row)
    rows.sort(key=lambda x: -x["mean_S"] if math.isfinite(x["mean_S"]) else math.inf)
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def _num(x: float, fmt: str = ".3f") -> str:
    """A number for a table cell; "—" for a missing one (never "nan")."""
    return f"{x:{fmt}}" if math.isfinite(x) else "—"


def _ci(iv: Interval, scale: float = 1.0, fmt: str = "+.3f", unit: str = "") -> str:
    """``mean [low, high]`` (``unit`` after the mean), or the mean and why there is no interval."""
    if not math.isfinite(iv.mean):
        return "—"
    mean = f"{scale * iv.mean:{fmt}}{unit}"
    if not math.isfinite(iv.ci_low):
        return f"{mean} (one run: no interval)"
    return f"{mean} [{scale * iv.ci_low:{fmt}}, {scale * iv.ci_high:{fmt}}]"


def selector_table(rows: list[dict[str, Any]]) -> Any:
    """The rows of :func:`comparison_rows` as a :class:`~uncertainty_lab.table.Table` of text cells ("—" for the
    baseline's own differences)."""
    from ..table import Table

    out = []
    for r in rows:
        lo, hi = r["mean_S_ci"]
        mean_s = _num(r["mean_S"]) + (f" [{lo:+.3f}, {hi:+.3f}]" if math.isfinite(lo) else "")
        paired = "difference" in r
        out.append({
            "rank": r["rank"], "selector": r["selector"], "mean S [95% CI]": mean_s, "late S": _num(r["late_S"]),
            f"S − {r['baseline']}": _ci(r["difference"]) if paired else "—",
            "verdict": r["verdict"] if paired else "(baseline)",
            f"late S − {r['baseline']}": _ci(r["late_difference"]) if paired else "—",
            "copies": _num(r["copies"], ".0%"),
            f"copies − {r['baseline']} (points)": _ci(r["copies_difference"], 100, "+.0f") if paired else "—",
            **({f"memory precision − {r['baseline']}": _ci(r["precision_difference"]) if paired else "—"}
               if "precision_difference" in r or any("precision_difference" in x for x in rows) else {}),
        })
    return Table(out, title=f"selectors at k = {rows[0]['k']}, {rows[0]['runs']} run(s) each, best mean S first"
                 if rows else "")


def headline(rows: list[dict[str, Any]]) -> str:
    """What the run shows, in three sentences of markdown built from :func:`comparison_rows`: the ranking by mean
    S_t, whether the paired differences to the baseline are within noise, and the copy rates."""
    if not rows:
        return "No selector ran."
    base = rows[0]["baseline"]
    others = [r for r in rows if r["selector"] != base]
    ranking = " > ".join(f"`{r['selector']}` {_num(r['mean_S'])}" for r in rows)
    lines = [f"**Ranking by mean S_t:** {ranking} — `{rows[0]['selector']}` came first, "
             f"`{rows[-1]['selector']}` last of {len(rows)}."]
    if not others:
        return lines[0]
    diffs = "; ".join(f"`{r['selector']}` − `{base}` = {_ci(r['difference'])}" for r in others)
    verdicts = {r["verdict"] for r in others}
    if any(v.startswith("no interval") for v in verdicts):
        meaning = "with one run there is no interval, so no claim either way"
    elif verdicts == {"within noise"}:
        meaning = "every interval contains 0: the differences are **within noise** and this run does not rank them"
    else:
        clear = [f"`{r['selector']}` {r['verdict']} than `{base}`" for r in others if r["verdict"] != "within noise"]
        meaning = "beyond noise: " + ", ".join(clear)
    lines.append(f"**Paired with `{base}` run by run** (same schedule, only the memory differs; 95% t-interval "
                 f"over runs): {diffs} — {meaning}.")
    copies = ", ".join(f"`{r['selector']}` {_num(r['copies'], '.0%')}" for r in rows)
    paired = "; ".join(f"`{r['selector']}` − `{base}` = {_ci(r['copies_difference'], 100, '+.0f', ' points')}"
                       for r in others)
    steady = [r["selector"] for r in others if r["copies_verdict"] in ("higher", "lower")]
    if steady and "within noise" in verdicts:
        note = f"beyond noise for {', '.join(f'`{s}`' for s in steady)}: the clearest effect of the memory in this run"
    elif steady:
        note = f"beyond noise for {', '.join(f'`{s}`' for s in steady)}"
    else:
        note = "no difference beyond noise here either" if others[0]["copies_difference"].n > 1 else "one run: no claim"
    lines.append(f"**Copies** (texts repeating an earlier one word for word): {copies}; paired: {paired} — {note}.")
    return "\n\n".join(lines)
