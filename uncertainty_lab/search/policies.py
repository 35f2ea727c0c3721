"""Action selection (PBAI's "select action"): which tool call to make next.

``llm`` — the model proposes the next call from its state. The prompt shows the state (belief or truncated
history, question pinned) and the Thompson-sampling view: pick the open question you are least sure of, form a
hypothesis about it, search to confirm or refute it. The reply is read leniently (:func:`parse_action`); a reply
with no usable action is a *parse failure*, recorded, and the policy falls back to searching the question text.
With a weak model that fallback repeats itself — the realistic loop the exhaustion gate is there to catch.

``heuristic`` — deterministic and model-free, so gates can be studied apart from model quality:

1. with open questions (predicate belief): query = the first open question, its ``#k`` placeholders replaced
   by the note of satisfied question k (else the last finding's entity);
2. otherwise, or when that exact query was already issued: query = the question plus the *last finding's
   entity* — the first capitalised name in the newest finding (predicate belief) or, failing that, in the
   passages of the last search in rank order (implicit belief), that is not already in the question or in an
   earlier query. With no new name, the last query is repeated: a loop for the gate to see.
3. the first step searches the question itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..registry import Catalogue, resolve
from .environment import Action
from .prompts import policy_messages
from .text import action_tokens, count_tokens, entities, find_doc_ids

__all__ = ["POLICIES", "HeuristicPolicy", "LLMPolicy", "ParsedAction", "PolicyContext", "make_policy", "parse_action"]

_ACTION_TAGS = {
    "search": "search", "search query": "search", "query": "search", "lookup": "search", "look up": "search",
    "read": "read", "open": "read", "fetch": "read", "read document": "read", "open document": "read",
    "answer": "answer", "final answer": "answer", "finish": "answer", "final": "answer", "done": "answer",
}
_STRICT = re.compile(r"^(SEARCH|READ|ANSWER): (\S.*)$")
_LOOSE = re.compile(
    r"(?:^|[\s*_>`-])(?P<tag>search query|search|query|look ?up|read document|open document|read|open|fetch|"
    r"final answer|answer|finish|final|done)\s*(?:[:=\-–—]|\(|\s(?=[\"'“]))\s*(?P<arg>.*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedAction:
    """A policy reply read into an action: ``action`` (None on failure), ``status`` "ok" / "repaired" /
    "failed", the ``repairs`` made and the failure ``reason``."""

    action: Action | None
    status: str
    repairs: tuple[str, ...] = ()
    reason: str | None = None


def _clean_arg(arg: str) -> str:
    arg = arg.strip()
    if arg.endswith(")") and arg.count(")") > arg.count("("):
        arg = arg[:-1]
    return arg.strip().strip("*_`\"'“”‘’[]<>").strip()


def parse_action(raw: str, known_ids: Sequence[str] | None = None) -> ParsedAction:
    """Read ``SEARCH: <query>`` / ``READ: <id>`` / ``ANSWER: <text>`` from a reply.

    Strict: the first non-empty line is exactly ``TAG: argument`` with TAG in capitals. Repairs (recorded): the
    tag in any case, a synonym (QUERY → SEARCH, OPEN/FETCH → READ, FINISH/FINAL ANSWER → ANSWER), "-" or "="
    instead of ":", call style ``search("…")``, bullets/markdown/quotes around it, the action on a later line,
    lines after the action ignored; a READ argument is reduced to the document id it names. FINISH with no
    text is an ANSWER with an empty proposal. Anything else fails.
    """
    raw = raw if isinstance(raw, str) else str(raw)
    lines = [ln for ln in raw.splitlines() if ln.strip()]
    if not lines:
        return ParsedAction(None, "failed", (), "empty reply")
    first = lines[0].strip()
    m = _STRICT.match(first)
    if m:
        kind, arg = m.group(1).lower(), m.group(2).strip()
        repairs = [f"ignored {len(lines) - 1} line(s) after the action"] if len(lines) > 1 else []
        return _finish(kind, arg, repairs, known_ids, strict=not repairs)
    for n, line in enumerate(lines):
        lm = _LOOSE.search(line.strip())
        if not lm:
            continue
        tag = " ".join(lm.group("tag").lower().split())
        kind = _ACTION_TAGS.get(tag.replace("lookup", "look up"), _ACTION_TAGS.get(tag))
        if kind is None:
            continue
        repairs = [f"tag {lm.group('tag')!r} read as {kind.upper()}:"] if lm.group("tag") != kind.upper() else \
            ["separator or surrounding text repaired"]
        if n:
            repairs.append(f"action found on line {n + 1}")
        if len(lines) > n + 1:
            repairs.append(f"ignored {len(lines) - n - 1} line(s) after the action")
        return _finish(kind, _clean_arg(lm.group("arg")), repairs, known_ids, strict=False)
    return ParsedAction(None, "failed", (), f"no SEARCH/READ/ANSWER line in the reply {raw[:80]!r}")


def _finish(kind: str, arg: str, repairs: list[str], known_ids: Sequence[str] | None, strict: bool) -> ParsedAction:
    if kind == "read":
        ids = find_doc_ids(arg, known_ids)
        if ids and ids[0] != arg:
            repairs.append(f"READ argument {arg!r} read as {ids[0]!r}")
            arg = ids[0]
    if not arg and kind != "answer":
        return ParsedAction(None, "failed", tuple(repairs), f"{kind.upper()} with no argument")
    if not arg:
        repairs.append("ANSWER/FINISH without an answer")
    status = "ok" if strict and not repairs else "repaired"
    return ParsedAction(Action(kind, arg), status, tuple(repairs))


@dataclass
class PolicyContext:
    """What a policy sees: the question, the belief, the completed steps, the environment, the model, the
    step's seed and the token counter."""

    question: str
    belief: Any
    history: Sequence[Any]
    env: Any
    llm: Any
    seed: int
    t: int
    token_counter: Callable[[str], int] = count_tokens


