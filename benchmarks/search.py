"""Search benchmark: BM25 latency on the shipped corpus and on a generated 100k-document corpus (target < 10 ms per
query at 100k, index build time reported), and the per-step bookkeeping of the CGDP agent — gates and belief
updates — with model calls excluded.

Run: `python benchmarks/search.py [--docs 100000] [--queries 300] [--repeat 200]`. Prints a markdown table to paste
into RESULTS.md.

- **Queries.** Shipped corpus: every question and every decomposition sub-question of the shipped set (≈ 400
  queries). 100k corpus: `--queries` queries drawn (seeded) from the generated documents' own titles and words, so
  they hit real postings; plus the same number of full-question-length queries (≈ 15 words) for the long tail.
  Latency = wall time of `SearchEnvironment.search(query)` (tokenise, BM25 scores over the whole corpus, top-k
  with ties, render the passages, count their tokens), k = 3, median and p95 over all queries after a warm-up.
- **The generated corpus** (`synthetic_corpus`): deterministic (seed 0), no network. Names are composed from
  syllables (12 000 distinct names); each document has a two-word title and 2–5 template sentences linking it to
  other names, places and years (≈ 30 words), like the shipped corpus — so posting lists have realistic lengths.
  Index build = `SearchEnvironment(documents)` (our tokenisation plus `bm25s` indexing).
- **Bookkeeping per step, model calls excluded.** A fixed 8-step trajectory of real observations (the heuristic
  policy's searches for a shipped question) is replayed: the five gates' `update` (``answer_convergence`` is not
  included — it samples the model, so its cost is generation), the implicit belief's append-and-truncate, the
  predicate belief's parse-and-apply of a canned extraction (a stub model that returns the text instantly), and
  the snapshot both take for the JSONL record. The full agent step (`run_episode` with the heuristic policy and an
  instant stub model, no file) is reported too; it includes the search itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from machine import machine

TARGET_MS_100K = 10.0


# --- the generated corpus ---------------------------------------------------------------------------------------

_ONSETS = ["b", "br", "d", "dr", "f", "g", "h", "k", "kl", "l", "m", "n", "p", "qu", "r", "s", "st", "t", "th", "v",
           "w", "y", "z"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ei", "ia", "y"]
_CODAS = ["", "n", "r", "s", "th", "ck", "ld", "nd", "x", "l", "m", "v"]
_KINDS = ["surveyor", "printer", "engraver", "mathematician", "weaver", "guild", "society", "bank", "loom",
          "astrolabe", "expedition", "brotherhood", "company", "conservatory", "codex", "chronometer", "tapestry"]
_TEMPLATES = [
    "{a} was a {kind} born in {year} in {place}.",
    "{a} founded the {b} {kind} in {year}.",
    "It is kept at the {b} {kind} in {place}.",
    "{a} was married to {b}.",
    "{a} belonged to the {b} {kind}.",
    "Its headquarters are in {place}, near {b}.",
    "{a} succeeded {b} as first magistrate of {place} in {year}.",
    "The {kind} was designed by {b} and built in {year}.",
]


def _names(rng: np.random.Generator, n: int) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        k = int(rng.integers(2, 4))
        word = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] +
                       _CODAS[rng.integers(len(_CODAS))] for _ in range(k))
        out.add(word.capitalize())
    return sorted(out)


def synthetic_corpus(n_docs: int = 100_000, seed: int = 0):
    """``n_docs`` deterministic invented-world documents (see the module doc)."""
    from uncertainty_lab.datasets.search import Document

    rng = np.random.default_rng(seed)
    words = _names(rng, 12_000)
    places = words[:600]
    docs = []
    for i in range(n_docs):
        w = rng.integers(len(words), size=8)
        title = f"{words[w[0]]} {words[w[1]]}"
        sentences = []
        for _ in range(int(rng.integers(2, 6))):
            t = _TEMPLATES[rng.integers(len(_TEMPLATES))]
            sentences.append(t.format(a=title, b=f"{words[w[2 + len(sentences)]]} {words[w[3]]}",
                                      kind=_KINDS[rng.integers(len(_KINDS))], year=int(rng.integers(1650, 1950)),
                                      place=places[rng.integers(len(places))]))
        docs.append(Document(f"syn-{i:06d}", title, " ".join(sentences)))
    return docs


# --- timing helpers ---------------------------------------------------------------------------------------------

def latencies_ms(fn, items, warmup: int = 20) -> list[float]:
    for x in items[:warmup]:
        fn(x)
    out = []
    for x in items:
        t0 = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def median_us(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95))


class InstantLLM:
    """A stub model: returns ``reply`` at once (the benchmark excludes model time)."""

    name = "stub"
    supports_logprobs = False

    def __init__(self, reply: str = "Drasir"):
        self.reply = reply

    def model_id(self) -> str:
        return "instant"

    def cache_backend_name(self) -> str:
        return "stub"

    def complete(self, messages, *, n=1, seed=0, **kw):
        from uncertainty_lab.llm import Completion

        text = self.reply(messages) if callable(self.reply) else self.reply
        return [Completion(text, "stop", "stub", "instant", seed, i) for i in range(n)]


# --- the benchmark ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000, help="documents in the generated corpus")
    ap.add_argument("--queries", type=int, default=300, help="queries of each kind on the generated corpus")
    ap.add_argument("--repeat", type=int, default=200, help="repeats of each bookkeeping measurement")
    args = ap.parse_args(argv)

    import bm25s

    from uncertainty_lab.datasets.search import load_search_questions
    from uncertainty_lab.search import SearchEnvironment, make_belief, make_gates, run_episode
    from uncertainty_lab.search.oracle import OracleReader

    rows: list[tuple[str, str, str, str]] = []
    start_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t_all = time.perf_counter()

    # shipped corpus
    t0 = time.perf_counter()
    env = SearchEnvironment()
    build_small = time.perf_counter() - t0
    questions = load_search_questions()
    queries = [q.question for q in questions] + [s.question for q in questions for s in q.decomposition]
    lat = latencies_ms(env.search, queries)
    rows.append(("index build, shipped corpus (300 docs)", f"{build_small * 1000:.1f} ms", "", ""))
    rows.append((f"search latency, shipped corpus, k = 3 ({len(queries)} queries)",
                 f"median {statistics.median(lat):.2f} ms, p95 {p95(lat):.2f} ms", "", ""))

    # generated corpus
    t0 = time.perf_counter()
    docs = synthetic_corpus(args.docs)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    big = SearchEnvironment(docs)
    build_big = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    picks = rng.integers(len(docs), size=args.queries)
    short = [f"{docs[i].title} {docs[i].text.split()[-1].strip('.')}" for i in picks]
    long_ = [f"In which year did the {docs[i].title} {' '.join(docs[i].text.split()[3:14])}" for i in picks]
    lat_short = latencies_ms(big.search, short)
    lat_long = latencies_ms(big.search, long_)
    both = lat_short + lat_long
    med = statistics.median(both)
    rows.append((f"generate {args.docs:,} documents (deterministic, seed 0)", f"{gen_s:.1f} s", "", ""))
    rows.append((f"index build, {args.docs:,} docs (tokenise + bm25s index)", f"{build_big:.1f} s", "", ""))
    rows.append((f"search latency, {args.docs:,} docs, k = 3, short queries (3 words)",
                 f"median {statistics.median(lat_short):.2f} ms, p95 {p95(lat_short):.2f} ms", "", ""))
    rows.append((f"search latency, {args.docs:,} docs, k = 3, long queries (≈ 15 words)",
                 f"median {statistics.median(lat_long):.2f} ms, p95 {p95(lat_long):.2f} ms", "", ""))
    rows.append((f"search latency, {args.docs:,} docs, all {len(both)} queries",
                 f"median {med:.2f} ms, p95 {p95(both):.2f} ms", f"< {TARGET_MS_100K:g} ms",
                 f"{med / TARGET_MS_100K:.2f} (p95 {p95(both) / TARGET_MS_100K:.2f})"))
    del big, docs

    # bookkeeping per step (model calls excluded): replay an 8-step trajectory
    q = next(x for x in questions if x.id == "q001")
    oracle = OracleReader(questions)
    traj = run_episode(q, env, llm=oracle, policy="heuristic", belief="predicate",
                       gates=[("fixed_budget", {"max_steps": 8})], max_steps=8)
    steps = traj.steps
    from uncertainty_lab.search import Action, Observation

    obs = [Observation(Action(s.action, s.query), s.passage_ids, s.scores, s.observation, s.cost) for s in steps]
    extraction = "\n".join(f"FACT: {env.document(i).title} is described here. [{i}]" for i in steps[0].passage_ids[:2])
    stub = InstantLLM(extraction)

    four = make_gates(["exhaustion", "fixed_budget", "llm_self_stop", "belief_complete"])
    exhaustion = four[0]

    def replay_gates():
        for g in four:
            g.reset()
        for s in steps:
            for g in four:
                g.update(s)

    def replay_belief(kind: str):
        def run():
            b = make_belief(kind)
            b.start(q.question)
            for t, o in enumerate(obs, 1):
                docs_ = {i: f"{env.document(i).title}: {env.document(i).text}" for i in o.passage_ids}
                b.update(t, o.action, o, llm=stub, seed=0, documents=docs_)
                b.snapshot()
        return run

    def replay_exhaustion():
        exhaustion.reset()
        for s in steps:
            exhaustion.update(s)

    n = len(steps)
    ex = median_us(replay_exhaustion, args.repeat) / n
    gates_us = median_us(replay_gates, args.repeat) / n
    imp = median_us(replay_belief("implicit"), args.repeat) / n
    pred = median_us(replay_belief("predicate"), args.repeat) / n
    rows.append(("exhaustion gate update, per step", f"{ex:.1f} µs", "", ""))
    rows.append(("four gates' updates (exhaustion, fixed_budget, llm_self_stop, belief_complete), per step",
                 f"{gates_us:.1f} µs", "", ""))
    rows.append(("implicit belief: append + truncate (600-token budget) + snapshot, per step", f"{imp:.1f} µs", "", ""))
    rows.append(("predicate belief: prompt + parse + apply a 2-fact extraction + snapshot, per step (stub model)",
                 f"{pred:.1f} µs", "", ""))

    def whole(kind: str):
        def run():
            run_episode(q, env, llm=InstantLLM(extraction if kind == "predicate" else "Drasir"), policy="heuristic",
                        belief=kind, gates=["exhaustion", ("fixed_budget", {"max_steps": 8})], max_steps=8)
        return run

    for kind in ("implicit", "predicate"):
        ep_steps = len(run_episode(q, env, llm=InstantLLM(extraction if kind == "predicate" else "Drasir"),
                                   policy="heuristic", belief=kind,
                                   gates=["exhaustion", ("fixed_budget", {"max_steps": 8})], max_steps=8).steps)
        us = median_us(whole(kind), max(10, args.repeat // 10)) / ep_steps
        rows.append((f"whole agent step, {kind} belief (search + belief + gates + records; stub model), per step",
                     f"{us / 1000:.2f} ms", "", ""))

    total = time.perf_counter() - t_all
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Machine: {machine()}; numpy {np.__version__}, bm25s {bm25s.__version__}. "
          f"Load average {start_load:.2f} at start, {end_load:.2f} at end (1-min). Whole run {total:.0f} s.\n")
    print(f"Command: `python benchmarks/search.py --docs {args.docs} --queries {args.queries} --repeat {args.repeat}`\n")
    print("| measurement | result | target | measured/target |")
    print("|---|---|---|---|")
    for name, value, target, ratio in rows:
        print(f"| {name} | {value} | {target} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
