"""Search worlds (``kind = "search"``): a corpus of invented fact chains and an agent model of stated reliability,
answering the CGDP lab's prompts so the PBAI loop runs with a model-like ``llm`` policy (``llm = "world:<name>"``).

**The corpus** (``[corpus]``, built from ``seed``): ``questions`` questions with ``hops`` cycled. Question i is a chain
e_0 →r_1→ e_1 →r_2→ … →r_k→ e_k of invented names and distinct relations ("What is the r_k of … of the r_1 of
e_0?", gold e_k); hop j is one document "[id] e_{j-1}: e_{j-1}'s r_j is e_j." Every e_j (j < k) also has
``distractors`` documents "e_j's r is X" with relations outside the chain and objects X named nowhere else. The
hop documents are a question's ``supporting_ids`` (hop order, with the decomposition "What is the r_j of #j-1?"),
its entities' other documents its ``distractor_ids``; :meth:`SearchWorld.data` gives ``(documents, questions)``
(the ``world`` data loader, ``data = {loader = "world", world = "<name>"}``).

**The agent** (``[agent]``): h = how many of e_1, e_2, … appear, in order from e_1, in the state it is shown (the
belief's findings, or the implicit history's passages). The target query of hop j is "e_{j-1} r_j".

- policy: with h = k, ANSWER e_k with probability ``answer_when_done``, else re-search hop k (a re-check); with
  1 ≤ h < k, *stall* with probability ``stall`` (re-search hop h, already found: the same query, the same
  passages); otherwise target hop h+1 with probability ``query_skill``, else chase a wrong lead ("X r" for an
  object X of e_h's other facts and a relation no document of the question uses). The action line is written
  well-formed (``SEARCH: q``) with probability ``format_reliability``; a malformed reply is repairable by the
  lab's lenient parser (``search query - q``) with probability ``repairable``, else unparseable prose.
- extraction (predicate belief): each hop document of the question shown in the passages becomes ``FACT: <its
  sentence> [id]`` with probability ``extraction_accuracy`` (else it is missed: no line); an open question is
  closed (``DONE: Qn — e_j [id]``) once its hop's fact is written or already among the findings.
- final answer: e_k when it is in the notes, else the last chain name found (wrong), else "unknown".
- decomposition (``init = "llm"``): the hop questions as ``OPEN:`` lines.

Draws: each call's generator mixes the sample's seed with the question and the call's kind, so questions draw
independently and two arms that differ only in their gates (the same prompts up to the stop) draw the same
numbers — a paired comparison with common random numbers. :func:`chain_theory` gives the exact outcome
distribution when ``query_skill``, ``format_reliability`` and ``extraction_accuracy`` are 1 (theory to check the
lab against); :mod:`.search_audit` measures the stated rates back from the episodes.
"""

from __future__ import annotations

import difflib
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..datasets.search import Document, SearchQuestion, SubQuestion
from .base import World, WorldError, WorldLLM, world_kind

__all__ = ["AGENT", "CORPUS", "Chain", "SearchWorld", "chain_theory", "world_llm"]

#: [corpus] settings: default, kind
CORPUS: dict[str, tuple[Any, type]] = {"seed": (0, int), "questions": (40, int), "hops": ([2, 3, 4], list),
                                       "distractors": (3, int)}
#: [agent] settings (probabilities): default
AGENT: dict[str, float] = {"format_reliability": 1.0, "repairable": 0.5, "query_skill": 1.0, "stall": 0.0,
                           "extraction_accuracy": 1.0, "answer_when_done": 0.0}
#: the lab's prompts, recognised by the start of their system text (search/prompts.py; a test checks they match)
PROMPTS = {"policy": "You are a search agent", "extraction": "You keep a research notebook",
           "decomposition": "Split a question into", "answer": "Answer the question using only the notes"}
RELATIONS = ("founder", "mentor", "patron", "rival", "architect", "heir", "ally", "sponsor", "keeper", "successor",
             "tutor", "captain", "steward", "herald", "envoy", "scribe", "warden", "chronicler")