@dataclass
class LLMPolicy:
    """The model proposes the next tool call from its state (Thompson-sampling prompt); lenient parse; a parse
    failure is recorded and falls back to searching the question."""

    name: ClassVar[str] = "llm"
    summary: ClassVar[str] = "the model proposes SEARCH/READ/ANSWER from its state; parse failures fall back to searching the question"

    temperature: float = field(default=0.3, metadata={"min": 0.0, "max": 2.0, "step": 0.1, "help": "sampling temperature"})
    max_tokens: int = field(default=32, metadata={"min": 4, "max": 256, "step": 4, "help": "tokens per proposed action"})

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "params": {"temperature": self.temperature, "max_tokens": self.max_tokens}}

    def propose(self, ctx: PolicyContext) -> tuple[Action, dict[str, Any]]:
        messages = policy_messages(ctx.belief.render())
        (c,) = ctx.llm.complete(messages, n=1, temperature=self.temperature, max_tokens=self.max_tokens, seed=ctx.seed)
        known = getattr(ctx.env, "ids", None)
        parsed = parse_action(c.text, known)
        record: dict[str, Any] = {
            "policy": self.name, "raw": c.text, "parse": parsed.status, "repairs": list(parsed.repairs),
            "reason": parsed.reason, "fallback": False,
            "tokens": {"prompt": sum(ctx.token_counter(m["content"]) for m in messages),
                       "completion": ctx.token_counter(c.text), "calls": 1},
        }
        action = parsed.action
        if action is None:
            action = Action("search", ctx.question)
            record["fallback"] = True
            record["reason"] = f"{parsed.reason}; fell back to searching the question"
        return action, record


@dataclass
class HeuristicPolicy:
    """A deterministic, model-free policy from the open questions and the last finding (see the module doc)."""

    name: ClassVar[str] = "heuristic"
    summary: ClassVar[str] = "deterministic: search the first open question, else the question plus the last finding's entity"

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "params": {}}

    @staticmethod
    def _used(history: Sequence[Any]) -> list[str]:
        return [str(getattr(s, "query", "")) for s in history if getattr(s, "action", "search") == "search"]

    def entity(self, ctx: PolicyContext) -> str | None:
        """The newest name not in the question and not in an earlier query (see the module doc)."""
        used = [q.lower() for q in self._used(ctx.history)]
        q_tokens = action_tokens(ctx.question)
        sources: list[str] = []
        last = ctx.belief.last_finding() if callable(getattr(ctx.belief, "last_finding", None)) else None
        if last:
            sources.append(last)
        for step in reversed(ctx.history):
            if getattr(step, "action", "search") == "search" and getattr(step, "passage_ids", ()):
                for doc_id in step.passage_ids:
                    try:
                        doc = ctx.env.document(doc_id)
                    except (KeyError, AttributeError):
                        continue
                    sources.append(f"{doc.title}. {doc.text}")
                break
        for text in sources:
            for name in entities(text):
                if action_tokens(name) <= q_tokens or any(name.lower() in u for u in used):
                    continue
                return name
        return None

    def propose(self, ctx: PolicyContext) -> tuple[Action, dict[str, Any]]:
        used = self._used(ctx.history)
        rule, query = "", ""
        open_qs = ctx.belief.open_questions() if callable(getattr(ctx.belief, "open_questions", None)) else None
        entity = None
        if open_qs:
            query = self._fill(open_qs[0], ctx)
            rule = "first open question"
        if not query or query in used:
            if not ctx.history:
                query, rule = ctx.question, "first step: the question"
            else:
                entity = self.entity(ctx)
                if entity is not None:
                    query, rule = f"{ctx.question} {entity}", "question + last finding's entity"
                else:
                    query = used[-1] if used else ctx.question
                    rule = "no new entity: repeat the last query"
        record = {"policy": self.name, "rule": rule, "entity": entity, "parse": "ok", "fallback": False,
                  "tokens": {"prompt": 0, "completion": 0, "calls": 0}}
        return Action("search", query), record

    def _fill(self, text: str, ctx: PolicyContext) -> str:
        """Replace ``#k`` by the note of satisfied question k, else by the last finding's entity."""
        if "#" not in text:
            return text
        preds = getattr(ctx.belief, "predicates", [])

        def sub(m: re.Match) -> str:
            k = int(m.group(1)) - 1
            if 0 <= k < len(preds) and preds[k].status == "satisfied" and preds[k].note:
                return preds[k].note
            return self.entity(ctx) or m.group(0)

        return re.sub(r"#(\d+)", sub, text)


#: the action policies by name, for :func:`~uncertainty_lab.registry.resolve` (``policy=`` / ``policies``)
POLICIES = Catalogue("policy", {"llm": LLMPolicy, "heuristic": HeuristicPolicy}, protocol=("propose",))


def make_policy(spec: Any = "heuristic", **params: Any) -> Any:
    """A policy from a name ("llm", "heuristic") and its parameters, or an instance with ``propose(ctx)``
    (:func:`~uncertainty_lab.registry.resolve` over :data:`POLICIES`)."""
    if params and not isinstance(spec, str):
        raise ValueError("policy parameters go with a policy name, e.g. make_policy('llm', temperature=0.0)")
    return resolve(POLICIES, (spec, params) if isinstance(spec, str) else spec)
