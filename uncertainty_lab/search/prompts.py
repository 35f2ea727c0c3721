"""Every prompt the search lab sends, in one place (the paper gives none; these are the lab's choices).

- :func:`policy_messages` — the ``llm`` policy: the state, then the Thompson-sampling instruction ("pick the open
  question you are least sure of, form a hypothesis, search to confirm or refute it"), one action line back.
- :func:`extraction_messages` — the predicate belief's single update call per observation (text or JSON format).
- :func:`decomposition_messages` — the optional first call that splits the question into open questions.
- :func:`answer_messages` — the final answer from the state (every exit path), also used by ``answer_convergence``.
"""

from __future__ import annotations

__all__ = [
    "ANSWER_SYSTEM",
    "POLICY_SYSTEM",
    "THOMPSON_HINT",
    "answer_messages",
    "decomposition_messages",
    "extraction_messages",
    "policy_messages",
]

POLICY_SYSTEM = (
    "You are a search agent. You gather evidence from a document collection to answer a question. "
    "Reply with exactly one line, one of:\n"
    "SEARCH: <search query>\n"
    "READ: <document id>\n"
    "ANSWER: <short answer>"
)

THOMPSON_HINT = (
    "How to choose: pick the open question you are least sure of, form a hypothesis about its answer, "
    "and search to confirm or refute that hypothesis. Answer only when the findings settle the question."
)


def policy_messages(state: str) -> list[dict[str, str]]:
    """The ``llm`` policy's prompt: the state (belief or truncated history, question pinned) and the hint."""
    return [
        {"role": "system", "content": POLICY_SYSTEM},
        {"role": "user", "content": f"{state}\n\n{THOMPSON_HINT}\nNext action (one line):"},
    ]


EXTRACTION_SYSTEM_TEXT = (
    "You keep a research notebook for a question. After each search you write what the new passages settle, "
    "one item per line, using only these forms:\n"
    "FACT: <a finding stated in the passages> [<doc ids that state it>]\n"
    "OPEN: <a new question that must be answered first>\n"
    "DONE: <Q number or text of an open question now answered> [<doc ids>]\n"
    "REFUTED: <Q number or text of an open question shown false> [<doc ids>]\n"
    "Write nothing else. Cite only document ids shown in the passages."
)

EXTRACTION_SYSTEM_JSON = (
    "You keep a research notebook for a question. After each search you report what the new passages settle as "
    "one JSON object and nothing else:\n"
    '{"facts": [{"text": "<finding>", "doc_ids": ["<id>"]}], "open": ["<new question>"], '
    '"done": [{"question": "<Q number or text>", "doc_ids": ["<id>"]}], '
    '"refuted": [{"question": "<Q number or text>", "doc_ids": ["<id>"]}]}\n'
    "Cite only document ids shown in the passages."
)


def extraction_messages(state: str, action: str, observation: str, fmt: str = "text") -> list[dict[str, str]]:
    """The one extraction call after an observation (``fmt`` "text" or "json")."""
    system = EXTRACTION_SYSTEM_JSON if fmt == "json" else EXTRACTION_SYSTEM_TEXT
    user = f"{state}\n\nLast action: {action}\nPassages:\n{observation}\n\nNotebook update:"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def decomposition_messages(question: str) -> list[dict[str, str]]:
    """Split the question into the sub-questions (predicates) that must be settled, one ``OPEN:`` line each."""
    system = ("Split a question into the smaller questions that must be answered first, in order. "
              "Write one line per question: OPEN: <question>. Write nothing else.")
    return [{"role": "system", "content": system}, {"role": "user", "content": f"Question: {question}"}]


ANSWER_SYSTEM = (
    "Answer the question using only the notes. Reply with the answer alone: a name, place, year or short phrase. "
    "If the notes do not contain it, give your best guess."
)


def answer_messages(question: str, state: str) -> list[dict[str, str]]:
    """The final-answer prompt: the state, then the question again."""
    return [
        {"role": "system", "content": ANSWER_SYSTEM},
        {"role": "user", "content": f"Notes:\n{state}\n\nQuestion: {question}\nAnswer:"},
    ]
