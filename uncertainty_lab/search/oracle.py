"""The oracle reader: a model-free, deterministic stand-in for the language model that knows the gold data and
reads like a perfect extractor, so an experiment can measure search and stopping apart from model quality.

    from uncertainty_lab.search.oracle import OracleReader
    run_episode(question, env, llm=OracleReader(), policy="heuristic", belief="predicate")

It answers the lab's prompts only (recognised by their system text) and refuses to choose actions; its accuracy
is an upper bound on what the gathered evidence allows, not a model's accuracy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..datasets.search import SearchQuestion
from ..semantic.text import normalise_answer
from .text import find_doc_ids

__all__ = ["OracleReader", "OracleReaderError"]


class OracleReaderError(ValueError):
    """The oracle reader was asked for something it does not do (choose an action) or about an unknown question."""


_PASSAGE = re.compile(r"^\[(?P<id>[^\]]+)\]\s*(?P<title>[^:\n]*):\s*(?P<text>.*)$")
_PREDICATE = re.compile(r"^Q(?P<n>\d+)\.\s*(?P<text>.*?)\s*\(open\)\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _norm_q(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9#]+", text.lower()))


@dataclass
class OracleReader:
    """A model-free, deterministic stand-in for the language model that reads like a perfect extractor.

    It knows each question's gold data (``questions``; default: the shipped set) and answers the lab's prompts
    (recognised by their system text, :mod:`~uncertainty_lab.search.prompts`):

    - **final answer** (every exit, and ``answer_convergence``'s samples): the gold answer when the notes it is
      given cite *every* supporting document of the question (their ids appear in the state: a passage line of
      the implicit history, or a finding's / question's evidence in the predicate belief) — the evidence was
      gathered *and* survived truncation or eviction; otherwise ``unknown`` (an abstention, scored wrong). A
      question without supporting ids is answered when its gold answer appears in the notes. An unanswerable
      question (MuSiQue-Full's ``answerable: false``) is always ``unknown``: the paragraphs do not support an
      answer, and abstaining is what the score counts as right there. Twins with one text (MuSiQue-Full pairs
      each question with an unanswerable one) are told apart by the evidence: the answerable twin is answered
      only when the notes cite its supporting documents.
    - **extraction** (predicate belief): one ``FACT: <title>: <sentence> [id]`` per shown passage that is a
      supporting document (the sentence naming that hop's answer, else the first), then ``DONE: Qn — <answer>
      [ids]`` for each open question now settled: a gold sub-question (exact text, ``#k`` included) whose
      document is shown or already cited, or the question itself once every supporting document is. Passages
      that support nothing get no line (an empty update, recorded as such). JSON format when asked.
    - **decomposition** (``init="llm"``): the gold sub-questions as ``OPEN:`` lines.
    - **policy** prompts: refused (:class:`OracleReaderError`) — pair it with the ``heuristic`` policy.

    Token counts are still recorded by the agent from the prompts, so "model tokens" say what a model would
    have read. The oracle's accuracy measures the search and its stopping, not a model.
    """

    questions: Sequence[SearchQuestion] | None = None
    name: ClassVar[str] = "oracle"
    summary: ClassVar[str] = "model-free reader that knows the gold data (isolates search and stopping from model quality)"
    supports_logprobs: ClassVar[bool] = False

    def __post_init__(self):
        if self.questions is None:
            from ..datasets.search import load_search_questions

            self.questions = load_search_questions()
        self.questions = list(self.questions)
        self._by_text: dict[str, list[SearchQuestion]] = {}
        for q in self.questions:  # MuSiQue-Full pairs each question with an unanswerable twin of the same text
            self._by_text.setdefault(_norm_q(q.question), []).append(q)
        from .prompts import ANSWER_SYSTEM, EXTRACTION_SYSTEM_JSON, EXTRACTION_SYSTEM_TEXT, POLICY_SYSTEM

        self._systems = {POLICY_SYSTEM: "policy", EXTRACTION_SYSTEM_TEXT: "extraction",
                         EXTRACTION_SYSTEM_JSON: "extraction_json", ANSWER_SYSTEM: "answer"}
        self.calls: dict[str, int] = {}

    # identity (what an episode header records) --------------------------------------------------------------
    def model_id(self) -> str:
        return "gold-reader-1"

    def cache_backend_name(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model_id()}"

    def __repr__(self) -> str:
        return f"OracleReader({len(self.questions)} questions)"

    # the protocol ---------------------------------------------------------------------------------------------
    def complete(self, messages: Any, *, n: int = 1, temperature: float = 0.0, max_tokens: int = 128,
                 seed: int | None = 0, **kwargs: Any) -> list[Any]:
        from ..llm import Completion

        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        system = messages[0]["content"] if messages and messages[0].get("role") == "system" else ""
        user = messages[-1]["content"] if messages else ""
        kind = self._systems.get(system)
        if kind is None and system.startswith("Split a question"):
            kind = "decomposition"
        self.calls[kind or "other"] = self.calls.get(kind or "other", 0) + 1
        if kind == "policy":
            raise OracleReaderError("the oracle reader reads and answers; it does not choose actions. Use "
                                    "policy='heuristic' with it, or a real model (llm='embedded') for the llm policy")
        if kind == "answer":
            text = self.answer(user)
        elif kind in ("extraction", "extraction_json"):
            text = self.extract(user, json_format=kind == "extraction_json")
        elif kind == "decomposition":
            text = self.decompose(user)
        else:
            raise OracleReaderError(f"the oracle reader only answers the search lab's prompts; got a system "
                                    f"prompt {system[:60]!r}")
        return [Completion(text, "stop", self.name, self.model_id(), seed, i) for i in range(int(n))]

    # pieces -----------------------------------------------------------------------------------------------------
    def question(self, text: str) -> SearchQuestion | None:
        """The known question whose text this is (case and punctuation ignored; of twins, the answerable one),
        else None."""
        found = self._by_text.get(_norm_q(text), [])
        return next((q for q in found if q.answerable), found[0] if found else None)

    def answer(self, user: str) -> str:
        notes, _, rest = user.rpartition("\n\nQuestion: ")
        notes = notes.removeprefix("Notes:\n")
        found = self._by_text.get(_norm_q(rest.removesuffix("Answer:").strip()), [])
        # an unanswerable question is never answered; of twins, the answerable one whose evidence the notes hold
        return next((q.answer for q in found if q.answerable and self._supported(q, notes)), "unknown")

    @staticmethod
    def _supported(q: SearchQuestion, notes: str) -> bool:
        """The notes cite every supporting document (or, without supporting ids, contain the gold answer)."""
        if q.supporting_ids:
            cited = set(find_doc_ids(notes))
            return all(i in cited for i in q.supporting_ids)
        golds = [g for g in (q.answer, *q.aliases) if normalise_answer(g)]
        return any(normalise_answer(g) in normalise_answer(notes) for g in golds)

    def extract(self, user: str, *, json_format: bool = False) -> str:
        state, _, rest = user.partition("\n\nLast action: ")
        first = state.splitlines()[0] if state else ""
        q = self.question(first.removeprefix("Question:").strip())
        if q is None:
            return ""
        block = rest.partition("\nPassages:\n")[2].rpartition("\n\nNotebook update:")[0]
        shown: dict[str, tuple[str, str]] = {}
        for line in block.splitlines():
            m = _PASSAGE.match(line.strip())
            if m:
                shown[m.group("id")] = (m.group("title").strip(), m.group("text").strip())
        cited = set(find_doc_ids(state))
        known = cited | set(shown)
        facts: list[tuple[str, str]] = []
        for doc_id, (title, text) in shown.items():
            if doc_id not in q.supporting_ids:
                continue
            hop = next((s for s in q.decomposition if s.support_id == doc_id), None)
            sentences = [s for s in _SENTENCE.split(text) if s.strip()] or [text]
            pick = next((s for s in sentences if hop and hop.answer and hop.answer.lower() in s.lower()), sentences[0])
            facts.append((f"{title}: {pick.strip()}" if title else pick.strip(), doc_id))
        done: list[tuple[int, str, list[str]]] = []
        for line in state.splitlines():
            m = _PREDICATE.match(line.strip())
            if not m:
                continue
            n, text = int(m.group("n")), m.group("text")
            if _norm_q(text) == _norm_q(q.question):
                if q.supporting_ids and all(i in known for i in q.supporting_ids):
                    done.append((n, q.answer, list(q.supporting_ids)))
                continue
            hop = next((s for s in q.decomposition if _norm_q(s.question) == _norm_q(text)), None)
            if hop is not None and hop.support_id and hop.support_id in known:
                done.append((n, hop.answer, [hop.support_id]))
        if json_format:
            if not facts and not done:
                return "{}"
            return json.dumps({"facts": [{"text": t, "doc_ids": [i]} for t, i in facts],
                               "done": [{"question": f"Q{n} — {a}", "doc_ids": ids} for n, a, ids in done]},
                              ensure_ascii=False)
        lines = [f"FACT: {t} [{i}]" for t, i in facts]
        lines += [f"DONE: Q{n} — {a} [{', '.join(ids)}]" for n, a, ids in done]
        return "\n".join(lines)

    def decompose(self, user: str) -> str:
        q = self.question(user.removeprefix("Question:").strip())
        if q is None or not q.decomposition:
            return ""
        return "\n".join(f"OPEN: {s.question}" for s in q.decomposition)
