"""QA worlds (HASSUM): invented questions, each with a latent answer distribution over meaning clusters.

A question q has ``options`` answer clusters (places in an invented town), ``correct_answers`` of them correct. Each
cluster has surface forms: three the offline judges merge (``harbor``, ``the harbor``, ``The Harbor``) and one they
cannot (``They gather at the harbor``: a paraphrase only an entailment judge sees as the same), drawn with
probability ``hard_paraphrase``. A sample's cluster is drawn from

    p_correct(q, w, v) = σ(b_q + skill_w + gain_v)        (b_q: the question's ease; w: worker; v: prompt variant)

split evenly over the correct clusters; the rest, 1 − p_correct, split evenly over the wrong ones. On a *trap*
question (a seeded share ``trap_share``) the roles swap: one wrong cluster gets σ(·) and the correct ones share the
rest — the model is confidently wrong, and a stronger worker or a re-prompt makes it more so. Hence the regimes:
``calibrated`` (no traps, one correct answer: disagreement tracks error), ``overconfident`` (traps: agreement on a
wrong answer), ``underconfident`` (several correct answers: disagreement without error).

The world reads the orchestration lab's prompts: the question is the world's own question text found in the prompt,
the worker comes from the system prompt (``[workers.<name>] match``), the variant from the wording: ``reprompt``
(``New angle:``), ``delegate`` (the acceptance criteria without a new angle), plus ``rephrase_gain`` when the
prompt holds a rephrasing (``(Put differently:``). A rephrase request (``You rewrite questions``) gets the question
back reworded; a prompt holding none of the world's questions gets "I don't know.". Temperature is ignored (the distribution is the one at the lab's default 0.7). Each sample is drawn
with ``default_rng([sample seed, CRC32 of the messages])``, so distinct prompts draw independently.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import World, world_kind

__all__ = ["PLACES", "TOWNS", "QAQuestion", "QAWorld"]

#: answer clusters: places the default judge (all-MiniLM-L6-v2, cosine ≥ 0.85) keeps apart (max cross cosine 0.59)
#: and whose easy forms it merges (min 0.88); measured in tests/test_worlds_qa_judge.py
PLACES = ("harbor", "old mill", "church square", "river bridge", "town hall", "lighthouse", "railway station",
          "castle gate", "windmill", "bakery", "chapel", "boathouse", "school yard", "village green", "quarry",
          "orchard")
TOWNS = ("Pellingford", "Ashcombe", "Tarsby", "Wrenmouth", "Dunmere", "Kelloway", "Brisham", "Orlecote",
         "Fennick", "Haldersby", "Marrowdale", "Quenby", "Sallowmere", "Trevenna", "Usworth", "Vellincourt")
TEMPLATES = ("In {town}, where is the weekly market held?", "Where does the {town} spring parade begin?",
             "Where do the fishermen of {town} meet on Sundays?", "Where is the {town} lantern festival lit?")
PLURAL = ("Name one place where the {town} lantern walk stops ({k} stops in all).",
          "Name one place where the {town} harvest procession rests ({k} rests in all).",
          "Name one place where the {town} choir sings at midsummer ({k} places in all).",
          "Name one place where the {town} bell ringers meet ({k} places in all).")
EASY = ("{}", "the {}")
HARD = "They gather at the {}"
VARIANTS = ("ask", "reprompt", "delegate")
REPHRASE_REQUEST = "You rewrite questions"
REPHRASED = "(Put differently:"
REPROMPT = "New angle:"
DELEGATE = "Acceptance criteria:"
DEFAULT_WORKERS = {"direct": {"match": "", "skill": 0.0},
                   "careful": {"match": "careful expert", "skill": 1.0},
                   "plain": {"match": "brief, factual answer", "skill": -0.5}}
NUMBERS = {"seed": (0, 2**31), "n_questions": (2, 400), "options": (2, len(PLACES)), "correct_answers": (1, 4),
           "trap_share": (0.0, 1.0), "hard_paraphrase": (0.0, 1.0), "reprompt_gain": (-5.0, 5.0),
           "delegate_gain": (-5.0, 5.0), "rephrase_gain": (-5.0, 5.0), "ease_low": (-8.0, 8.0), "ease_high": (-8.0, 8.0)}
DEFAULTS = {"seed": 0, "n_questions": 40, "options": 5, "correct_answers": 1, "trap_share": 0.0, "hard_paraphrase": 0.05,
            "reprompt_gain": 0.5, "delegate_gain": 0.5, "rephrase_gain": 0.25, "ease_low": -2.0, "ease_high": 3.0}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class QAQuestion:
    """One world question: ``id``, ``text``, the ``clusters`` (place names), which are ``correct``, its ``ease`` b_q,
    whether it is a ``trap`` and, on a trap, the ``trap_cluster`` that takes the mass."""

    id: str
    text: str
    clusters: tuple[str, ...]
    correct: tuple[bool, ...]
    ease: float
    trap: bool
    trap_cluster: int = -1

    def forms(self, k: int) -> list[str]:
        """Cluster k's surface forms: the easy ones, then the hard paraphrase."""
        return [t.format(self.clusters[k]) for t in EASY] + [HARD.format(self.clusters[k])]


