"""Belief states b_t: what the agent carries from step to step.

``implicit`` — the baseline of today's harnesses (paper Eq. 2): s_{t+1} = Truncate(s_t ⊕ {a_t, o_t}). The
state is the raw history, one entry per step ("Step t. SEARCH: q" and the passages shown); Truncate drops
whole entries, oldest first, until the history fits ``budget`` tokens; if the newest entry alone is larger,
its tail is cut (marked "…"). The question is *pinned* above the history and never truncated (it does not
count against the budget), so the baseline cannot fail merely by forgetting q.

``predicate`` — an orchestrator-managed belief (PBAI, paper §5): *findings* (confirmed facts, each with the ids
of the documents that state it) and *predicates* (questions that must be settled, each open, satisfied or
refuted, with evidence ids). After each observation that shows at least one passage, ONE extraction call
asks the model what the passages settle; its output is parsed strictly, common deviations are repaired and
the rest is rejected — every item's fate (ok / repaired + how / rejected + why) is recorded in the step.

Text format (default)::

    FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]
    OPEN: Where was Kelys Kalveck born?
    DONE: Q1 [doc-187]            (or the question's text; optionally "DONE: Q1 — Drasir [doc-187]")
    REFUTED: Q2 [doc-040]

JSON format (``format="json"``): ``{"facts": [{"text", "doc_ids"}], "open": [str], "done": [{"question",
"doc_ids"}], "refuted": [...]}``.

Strict means: a known tag in capitals followed by a colon; FACT/DONE/REFUTED cite ≥ 1 document id the agent
has observed; DONE/REFUTED name an open question (``Q<n>`` as numbered in the prompt, or its exact text).
Repairs (each recorded): bullets, numbering and markdown around a line; tags in any case, with "-" instead of
":" or a synonym (FINDING → FACT, QUESTION/TODO → OPEN, ANSWERED/RESOLVED/SATISFIED → DONE, FALSE → REFUTED);
ids in parentheses or inline, or loosely written (``doc 91`` → ``doc-091``); ids never observed are dropped;
a FACT (or an untagged sentence) with no usable id gets the id of the passage of this step that contains ≥ 60 %
of its content words; a DONE/REFUTED without ids takes the ids of this update's accepted findings; a question
named by similar text (token Jaccard ≥ 0.5); JSON in code fences, with single quotes or trailing commas, or
with synonymous keys; JSON that does not parse is re-read as text lines. Everything else is rejected with its
reason; if nothing is accepted, the belief is unchanged and the update is "rejected".

Bounds (the orchestrator enforces them, per list): ``max_findings`` (default 6) and ``max_predicates``
(default 6, all statuses count). Eviction when a list is over its bound:

- findings: the oldest finding that is not *protected* goes; a finding is protected when it is the only
  finding citing evidence of a satisfied predicate (the paper's "never evict the only evidence for a
  satisfied predicate"). If every other finding is protected the new finding is rejected instead.
- predicates: the oldest refuted predicate goes, else the oldest satisfied one; open questions are never
  evicted — if all are open, the new question is rejected (the goal must not be forgotten).

A finding whose text equals an existing one (after normalisation) merges its ids into it; an OPEN equal to an
existing predicate is a duplicate (no change).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..semantic.text import normalise_answer
from .environment import Action, Observation
from .prompts import decomposition_messages, extraction_messages
from .text import check_token_counter, content_tokens, find_doc_ids, jaccard

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

TAGS = ("FACT", "OPEN", "DONE", "REFUTED")
_SYNONYMS = {
    "fact": "FACT", "facts": "FACT", "finding": "FACT", "findings": "FACT", "confirmed": "FACT", "evidence": "FACT",
    "open": "OPEN", "question": "OPEN", "questions": "OPEN", "open question": "OPEN", "open questions": "OPEN",
    "todo": "OPEN", "to do": "OPEN", "unknown": "OPEN", "new question": "OPEN",
    "done": "DONE", "satisfied": "DONE", "answered": "DONE", "resolved": "DONE", "solved": "DONE", "closed": "DONE",
    "refuted": "REFUTED", "false": "REFUTED", "rejected": "REFUTED", "disproved": "REFUTED", "wrong": "REFUTED",
}
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|\(\d+\))\s*")
_TAGGED = re.compile(r"^(?P<tag>[A-Za-z][A-Za-z ]{0,19}?)\s*(?P<sep>:|-|–|—)\s*(?P<body>.*)$")
_BRACKET_IDS = re.compile(r"\[(?P<ids>[^\[\]]*)\]\s*[.]?\s*$")
_PAREN_IDS = re.compile(r"\((?P<ids>[^()]*)\)\s*[.]?\s*$")
_QREF = re.compile(r"^\s*(?:Q|question\s*|#)?\s*(?P<n>\d+)\b\s*(?:[:.)\-–—,]\s*)?(?P<rest>.*)$", re.IGNORECASE)
GROUNDING = 0.6  # share of a sentence's content words a passage must contain for an id to be inferred


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


@dataclass
class ParsedItem:
    """One item read from an extraction output, with its fate: ``status`` "ok", "repaired" (``repairs`` say
    how) or "rejected" (``reason`` says why)."""

    source: str
    tag: str | None = None
    text: str = ""
    doc_ids: tuple[str, ...] = ()
    target: int | None = None  # DONE/REFUTED: index into the predicate list shown in the prompt
    status: str = "ok"
    repairs: list[str] = field(default_factory=list)
    reason: str | None = None

    def reject(self, reason: str) -> ParsedItem:
        self.status, self.reason = "rejected", reason
        return self

    def repair(self, how: str) -> None:
        self.repairs.append(how)
        if self.status == "ok":
            self.status = "repaired"

    def to_record(self) -> dict[str, Any]:
        return {"source": self.source, "tag": self.tag, "text": self.text, "doc_ids": list(self.doc_ids),
                "target": self.target, "status": self.status, "repairs": list(self.repairs), "reason": self.reason}


def _llm_tokens(messages: Sequence[dict[str, str]], text: str, counter: Callable[[str], int]) -> dict[str, int]:
    return {"prompt": sum(counter(m["content"]) for m in messages), "completion": counter(text), "calls": 1}


# ----------------------------------------------------------------------------------------------------------
# implicit
# ----------------------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------------------
# predicate: parsing
# ----------------------------------------------------------------------------------------------------------


def _split_ids(raw: str) -> list[str]:
    """Ids as listed: separated by commas or semicolons (a piece like "doc 91" is mapped later)."""
    return [x.strip().strip("'\"`") for x in re.split(r"[,;]+", raw) if x.strip().strip("'\"`")]


def _canonical_tag(tag: str) -> tuple[str | None, bool]:
    """(canonical tag, strict?) for a tag as written."""
    if tag in TAGS:
        return tag, True
    return _SYNONYMS.get(" ".join(tag.lower().split())), False


class _Reader:
    """Reads extraction items against what the agent has observed (``known`` ids; this step's passages for
    grounding) and the predicate list shown in the prompt."""

    def __init__(self, known: Sequence[str], passages: dict[str, str], predicates: Sequence[Predicate]):
        self.known = list(dict.fromkeys(known))
        self.known_set = set(self.known)
        self.passages = passages
        self.predicates = list(predicates)

    # ids ------------------------------------------------------------------------------------------
    def ids_from_body(self, item: ParsedItem, body: str) -> str:
        """Take the ids off the end of ``body`` (strict: ``[id, id]``); return the remaining text."""
        m = _BRACKET_IDS.search(body)
        raw_ids: list[str] = []
        if m and (not m.group("ids").strip() or find_doc_ids(m.group("ids"), self.known) or
                  all(re.search(r"\d", x) for x in _split_ids(m.group("ids")))):
            raw_ids = _split_ids(m.group("ids"))
            body = body[: m.start()].rstrip()
        else:
            pm = _PAREN_IDS.search(body)
            if pm and find_doc_ids(pm.group("ids"), self.known):
                raw_ids = _split_ids(pm.group("ids"))
                body = body[: pm.start()].rstrip()
                item.repair("ids in parentheses read as [ids]")
            else:
                inline = [i for i in find_doc_ids(body, self.known) if i in self.known_set]
                if inline:
                    raw_ids = inline
                    item.repair(f"ids written inline read as [{', '.join(inline)}]")
        ids: list[str] = []
        for raw in raw_ids:
            if raw in self.known_set:
                ids.append(raw)
                continue
            mapped = [i for i in find_doc_ids(raw, self.known) if i in self.known_set]
            if mapped:
                item.repair(f"id {raw!r} read as {', '.join(repr(i) for i in mapped)}")
                ids.extend(mapped)
            else:
                item.repair(f"dropped id {raw!r}: never observed")
        item.doc_ids = tuple(dict.fromkeys(ids))
        return body.strip().rstrip(" -–—:;,").strip()

    def ground(self, text: str) -> tuple[str | None, float]:
        """The passage of this step containing the largest share of ``text``'s content words, and that share."""
        words = content_tokens(text)
        if not words or not self.passages:
            return None, 0.0
        best, share = None, 0.0
        for doc_id, passage in self.passages.items():
            s = len(words & content_tokens(passage)) / len(words)
            if s > share:
                best, share = doc_id, s
        return best, share

    def infer_ids(self, item: ParsedItem) -> bool:
        doc_id, share = self.ground(item.text)
        if doc_id is not None and share >= GROUNDING:
            item.doc_ids = (doc_id,)
            item.repair(f"doc id inferred: {doc_id} contains {share:.0%} of the finding's content words")
            return True
        return False

    # targets ----------------------------------------------------------------------------------------
    def target(self, item: ParsedItem, text: str) -> None:
        m = _QREF.match(text)
        if m:
            n = int(m.group("n"))
            if not 1 <= n <= len(self.predicates):
                item.reject(f"Q{n} does not exist (the list has {len(self.predicates)} question(s))")
                return
            if not re.match(r"^\s*Q\d", text):
                item.repair(f"{text.split()[0]!r} read as Q{n}")
            item.target, item.text = n - 1, m.group("rest").strip(" -–—:;,.")
        else:
            norm = normalise_answer(text)
            exact = [i for i, p in enumerate(self.predicates) if normalise_answer(p.text) == norm]
            if exact:
                item.target, item.text = exact[0], ""
            else:
                scored = sorted(((jaccard(text, p.text), i) for i, p in enumerate(self.predicates)
                                 if p.status == "open"), reverse=True)
                if scored and scored[0][0] >= 0.5:
                    item.target, item.text = scored[0][1], ""
                    item.repair(f"question named by similar text (Jaccard {scored[0][0]:.2f}) read as Q{scored[0][1] + 1}")
                else:
                    item.reject(f"no question matches {text[:60]!r}")
                    return
        if self.predicates[item.target].status != "open":
            item.reject(f"Q{item.target + 1} is already {self.predicates[item.target].status}")

    # one item ---------------------------------------------------------------------------------------
    def finish(self, item: ParsedItem, accepted_fact_ids: list[str]) -> ParsedItem:
        """Validate an item whose tag, text and ids are read."""
        if item.status == "rejected":
            return item
        if item.tag == "FACT":
            if not item.text:
                return item.reject("FACT with no text")
            if not item.doc_ids and not self.infer_ids(item):
                return item.reject("FACT cites no observed document and no passage of this step states it")
            accepted_fact_ids.extend(item.doc_ids)
        elif item.tag == "OPEN":
            if len(item.text.split()) < 2:
                return item.reject(f"OPEN question too short: {item.text!r}")
            item.doc_ids = ()
        elif item.tag in ("DONE", "REFUTED"):
            if item.target is None:
                return item.reject(f"{item.tag} names no question")
            if not item.doc_ids:
                ids = tuple(dict.fromkeys(accepted_fact_ids))
                if not ids:
                    return item.reject(f"{item.tag} cites no observed document")
                item.doc_ids = ids
                item.repair(f"evidence taken from this update's findings: [{', '.join(ids)}]")
        return item

    def line(self, source: str, accepted_fact_ids: list[str]) -> ParsedItem | None:
        raw = source.strip()
        if not raw or raw.strip("`").strip().lower() in ("", "json", "text"):
            return None
        item = ParsedItem(source=raw)
        line = raw
        stripped = _BULLET.sub("", line, count=1)
        if stripped != line:
            item.repair("bullet/numbering removed")
            line = stripped
        if "**" in line or "__" in line:
            line = line.replace("**", "").replace("__", "").strip()
            item.repair("markdown removed")
        m = _TAGGED.match(line)
        tag = None
        if m:
            tag, strict = _canonical_tag(m.group("tag").strip())
            if tag is not None:
                if not strict or m.group("sep") != ":":
                    item.repair(f"tag {m.group('tag').strip() + m.group('sep')!r} read as {tag}:")
                body = m.group("body").strip()
        if tag is None:  # an untagged sentence: a FACT only if a passage of this step states it
            item.tag = "FACT"
            body = self.ids_from_body(item, line)
            item.text = body
            if not item.doc_ids:
                doc_id, share = self.ground(body)
                if doc_id is None or share < GROUNDING:
                    return item.reject("not a FACT/OPEN/DONE/REFUTED line, and no passage of this step states it")
                item.doc_ids = (doc_id,)
                item.repair(f"untagged line read as FACT; doc id inferred: {doc_id} contains {share:.0%} of its "
                            "content words")
            else:
                item.repair("untagged line with ids read as FACT")
            return self.finish(item, accepted_fact_ids)
        item.tag = tag
        body = self.ids_from_body(item, body)
        if tag in ("DONE", "REFUTED"):
            self.target(item, body)
        else:
            item.text = body
        return self.finish(item, accepted_fact_ids)