_ONSETS = ("B", "D", "K", "M", "N", "S", "T", "V", "Z", "Br", "Dr", "Kel", "Mor", "Th", "Tr", "Vel", "Yr", "Qu")
_NUCLEI = ("a", "e", "i", "o", "u", "ae", "ei", "ou", "ya")
_CODAS = ("rn", "sk", "th", "l", "m", "n", "r", "st", "x", "nd", "lv", "sh", "rk", "v")
_PROSE = ("I would next check who the {rel} of {ent} is.", "More evidence about {ent} is needed before I am sure.",
          "Not sure yet; the {rel} of {ent} might be in another document.", "")
_REPAIRABLE_SEARCH = ("search query - {q}", "Search: {q}", "query = {q}")
_REPAIRABLE_ANSWER = ("Final answer - {q}", "answer: {q}")
_QUESTION = re.compile(r"^Question: (.+)$", re.MULTILINE)
_PASSAGE = re.compile(r"^\[(?P<id>[^\]]+)\]", re.MULTILINE)
_OPEN_Q = re.compile(r"^Q(?P<n>\d+)\. (?P<text>.*) \(open\)$", re.MULTILINE)


@dataclass(frozen=True)
class Chain:
    """One question's fact chain: ``entities`` e_0..e_k, ``relations`` r_1..r_k, the hop documents' ``doc_ids``,
    the objects of the chain entities' other facts (``leads``: e_j → its X's) and the relations no document of the
    question uses (``spare``: the wrong leads' relations)."""

    question: SearchQuestion
    entities: tuple[str, ...]
    relations: tuple[str, ...]
    doc_ids: tuple[str, ...]
    leads: tuple[tuple[str, ...], ...]
    spare: tuple[str, ...]

    @property
    def k(self) -> int:
        return len(self.relations)

    def hop_query(self, j: int) -> str:
        """The query that targets hop j (1-based): "e_{j-1} r_j"."""
        return f"{self.entities[j - 1]} {self.relations[j - 1]}"

    def fact(self, j: int) -> str:
        return f"{self.entities[j - 1]}'s {self.relations[j - 1]} is {self.entities[j]}."

    def progress(self, state: str) -> int:
        """h: how many of e_1, e_2, … appear in ``state``, in order from e_1."""
        h = 0
        for name in self.entities[1:]:
            if name not in state:
                break
            h += 1
        return h


