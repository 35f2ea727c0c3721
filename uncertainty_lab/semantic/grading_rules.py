"""The decisions of the ``strict`` and ``hassum`` graders, as pure functions of the answer, the correct and the
incorrect references (:mod:`.grading_text` reads the answer).

Both start alike: a refusal ("I have no comment", "I don't know") is labelled ``refused`` — never correct, even
where a reference says "I have no comment"; on a yes/no item (every correct reference is yes/true or no/false) the
answer's own verdict decides, an echoed "yes or no" ignored. Then:

- ``hassum`` (HASSUM's rule): correct when the answer's best cosine similarity to a correct reference is above its
  best to an incorrect one **and** at least ``floor`` (0.65).
- ``strict``: a verdict word against a reference that opens with one ("No, …"); an incorrect reference the answer
  contains un-negated makes it wrong; a correct one it contains un-negated makes it right (a one-word reference
  only in a verdict clause, a yes/no word only as the verdict); both, or alternatives ("Sydney or Canberra") with
  one not correct, are wrong (hedged). When no reference occurs, a paraphrase check: content-word F1 to the
  nearest correct reference ≥ ``overlap`` and above that to every incorrect one (``paraphrase="embedding"``:
  HASSUM's rule instead), with matching negation; an answer that denies an incorrect reference is correct.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .grading_text import NEGATORS, YES_NO, Answer, canonical, negations, read_answer, refusal, verdict

__all__ = ["Decision", "hassum_rule", "strict_rule", "token_f1"]

Similarity = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class Decision:
    """A grading: ``label`` (``correct``, ``wrong`` or ``refused``), the ``evidence``, the reference that
    ``matched`` and a ``score`` (F1 or cosine) where one was used."""

    label: str
    evidence: str
    matched: str | None = None
    score: float | None = None


def _stem(word: str) -> str:
    for suffix, keep in (("ing", 5), ("ed", 4), ("es", 4), ("s", 3)):
        if word.endswith(suffix) and len(word) > keep and not word.endswith(("ss", "us", "is")):
            word = word[:-len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


_STOP = frozenset("""a an the is are was were be been being it its this that these those of in on at to for with by
from and or as do does did will would can could should may might just very so there their they them he she his her
you your we i my me s has have had about some any into than then if when what which who whom how why all also""".split())


def _content(text: str) -> list[str]:
    return [_stem(w) for w in canonical(text).split() if w not in _STOP]


def token_f1(answer: str, reference: str) -> float:
    """F1 of the content words (stop words dropped, light stemming) of ``answer`` and ``reference``."""
    a, r = _content(answer), _content(reference)
    if not a or not r:
        return 0.0
    common = sum(min(a.count(w), r.count(w)) for w in set(a))
    if not common:
        return 0.0
    p, q = common / len(a), common / len(r)
    return 2 * p * q / (p + q)


def _negated(text: str) -> bool:
    return bool(negations(canonical(text).split()))


def _polarity(refs: Sequence[str]) -> set[str]:
    """The yes/no verdicts the references open with ("No, pebbles do not grow" → no)."""
    out = set()
    for r in refs:
        words = canonical(r).split()
        if words and words[0] in YES_NO:
            out.add(YES_NO[words[0]])
    return out


def _spans(ref: str, ans: Answer) -> list[tuple[int, int]]:
    """Where ``ref`` occurs un-negated in the answer: (start, end) word positions. A one-word reference counts only
    in a verdict clause; a yes/no word never (the verdict decides)."""
    r = canonical(ref).split()
    words, clause = ans.words, ans.clause_of
    if not r or (len(r) == 1 and r[0] in YES_NO):
        return []
    out = []
    for i in range(len(words) - len(r) + 1):
        if words[i:i + len(r)] != r:
            continue
        if len(r) == 1 and clause[i] not in ans.verdict:
            continue
        before = [w for j, w in enumerate(words[max(0, i - 3):i], start=max(0, i - 3)) if clause[j] == clause[i]]
        if r[0] not in NEGATORS and NEGATORS.intersection(before):
            continue
        out.append((i, i + len(r)))
    return out


def _matches(refs: Sequence[str], ans: Answer) -> list[tuple[str, int, int]]:
    return [(ref, a, b) for ref in refs for a, b in _spans(ref, ans)]


def _inside(span: tuple[str, int, int], others: list[tuple[str, int, int]]) -> bool:
    _, a, b = span
    return any(oa <= a and b <= ob and (ob - oa) > (b - a) for _, oa, ob in others)


def _hedged(ans: Answer, correct: Sequence[str]) -> str | None:
    """An alternative offered beside the correct answer in the first clause ("Sydney or Canberra"): the
    alternative, or None."""
    if not ans.clauses or "or" not in ans.clauses[0]:
        return None
    segments, current = [], []
    for w in ans.clauses[0]:
        if w in ("or", "either"):
            segments.append(current)
            current = []
        else:
            current.append(w)
    segments.append(current)
    segments = [s for s in segments if s]
    if len(segments) < 2 or any(len(s) > 5 for s in segments):
        return None
    refs = [canonical(r).split() for r in correct]
    for s in segments:
        text = f" {' '.join(s)} "
        if not any(f" {' '.join(r)} " in text for r in refs if r) and set(s) - _STOP - {"so", "something", "other"}:
            return " ".join(s)
    return None


def _front(answer: str, correct: Sequence[str], question: str | None) -> Decision | None:
    """The steps both graders share: a refusal, and the verdict on a yes/no item."""
    found = refusal(answer)
    if found is not None:
        return Decision("refused", f"a refusal ({found!r}): its own label, never counted correct")
    words = [canonical(r).split() for r in correct]
    if all(len(w) == 1 and w[0] in YES_NO for w in words):
        want = {YES_NO[w[0]] for w in words}
        said, how = verdict(answer, question)
        if said is None:
            return Decision("wrong", f"a yes/no item and {how} (an echoed 'yes or no' is ignored)")
        ok = said in want
        return Decision("correct" if ok else "wrong", f"verdict {said!r} ({how}); the reference says "
                        f"{'/'.join(sorted(want))}", said if ok else None)
    return None


def hassum_rule(answer: str, correct: Sequence[str], incorrect: Sequence[str], question: str | None,
                similarity: Similarity, floor: float = 0.65) -> Decision:
    """HASSUM's rule (module doc) behind the shared refusal and yes/no steps; ``similarity(text, refs)`` gives the
    cosine of ``text`` to each reference."""
    front = _front(answer, correct, question)
    if front is not None:
        return front
    sims_c = similarity(answer, list(correct))
    best = max(range(len(correct)), key=lambda i: sims_c[i])
    c = float(sims_c[best])
    i = max(similarity(answer, list(incorrect))) if incorrect else -math.inf
    ok = c > i and c >= floor
    versus = f"{float(i):.3f} to the nearest incorrect one" if incorrect else "no incorrect reference"
    return Decision("correct" if ok else "wrong", f"cosine {c:.3f} to {correct[best]!r}, {versus}; correct needs "
                    f"more than the incorrect and ≥ {floor}", correct[best] if ok else None, c)


def _paraphrase(answer: str, correct: Sequence[str], incorrect: Sequence[str], overlap: float,
                similarity: Similarity | None, floor: float) -> Decision:
    """No reference occurs in the answer: is it a paraphrase of a correct one (or a denial of an incorrect one)?"""
    neg = _negated(answer)
    if similarity is not None:
        name, cut = "cosine", floor
        sc, si = similarity(answer, list(correct)), (similarity(answer, list(incorrect)) if incorrect else [])
    else:
        name, cut = "content-word F1", overlap
        sc, si = [token_f1(answer, r) for r in correct], [token_f1(answer, r) for r in incorrect]
    agree_c = [(float(s), r) for s, r in zip(sc, correct, strict=True) if _negated(r) == neg]
    agree_i = [(float(s), r) for s, r in zip(si, incorrect, strict=True) if _negated(r) == neg]
    denied = [(float(s), r) for s, r in zip(si, incorrect, strict=True) if _negated(r) != neg]
    best_c = max(agree_c, default=(0.0, None))
    best_i = max(agree_i, default=(0.0, None))
    if best_c[0] >= cut and best_c[0] > best_i[0]:
        return Decision("correct", f"a paraphrase of {best_c[1]!r} ({name} {best_c[0]:.2f} ≥ {cut}, above "
                        f"{best_i[0]:.2f} to the nearest incorrect reference)", best_c[1], best_c[0])
    if best_i[0] >= cut:
        return Decision("wrong", f"a paraphrase of the incorrect {best_i[1]!r} ({name} {best_i[0]:.2f})", None,
                        best_i[0])
    den = max(denied, default=(0.0, None))
    if den[0] >= max(cut, 0.6) and similarity is None:
        return Decision("correct", f"denies the incorrect {den[1]!r} ({name} {den[0]:.2f}, opposite negation)",
                        None, den[0])
    return Decision("wrong", f"no reference occurs in the answer and none is paraphrased ({name} "
                    f"{best_c[0]:.2f} to the nearest correct one, needs ≥ {cut})", None, best_c[0])


def strict_rule(answer: str, correct: Sequence[str], incorrect: Sequence[str] = (), question: str | None = None, *,
                overlap: float = 0.5, similarity: Similarity | None = None, floor: float = 0.65) -> Decision:
    """The ``strict`` grader (module doc). ``similarity`` given: HASSUM's embedding rule replaces the word
    overlap for paraphrases."""
    front = _front(answer, correct, question)
    if front is not None:
        return front
    said, how = verdict(answer)
    want, against = _polarity(correct), _polarity(incorrect)
    ans = read_answer(answer)
    wrong = [m for m in _matches(incorrect, ans)]
    right = [m for m in _matches(correct, ans)]
    wrong = [m for m in wrong if not _inside(m, right)]
    right = [m for m in right if not _inside(m, wrong)]
    if said is not None and want and said not in want:
        return Decision("wrong", f"verdict {said!r} ({how}) against the reference's {'/'.join(sorted(want))}")
    verdict_ok = said is not None and said in want and said not in against
    if wrong and (right or verdict_ok):
        in_verdict = {ans.clause_of[a] in ans.verdict for _, a, _ in wrong}
        if True in in_verdict or not right:
            return Decision("wrong", f"holds the correct {(right[0][0] if right else said)!r} and the incorrect "
                            f"{wrong[0][0]!r}: hedged between them")
    if wrong and not right and not verdict_ok:
        return Decision("wrong", f"holds the incorrect reference {wrong[0][0]!r}")
    if right or verdict_ok:
        other = _hedged(ans, correct)
        if other is not None:
            return Decision("wrong", f"offers {other!r} beside the correct answer: hedged between alternatives")
        if right:
            return Decision("correct", f"holds the correct reference {right[0][0]!r}, un-negated", right[0][0])
        return Decision("correct", f"verdict {said!r} ({how}) as the reference opens")
    return _paraphrase(answer, correct, incorrect, overlap, similarity, floor)
