"""Peak memory and wall time of ``fit_hawkes`` on a 5-node stream with the default β grid, at 1e6 and 1e7 events.

Run: `python benchmarks/hawkes_memory.py [--events 1e6 1e7] [--before DIR] [--no-write]` (1e7 events: ~5 min and up
to ~8 GB per fit with the code before the change; run it alone on a shared machine). Prints a markdown report and
(unless --no-write) writes it into benchmarks/RESULTS.md between this script's markers.

Method:

- Data: the 5-node model of `benchmarks/hawkes.py` (`make_model(5)`: sparse α, ρ(G) = 0.6, β = 2), simulated by
  branching with a fixed seed on [0, M / Σ stationary rates], horizon = last event time; cached as .npy files under
  --data (a temporary folder by default) so every fit reads the same events.
- Each fit runs in a fresh child process that loads the events, builds the EventStream, notes its resident set
  (VmRSS: interpreter, numpy/scipy and the events), then calls `fit_hawkes(stream)` (default β grid
  r·(0.1, 0.3, 1, 3, 10, 30)) and reports its peak resident set (`ru_maxrss`, the whole process) and the fit's wall
  time. Sizes run one after another, never two at once.
- `--before DIR` first runs every size with the package in DIR (e.g. `mkdir /tmp/before && git archive <commit>
  uncertainty_lab | tar -x -C /tmp/before`), then with this tree, and compares the fitted numbers: log-likelihood of every candidate, μ, α and standard errors of
  the chosen one, max relative difference.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import machine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Hawkes fit memory — `benchmarks/hawkes_memory.py`"
BEGIN, END = "<!-- benchmarks/hawkes_memory.py: begin generated -->", "<!-- benchmarks/hawkes_memory.py: end generated -->"
N_NODES = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def rss_mb() -> float:
    """This process's resident set now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_data(m_events: int, folder: Path) -> tuple[Path, Path, Path]:
    """The cached events (times, nodes, end time) for about ``m_events`` events, simulated once."""
    paths = tuple(folder / f"hawkes_memory_{m_events}_{k}.npy" for k in ("times", "nodes", "end"))
    if all(p.exists() for p in paths):
        return paths
    sys.path.insert(0, str(ROOT))
    from hawkes import horizon, make_model

    from uncertainty_lab.hawkes import simulate

    model = make_model(N_NODES)
    log(f"[data] simulating ≈{m_events} events …")
    sim = simulate(model, T=horizon(model, m_events), seed=m_events + N_NODES, method="branching")
    np.save(paths[0], sim.times)
    np.save(paths[1], sim.nodes)
    np.save(paths[2], np.array([sim.times[-1]]))
    return paths


def child(paths: list[str]) -> None:
    """Runs in the child process: load, fit with the default grid, print one JSON line."""
    from uncertainty_lab.hawkes import EventStream, fit_hawkes

    times, nodes, end = (np.load(p) for p in paths)
    stream = EventStream(times, nodes, N_NODES, float(end[0]))
    del times, nodes
    loaded = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    fit = fit_hawkes(stream)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import uncertainty_lab.hawkes.fit as fit_module

    try:
        from uncertainty_lab.hawkes.memory import fit_memory_estimate as estimate
    except ImportError:  # the code before the estimate existed
        estimate = None
    out = {
        "events": stream.n_events, "loaded_mb": loaded, "peak_mb": peak, "seconds": seconds, "cpu": cpu,
        "estimate_mb": estimate(stream) / 2**20 if estimate else None,
        "package": fit_module.__file__, "beta": fit.beta, "loglik": fit.table.column("loglik").tolist(),
        "mu": fit.mu.tolist(), "alpha": fit.alpha.tolist(),
        "se_mu": fit.stderr.mu.tolist(), "se_alpha": fit.stderr.alpha.tolist(),
    }
    print(json.dumps(out))


def run_fit(paths: tuple[Path, ...], code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, __file__, "--child", *map(str, paths)], env=env, cwd=HERE,
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["load"] = load
    return out


