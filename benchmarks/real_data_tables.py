"""The published numbers the real-data benchmark is compared with, and the markdown tables that put them side by
side with what `benchmarks/real_data.py` measured (read from `benchmarks/real_data.json`, aggregate numbers only).

Sources and markers as in `docs/papers/*.md`: [paper] = the paper's own text, [secondary] = third-party summaries
or the reference implementation's logs.
"""

from __future__ import annotations

import math
from typing import Any

from uncertainty_lab.semantic.discrimination import MIN_CLASS_COUNT, Discrimination, shortage

__all__ = ["PUBLISHED", "cgdp_table", "hassum_table", "hawkes_table", "render"]

#: What the papers (or their secondary sources) report; the benchmark's JSON carries a copy for the notebooks.
PUBLISHED: dict[str, Any] = {
    "hassum": {
        "source": "[secondary] the HASSUM reference implementation's logged runs (docs/papers/hassum.md §4); AUROC "
                  "of the largest semantic entropy / smallest semantic density seen for a question, for flagging a "
                  "wrong final answer",
        "model": "Gemini CEO over DeepSeek-R1 workers (Ollama), N = 5 samples",
        "auroc": {
            "strategyqa": {"n": 24, "wrong": 6, "entropy": 0.625, "density": 0.870},
            "truthfulqa": {"n": 90, "wrong": 51, "entropy": 0.501, "density": 0.634},
            "gsm8k": {"n": 100, "wrong": 7, "entropy": 0.555, "density": 0.708},
            "musique": {"n": 97, "wrong": 52, "entropy": 0.434, "density": 0.470},
            "hotpotqa": {"n": 100, "wrong": 46, "entropy": 0.468, "density": 0.483},
        },
    },
    "cgdp": {
        "source": "[paper] the abstract; per-condition numbers are not known to us (docs/papers/cgdp.md §4)",
        "model": "GPT-4o-mini agent, GPT-4o judge; LoCoMo, MuSiQue (n = 500 [secondary]), SWE-QA-Pro",
        "claim": "up to 39% fewer tokens on stateful harnesses with no loss of task accuracy (exhaustion gate, "
                 "τ_J = 0.6, τ_U = 0.3, p = 2)",
        "max_saving": 0.39,
    },
    "hawkes": {
        "source": "[secondary] third-party summaries of the paper's k = 3 table (docs/papers/hawkesllm.md §4)",
        "model": "Qwen2.5 via Ollama (size not reported), GDELT NASA Artemis II, 3 runs per selector",
        "k3": {
            "hawkes": {"mean_S": 0.636, "trend": "increasing", "late_S": 0.682},
            "recency": {"mean_S": 0.581, "trend": "decreasing", "late_S": 0.541},
            "random": {"mean_S": 0.621, "trend": "decreasing", "late_S": 0.594},
        },
        "drift": {"global": [0.450, 0.019], "local": [0.185, 0.072]},
    },
}

#: the data sets in the order the HASSUM table lists them, with their names in the tables
QA_NAMES = {"strategyqa": "StrategyQA", "truthfulqa": "TruthfulQA", "gsm8k": "GSM8K", "musique": "MuSiQue",
            "hotpotqa": "HotpotQA"}
SELECTOR_NAMES = {"hawkes": "HawkesLLM (hawkes)", "recency": "chronological (recency)", "random": "random"}


