"""Reading the predicate belief's extraction output: each item strictly parsed, repaired or rejected, with why.

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
with synonymous keys (the salvage parser, :func:`_json_candidates`); JSON that does not parse is re-read as text
lines. Everything else is rejected with its reason; if nothing is accepted, the belief is unchanged and the
update is "rejected".

A decomposition (``init="llm"``) is read with the same line reader, keeping OPEN lines only
(:func:`parse_decomposition`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..semantic.text import normalise_answer
from .environment import Observation
from .text import content_tokens, find_doc_ids, jaccard

__all__ = ["GROUNDING", "TAGS", "ParsedItem", "parse_decomposition", "parse_extraction", "passages_from_text",
           "update_status"]

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
    grounding) and the predicate list shown in the prompt (objects with ``text`` and ``status``)."""

    def __init__(self, known: Sequence[str], passages: dict[str, str], predicates: Sequence[Any]):
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
                     predicates: Sequence[Any] = ()) -> tuple[list[ParsedItem], list[str]]:
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


def parse_decomposition(raw: str) -> list[ParsedItem]:
    """The OPEN questions of a decomposition reply, each item ok / repaired / rejected: lines read as extraction
    lines; any other tag is rejected; an untagged line ending in "?" is read as OPEN (a repair)."""
    reader = _Reader([], {}, [])
    items = []
    for line in raw.splitlines():
        item = reader.line(line, [])
        if item is None:
            continue
        if item.tag != "OPEN" and item.status != "rejected":
            item.reject(f"a decomposition holds OPEN lines only, got {item.tag}")
        elif item.status == "rejected" and line.strip().endswith("?"):
            item = ParsedItem(source=line.strip(), tag="OPEN", text=_BULLET.sub("", line).strip())
            item.repair("untagged question read as OPEN")
        items.append(item)
    return items


def passages_from_text(observation: Observation) -> dict[str, str]:
    """{id: text} of the observation's passages, from its ``[id] title: text`` lines."""
    out: dict[str, str] = {}
    for line in observation.text.splitlines():
        m = re.match(r"^\[(?P<id>[^\]]+)\]\s*(?P<rest>.*)$", line)
        if m and m.group("id") in observation.passage_ids:
            out[m.group("id")] = m.group("rest")
    return out


def update_status(raw: str, items: Sequence[ParsedItem], notes: list[str]) -> tuple[str, list[str]]:
    """An extraction update's status and notes: "rejected" (empty output, or nothing accepted), "partial" (some
    items rejected), "repaired" (all accepted, some repaired, or a whole-output note) or "ok"."""
    accepted = [i for i in items if i.status != "rejected"]
    if not raw.strip():
        return "rejected", notes + ["empty output"]
    if not accepted:
        return "rejected", notes + (["no item found in the output"] if not items else [])
    if len(accepted) < len(items):
        return "partial", notes
    if any(i.status == "repaired" for i in items) or notes:
        return "repaired", notes
    return "ok", notes