def _json_candidates(raw: str) -> tuple[Any, list[str]] | None:
    """(parsed JSON, repairs) or None when nothing JSON-like parses."""
    repairs: list[str] = []
    text = raw.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL | re.IGNORECASE)
    if fence:
        text = fence.group(1).strip()
        repairs.append("code fence removed")
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    if end <= start:
        return None
    if start > 0 or end < len(text) - 1:
        repairs.append("text around the JSON removed")
    text = text[start:end + 1]
    fixes = [
        ("trailing commas removed", lambda x: re.sub(r",\s*([}\]])", r"\1", x)),
        ("single quotes read as double quotes", lambda x: x.replace("'", '"') if '"' not in x else x),
        ("Python literals read as JSON",
         lambda x: re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", x)))),
    ]
    for how, fix in [(None, None), *fixes]:  # try as is, then with each fix added to the previous ones
        if fix is not None:
            fixed = fix(text)
            if fixed == text:
                continue
            text = fixed
            repairs.append(how)
        try:
            return json.loads(text), repairs
        except json.JSONDecodeError:
            continue
    return None


_JSON_KEYS = {
    "facts": "FACT", "fact": "FACT", "findings": "FACT", "finding": "FACT",
    "open": "OPEN", "open_questions": "OPEN", "questions": "OPEN", "open questions": "OPEN",
    "done": "DONE", "satisfied": "DONE", "answered": "DONE", "resolved": "DONE",
    "refuted": "REFUTED", "false": "REFUTED", "rejected": "REFUTED",
}
_CANON_JSON_KEYS = {"facts": "FACT", "open": "OPEN", "done": "DONE", "refuted": "REFUTED"}


def _json_items(data: Any, reader: _Reader, repairs: list[str]) -> list[ParsedItem]:
    items: list[ParsedItem] = []
    accepted: list[str] = []
    if isinstance(data, list):
        data = {"facts": data}
        repairs = repairs + ["top-level list read as facts"]
    if not isinstance(data, dict):
        return [ParsedItem(source=json.dumps(data)[:200]).reject("JSON is neither an object nor a list")]
    groups: dict[str, list[tuple[str, Any]]] = {t: [] for t in TAGS}
    for key, value in data.items():
        tag = _JSON_KEYS.get(str(key).strip().lower())
        if tag is None:
            items.append(ParsedItem(source=f"{key}: {json.dumps(value)[:160]}").reject(f"unknown key {key!r}"))
            continue
        values = value if isinstance(value, list) else [value]
        for v in values:
            groups[tag].append((str(key), v))
    for tag in TAGS:  # facts first, so DONE may borrow their ids
        for key, v in groups[tag]:
            item = ParsedItem(source=json.dumps({key: v}, ensure_ascii=False)[:300], tag=tag)
            for how in repairs:
                item.repair(how)
            if _CANON_JSON_KEYS.get(key) != tag:
                item.repair(f"key {key!r} read as {[k for k, t in _CANON_JSON_KEYS.items() if t == tag][0]!r}")
            if isinstance(v, str):
                text, raw_ids = v, None
                if tag != "OPEN":
                    item.repair("string item read as text [ids]")
            elif isinstance(v, dict):
                low = {str(k).lower(): x for k, x in v.items()}
                text_key = next((k for k in ("text", "question", "fact", "finding", "q") if k in low), None)
                ids_key = next((k for k in ("doc_ids", "ids", "docs", "sources", "documents", "evidence") if k in low),
                               None)
                text = "" if text_key is None else str(low[text_key])
                raw_ids = None if ids_key is None else low[ids_key]
                expected = "question" if tag in ("DONE", "REFUTED") else "text"
                if tag == "OPEN":
                    item.repair("object item read as its question text")
                elif text_key is not None and text_key != expected:
                    item.repair(f"key {text_key!r} read as {expected!r}")
                if ids_key is not None and ids_key != "doc_ids":
                    item.repair(f"key {ids_key!r} read as 'doc_ids'")
            else:
                items.append(item.reject(f"item is a {type(v).__name__}, not text or an object"))
                continue
            if raw_ids is None:
                body = reader.ids_from_body(item, text) if tag != "OPEN" else text.strip()
            else:
                ids_text = " ".join(map(str, raw_ids)) if isinstance(raw_ids, list) else str(raw_ids)
                body = reader.ids_from_body(item, f"{text} [{ids_text}]")
            if tag in ("DONE", "REFUTED"):
                reader.target(item, body)
            else:
                item.text = body
            items.append(reader.finish(item, accepted))
    return items


def parse_extraction(raw: str, fmt: str, *, known: Sequence[str], passages: dict[str, str] | None = None,
                     predicates: Sequence[Predicate] = ()) -> tuple[list[ParsedItem], list[str]]:
    """Read an extraction output into items (each ok / repaired / rejected) and whole-output notes.

    ``known``: the ids observed so far; ``passages``: {id: text} of this step (for grounding repairs);
    ``predicates``: the list the prompt showed (for ``Q<n>`` references).
    """
    if fmt not in ("text", "json"):
        raise ValueError(f"fmt must be 'text' or 'json', got {fmt!r}")
    reader = _Reader(known, passages or {}, predicates)
    notes: list[str] = []
    if fmt == "json":
        parsed = _json_candidates(raw)
        if parsed is not None:
            return _json_items(parsed[0], reader, parsed[1]), notes
        notes.append("output is not JSON; read as text lines")
    found: list[tuple[int, ParsedItem]] = []
    accepted: list[str] = []
    lines = raw.splitlines()
    # FACT lines first so that a DONE may borrow their ids; items are reported in output order
    order = sorted(range(len(lines)), key=lambda i: 0 if re.match(r"^\W*(?:fact|finding)", lines[i], re.I) else 1)
    for i in order:
        item = reader.line(lines[i], accepted)
        if item is None:
            continue
        if fmt == "json":
            item.repair("read as a text line (JSON expected)")
        found.append((i, item))
    items = [item for _, item in sorted(found, key=lambda pair: pair[0])]
    return items, notes


# ----------------------------------------------------------------------------------------------------------
# predicate: the belief
# ----------------------------------------------------------------------------------------------------------


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
            reader = _Reader([], {}, [])
            items = []
            for line in c.text.splitlines():
                item = reader.line(line, [])
                if item is None:
                    continue
                if item.tag != "OPEN" and item.status != "rejected":
                    item.reject(f"a decomposition holds OPEN lines only, got {item.tag}")
                elif item.status == "rejected" and line.strip().endswith("?"):
                    item = ParsedItem(source=line.strip(), tag="OPEN", text=_BULLET.sub("", line).strip())
                    item.repair("untagged question read as OPEN")
                items.append(item)
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
        passages = dict(documents) if documents else _passages_from_text(observation)
        shown = list(self.predicates)
        items, notes = parse_extraction(c.text, self.format, known=self.seen_ids, passages=passages, predicates=shown)
        ops = self.apply(items, t, shown)
        accepted = [i for i in items if i.status != "rejected"]
        rejected = [i for i in items if i.status == "rejected"]
        if not c.text.strip():
            status, notes = "rejected", notes + ["empty output"]
        elif not accepted:
            status = "rejected"
            if not items:
                notes = notes + ["no item found in the output"]
        elif rejected:
            status = "partial"
        elif any(i.status == "repaired" for i in items) or notes:
            status = "repaired"
        else:
            status = "ok"
        return {"status": status, "format": self.format, "raw": c.text, "items": [i.to_record() for i in items],
                "ops": ops, "notes": notes, "n_accepted": len(accepted), "n_rejected": len(rejected),
                "tokens": _llm_tokens(messages, c.text, self.token_counter)}


def _passages_from_text(observation: Observation) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in observation.text.splitlines():
        m = re.match(r"^\[(?P<id>[^\]]+)\]\s*(?P<rest>.*)$", line)
        if m and m.group("id") in observation.passage_ids:
            out[m.group("id")] = m.group("rest")
    return out


BELIEFS: dict[str, type] = {"implicit": ImplicitBelief, "predicate": PredicateBelief}


def make_belief(spec: Any = "implicit", **params: Any) -> Any:
    """A belief state from a name ("implicit", "predicate") and its parameters, or an instance as is."""
    if isinstance(spec, str):
        if spec not in BELIEFS:
            import difflib

            close = difflib.get_close_matches(spec, list(BELIEFS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"belief must be one of {sorted(BELIEFS)} or an instance, got {spec!r}{hint}")
        from ..parameters import validate

        cls = BELIEFS[spec]
        extra = {k: params.pop(k) for k in ("token_counter",) if k in params}
        return cls(**validate(cls, params, owner=f"belief {spec!r}"), **extra)
    if params:
        raise ValueError("belief parameters go with a belief name, e.g. make_belief('predicate', max_findings=4)")
    for m in ("start", "update", "render", "snapshot", "restore"):
        if not callable(getattr(spec, m, None)):
            raise ValueError(f"belief must be 'implicit', 'predicate' or an object with {m}(), got {spec!r}")
    return spec