def _f(x: Any, fmt: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def _ci(d: dict[str, Any] | None, key: str = "estimate", fmt: str = ".3f") -> str:
    """``est [low, high]`` from a dict with ``key``, ``low`` and ``high`` (``—`` when missing)."""
    if not d or d.get(key) is None:
        return "—"
    if d.get("low") is None:
        return _f(d[key], fmt)
    return f"{_f(d[key], fmt)} [{_f(d['low'], fmt)}, {_f(d['high'], fmt)}]"


def _minutes(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds / 60:.1f} min"


#: how the intervals of rows measured before the AUROCs carried their method were made (real_data.py then called
#: ``bootstrap_ci(auroc, ...)``: questions resampled together, one-class resamples skipped); their number of
#: resamples and seed come from the row's signature
LEGACY_METHOD = "percentile bootstrap over questions (right and wrong resampled together)"


def _auroc(m: dict[str, Any], d: dict[str, Any]) -> Discrimination:
    """One stored AUROC as a :class:`Discrimination` (older rows: method, resamples and seed from the signature)."""
    sig = m.get("signature", {})
    return Discrimination.from_dict(d, method=LEGACY_METHOD, resamples=sig.get("n_boot"), seed=sig.get("seed"))


def _auroc_cell(m: dict[str, Any], g: dict[str, Any], role: str) -> str:
    d = _auroc(m, g["auroc"][role])
    return d.cell() + (f" (n = {d.n}, {d.missing} without a value)" if d.missing else "")


def _published(p: dict[str, Any]) -> tuple[str, str]:
    """The published n (wrong / right) and SE / SD AUROCs — not quoted below the minimum class count."""
    right = p["n"] - p["wrong"]
    why = shortage(p["wrong"], right)
    counts = f"{p['n']} ({p['wrong']} / {right})"
    return counts, (f"not quoted: {why}" if why else f"{p['entropy']:.3f} / {p['density']:.3f} (no interval)")


def _hassum_row(label: str, m: dict[str, Any], g: dict[str, Any], grader: str, first: bool,
                corrected: str = "—") -> str:
    """One measured row: ``g`` holds n, wrong, refused, accuracy and the AUROCs under ``grader`` (and the count
    the grader was ``uncertain`` on, shown when there are any); ``corrected``: the accuracy corrected for the
    grader's error (``real_data_audit.corrected_cell``)."""
    p = PUBLISHED["hassum"]["auroc"].get(m["dataset"], {})
    acc = g["accuracy"]
    pub = _published(p) if p and first else ("", "")
    return "| " + " | ".join([
        label, grader, str(m["n_samples"]), f"{g['n']} ({g['wrong']} / {g['n'] - g['wrong']})"
        + (f", {g['uncertain']} uncertain" if g.get("uncertain") else ""), str(g["refused"]),
        f"{acc['estimate']:.1%} [{acc['low']:.1%}, {acc['high']:.1%}]", corrected,
        _auroc_cell(m, g, "entropy"), _auroc_cell(m, g, "density"), *pub,
        _minutes(m.get("wall_s")) if first else ""]) + " |"


def _interval_notes(measured: dict[str, Any]) -> list[str]:
    """What the AUROC cells mean, and how each row's interval was made (one line per method)."""
    methods: dict[str, list[str]] = {}
    for m in measured.values():
        for g in (m, *m.get("regraded", {}).values()):
            d = _auroc(m, g["auroc"]["entropy"])
            methods.setdefault(d.interval(), []).append(QA_NAMES[m["dataset"]])
    lines = [f"n (wrong / right): the questions, the wrong first answers (the positives an uncertainty should flag) "
             f"and the right ones (the negatives). An AUROC is given only with at least {MIN_CLASS_COUNT} of each "
             "(a published one below that is not quoted: docs/papers/hassum.md §4 has it); its interval:"]
    for how, names in methods.items():
        old = LEGACY_METHOD in how
        lines.append(f"- {', '.join(dict.fromkeys(names))}: {how}" + (
            " — these rows stored no per-question scores, so the stratified interval the package now computes "
            "(wrong and right answers resampled separately) cannot be recomputed without rerunning the measurement"
            if old else ""))
    return lines


def hassum_table(measured: dict[str, Any], audit: dict[str, Any] | None = None) -> str:
    """One row per measured (data set, samples N, model) and grader, then the published data sets not measured;
    below, what the counts mean and how each AUROC interval was made. ``audit``: the ``grader_audit`` section
    (the graders' error on hand labels), for the corrected accuracy beside the raw one."""
    from real_data_audit import corrected_cell

    pub = PUBLISHED["hassum"]["auroc"]
    head = ["data set", "grader", "samples N", "n (wrong / right)", "refused", "accuracy [95% Wilson]",
            "accuracy corrected for grader error [95% boot]", "AUROC SE [interval]", "AUROC SD [interval]", "published n (wrong / right)", "published SE / SD", "time"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    several = len({m["model"] for m in measured.values()}) > 1
    seen = set()
    for key, m in sorted(measured.items(), key=lambda km: (list(QA_NAMES).index(km[1]["dataset"]),
                                                            km[1]["n_samples"], km[1]["model"])):
        seen.add(m["dataset"])
        label = QA_NAMES[m["dataset"]] + (" (closed book)" if m.get("closed_book") else "")
        label += f" · `{m['model']}`" if several else ""
        lines.append(_hassum_row(label, m, m, m["grader"], True,
                                 corrected_cell(audit, key, m["dataset"], m["accuracy"], m["n"])))
        for grader, g in m.get("regraded", {}).items():
            lines.append(_hassum_row(f"{label}, same answers", m, g, grader, False,
                                     corrected_cell(audit, f"{key}/{grader}", m["dataset"], g["accuracy"], g["n"])))
    for name, p in pub.items():
        if name not in seen:
            counts, values = _published(p)
            lines.append(f"| {QA_NAMES[name]} | | — | not run (no file here) | | | | | | {counts} | {values} | |")
    return "\n".join([*lines, "", *_interval_notes(measured)])


def cgdp_table(measured: dict[str, Any]) -> str:
    """One row per (data set, model, belief) twin pair: the exhaustion gate's savings next to accuracy."""
    head = ["data set · model · belief", "n", "accuracy without → with", "with − without [95% Newcombe]",
            "context-token saving [95% boot]", "model-token saving [95% boot]", "equal accuracy?", "time"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in measured.values():
        for s in m["savings"]:
            d = s["accuracy_difference"]
            cells = [f"{m['dataset']} · {m['model']} · {s['belief']}", str(s["n"]),
                     f"{s['accuracy_without']:.0%} → {s['accuracy_with']:.0%}",
                     f"{100 * d['difference']:+.1f} pts [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"]
            for tok in ("context_tokens", "model_tokens"):
                t = s[tok]
                cells.append("—" if t["saving"] is None else
                             f"{t['saving']:+.0%} [{t['low']:+.0%}, {t['high']:+.0%}] "
                             f"({t['without']:,.0f} → {t['with']:,.0f})")
            cells += [_equal(s), _minutes(m.get("wall_s")) if s is m["savings"][0] else ""]
            lines.append("| " + " | ".join(cells) + " |")
    p = PUBLISHED["cgdp"]
    lines.append(f"| published {p['source'][:7]}: {p['model']} | — | — | \"no loss of task accuracy\" | "
                 f"up to +{p['max_saving']:.0%} (tokens, unspecified kind) | | claimed | |")
    return "\n".join(lines)


def _equal(s: dict[str, Any]) -> str:
    """Whether the gate kept accuracy: the same questions right, a difference within noise, or a real one."""
    d = s["accuracy_difference"]
    if s["accuracy_same"]:
        return "yes: right on exactly the same questions"
    if d["low"] <= 0 <= d["high"]:
        return (f"not shown: within noise ({d['only_with']} right only with, {d['only_without']} only without; "
                f"McNemar p = {d['p_value']:.2g})")
    return f"no ({d['only_with']} right only with, {d['only_without']} only without; McNemar p = {d['p_value']:.2g})"


def hawkes_table(measured: dict[str, Any]) -> str:
    """One row per selector of each cascade measurement, the published k = 3 numbers beside it."""
    pub = PUBLISHED["hawkes"]
    head = ["data · selector (k = 3)", "runs × steps", "mean S_t [95% t]", "late S_t [95% t]", "trend",
            "global drift ± sd", "local drift ± sd", "memory empty", "copies", "published mean / late / trend"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    several = len({m["model"] for m in measured.values()}) > 1
    for m in measured.values():
        data = m["data_label"] + (f" · `{m['model']}`" if several else "")
        for r in m["rows"]:
            p = pub["k3"].get(r["selector"])
            lines.append("| " + " | ".join([
                f"{data} · {SELECTOR_NAMES.get(r['selector'], r['selector'])}",
                f"{r['runs']} × {r['steps']}",
                f"{_f(r['mean_S'])} [{_f(r['mean_S_ci'][0])}, {_f(r['mean_S_ci'][1])}]",
                f"{_f(r['late_S'])} [{_f(r['late_S_ci'][0])}, {_f(r['late_S_ci'][1])}]",
                r["trend"], f"{_f(r['global_drift'])} ± {_f(r['global_drift_sd'])}",
                f"{_f(r['local_drift'])} ± {_f(r['local_drift_sd'])}",
                _pct(r.get("memory_empty")), _pct(r.get("copies")),
                f"{p['mean_S']:.3f} / {p['late_S']:.3f} / {p['trend']}" if p else "—"]) + " |")
    g, loc = pub["drift"]["global"], pub["drift"]["local"]
    lines.append(f"| published drift (selector not stated) | 3 runs | | | | {g[0]:.3f} ± {g[1]:.3f} | "
                 f"{loc[0]:.3f} ± {loc[1]:.3f} | | | |")
    return "\n".join(lines)


def memory_lines(measured: dict[str, Any]) -> list[str]:
    """What the memory-empty and copies columns mean, where replayed numbers come from, and a warning for every
    selector whose memory was empty at most steps (its S_t then measures the prompt, not the memory)."""
    out = ["memory empty: share of steps whose selector gave the model no memory (the text then comes from the "
           "node's instruction alone); copies: share of generated texts that repeat an earlier text of the run "
           "word for word (case and punctuation ignored) — both from `uncertainty_lab.cascade.memory_use`."]
    for m in measured.values():
        if m.get("memory_empty_from"):
            out.append(f"{m['data_label']}: memory empty {m['memory_empty_from']}.")
        for r in m["rows"]:
            share = r.get("memory_empty")
            if share is not None and share >= 0.5:
                out.append(f"**{m['data_label']} · {r['selector']}: EMPTY memory at {share:.0%} of the steps** — its "
                           "numbers say nothing about its memory.")
    return [x for line in out for x in (line, "")][:-1]  # one paragraph each


def _pct(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.0%}"


def paired_lines(measured: dict[str, Any]) -> list[str]:
    """The cascade's paired differences to the chronological baseline, one line per selector."""
    out = []
    for m in measured.values():
        for c in sorted(m["paired"], key=lambda c: c["selector"] != "hawkes"):
            out.append(f"- {m['data_label']}, {c['selector']} − {c['baseline']}: mean S_t "
                       f"{_ci(c['difference'], 'mean', '+.3f')} ({c['verdict']}); late S_t "
                       f"{_ci(c['late_difference'], 'mean', '+.3f')} ({c['late_verdict']}); paper: "
                       f"{_paper_gap(c['selector'], c['baseline'])}")
    return out


def _paper_gap(selector: str, baseline: str) -> str:
    k3 = PUBLISHED["hawkes"]["k3"]
    if selector not in k3 or baseline not in k3:
        return "—"
    a, b = k3[selector], k3[baseline]
    return f"{a['mean_S'] - b['mean_S']:+.3f} mean, {a['late_S'] - b['late_S']:+.3f} late (no interval reported)"


def _models(measured: dict[str, Any]) -> str:
    """The models (and grader / embedder) behind a section's measurements, in one line."""
    models = ", ".join(dict.fromkeys(f"`{m['model']}`" for m in measured.values()))
    extra = {m.get("grader") and f"grader `{m['grader']}`" for m in measured.values()} | \
        {m.get("embedder") and f"alignment embedder `{m['embedder']}`" for m in measured.values()}
    return "Model: " + models + "".join(f"; {e}" for e in sorted(x for x in extra if x)) + "."


def render(results: dict[str, Any]) -> str:
    """The generated block of `benchmarks/real_data.md`: machine, then one table per lab."""
    lines = [f"Machine: {results.get('machine', '—')}. Last measured {results.get('updated', '—')}.", ""]
    if results.get("hassum"):
        from real_data_audit import audit_lines

        audit = results.get("grader_audit")
        lines += ["### HASSUM: first-round semantic entropy (SE) and semantic density (SD) for wrong-answer "
                  "detection", "", _models(results["hassum"]), "", hassum_table(results["hassum"], audit), "",
                  *audit_lines(audit, results["hassum"]), ""]
    if results.get("cgdp"):
        lines += ["### CGDP: the exhaustion gate's token saving at equal accuracy", "", _models(results["cgdp"]), "",
                  cgdp_table(results["cgdp"]), ""]
    if results.get("hawkes"):
        lines += ["### HawkesLLM: alignment and drift at k = 3", "", _models(results["hawkes"]), "",
                  hawkes_table(results["hawkes"]), "", *memory_lines(results["hawkes"]), "",
                  *paired_lines(results["hawkes"]), ""]
    return "\n".join(lines).rstrip() + "\n"
