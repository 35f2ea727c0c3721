"""The LLM-as-judge grader (``llm``): a language model reads the question, the correct and the incorrect references
and the answer, and replies CORRECT, WRONG or UNSURE.

Any backend works (``llm.as_backend``: ``"embedded"``, ``"ollama:<model>"``, a replay of a recording, an instance).
The judge asks at temperature 0 with a fixed seed through the backend's ``complete``, so every prompt and reply
goes through the package's completion cache: a second grading of the same answer costs no model call, a run is
recorded with its verdicts, and a replay of the cache grades the same way offline. The reply is read leniently
(:func:`parse_verdict`); UNSURE, or a reply that cannot be read, is the label ``uncertain`` (``correct=None``),
counted in every summary, never a guess. Every grading keeps the judge's reply in :attr:`Correctness.raw`.

Measured (``benchmarks/llm_judge.md``, ``python benchmarks/llm_judge.py --sample 100``): the embedded
SmolLM2-135M-Instruct, the only model that runs in the test environment, is no judge. On 100 answers of the shipped
audit set it gave a readable verdict on 19 (79 replies echo the options or answer the quiz question itself: counted
``uncertain``), agreement with our hand labels 0.10, Cohen's κ 0.01; on the 18 right/wrong answers it decided it was
right on 10 — chance. ``strict`` on the same answers: 0.98, κ 0.96. On 100 of the hand-labelled real answers
(``--real``): 74 unreadable replies, κ 0.02 (``strict`` 0.66 there). The published LLM-judge gradings used models of
billions of parameters; a 3B instruction model on Ollama (``ollama:llama3.2:3b``, ``ollama:qwen2.5:3b``) is the
smallest we would expect to follow the one-word protocol and judge well above chance — not measured here (no Ollama
server): measure it with ``audit_graders({"llm": {"name": "llm", "llm": "ollama:<model>"}})`` before trusting it,
and grade with ``strict`` where no capable model is at hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .grades import Correctness, Grader

__all__ = ["JUDGE_PROMPT", "JUDGE_SYSTEM", "LLMJudgeGrader", "parse_verdict"]

JUDGE_SYSTEM = ("You grade answers to quiz questions. You are shown the question, reference answers that are correct, "
                "reference answers that are incorrect, and a proposed answer. The proposed answer is CORRECT when it "
                "means the same as a correct reference (the wording may differ) and does not assert an incorrect one; "
                "it is WRONG when it asserts an incorrect reference, contradicts the correct ones, or answers "
                "something else. Reply with exactly one word: CORRECT, WRONG or UNSURE.")

JUDGE_PROMPT = ("Question: {question}\n"
                "Correct answers (any of these is right):\n{correct}\n"
                "Incorrect answers (any of these is wrong):\n{incorrect}\n"
                "Proposed answer: {answer}\n"
                "Verdict (CORRECT, WRONG or UNSURE):")

_VERDICT = {"correct": "correct", "right": "correct", "true": "correct", "yes": "correct",
            "wrong": "wrong", "incorrect": "wrong", "false": "wrong", "no": "wrong",
            "unsure": "uncertain", "uncertain": "uncertain", "unknown": "uncertain", "undecided": "uncertain",
            "unclear": "uncertain"}
_YES_NO = frozenset({"yes", "no"})  # a verdict only alone: "No, cats do not …" answers the quiz question itself
_EXPLICIT = frozenset({"correct", "wrong", "incorrect", "unsure", "uncertain"})
_NEGATION = frozenset({"not", "never", "isn't", "isnt", "is't", "n't"})
_UNSURE_PHRASES = re.compile(r"\b(?:not sure|don'?t know|do not know|can(?:no|')?t (?:tell|say|determine|be sure))\b")
_FLIP = {"correct": "wrong", "wrong": "correct", "uncertain": "uncertain"}
_ECHO = re.compile(r"\W*(?:verdict\W*)?(correct|wrong|incorrect|unsure)\s*(?:,|/|\bor\b)\s*(?:or\s+)?"
                   r"(correct|wrong|incorrect|unsure)")
_LEAD = frozenset({"verdict", "answer", "final", "my", "the", "is", "grade", "label"})


def parse_verdict(reply: str) -> tuple[str, bool]:
    """``(label, parsed)``: the judge's reply as ``correct``, ``wrong`` or ``uncertain``, read leniently.

    0. A reply that opens by echoing the options ("CORRECT, WRONG or UNSURE", cut short or not) has no verdict.
    1. The first word, after a lead-in such as "Verdict:", decides when it is a verdict word: CORRECT / right /
       true → correct; WRONG / INCORRECT / false → wrong; UNSURE / uncertain / unknown → uncertain ("WRONG. The
       correct answer is Canberra" is wrong); a bare "yes" / "no" (the whole reply) → correct / wrong, but not a
       leading one ("No, cats do not react" is the model answering the quiz question itself).
    2. Otherwise "not sure", "don't know", "cannot tell" → uncertain; else the explicit verdict words (correct,
       wrong, incorrect, unsure), each flipped by a negation among the two words before it ("not correct" →
       wrong), must all agree.
    3. Anything else (no verdict word, or verdicts that disagree) is ``("uncertain", False)``: unparsed, counted
       as uncertain, never guessed.
    """
    text = reply.lower().replace("’", "'") if isinstance(reply, str) else ""
    words = re.findall(r"[a-z']+", text)
    echo = _ECHO.match(text)
    if echo and echo.group(1) != echo.group(2):  # the reply echoes the options ("CORRECT, WRONG or UNSU"): no verdict
        return "uncertain", False
    lead = next((w for w in words if w not in _LEAD), None)
    if lead in _VERDICT and (lead not in _YES_NO or len(words) == 1):
        return _VERDICT[lead], True
    if _UNSURE_PHRASES.search(text):
        return "uncertain", True
    found = set()
    for i, w in enumerate(words):
        if w in _EXPLICIT:
            negated = bool(_NEGATION.intersection(words[max(0, i - 2):i])) or any(
                p.endswith("n't") for p in words[max(0, i - 2):i])
            found.add(_FLIP[_VERDICT[w]] if negated else _VERDICT[w])
    if len(found) == 1:
        return found.pop(), True
    return "uncertain", False


def _bullets(refs: list[str]) -> str:
    return "\n".join(f"- {r}" for r in refs) if refs else "- (none given)"


@dataclass
class LLMJudgeGrader(Grader):
    """Asks a language model whether the answer is correct, given the question and both reference lists (module
    doc); replies CORRECT / WRONG / UNSURE, parsed by :func:`parse_verdict`. Temperature 0, seeded, cached.

    The embedded 135M model judges at chance on our audit set (κ 0.01, 81 of 100 replies unreadable:
    ``benchmarks/llm_judge.md``): use a capable model (a 3B or larger one on Ollama) and measure its agreement
    with ``audit_graders`` before trusting it."""

    name: ClassVar[str] = "llm"
    summary: ClassVar[str] = "a language model judges the answer given the question and the correct and incorrect " \
                             "references: CORRECT / WRONG / UNSURE"
    reference: ClassVar[str] = "LLM-as-a-judge (Zheng et al. 2023); HASSUM and the semantic-entropy papers grade " \
                               "with an LLM judge"
    reads_incorrect: ClassVar[bool] = True

    llm: Any = field(default="embedded", metadata={"help": "a backend spec ('embedded', 'ollama:<model>', a "
                                                           "replay) or a backend instance"})
    seed: int = field(default=0, metadata={"min": 0, "max": 2**31 - 1, "help": "the judge's sampling seed (part "
                                                                               "of its cache key)"})
    max_tokens: int = field(default=8, metadata={"min": 1, "max": 256, "step": 1,
                                                 "help": "tokens the verdict may use"})
    prompt: str = field(default=JUDGE_PROMPT, metadata={
        "help": "the user message: a template with {question}, {correct}, {incorrect} and {answer}"})
    _backend: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        for slot in ("{correct}", "{answer}"):
            if slot not in self.prompt:
                raise ValueError(f"prompt must contain {slot}; e.g. the default {JUDGE_PROMPT!r}")

    def backend(self) -> Any:
        """The judge's backend, made from ``llm`` on first use."""
        if self._backend is None:
            from ..llm import as_backend

            self._backend = as_backend(self.llm, what="the llm grader's llm", error=ValueError)
        return self._backend

    def messages(self, answer: str, correct: list[str], incorrect: list[str],
                 question: str | None = None) -> list[dict[str, str]]:
        """The chat messages the judge is sent: :data:`JUDGE_SYSTEM`, then the prompt filled in."""
        values = {"{question}": question or "(not given)", "{correct}": _bullets(correct),
                  "{incorrect}": _bullets(incorrect), "{answer}": answer}
        user = re.sub(r"\{question\}|\{correct\}|\{incorrect\}|\{answer\}", lambda m: values[m.group(0)], self.prompt)
        return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]

    def decide(self, answer, norm, correct, incorrect, question):
        backend = self.backend()
        (c,) = backend.complete(self.messages(answer, correct, incorrect, question), n=1, temperature=0.0,
                                seed=self.seed, max_tokens=self.max_tokens)
        reply = c.text
        label, parsed = parse_verdict(reply)
        who = getattr(backend, "label", type(backend).__name__)
        if not parsed:
            return Correctness(None, self.name, f"unparsed reply from {who}: {reply!r} (no clear CORRECT, WRONG or "
                               "UNSURE): counted as uncertain", raw=reply, uncertain=True)
        if label == "uncertain":
            return Correctness(None, self.name, f"{who} is unsure: {reply.strip()!r}", raw=reply, uncertain=True)
        return Correctness(label == "correct", self.name, f"{who} replied {reply.strip()!r}", raw=reply)
