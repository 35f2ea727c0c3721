"""Real benchmarks end to end (issue #12, item 5): each lab run from its config on a seeded sample of the real
data files you downloaded, with the embedded model (or any `--llm`), the numbers side by side with the published
ones. Nothing is downloaded; every data set you do not name is skipped.

Run (one measurement after another; a measurement the JSON holds with the same settings is skipped, an
interrupted one resumes from its journals; `--qa-sample NAME=N` sizes each data set; see `real_data.md`):

    python benchmarks/real_data.py --truthfulqa TruthfulQA.csv --strategyqa strategyqa_train.json \\
        --hotpotqa hotpot_dev_distractor_v1.json [--musique musique_ans_v1.0_dev.jsonl] [--gsm8k test.jsonl] \\
        [--gdelt GKG_FILES... --gdelt-nodes nodes.json] [--shipped-cascade] [--only hassum cgdp hawkes]

- **HASSUM** (`orchestrate run`, policy `none`): AUROC of the first-round discrete semantic entropy and semantic
  density for flagging a wrong answer, with stratified percentile-bootstrap intervals (given with at least 10 right
  and 10 wrong answers: `semantic.discrimination`), accuracy with its Wilson interval and
  the refusals, for TruthfulQA, StrategyQA, GSM8K and — closed book, question and gold answer only, read by the
  lab's own `hotpotqa` / `musique` loaders — HotpotQA and MuSiQue.

Every measurement runs the documented CLI config of its row, `examples/real_data/<name>.toml` (the same settings
`uncertainty-lab <lab> run --config` runs), with your file's path, the sample size and `--work-dir` put in.
- **CGDP** (`search run`, heuristic policy): gate sets with and without `exhaustion` on HotpotQA / MuSiQue, with
  the oracle reader (both beliefs) and the language model (`--search-beliefs`, implicit by default: the predicate
  belief asks the model at every step, hours on a CPU); the gate's token saving next to the accuracy difference.
- **HawkesLLM** (`cascade run`, k = 3, hawkes / recency / random): your GDELT files, or the shipped invented cascade.

The journals (which hold the questions and answers) go to `--work-dir`, outside the repository.
`benchmarks/real_data.json` receives aggregate numbers only — never a row of the data — merged by measurement,
and the generated block of `benchmarks/real_data.md` is rewritten from it (`real_data_tables.render`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from machine import machine
from real_data_tables import PUBLISHED, render

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- benchmarks/real_data.py: begin generated -->", "<!-- benchmarks/real_data.py: end generated -->"
QA_SAMPLE = {"truthfulqa": 90, "strategyqa": 60, "hotpotqa": 100, "musique": 100, "gsm8k": 100}
QA_SETS = tuple(QA_SAMPLE)
#: where each public file comes from (named when a file is missing)
SOURCES = {
    "truthfulqa": "TruthfulQA.csv from github.com/sylinrl/TruthfulQA",
    "strategyqa": "strategyqa_train.json from the StrategyQA release (allenai), JSON or JSONL",
    "hotpotqa": "hotpot_dev_distractor_v1.json from hotpotqa.github.io (or a Hugging Face `hotpot_qa` export)",
    "musique": "musique_ans_v1.0_dev.jsonl (or musique_full_v1.0_dev.jsonl) from github.com/StonyBrookNLP/musique",
    "gsm8k": "test.jsonl from github.com/openai/grade-school-math",
}


def _num(x: Any) -> Any:
    """A float for JSON (None for NaN)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def _auroc_ci(confidence: np.ndarray, correct: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    """AUROC of ``confidence`` for right vs wrong (= of the uncertainty for flagging a wrong answer) with its
    evidence (``Discrimination.to_dict``: n, wrong = positives, right = negatives, missing, the stratified bootstrap
    interval, or null and the reason below the minimum class count) over the questions that have a value."""
    from uncertainty_lab.semantic.discrimination import discrimination

    return discrimination(confidence, correct.astype(bool), resamples=n_boot, seed=seed).to_dict()


# --- the documented config of each row: examples/real_data/<name>.toml ------------------------------------------

EXAMPLES = HERE.parent / "examples" / "real_data"
#: the example config of each HASSUM row (HotpotQA and MuSiQue closed book through the lab's own loaders)
HASSUM_EXAMPLES = {"truthfulqa": "orchestrate_truthfulqa", "strategyqa": "orchestrate_strategyqa",
                   "hotpotqa": "orchestrate_hotpotqa_closed_book", "musique": "orchestrate_musique_closed_book",
                   "gsm8k": "orchestrate_gsm8k"}
#: the example config of each CGDP row (oracle reader / language model)
CGDP_EXAMPLES = {("hotpotqa", "oracle"): "search_hotpotqa_oracle", ("musique", "oracle"): "search_musique_oracle",
                 ("hotpotqa", "llm"): "search_hotpotqa_embedded"}
CLOSED_BOOK = ("hotpotqa", "musique")


def example_config(name: str, **changes: Any) -> dict[str, Any]:
    """The settings of ``examples/real_data/<name>.toml`` — the documented CLI config of a row — with ``changes``
    (a ``data`` change updates the data table key by key: the file's path and the sample size you chose)."""
    from uncertainty_lab.configfile import read_mapping

    config = read_mapping(EXAMPLES / f"{name}.toml")
    data = changes.pop("data", None)
    if data:
        config["data"] = {**config["data"], **data}
    config.update(changes)
    return config


def _slug(text: str) -> str:
    """A folder-safe name for a model spec (``ollama:qwen2.5:3b`` → ``ollama_qwen2.5_3b``)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text)


def _public(data: dict[str, Any]) -> dict[str, Any]:
    """The data setting as recorded: the file's name only (your folders stay on your machine)."""
    return {k: (Path(v).name if k == "path" and isinstance(v, str) else v) for k, v in data.items()}


# --- the three measurements ---------------------------------------------------------------------------------------


def _graded(labels: np.ndarray, refused: int, run: Any, args: argparse.Namespace,
            kept: np.ndarray | None = None) -> dict[str, Any]:
    """Accuracy (Wilson), refusals and both first-round AUROCs for one set of first-round labels of the questions
    ``kept`` (default: all); the others were graded uncertain and are counted, not scored."""
    from uncertainty_lab.semantic.evaluation import accuracy_ci

    kept = np.arange(len(run.records)) if kept is None else kept
    acc = accuracy_ci(labels)
    return {"n": len(labels), "wrong": int((~labels).sum()), "refused": refused,
            "uncertain": len(run.records) - len(kept),
            "accuracy": {"estimate": _num(acc.estimate), "low": _num(acc.low), "high": _num(acc.high),
                         "correct": int(acc.successes)},
            "auroc": {role: _auroc_ci(run.first_signal(role)[kept], labels, args.n_boot, args.seed)
                      for role in ("entropy", "density")}}


def regrade_first(run: Any, method: Any) -> tuple[np.ndarray, int]:
    """The first-round answers graded again with another grader (a name, a ``{"name", **params}`` table or an
    instance, resolved through ``registry.resolve("graders", ...)``; no model call for HASSUM's rule, which needs
    only the sentence embedder): their correctness and how many are refusals. Raises, with the count, when the
    grader is uncertain on some (an uncertain grade is never read as wrong)."""
    from uncertainty_lab.orchestration.grading import QAGrader

    grader = QAGrader.from_setting(method)
    grades = [grader(r.item, r.trace.rounds[0].candidate.answer.answer, r.trace.rounds[0].candidate.answer.raw)
              for r in run.records]
    unsure = sum(g.get("label") == "uncertain" for g in grades)
    if unsure:
        raise ValueError(f"grader {grader.name!r} is uncertain on {unsure} of {len(grades)} first-round answers; "
                         "they have no right/wrong label to score")
    return np.array([bool(g["correct"]) for g in grades]), sum(g.get("label") == "refused" for g in grades)


def _first_labels(run: Any) -> tuple[np.ndarray, int, np.ndarray]:
    """The first-round labels of the questions the lab's grader decided on, the refusal count, and which they are."""
    labels, kept = run.decided(first=True)
    return labels, run.label_counts(first=True)["refused"], kept


def measure_hassum(name: str, data: dict[str, Any], n_samples: int, args: argparse.Namespace) -> dict[str, Any]:
    """`orchestrate run` with the row's example config (policy `none`) on ``data`` (the file and sample size you
    chose): first-round AUROCs, accuracy, refusals under the lab's default grader; for TruthfulQA also under
    HASSUM's own embedding rule (the one its published runs used; `orchestrate_truthfulqa_hassum_grader.toml`)."""
    from uncertainty_lab.orchestration.experiment import run_experiment

    folder = f"{name}_N{n_samples}_q{data['sample']}_{_slug(args.llm)}"
    config = example_config(HASSUM_EXAMPLES[name], llm=args.llm, seed=args.seed, data=data, n_samples=n_samples,
                            out_dir=str(args.work_dir / "hassum" / folder), progress=False, figure=False)
    data = config["data"]
    closed_book = name in CLOSED_BOOK
    result = run_experiment(config)
    (model, _), run = next(iter(result.runs.items()))
    labels, refused, kept = _first_labels(run)
    record = {"lab": "orchestration", "dataset": name, "closed_book": closed_book, "model": model,
              "config": {**{k: v for k, v in config.items() if k not in ("out_dir", "progress", "figure")},
                         "data": _public(data)},
              "grader": result.grader.name, "n_samples": n_samples,
              **_graded(labels, refused, run, args, kept)}
    if name == "truthfulqa" and result.grader.name != "hassum":
        labels, refused = regrade_first(run, "hassum")
        record["regraded"] = {"hassum": _graded(labels, refused, run, args)}
    return record


def _saving_row(s: dict[str, Any]) -> dict[str, Any]:
    keep = ("policy", "belief", "with", "without", "n", "accuracy_with", "accuracy_without", "accuracy_same",
            "accuracy_note")
    row = {k: s[k] for k in keep}
    row["accuracy_difference"] = {k: _num(v) if isinstance(v, float) else v
                                  for k, v in s["accuracy_difference"].items()}
    for tok in ("context_tokens", "model_tokens"):
        row[tok] = {k: _num(v) for k, v in s[tok].items()}
    return row


def measure_cgdp(name: str, data: dict[str, Any], model: str, beliefs: list[str],
                 args: argparse.Namespace) -> dict[str, Any]:
    """`search run` (heuristic policy; gate sets with and without `exhaustion`) with ``model`` and ``beliefs``."""
    from uncertainty_lab.search.experiment import run_experiment

    spec = model if model == "oracle" else args.llm
    example = CGDP_EXAMPLES.get((name, model)) or CGDP_EXAMPLES[("hotpotqa", model)]
    data = {"loader": name, **({} if name == "hotpotqa" else {"split": "dev"}), **data}
    config = example_config(example, llm=spec, seed=args.seed, data=data, beliefs=beliefs, progress=False,
                            figure=False, out_dir=str(args.work_dir / "cgdp" / f"{name}_{_slug(spec)}_q{data['sample']}"))
    data = config["data"]
    result = run_experiment(config)
    conditions = []
    for r in result.summary_rows():
        conditions.append({"condition": r["condition"], "n": r["n"], "steps": r["steps"],
                           "exact_match": {k: _num(v) for k, v in r["exact_match"].items()},
                           "context_tokens": {k: _num(v) for k, v in r["context_tokens"].items()},
                           "model_tokens": {k: _num(v) for k, v in r["model_tokens"].items()},
                           "premature_stop": {k: _num(v) for k, v in r["premature_stop"].items()},
                           "stop_reasons": r["stop_reasons"]})
    return {"lab": "search", "dataset": name, "model": result.llm_label, "reader": model,
            "config": {**{k: v for k, v in config.items() if k not in ("out_dir", "progress", "figure")},
                       "data": _public(data)},
            "conditions": conditions, "savings": [_saving_row(s) for s in result.token_savings()]}


def _interval(iv: Any) -> dict[str, Any]:
    return {"mean": _num(iv.mean), "low": _num(iv.ci_low), "high": _num(iv.ci_high), "n": iv.n}


def measure_hawkes(label: str, data: dict[str, Any] | None, args: argparse.Namespace) -> dict[str, Any]:
    """`cascade run` at k = 3 with the three selectors of the paper's table."""
    from uncertainty_lab.cascade.comparisons import comparison_rows
    from uncertainty_lab.cascade.experiment import run_experiment

    config = example_config("cascade_shipped", llm=args.llm, seed=args.seed, runs=args.cascade_runs,
                            steps=args.cascade_steps, progress=False, figure=False, out_dir=str(
                                args.work_dir / "hawkes" / f"{_slug(label)}_{_slug(args.llm)}_r{args.cascade_runs}"
                                f"_s{args.cascade_steps}"))
    if data is not None:
        config["data"] = data
        config["n_train"] = args.gdelt_train
    result = run_experiment(config)
    keep = ("selector", "runs", "steps", "mean_S", "mean_S_ci", "late_S", "late_S_ci", "trend", "global_drift",
            "global_drift_sd", "local_drift", "local_drift_sd", "global_exceeds_local", "S_defined", "memory_empty",
            "copies", "copies_memory")
    rows = [{k: ([_num(x) for x in r[k]] if isinstance(r[k], list) else _num(r[k]) if isinstance(r[k], float)
                 else r[k]) for k in keep} for r in result.rows()]
    paired = [{"selector": c["selector"], "baseline": c["baseline"], "difference": _interval(c["difference"]),
               "late_difference": _interval(c["late_difference"]), "verdict": c["verdict"],
               "late_verdict": c["late_verdict"]} for c in comparison_rows(result, baseline="recency")
              if "difference" in c]
    public = {**{k: v for k, v in config.items() if k not in ("out_dir", "progress", "figure")}}
    if data is not None:
        public["data"] = {k: v for k, v in _public(data).items() if k != "domain_to_node"}
    return {"lab": "cascade", "data_label": label, "model": result.llm_label, "embedder": result.embedder_name,
            "config": public, "rows": rows, "paired": paired}


def replay_memory(record: dict[str, Any]) -> bool:
    """Fill ``memory_empty`` of a shipped-cascade record measured before it was recorded, by replaying each run's
    memories without the model (:func:`uncertainty_lab.cascade.memory_use.memory_schedule`: the schedule and the
    hawkes / recency / random memories depend on times and nodes only); False when the record needs data files
    (GDELT) or already has it. Seconds, not the measurement's hour."""
    from uncertainty_lab.cascade.experiment import prepare, run_seed
    from uncertainty_lab.cascade.memory_use import memory_schedule

    cfg = record.get("config", {})
    if "data" in cfg or all("memory_empty" in r for r in record["rows"]):
        return False
    setup = prepare({})
    for row in record["rows"]:
        shares = []
        for r in range(cfg["runs"]):
            sizes = memory_schedule(setup, row["selector"], cfg["ks"][0], run_seed(cfg["seed"], r), cfg["steps"])
            shares.append(sum(s == 0 for s in sizes) / len(sizes) if sizes else math.nan)
        row["memory_empty"] = _num(float(np.nanmean(shares)))
    record["memory_empty_from"] = ("replayed without the model (memory_schedule, benchmarks/real_data.py "
                                   "--replay-memory): the runs' event schedule and memories do not depend on texts")
    return True


# --- driver -------------------------------------------------------------------------------------------------------


class Job(NamedTuple):
    """One measurement: its ``section`` and ``key`` in the JSON, the settings that make it (``signature``: a
    finished measurement with the same signature is not run again) and the ``run`` that measures it."""

    section: str
    key: str
    signature: dict[str, Any]
    run: Callable[[], dict[str, Any]]


def qa_sample(args: argparse.Namespace, name: str) -> int:
    """Questions to sample from data set ``name``: ``--qa-sample NAME=N``, else ``--qa-sample N``, else the default."""
    return args.qa_sample.get(name, args.qa_sample.get("*", QA_SAMPLE[name]))


def plan(args: argparse.Namespace) -> list[Job]:
    """Every measurement the given files allow, in the order run."""
    jobs: list[Job] = []
    base = {"llm": args.llm, "seed": args.seed}
    if "hassum" in args.only:
        for name in QA_SETS:
            path = getattr(args, name)
            for n in args.n_samples if path else ():
                sig = {**base, "sample": qa_sample(args, name), "n_samples": n, "n_boot": args.n_boot}
                jobs.append(Job("hassum", f"{name}/N{n}/{args.llm}", sig,
                                lambda name=name, path=path, n=n: _hassum_job(name, path, n, args)))
    if "cgdp" in args.only:
        for name in ("hotpotqa", "musique"):
            path = getattr(args, name)
            for model in args.search_models if path else ():
                sample = args.search_sample if model == "oracle" else args.search_sample_llm or args.search_sample
                data = {"path": path, "sample": sample, "seed": args.seed}
                beliefs = ["implicit", "predicate"] if model == "oracle" else args.search_beliefs
                spec = "oracle" if model == "oracle" else args.llm
                jobs.append(Job("cgdp", f"{name}/{spec}", {"llm": spec, "seed": args.seed, "sample": sample,
                                                           "beliefs": beliefs},
                                lambda d=data, m=model, b=beliefs, name=name: measure_cgdp(name, d, m, b, args)))
    if "hawkes" in args.only:
        sig = {**base, "runs": args.cascade_runs, "steps": args.cascade_steps}
        if args.gdelt:
            nodes = json.loads(Path(args.gdelt_nodes).read_text(encoding="utf-8"))
            data = {"loader": "gdelt", "path": args.gdelt, "domain_to_node": nodes, "format": args.gdelt_format}
            if args.gdelt_gkg:
                data["gkg"] = args.gdelt_gkg
            jobs.append(Job("hawkes", f"gdelt/{args.llm}", {**sig, "files": [Path(f).name for f in args.gdelt]},
                            lambda: measure_hawkes("gdelt", data, args)))
        if args.shipped_cascade:
            jobs.append(Job("hawkes", f"shipped/{args.llm}", sig,
                            lambda: measure_hawkes("shipped invented cascade", None, args)))
    return jobs


def _hassum_job(name: str, path: str, n: int, args: argparse.Namespace) -> dict[str, Any]:
    """One HASSUM row: its example config with your file, sample size and seed (HotpotQA, MuSiQue closed book and
    GSM8K read by the package's loaders, as `orchestrate run` reads them)."""
    return measure_hassum(name, {"path": path, "sample": qa_sample(args, name), "seed": args.seed}, n, args)


def update_outputs(results: dict[str, Any], json_path: Path, md_path: Path) -> None:
    """Write the JSON and rewrite the generated block of the markdown (created with a title when missing)."""
    json_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = md_path.read_text(encoding="utf-8") if md_path.exists() else f"# Real benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip() + f"\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    md_path.write_text(f"{head}{BEGIN}\n{render(results)}{END}{tail}", encoding="utf-8")


def _sizes(text: str) -> tuple[str, int]:
    """``N`` (every QA data set) or ``NAME=N`` for ``--qa-sample``."""
    name, _, n = text.rpartition("=")
    name = name or "*"
    if name not in (*QA_SETS, "*") or not n.isdigit() or int(n) < 1:
        raise argparse.ArgumentTypeError(f"expected N or NAME=N with NAME in {', '.join(QA_SETS)}, got {text!r}")
    return name, int(n)


def check_files(args: argparse.Namespace) -> list[str]:
    """One message per data file named on the command line that is not there (nothing is downloaded)."""
    out = []
    for name in QA_SETS:
        path = getattr(args, name)
        if path and not Path(path).is_file():
            out.append(f"--{name} {path}: no such file. This script downloads nothing: get {SOURCES[name]}, "
                       f"then pass its path.")
    for flag in ("gdelt", "gdelt_gkg"):
        for path in getattr(args, flag) or ():
            if not Path(path).exists():
                out.append(f"--{flag.replace('_', '-')} {path}: no such file or folder (GDELT 2.0 exports from "
                           "data.gdeltproject.org/gdeltv2/).")
    if args.gdelt_nodes and not Path(args.gdelt_nodes).is_file():
        out.append(f"--gdelt-nodes {args.gdelt_nodes}: no such file (a JSON object mapping source domains to nodes).")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    for name, what in (("truthfulqa", "TruthfulQA.csv"), ("strategyqa", "strategyqa_train.json"),
                       ("hotpotqa", "a HotpotQA file (published or Hugging Face layout)"),
                       ("musique", "a MuSiQue .jsonl"), ("gsm8k", "GSM8K test.jsonl")):
        p.add_argument(f"--{name}", metavar="PATH", help=what)
    p.add_argument("--gdelt", nargs="+", metavar="PATH", help="GDELT file(s) or a folder")
    p.add_argument("--gdelt-nodes", metavar="JSON", help="a JSON file {domain: node} (needed with --gdelt)")
    p.add_argument("--gdelt-gkg", nargs="+", metavar="PATH", help="GKG files for an Events export's titles")
    p.add_argument("--gdelt-format", default="gkg", choices=("gkg", "events"))
    p.add_argument("--gdelt-train", type=int, default=198, help="events of the chronological split that train")
    p.add_argument("--shipped-cascade", action="store_true", help="run the shipped invented cascade too")
    p.add_argument("--only", nargs="+", default=["hassum", "cgdp", "hawkes"], choices=("hassum", "cgdp", "hawkes"))
    p.add_argument("--llm", default="embedded", help="the model of every lab (e.g. ollama:qwen2.5:3b)")
    p.add_argument("--n-samples", nargs="+", type=int, default=[5], help="HASSUM samples per worker call")
    p.add_argument("--qa-sample", nargs="+", type=_sizes, default=[], metavar="[NAME=]N",
                   help=f"questions per QA data set, all or by name (default {QA_SAMPLE})")
    p.add_argument("--search-sample", type=int, default=100, help="questions per search data set (oracle reader)")
    p.add_argument("--search-sample-llm", type=int, help="questions per search data set with the language model "
                   "(default: --search-sample)")
    p.add_argument("--search-models", nargs="+", default=["oracle", "llm"], choices=("oracle", "llm"))
    p.add_argument("--search-beliefs", nargs="+", default=["implicit"], choices=("implicit", "predicate"))
    p.add_argument("--cascade-runs", type=int, default=3)
    p.add_argument("--cascade-steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "uncertainty_lab_real_data")
    p.add_argument("--json", type=Path, default=HERE / "real_data.json")
    p.add_argument("--markdown", type=Path, default=HERE / "real_data.md")
    p.add_argument("--render", action="store_true", help="only rewrite the markdown's tables from the JSON")
    p.add_argument("--replay-memory", action="store_true", help="with --render: first fill the memory-empty share "
                   "of cascade records that lack it by replaying their memories without the model (seconds)")
    p.add_argument("--redo", action="store_true", help="measure again what the JSON already holds with the same "
                   "settings (the journals in --work-dir still resume)")
    args = p.parse_args(argv)
    args.qa_sample = dict(args.qa_sample)
    if args.gdelt and not args.gdelt_nodes:
        p.error("--gdelt needs --gdelt-nodes (a JSON file mapping source domains to node names)")
    missing = check_files(args)
    if missing:
        p.error("\n  ".join(["data file(s) missing:", *missing]))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        results = json.loads(args.json.read_text(encoding="utf-8"))
        if args.replay_memory:
            for key, record in results.get("hawkes", {}).items():
                print(f"hawkes {key}: memory replayed" if replay_memory(record) else f"hawkes {key}: nothing to replay")
        update_outputs(results, args.json, args.markdown)
        return 0
    jobs = plan(args)
    if not jobs:
        print("nothing to measure: give at least one data file (see --help)")
        return 1
    results = json.loads(args.json.read_text(encoding="utf-8")) if args.json.exists() else {}
    results["published"] = PUBLISHED
    for job in jobs:
        old = results.get(job.section, {}).get(job.key)
        if old and old.get("signature") == job.signature and not args.redo:
            print(f"{job.section} {job.key}: measured on {old.get('date')} with these settings (--redo to repeat)")
            continue
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        print(f"[{datetime.datetime.now():%H:%M:%S}] {job.section} {job.key} …", flush=True)
        record = job.run()
        record.update(signature=job.signature, wall_s=round(time.perf_counter() - t0, 1),
                      load_start=round(load0, 2), load_end=round(os.getloadavg()[0], 2),
                      date=f"{datetime.date.today()}")
        results.setdefault(job.section, {})[job.key] = record
        results.update(machine=machine(), updated=f"{datetime.date.today()}")
        update_outputs(results, args.json, args.markdown)
        print(f"  done in {record['wall_s'] / 60:.1f} min", flush=True)
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