def max_rel_diff(a: dict, b: dict) -> float:
    """Largest |a − b| / |a| over the candidates' log-likelihoods and the chosen μ, α and standard errors (NaN and 0
    entries must match exactly)."""
    worst = 0.0
    for key in ("loglik", "mu", "alpha", "se_mu", "se_alpha"):
        x, y = np.asarray(a[key], dtype=float).ravel(), np.asarray(b[key], dtype=float).ravel()
        same = (np.isnan(x) & np.isnan(y)) | (x == y)
        if np.any(np.isnan(x[~same])) or np.any(np.isnan(y[~same])):
            return float("inf")
        if (~same).any():
            worst = max(worst, float(np.max(np.abs(x - y)[~same] / np.abs(x[~same]))))
    return worst


def report(rows: list[tuple[str, dict]], diffs: dict, args, started: float) -> str:
    lines = [
        f"Machine: {machine()}. Recorded {time.strftime('%Y-%m-%d')}; whole run {time.perf_counter() - started:.0f} s.",
        "",
        f"Command: `{' '.join([Path(sys.executable).name] + sys.argv)}`",
        "",
        f"{N_NODES} nodes (the model of `benchmarks/hawkes.py`, ρ(G) = 0.6, β = 2), `fit_hawkes(stream)` with the "
        "default β grid (6 candidates); each fit in a fresh process, one at a time. Peak RSS = `ru_maxrss` of that "
        "process; \"loaded\" = its RSS after building the stream (interpreter, numpy, scipy, the events) — the fit's "
        "own share is the difference. Wall and CPU seconds of the `fit_hawkes` call (CPU = user + system of the process; "
        "with other engineers' jobs on the 2 cores, CPU is the steadier of the two). Load = 1-minute load average when "
        "the fit started.",
        "",
        "| code | events | loaded MB | peak RSS MB | peak − loaded MB | per event (bytes) | estimate MB | wall s "
        "| CPU s | load | chosen β |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in rows:
        fit_mb = r["peak_mb"] - r["loaded_mb"]
        est = f"{r['estimate_mb']:.0f}" if r["estimate_mb"] is not None else "—"
        lines.append(f"| {label} | {r['events']} | {r['loaded_mb']:.0f} | {r['peak_mb']:.0f} | {fit_mb:.0f} | "
                     f"{fit_mb * 2**20 / r['events']:.0f} | {est} | {r['seconds']:.1f} | {r['cpu']:.1f} | {r['load']:.2f} | "
                     f"{r['beta']:.4g} |")
    if diffs:
        lines += ["", "Same numbers before and after (max relative difference over every candidate's log-likelihood "
                  "and the chosen μ, α and standard errors): "
                  + "; ".join(f"{m} events {d:.1e}" for m, d in diffs.items()) + "."]
    return "\n".join(lines) + "\n"


def write_results(text: str) -> None:
    block = f"{BEGIN}\n{text}{END}\n"
    old = RESULTS.read_text()
    if BEGIN in old and END in old:
        new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", lambda _: block, old, count=1, flags=re.S)
    elif SECTION in old:
        head, tail = old.split(SECTION, 1)
        new = head + SECTION + "\n\n" + block + tail.lstrip("\n")
    else:
        new = old.rstrip("\n") + f"\n\n{SECTION}\n\n{block}"
    RESULTS.write_text(new)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=float, nargs="+", default=[1e6, 1e7], help="stream sizes (about)")
    parser.add_argument("--before", type=Path, help="a checkout of the code to compare with (its repository root)")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "uncertainty_lab_hawkes_memory")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows, diffs = [], {}
    for m in (int(x) for x in args.events):
        paths = make_data(m, args.data)
        runs = ([("before", args.before.resolve())] if args.before else []) + [("after" if args.before else "this",
                                                                                 ROOT)]
        results = {}
        for label, code in runs:
            log(f"[fit] {label}: ≈{m} events …")
            results[label] = run_fit(paths, code)
            r = results[label]
            log(f"[fit] {label}: {r['events']} events, peak {r['peak_mb']:.0f} MB (loaded {r['loaded_mb']:.0f}), "
                f"{r['seconds']:.1f} s (CPU {r['cpu']:.1f} s), load {r['load']:.2f}, package {r['package']}")
            rows.append((label, r))
        if args.before:
            diffs[results["after"]["events"]] = max_rel_diff(results["before"], results["after"])
    text = report(rows, diffs, args, started)
    print(text)
    if not args.no_write:
        write_results(text)
        log(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