def _names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct invented two-word names."""
    out: dict[str, None] = {}

    def word() -> str:
        parts = [rng.choice(_ONSETS), rng.choice(_NUCLEI), rng.choice(_CODAS)]
        if rng.random() < 0.5:
            parts += [rng.choice(_NUCLEI), rng.choice(_CODAS)]
        return "".join(parts).capitalize()

    while len(out) < n:
        a, b = word(), word()
        if a != b:
            out[f"{a} {b}"] = None
    return list(out)


def _number(spec: dict[str, Any], key: str, default: Any, kind: type, error) -> Any:
    value = spec.get(key, default)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < (0 if key == "seed" else 1)):
        raise error(f"must be {'a non-negative' if key == 'seed' else 'a positive'} integer, got {value!r}", key)
    return value


def _table(world: World, name: str, allowed: dict[str, Any]) -> dict[str, Any]:
    table = world.spec.get(name, {})
    if not isinstance(table, dict):
        raise world.error(f"must be a table of settings, got {table!r}", name)
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, list(allowed), n=1)
            raise world.error("unknown setting" + (f" (did you mean {close[0]!r}?)" if close else "")
                              + f"; the settings are {', '.join(allowed)}", f"{name}.{key}")
    return table


@world_kind("search")
class SearchWorld(World):
    """A corpus of fact chains and an agent of stated reliability (see the module doc)."""

    def setup(self) -> None:
        unknown = sorted(set(self.spec) - {"kind", "name", "description", "corpus", "agent"})
        if unknown:
            raise self.error("unknown setting; a search world has kind, name, description, [corpus] and [agent]",
                             unknown[0])
        corpus = _table(self, "corpus", CORPUS)
        err = lambda msg, key: self.error(msg, f"corpus.{key}")  # noqa: E731
        self.seed = _number(corpus, "seed", 0, int, err)
        self.n_questions = _number(corpus, "questions", 40, int, err)
        self.n_distractors = _number(corpus, "distractors", 3, int, err)
        hops = corpus.get("hops", [2, 3, 4])
        if isinstance(hops, int) and not isinstance(hops, bool):
            hops = [hops]
        if not isinstance(hops, list) or not hops or not all(isinstance(h, int) and not isinstance(h, bool)
                                                             and 1 <= h <= 6 for h in hops):
            raise self.error(f"must be a list of hop counts between 1 and 6, e.g. [2, 3], got {hops!r}", "corpus.hops")
        if self.n_questions > 2000 or self.n_distractors > 8:
            raise self.error("at most 2000 questions and 8 distractors per entity", "corpus")
        self.hops = hops
        agent = _table(self, "agent", AGENT)
        self.rates: dict[str, float] = {}
        for key, default in AGENT.items():
            v = agent.get(key, default)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise self.error(f"must be a probability in [0, 1], got {v!r}", f"agent.{key}")
            self.rates[key] = float(v)
        self._build()

    # --- the corpus -------------------------------------------------------------------------------
    def _build(self) -> None:
        rng = np.random.default_rng([self.seed, 2026])
        ks = [self.hops[i % len(self.hops)] for i in range(self.n_questions)]
        need = sum(k + 1 for k in ks) + sum(k * self.n_distractors for k in ks)
        names = _names(rng, need)
        docs: list[tuple[str, str]] = []  # (title, text) before ids are given
        plans = []
        for i, k in enumerate(ks):
            rels = [str(r) for r in rng.permutation(RELATIONS)]
            chain_rels, other = rels[:k], rels[k:k + self.n_distractors]
            spare = tuple(rels[k + self.n_distractors:])
            ents = [names.pop() for _ in range(k + 1)]
            hop_docs = [len(docs) + j for j in range(k)]
            docs += [(ents[j], f"{ents[j]}'s {chain_rels[j]} is {ents[j + 1]}.") for j in range(k)]
            leads, dis = [], []
            for j in range(k):
                objs = tuple(names.pop() for _ in other)
                leads.append(objs)
                dis += [len(docs) + m for m in range(len(other))]
                docs += [(ents[j], f"{ents[j]}'s {r} is {x}.") for r, x in zip(other, objs, strict=True)]
            plans.append((i, k, ents, chain_rels, hop_docs, dis, tuple(leads), spare))
        order = rng.permutation(len(docs))  # corpus order says nothing about which documents support what
        ids = {int(pos): f"w{rank:05d}" for rank, pos in enumerate(order)}
        self.documents = [Document(ids[int(p)], *docs[int(p)]) for p in order]
        self.chains: dict[str, Chain] = {}
        self.doc_hop: dict[str, tuple[str, int]] = {}
        for i, k, ents, rels, hop_docs, dis, leads, spare in plans:
            text = "What is " + " of ".join(f"the {r}" for r in reversed(rels)) + f" of {ents[0]}?"
            decomposition = tuple(SubQuestion(f"What is the {rels[j]} of {ents[0] if j == 0 else f'#{j}'}?",
                                              ents[j + 1], ids[hop_docs[j]]) for j in range(k))
            q = SearchQuestion(id=f"{self.name}-{i:03d}", question=text, answer=ents[-1], hops=k,
                               supporting_ids=tuple(ids[d] for d in hop_docs),
                               distractor_ids=tuple(ids[d] for d in dis), decomposition=decomposition,
                               source=f"world:{self.name}")
            self.chains[text] = Chain(q, tuple(ents), tuple(rels), q.supporting_ids, leads, spare)
            for j, d in enumerate(q.supporting_ids, start=1):
                self.doc_hop[d] = (text, j)

    @property
    def questions(self) -> list[SearchQuestion]:
        return [c.question for c in self.chains.values()]

    def data(self, *, limit: int | None = None, sample: int | None = None,
             seed: int = 0) -> tuple[list[Document], list[SearchQuestion]]:
        """(documents, questions) as the search lab's data loaders give them (``sample`` / ``limit`` choose
        questions; the corpus stays whole)."""
        from ..datasets.subset import check_subset, take

        check_subset(limit, sample, seed)
        return list(self.documents), take(self.questions, limit=limit, sample=sample, seed=seed)

    # --- answering prompts -------------------------------------------------------------------------
    def chain_of(self, text: str) -> Chain:
        m = _QUESTION.search(text)
        chain = self.chains.get(m.group(1).strip()) if m else None
        if chain is None:
            raise WorldError(f"world {self.name}: the prompt's question {m.group(1)[:80] if m else '(none)'!r} is not "
                             f"one of this world's; run it on the world's own data: data = {{loader = \"world\", "
                             f"world = \"{self.name}\"}}")
        return chain

    def respond(self, messages: list[dict[str, str]], rng: np.random.Generator, *, temperature: float,
                max_tokens: int) -> str:
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        kind = next((k for k, prefix in PROMPTS.items() if system.startswith(prefix)), None)
        if kind is None:
            raise WorldError(f"world {self.name} (kind search) answers the search lab's prompts only "
                             f"({', '.join(PROMPTS)}); got a system text starting {system[:60]!r}")
        chain = self.chain_of(user)
        mix = zlib.crc32(f"{chain.question.id}|{kind}".encode())
        draw = np.random.default_rng([int(rng.integers(2**32)), mix])
        if kind == "policy":
            return self.policy_reply(chain, user, draw)
        if kind == "extraction":
            return self.extraction_reply(chain, user, draw, json_format="JSON" in system)
        if kind == "decomposition":
            return "\n".join(f"OPEN: {s.question}" for s in chain.question.decomposition)
        notes = user.split("\n\nQuestion:")[0]
        h = chain.progress(notes)
        return chain.entities[-1] if h == chain.k else (chain.entities[h] if h else "unknown")

    def intent(self, chain: Chain, state: str, draw: np.random.Generator) -> tuple[str, str, str]:
        """(what the agent means to do, action kind, argument): ``answer``, ``recheck``, ``stall``, ``target`` or
        ``off_target`` (see the module doc); one draw of ``u`` decides among them."""
        h, r = chain.progress(state), self.rates
        u, v = draw.random(), draw.random()
        if h == chain.k:
            if u < r["answer_when_done"]:
                return "answer", "answer", chain.entities[-1]
            return "recheck", "search", chain.hop_query(chain.k)
        if h >= 1 and u < r["stall"]:
            return "stall", "search", chain.hop_query(h)
        if v < r["query_skill"]:
            return "target", "search", chain.hop_query(h + 1)
        leads = chain.leads[h] or (chain.entities[h],)
        return "off_target", "search", f"{draw.choice(leads)} {draw.choice(chain.spare or chain.relations)}"

    def policy_reply(self, chain: Chain, state: str, draw: np.random.Generator) -> str:
        _, kind, arg = self.intent(chain, state, draw)
        u = draw.random()
        f, rep = self.rates["format_reliability"], self.rates["repairable"]
        if u < f:
            return f"{kind.upper()}: {arg}"
        if u < f + (1 - f) * rep:
            forms = _REPAIRABLE_ANSWER if kind == "answer" else _REPAIRABLE_SEARCH
            return str(draw.choice(forms)).format(q=arg)
        h = chain.progress(state)
        ent = chain.entities[min(h, chain.k - 1)]
        return str(draw.choice(_PROSE)).format(rel=chain.relations[min(h, chain.k - 1)], ent=ent)

    def extraction_reply(self, chain: Chain, user: str, draw: np.random.Generator, *, json_format: bool) -> str:
        state, _, passages = user.partition("\nPassages:\n")
        shown = [m.group("id") for m in _PASSAGE.finditer(passages)]
        facts: list[tuple[str, str]] = []
        written: set[int] = set()
        for doc_id in dict.fromkeys(shown):
            text, j = self.doc_hop.get(doc_id, ("", 0))
            if text == chain.question.question and draw.random() < self.rates["extraction_accuracy"]:
                facts.append((chain.fact(j), doc_id))
                written.add(j)
        findings = state.split("Questions to settle:")[0]
        known = {j for j in range(1, chain.k + 1) if chain.entities[j] in findings}
        targets = {chain.question.question: chain.k}
        targets.update({s.question: j for j, s in enumerate(chain.question.decomposition, start=1)})
        done = []
        for m in _OPEN_Q.finditer(state):
            j = targets.get(m.group("text").strip())
            if j is not None and (j in written or j in known):
                done.append((int(m.group("n")), chain.entities[j], chain.doc_ids[j - 1]))
        if json_format:
            return json.dumps({"facts": [{"text": t, "doc_ids": [i]} for t, i in facts], "open": [],
                               "done": [{"question": f"Q{n}", "doc_ids": [i]} for n, _, i in done], "refuted": []})
        return "\n".join([f"FACT: {t} [{i}]" for t, i in facts] + [f"DONE: Q{n} — {a} [{i}]" for n, a, i in done])


def world_llm(world: SearchWorld | World, **kwargs: Any) -> WorldLLM:
    """A :class:`WorldLLM` that answers from ``world`` as given (e.g. one built in a notebook from a changed spec)."""
    llm = WorldLLM(model=world.name, **kwargs)
    llm._world = world
    return llm


def chain_theory(k: int, stall: float, *, p: int = 2, max_steps: int = 8, gate: bool = True,
                 answer_when_done: float = 0.0) -> dict[str, float]:
    """The exact outcome of one k-hop episode when ``query_skill``, ``format_reliability`` and
    ``extraction_accuracy`` are 1: a dynamic programme over (hops found h, exhaustion streak) per step.

    Step 1 finds hop 1 (J = 0: nothing to repeat). With 1 ≤ h < k a round stalls with probability s (J = 1 and
    UPR = 0: it qualifies, streak + 1) or finds hop h+1 (new passages, UPR ≥ 1/3 > τ_U: streak 0). With h = k the
    agent answers with probability ``answer_when_done`` (not a round: the streak stays; without ``llm_self_stop``
    the search goes on) or re-checks (qualifies). The gate (``gate=True``) fires when the streak reaches ``p``;
    the budget stops after ``max_steps`` steps. Returns ``accuracy`` (P(h = k at the stop): the final answer is
    e_k exactly then), ``p_exhausted``, ``p_exhausted_incomplete`` (a premature stop) and ``mean_steps``.
    Without a budget limit and answer_when_done = 0, accuracy with the gate is (1 − s^p)^(k−1).
    """
    for name, value, ok in (("k", k, isinstance(k, int) and k >= 1), ("p", p, isinstance(p, int) and p >= 1),
                            ("max_steps", max_steps, isinstance(max_steps, int) and max_steps >= 1),
                            ("stall", stall, 0 <= stall <= 1), ("answer_when_done", answer_when_done,
                                                                0 <= answer_when_done <= 1)):
        if not ok:
            what = "a probability in [0, 1]" if name in ("stall", "answer_when_done") else "a positive integer"
            raise ValueError(f"{name} must be {what}, got {value!r}")
    states = {(0, 0): 1.0}
    acc = exhausted = premature = mean_steps = 0.0
    for t in range(1, max_steps + 1):
        nxt: dict[tuple[int, int], float] = {}
        for (h, streak), pr in states.items():
            if h == k:
                branches = [((h, streak), answer_when_done), ((h, streak + 1), 1 - answer_when_done)]
            elif h == 0:  # nothing found yet: no stall, the first round finds hop 1
                branches = [((1, 0), 1.0)]
            else:
                branches = [((h, streak + 1), stall), ((h + 1, 0), 1 - stall)]
            for (h2, s2), q in branches:
                if q <= 0:
                    continue
                w = pr * q
                if gate and s2 >= p:
                    exhausted += w
                    premature += w * (h2 < k)
                    acc += w * (h2 == k)
                    mean_steps += w * t
                elif t == max_steps:
                    acc += w * (h2 == k)
                    mean_steps += w * t
                else:
                    nxt[(h2, s2)] = nxt.get((h2, s2), 0.0) + w
        states = nxt
    return {"accuracy": acc, "p_exhausted": exhausted, "p_exhausted_incomplete": premature, "mean_steps": mean_steps}
