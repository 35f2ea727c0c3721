"""Belief states b_t: what the agent carries from step to step.

``implicit`` — the baseline of today's harnesses (paper Eq. 2): s_{t+1} = Truncate(s_t ⊕ {a_t, o_t}). The
state is the raw history, one entry per step ("Step t. SEARCH: q" and the passages shown); Truncate drops
whole entries, oldest first, until the history fits ``budget`` tokens; if the newest entry alone is larger,
its tail is cut (marked "…"). The question is *pinned* above the history and never truncated (it does not
count against the budget), so the baseline cannot fail merely by forgetting q.

``predicate`` — an orchestrator-managed belief (PBAI, paper §5): *findings* (confirmed facts, each with the ids
of the documents that state it) and *predicates* (questions that must be settled, each open, satisfied or
refuted, with evidence ids). After each observation that shows at least one passage, ONE extraction call
asks the model what the passages settle; its output is read by :mod:`~uncertainty_lab.search.extraction`
(parsed strictly, common deviations repaired, the rest rejected — every item's fate recorded in the step).

Bounds (the orchestrator enforces them, per list): ``max_findings`` (default 6) and ``max_predicates``
(default 6, all statuses count). Eviction when a list is over its bound:

- findings: the oldest finding that is not *protected* goes; a finding is protected when it is the only
  finding citing evidence of a satisfied predicate (the paper's "never evict the only evidence for a
  satisfied predicate"). If every other finding is protected the new finding is rejected instead.
- predicates: the oldest refuted predicate goes, else the oldest satisfied one; open questions are never
  evicted — if all are open, the new question is rejected (the goal must not be forgotten).

A finding whose text equals an existing one (after normalisation) merges its ids into it; an OPEN equal to an
existing predicate is a duplicate (no change). :data:`BELIEFS` names the two for
:func:`~uncertainty_lab.registry.resolve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..registry import Catalogue, resolve
from ..semantic.text import normalise_answer
from .environment import Action, Observation
from .extraction import ParsedItem, parse_decomposition, parse_extraction, passages_from_text, update_status
from .prompts import decomposition_messages, extraction_messages
from .text import check_token_counter

__all__ = [
    "BELIEFS",
    "Finding",
    "ImplicitBelief",
    "ParsedItem",
    "Predicate",
    "PredicateBelief",
    "make_belief",
    "parse_extraction",
]


@dataclass
class Finding:
    """A confirmed fact with the ids of the documents that state it, and the step that added it."""

    text: str
    doc_ids: tuple[str, ...]
    step: int = 0

    def to_record(self) -> dict[str, Any]:
        return {"text": self.text, "doc_ids": list(self.doc_ids), "step": self.step}

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> Finding:
        return cls(r["text"], tuple(r.get("doc_ids", ())), int(r.get("step", 0)))


@dataclass
class Predicate:
    """A question that must be settled: ``status`` open / satisfied / refuted, its evidence ids, an optional
    ``note`` (the answer the model gave when closing it), the step it was opened and closed."""

    text: str
    status: str = "open"
    doc_ids: tuple[str, ...] = ()
    note: str = ""
    step: int = 0
    closed_step: int | None = None

    def to_record(self) -> dict[str, Any]:
        return {"text": self.text, "status": self.status, "doc_ids": list(self.doc_ids), "note": self.note,
                "step": self.step, "closed_step": self.closed_step}

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> Predicate:
        return cls(r["text"], r.get("status", "open"), tuple(r.get("doc_ids", ())), r.get("note", ""),
                   int(r.get("step", 0)), r.get("closed_step"))



def _llm_tokens(messages: Sequence[dict[str, str]], text: str, counter: Callable[[str], int]) -> dict[str, int]:
    return {"prompt": sum(counter(m["content"]) for m in messages), "completion": counter(text), "calls": 1}


@dataclass
class ImplicitBelief:
    """The truncated raw history of Eq. 2 (see the module doc); the question is pinned above it."""

    name: ClassVar[str] = "implicit"
    summary: ClassVar[str] = "raw history, oldest steps dropped to fit a token budget (paper Eq. 2); question pinned"

    budget: int = field(default=600, metadata={"min": 16, "max": 32768, "step": 16,
                                               "help": "tokens of history kept (the question is pinned on top)"})
    token_counter: Callable[[str], int] | None = field(default=None, repr=False, metadata={"hidden": True})

    def __post_init__(self):
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 16:
            raise ValueError(f"budget must be an integer >= 16 (tokens of history), got {self.budget!r}")
        self.token_counter = check_token_counter(self.token_counter)
        self.question = ""
        self.entries: list[dict[str, Any]] = []
        self.dropped = 0

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "params": {"budget": self.budget}}

    def start(self, question: str, *, llm: Any = None, seed: int = 0, decomposition: Sequence[str] = ()) -> dict[str, Any]:
        self.question, self.entries, self.dropped = question, [], 0
        return {"status": "ok", "detail": "empty history"}

    @property
    def history_tokens(self) -> int:
        return sum(e["tokens"] for e in self.entries)

    def _cut(self, text: str, budget: int) -> str:
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix that fits with the marker
            mid = (lo + hi + 1) // 2
            if self.token_counter(text[:mid].rstrip() + " …") <= budget:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo].rstrip() + " …"

    def update(self, t: int, action: Action, observation: Observation, *, llm: Any = None, seed: int = 0,
               documents: dict[str, str] | None = None) -> dict[str, Any]:
        """s ⊕ {a_t, o_t}, then Truncate: drop the oldest entries until the history fits the budget."""
        text = f"Step {t}. {action.render()}"
        if action.kind != "answer":
            text += "\n" + observation.text
        entry = {"t": t, "text": text, "tokens": self.token_counter(text), "cut": False}
        self.entries.append(entry)
        dropped = []
        while len(self.entries) > 1 and self.history_tokens > self.budget:
            dropped.append(self.entries.pop(0)["t"])
        cut = False
        if self.history_tokens > self.budget:  # the newest entry alone is too big: cut its tail
            e = self.entries[0]
            e["text"] = self._cut(e["text"], self.budget)
            e["tokens"], e["cut"], cut = self.token_counter(e["text"]), True, True
        self.dropped += len(dropped)
        return {"status": "appended", "dropped_steps": dropped, "cut_newest": cut,
                "history_tokens": self.history_tokens, "tokens": {"prompt": 0, "completion": 0, "calls": 0}}

    def render(self) -> str:
        head = f"Question: {self.question}\n"
        if not self.entries:
            return head + "History: (nothing yet)"
        note = f"; {self.dropped} older step(s) dropped to fit {self.budget} tokens" if self.dropped else ""
        return head + f"History (oldest first{note}):\n" + "\n".join(e["text"] for e in self.entries)

    def open_questions(self) -> list[str] | None:
        """None: the implicit state keeps no open questions."""
        return None

    def last_finding(self) -> str | None:
        return None

    def snapshot(self) -> dict[str, Any]:
        text = self.render()
        return {"kind": self.name, "question": self.question, "entries": [dict(e) for e in self.entries],
                "dropped": self.dropped, "text": text, "tokens": self.token_counter(text)}

    def restore(self, snap: dict[str, Any]) -> None:
        self.question = snap["question"]
        self.entries = [dict(e) for e in snap.get("entries", [])]
        self.dropped = int(snap.get("dropped", 0))


@dataclass
class PredicateBelief:
    """Findings with provenance and bounded open questions, managed by the orchestrator (see the module doc)."""

    name: ClassVar[str] = "predicate"
    summary: ClassVar[str] = "findings with their documents + open questions, bounded, updated by one strictly parsed call"

    max_findings: int = field(default=6, metadata={"min": 1, "max": 50, "step": 1, "help": "bound K on findings"})
    max_predicates: int = field(default=6, metadata={"min": 1, "max": 50, "step": 1,
                                                     "help": "bound K on questions (open, satisfied and refuted count)"})
    format: Literal["text", "json"] = field(default="text", metadata={"help": "extraction output format"})
    init: Literal["question", "decomposition", "llm"] = field(default="question", metadata={
        "help": "first open questions: the question itself, the data set's decomposition, or the model's"})
    max_tokens: int = field(default=96, metadata={"min": 8, "max": 1024, "step": 8, "help": "extraction call length"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "step": 0.1,
                                                      "help": "extraction call temperature"})
    token_counter: Callable[[str], int] | None = field(default=None, repr=False, metadata={"hidden": True})

    def __post_init__(self):
        for name in ("max_findings", "max_predicates"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer (the bound K), got {v!r}")
        if self.format not in ("text", "json"):
            raise ValueError(f"format must be 'text' or 'json', got {self.format!r}")
        if self.init not in ("question", "decomposition", "llm"):
            raise ValueError(f"init must be 'question', 'decomposition' or 'llm', got {self.init!r}")
        self.token_counter = check_token_counter(self.token_counter)
        self.question = ""
        self.findings: list[Finding] = []
        self.predicates: list[Predicate] = []
        self.seen_ids: list[str] = []

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "params": {"max_findings": self.max_findings, "max_predicates": self.max_predicates,
                                              "format": self.format, "init": self.init, "max_tokens": self.max_tokens,
                                              "temperature": self.temperature}}

    # --- start ------------------------------------------------------------------------------------
    def start(self, question: str, *, llm: Any = None, seed: int = 0, decomposition: Sequence[str] = ()) -> dict[str, Any]:
        """Reset to the question; open the first predicates by ``init``. Returns the init record."""
        self.question, self.findings, self.predicates, self.seen_ids = question, [], [], []
        record: dict[str, Any] = {"init": self.init, "tokens": {"prompt": 0, "completion": 0, "calls": 0}}
        texts: list[str] = []
        if self.init == "decomposition":
            texts = [str(q) for q in decomposition if str(q).strip()]
            if not texts:
                record["fallback"] = "no decomposition given; the question itself is the open question"
        elif self.init == "llm":
            if llm is None:
                raise ValueError("init='llm' needs an llm to decompose the question")
            messages = decomposition_messages(question)
            (c,) = llm.complete(messages, n=1, temperature=0.0, max_tokens=self.max_tokens, seed=seed)
            record["raw"] = c.text
            record["tokens"] = _llm_tokens(messages, c.text, self.token_counter)
            items = parse_decomposition(c.text)
            record["items"] = [i.to_record() for i in items]
            texts = [i.text for i in items if i.status != "rejected"]
            if not texts:
                record["fallback"] = "no OPEN line parsed from the decomposition; the question itself is the open question"
        if not texts:
            texts = [question]
        kept = []
        for text in texts:
            if len(self.predicates) >= self.max_predicates:
                record.setdefault("rejected", []).append({"text": text, "reason": f"more than {self.max_predicates} questions"})
                continue
            if any(normalise_answer(p.text) == normalise_answer(text) for p in self.predicates):
                continue
            self.predicates.append(Predicate(text, "open", (), "", 0))
            kept.append(text)
        record["status"] = "ok"
        record["open"] = kept
        return record

    # --- views ------------------------------------------------------------------------------------
    def open_questions(self) -> list[str]:
        return [p.text for p in self.predicates if p.status == "open"]

    def last_finding(self) -> str | None:
        return self.findings[-1].text if self.findings else None

    def render(self) -> str:
        lines = [f"Question: {self.question}", "Findings (confirmed, with their documents):"]
        if self.findings:
            lines += [f"F{i}. {f.text} [{', '.join(f.doc_ids)}]" for i, f in enumerate(self.findings, 1)]
        else:
            lines.append("(none yet)")
        lines.append("Questions to settle:")
        if self.predicates:
            for i, p in enumerate(self.predicates, 1):
                if p.status == "open":
                    lines.append(f"Q{i}. {p.text} (open)")
                else:
                    note = f" — {p.note}" if p.note else ""
                    lines.append(f"Q{i}. {p.text} ({p.status}{note} [{', '.join(p.doc_ids)}])")
        else:
            lines.append("(none)")
        return "\n".join(lines)

    def snapshot(self) -> dict[str, Any]:
        text = self.render()
        return {"kind": self.name, "question": self.question, "findings": [f.to_record() for f in self.findings],
                "predicates": [p.to_record() for p in self.predicates], "seen_ids": list(self.seen_ids),
                "text": text, "tokens": self.token_counter(text)}

    def restore(self, snap: dict[str, Any]) -> None:
        self.question = snap["question"]
        self.findings = [Finding.from_record(r) for r in snap.get("findings", [])]
        self.predicates = [Predicate.from_record(r) for r in snap.get("predicates", [])]
        self.seen_ids = list(snap.get("seen_ids", []))

    # --- update -----------------------------------------------------------------------------------
    def _protected(self) -> set[int]:
        """Indices of findings that are the only finding citing some satisfied predicate's evidence."""
        out: set[int] = set()
        for p in self.predicates:
            if p.status != "satisfied" or not p.doc_ids:
                continue
            citing = [i for i, f in enumerate(self.findings) if set(f.doc_ids) & set(p.doc_ids)]
            if len(citing) == 1:
                out.add(citing[0])
        return out

    def _add_finding(self, item: ParsedItem, t: int) -> dict[str, Any]:
        norm = normalise_answer(item.text)
        for f in self.findings:
            if normalise_answer(f.text) == norm:
                f.doc_ids = tuple(dict.fromkeys(f.doc_ids + item.doc_ids))
                return {"op": "merge_finding", "text": f.text, "doc_ids": list(f.doc_ids)}
        self.findings.append(Finding(item.text, item.doc_ids, t))
        op: dict[str, Any] = {"op": "add_finding", "text": item.text, "doc_ids": list(item.doc_ids)}
        if len(self.findings) > self.max_findings:
            protected = self._protected()
            candidates = [i for i in range(len(self.findings) - 1) if i not in protected]
            if candidates:
                gone = self.findings.pop(candidates[0])
                op["evicted"] = {"text": gone.text, "doc_ids": list(gone.doc_ids), "step": gone.step,
                                 "rule": "oldest finding that is not the only evidence of a satisfied question"}
            else:
                self.findings.pop()
                item.reject(f"findings are full ({self.max_findings}) and every one is the only evidence of a "
                            "satisfied question")
                return {"op": "reject_finding", "text": item.text, "reason": item.reason}
        return op

    def _open(self, item: ParsedItem, t: int) -> dict[str, Any]:
        norm = normalise_answer(item.text)
        if any(normalise_answer(p.text) == norm for p in self.predicates):
            return {"op": "duplicate_question", "text": item.text}
        if len(self.predicates) >= self.max_predicates:
            for status in ("refuted", "satisfied"):
                idx = next((i for i, p in enumerate(self.predicates) if p.status == status), None)
                if idx is not None:
                    gone = self.predicates.pop(idx)
                    self.predicates.append(Predicate(item.text, "open", (), "", t))
                    return {"op": "open_question", "text": item.text,
                            "evicted": {"text": gone.text, "status": gone.status, "step": gone.step,
                                        "rule": f"oldest {status} question"}}
            item.reject(f"questions are full ({self.max_predicates}) and all are open: settle one first")
            return {"op": "reject_question", "text": item.text, "reason": item.reason}
        self.predicates.append(Predicate(item.text, "open", (), "", t))
        return {"op": "open_question", "text": item.text}

    def apply(self, items: Sequence[ParsedItem], t: int, shown: Sequence[Predicate]) -> list[dict[str, Any]]:
        """Apply accepted items in the order facts, closes, opens; enforce the bounds. Returns the operations."""
        ops: list[dict[str, Any]] = []
        for tag in ("FACT", "DONE", "REFUTED", "OPEN"):
            for item in items:
                if item.tag != tag or item.status == "rejected":
                    continue
                if tag == "FACT":
                    ops.append(self._add_finding(item, t))
                elif tag == "OPEN":
                    ops.append(self._open(item, t))
                else:
                    p = shown[item.target]
                    if not any(q is p for q in self.predicates) or p.status != "open":
                        item.reject(f"Q{item.target + 1} was closed earlier in this update")
                        ops.append({"op": "reject_close", "target": item.target + 1, "reason": item.reason})
                        continue
                    p.status = "satisfied" if tag == "DONE" else "refuted"
                    p.doc_ids, p.note, p.closed_step = item.doc_ids, item.text, t
                    ops.append({"op": "close_question", "text": p.text, "status": p.status,
                                "doc_ids": list(p.doc_ids), "note": p.note})
        return ops

    def update(self, t: int, action: Action, observation: Observation, *, llm: Any = None, seed: int = 0,
               documents: dict[str, str] | None = None) -> dict[str, Any]:
        """One extraction call on (a_t, o_t), parsed strictly, repaired or rejected, then applied with the bounds.

        ``documents``: {id: text} of the passages shown (for grounding repairs); without it the observation's
        passages are matched by their id lines in ``observation.text``.
        """
        no_tokens = {"prompt": 0, "completion": 0, "calls": 0}
        self.seen_ids.extend(i for i in observation.passage_ids if i not in self.seen_ids)
        if action.kind == "answer":
            return {"status": "skipped", "detail": "an answer action observes nothing", "tokens": no_tokens}
        if not observation.passage_ids:
            return {"status": "skipped", "detail": "the observation shows no passage; no extraction call",
                    "tokens": no_tokens}
        if llm is None:
            raise ValueError("the predicate belief needs an llm for its extraction call")
        before = self.render()
        messages = extraction_messages(before, action.render(), observation.text, self.format)
        (c,) = llm.complete(messages, n=1, temperature=self.temperature, max_tokens=self.max_tokens, seed=seed)
        passages = dict(documents) if documents else passages_from_text(observation)
        shown = list(self.predicates)
        items, notes = parse_extraction(c.text, self.format, known=self.seen_ids, passages=passages, predicates=shown)
        ops = self.apply(items, t, shown)  # applying may reject more items (bounds, a question closed twice)
        status, notes = update_status(c.text, items, notes)
        n_rejected = sum(i.status == "rejected" for i in items)
        return {"status": status, "format": self.format, "raw": c.text, "items": [i.to_record() for i in items],
                "ops": ops, "notes": notes, "n_accepted": len(items) - n_rejected, "n_rejected": n_rejected,
                "tokens": _llm_tokens(messages, c.text, self.token_counter)}


#: the belief states by name, for :func:`~uncertainty_lab.registry.resolve` (``belief=`` / ``beliefs``)
BELIEFS = Catalogue("belief", {"implicit": ImplicitBelief, "predicate": PredicateBelief},
                    protocol=("start", "update", "render", "snapshot", "restore"))


def make_belief(spec: Any = "implicit", **params: Any) -> Any:
    """A belief state from a name ("implicit", "predicate") and its parameters, or an instance as is
    (:func:`~uncertainty_lab.registry.resolve` over :data:`BELIEFS`; ``token_counter`` passes through)."""
    if params and not isinstance(spec, str):
        raise ValueError("belief parameters go with a belief name, e.g. make_belief('predicate', max_findings=4)")
    return resolve(BELIEFS, (spec, params) if isinstance(spec, str) else spec)
