"""The steps the ``strict`` and ``hassum`` graders share before their own (:mod:`.grading_rules`): a refusal, a
disguised word, an echoed instruction, and the whole grading of a yes/no item (every correct reference is
yes/true or no/false) from the answer's own verdict — taken back, contradicted by a restatement, about something
else, or with a reason of its own the rules cannot check (:data:`OWN_REASON`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .grading_decision import Decision
from .grading_meaning import asked_words, claim, stems
from .grading_text import (
    RESTATES,
    VERDICT_CHARS,
    YES_NO,
    canonical,
    disguised,
    echoed_instruction,
    main_clause,
    read_answer,
    refusal,
    strip_echo,
    verdict,
)

__all__ = ["OWN_REASON", "READ_CLAUSES", "denies_existence", "front"]

#: clauses of the answer the paraphrase step reads (its verdict clauses and the first ones: a short answer's claim)
READ_CLAUSES = 8


#: a verdict taken back by what follows it ("no, but the exact answer depends on the location", "No, but that is
#: not entirely accurate", "no, or maybe"): hedged
_TAKEN_BACK = re.compile(r"\b(?:answer|outcome|verdict|it)\b(?: \w+){0,3} depends?\b|\bor maybe\b|\bnot (?:entirely |"
                         r"completely |fully |quite |always )?(?:accurate|correct)\b")


def _taken_back(answer: str) -> str | None:
    """The words by which an answer takes back its own verdict (:data:`_TAKEN_BACK`), or None."""
    m = _TAKEN_BACK.search(" ".join(read_answer(answer[:VERDICT_CHARS]).words))
    return m.group(0) if m else None


def front(answer: str, correct: Sequence[str], question: str | None) -> Decision | None:
    """The steps both graders share: a refusal, and the verdict on a yes/no item."""
    found = refusal(answer)
    if found is not None:
        return Decision("refused", f"a refusal ({found!r}): its own label, never counted correct")
    trick = disguised(answer)
    if trick is not None:
        return Decision("wrong", f"{trick}: the answer does not read as the word it normalises to")
    echo = echoed_instruction(answer)
    if echo is not None:
        return Decision("wrong", f"echoes the worker's instruction ({echo!r}) instead of answering")
    words = [canonical(r).split() for r in correct]
    if all(len(w) == 1 and w[0] in YES_NO for w in words):
        want = {YES_NO[w[0]] for w in words}
        said, how = verdict(answer, question)
        if said is None:
            return Decision("wrong", f"a yes/no item and {how} (an echoed 'yes or no' is ignored)")
        ok = said in want
        back = _taken_back(answer) if ok else None
        if back:
            return Decision("wrong", f"verdict {said!r} ({how}), then it takes it back ({back!r}): hedged")
        if ok and how.startswith(("the answer opens", "the clause")):
            doubt = _consistent(answer, said, question, how)
            if doubt is not None:
                return doubt
        own = sorted(set(claim(answer[:VERDICT_CHARS]).focus) - asked_words(question)) if ok else []
        if len(own) >= OWN_REASON:
            return Decision("uncertain", f"verdict {said!r} ({how}) as the reference says, with a reason of its own "
                            f"({', '.join(own[:5])}, …): the rules cannot check it, and a wrong reason makes the "
                            "answer wrong")
        return Decision("correct" if ok else "wrong", f"verdict {said!r} ({how}); the reference says "
                        f"{'/'.join(sorted(want))}", said if ok else None)
    return None


_EXIST = frozenset({"exist", "real"})
#: a right yes/no verdict whose answer holds this many content words the question does not (a reason, a detail of
#: its own) is ``uncertain``: the rules cannot check the reason (on the audit's real answers such reasons were
#: false about as often as true)
OWN_REASON = 5


def _of_existence(text: str) -> bool:
    c = claim(text)
    return bool(_EXIST & c.focus.keys() or c.parity and _EXIST & set(canonical(text).split()))


def denies_existence(clauses: Sequence[Sequence[str]], texts: Sequence[str], asked: frozenset = frozenset()) -> bool:
    """Whether a clause says something does not exist or is not real ("reindeer don't exist") while none of
    ``texts`` (the question, the correct references) speaks of the existence of as much: a text that does, but of
    something narrower — a word the clause lacks, of the question (``asked``) or its own ("flying reindeer aren't
    real", "Santa and his reindeer aren't real") — does not cover it."""
    joined = [w for c in clauses for w in c]  # "don't actually exist" is cut before "actually"
    denials = [cl for cl in (claim("", asked, canonical_words=list(c)) for c in (*clauses, joined))
               if cl.parity and _EXIST & cl.focus.keys()]
    covered = [(cl.asked | cl.focus.keys()) - _EXIST for cl in (claim(t, asked) for t in texts if _of_existence(t))]
    return any(all(held - cl.asked - cl.focus.keys() for held in covered) for cl in denials)


#: words that only restate a verdict ("not possible", "not true")
_RESTATED_VERDICT = frozenset({"possibl", "true", "correct", "think", "believ"})  # also "I don't think so"
_PRONOUN = frozenset({"it", "they", "he", "she", "this", "that", "these", "those", "there", "its", "their"})


def _consistent(answer: str, said: str, question: str | None, how: str) -> Decision | None:
    """What follows a yes/no verdict: a restatement of the question with the other verdict ("No, Dr. Seuss made
    himself famous") → wrong; a denial that the question's subject exists → wrong; only claims about things the
    question does not mention, in clauses that do not open with a pronoun ("No, I'm not a printer") → uncertain;
    else None (the verdict stands)."""
    if not question:
        return None
    ans = read_answer(strip_echo(answer[:VERDICT_CHARS]))
    first = list(ans.clauses[0]) if ans.clauses else []
    opening = re.search(r"opens with '([^']*)'", how)
    skip = len(opening.group(1).split()) if opening else 0
    rest = [first[skip:]] + [list(c) for c in ans.clauses[1:READ_CLAUSES]]
    contrast = set(ans.contrast)  # rest[k] is (what follows the verdict in) clause k
    if " than " in f" {canonical(question)} ":
        return None  # comparisons: "No, the Earth is larger" restates "Is the Moon larger than the Earth?" reversed
    if denies_existence(rest, [question], asked_words(question)):
        return Decision("wrong", f"verdict {said!r}, then it denies that what the question asks about exists, which "
                        "the question does not say")
    asked, q_parity = asked_words(question), claim(question).parity
    related = False
    for c in rest:
        cl = claim("", canonical_words=main_clause(c))
        if not cl.focus:
            continue
        held = stems(c)
        if asked and len(asked & held) >= RESTATES * len(asked):
            implied = "yes" if cl.parity == q_parity else "no"
            if implied != said:
                return Decision("wrong", f"verdict {said!r}, then a restatement of the question that says "
                                f"{implied!r} ({' '.join(c)!r}): it contradicts itself")
            return None
        related = related or bool(asked & held) or c[0] in _PRONOUN
    # "No, but …": a contrast after a bare verdict qualifies it and is not read as its topic
    if not related and how.startswith("the answer opens") and any(
            set(claim("", canonical_words=c).focus) - _RESTATED_VERDICT for k, c in enumerate(rest) if k not in contrast):
        return Decision("uncertain", f"verdict {said!r}, then a claim about something the question does not "
                        "mention: the rules cannot tell whether the verdict answers this question")
    return None