@world_kind("qa")
class QAWorld(World):
    """A QA world (see the module doc); :attr:`questions` lists them, :meth:`form_probabilities` gives the latent
    distribution over (cluster, form) for a worker and prompt variant."""

    def setup(self) -> None:
        spec = self.spec
        known = {"kind", "name", "description", "workers", *DEFAULTS}
        for key in spec:
            if key not in known:
                raise self.error(f"unknown setting; the settings are {', '.join(sorted(known))}", key)
        self.params: dict[str, Any] = {}
        for key, default in DEFAULTS.items():
            v = spec.get(key, default)
            lo, hi = NUMBERS[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi \
                    or (isinstance(default, int) and not isinstance(v, int)):
                kind = "an integer" if isinstance(default, int) else "a number"
                raise self.error(f"must be {kind} in [{lo}, {hi}], got {v!r}", key)
            self.params[key] = v
        p = self.params
        if p["correct_answers"] >= p["options"]:
            raise self.error(f"must be below options ({p['options']}): a question needs a wrong answer",
                             "correct_answers")
        if p["ease_low"] > p["ease_high"]:
            raise self.error(f"ease_low {p['ease_low']} is above ease_high {p['ease_high']}", "ease_low")
        self.workers = self._workers(spec.get("workers", DEFAULT_WORKERS))
        self.questions = self._questions()
        self._by_text = sorted(((q.text, q) for q in self.questions), key=lambda t: -len(t[0]))

    def _workers(self, table: Any) -> dict[str, tuple[str, float]]:
        if not isinstance(table, dict) or not table:
            raise self.error("must be a table {name = {match = \"...\", skill = 0.0}}", "workers")
        out = {}
        for name, w in table.items():
            if not isinstance(w, dict) or not isinstance(w.get("match", ""), str) \
                    or isinstance(w.get("skill", 0.0), bool) or not isinstance(w.get("skill", 0.0), (int, float)):
                raise self.error("each worker is {match = \"words of its system prompt\", skill = <logit shift>}",
                                 f"workers.{name}")
            out[name] = (w.get("match", "").lower(), float(w.get("skill", 0.0)))
        if not any(m == "" for m, _ in out.values()):
            raise self.error("one worker needs match = \"\" (the one any other system prompt is)", "workers")
        return out

    def _questions(self) -> list[QAQuestion]:
        p = self.params
        rng = np.random.default_rng(p["seed"])
        n, k = p["n_questions"], p["options"]
        eases = np.linspace(p["ease_low"], p["ease_high"], n)[rng.permutation(n)]
        traps = set(rng.choice(n, size=round(p["trap_share"] * n), replace=False).tolist())
        out = []
        for i in range(n):
            town = TOWNS[i % len(TOWNS)]
            clusters = tuple(PLACES[j] for j in rng.choice(len(PLACES), size=k, replace=False))
            m = p["correct_answers"]
            template = (PLURAL if m > 1 else TEMPLATES)[(i // len(TOWNS)) % len(TEMPLATES)]
            text = template.format(town=town, k=m)
            if i >= len(TOWNS) * len(TEMPLATES):
                text = f"{text} (Record {i // (len(TOWNS) * len(TEMPLATES)) + 1}.)"
            out.append(QAQuestion(f"{self.name}-{i:03d}", text, clusters, tuple(j < m for j in range(k)),
                                  float(eases[i]), i in traps, m if i in traps else -1))
        return out

    # -- the latent distribution ----------------------------------------------------------------------
    def cluster_probabilities(self, q: QAQuestion, worker: str, variant: str, rephrased: bool = False) -> np.ndarray:
        """P(cluster) of one sample: σ(b_q + skill + gain) on the correct clusters (the trap cluster on a trap)."""
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        p = self.params
        gain = {"ask": 0.0, "reprompt": p["reprompt_gain"], "delegate": p["delegate_gain"]}[variant]
        top = _sigmoid(q.ease + self.workers[worker][1] + gain + (p["rephrase_gain"] if rephrased else 0.0))
        k = len(q.clusters)
        favoured = [q.trap_cluster] if q.trap else [j for j in range(k) if q.correct[j]]
        out = np.full(k, (1.0 - top) / (k - len(favoured)))
        out[favoured] = top / len(favoured)
        return out

    def form_probabilities(self, q: QAQuestion, worker: str, variant: str, rephrased: bool = False
                           ) -> list[tuple[str, int, float]]:
        """(form, cluster, probability) of one sample: a cluster, then its hard paraphrase with probability
        ``hard_paraphrase``, else one of its easy forms uniformly."""
        h = self.params["hard_paraphrase"]
        out = []
        for k, pk in enumerate(self.cluster_probabilities(q, worker, variant, rephrased)):
            forms = q.forms(k)
            out += [(f, k, pk * (1 - h) / len(EASY)) for f in forms[:-1]] + [(forms[-1], k, pk * h)]
        return [t for t in out if t[2] > 0]

    # -- reading prompts ----------------------------------------------------------------------------
    def find_question(self, text: str) -> QAQuestion | None:
        """The world question whose text appears in ``text`` (the longest one), or None."""
        return next((q for t, q in self._by_text if t in text), None)

    def worker_of(self, system: str) -> str:
        """The worker whose ``match`` words appear in the system prompt (the catch-all ``match = ""`` last)."""
        low = system.lower()
        named = [(m, name) for name, (m, _) in self.workers.items() if m]
        return next((name for m, name in named if m in low),
                    next(name for name, (m, _) in self.workers.items() if not m))

    @staticmethod
    def variant_of(prompt: str) -> tuple[str, bool]:
        """(variant, rephrased) of a user prompt, from the coordinator's wording."""
        variant = "reprompt" if REPROMPT in prompt else "delegate" if DELEGATE in prompt else "ask"
        return variant, REPHRASED in prompt

    def respond(self, messages, rng, *, temperature, max_tokens):
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        q = self.find_question(user)
        if q is None:
            return "I don't know."
        if REPHRASE_REQUEST in system:
            return f"Tell me this: {q.text}"
        crc = zlib.crc32("\x00".join(f"{m['role']}:{m['content']}" for m in messages).encode())
        draw = np.random.default_rng([int(rng.integers(2**32)), crc])
        variant, rephrased = self.variant_of(user)
        table = self.form_probabilities(q, self.worker_of(system), variant, rephrased)
        probs = np.array([t[2] for t in table])
        form = table[int(draw.choice(len(table), p=probs / probs.sum()))][0]
        return f"Answer: {form}" if "Answer:" in user else form

    def data(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> list[Any]:
        """:meth:`items` chosen by ``limit`` / ``sample`` / ``seed`` like every loader (what the ``world`` data loader
        hands the orchestration lab: ``data = {loader = "world", world = "calibrated"}``)."""
        from ..datasets.subset import check_subset, take

        check_subset(limit, sample, seed)
        return take(self.items(), limit=limit, sample=sample, seed=seed)

    def items(self) -> list[Any]:
        """The questions as :class:`~uncertainty_lab.datasets.qa.QAItem` s: every form of a correct cluster is a
        gold answer, every form of a wrong one an incorrect reference."""
        from ..datasets.qa import QAItem

        return [QAItem(id=q.id, category="factual", question=q.text, source=f"world:{self.name}",
                       answers=tuple(f for k in range(len(q.clusters)) if q.correct[k] for f in q.forms(k)),
                       incorrect=tuple(f for k in range(len(q.clusters)) if not q.correct[k] for f in q.forms(k)),
                       meta={"trap": q.trap, "ease": q.ease}) for q in self.questions]
