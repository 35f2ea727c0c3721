"""Reading a short answer the way a careful grader does (for the ``strict`` and ``hassum`` graders): is it a
refusal, what is its yes/no verdict (an echoed "yes or no" instruction ignored), where does a reference occur in
it un-negated, and numbers and units written one way ("eight" = "8", "100 degrees Celsius" = "100°C").

The answer is cut into clauses (at , ; : . ! ? brackets and dashes, and before "but", "however", …). Its
**verdict clauses** are the first clause, the one after a negated first clause ("not Sydney, Canberra"), and any
clause opened by a contrast word ("…, but it is Sydney"); a clause that reports someone else's belief ("many
think …") is not one.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .grading_words import NEGATORS, canonical
from .text import HIDDEN, normalise_answer

__all__ = ["NEGATORS", "YES_NO", "Answer", "canonical", "disguised", "echoed_instruction", "negations", "read_answer",
           "refusal", "strip_echo", "verdict"]

YES_NO: dict[str, str] = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
_YES_START = ("of course", "no doubt", "without doubt", "without a doubt", "yes", "yeah", "yep", "yup", "true", "correct",
              "sure", "certainly", "definitely", "absolutely", "indeed")
_NO_START = ("of course not", "certainly not", "definitely not", "absolutely not", "not at all", "by no means",
             "no way", "no", "nope", "not", "never", "false", "incorrect", "indeed no", "indeed not", "certainly no",
             "definitely no")
_HEDGES = ("i think", "i believe", "i guess", "i would say", "i d say", "my answer is", "final answer", "the answer is",
           "answer is", "answer", "probably", "most likely", "likely", "maybe", "perhaps", "well", "hmm", "um", "uh",
           "oh", "ok", "okay", "so", "honestly", "in short", "short answer", "answer to question is",
           "answer to that question is", "answer to this question is", "answer to your question is",
           "answer to above question is", "answer to following question is")
#: a first clause that only frames what follows ("To be honest, a markhor cannot"): read from the next one
_DISCOURSE = frozenset({"to be honest", "to answer question", "to answer your question", "to answer that question",
                        "to answer this question", "to elaborate", "to clarify", "in short", "in summary",
                        "in other words", "frankly", "simply put", "put simply", "in fact", "in reality",
                        "in real life", "to sum up", "in conclusion", "honestly", "well"})
_CONCLUDE = frozenset({"so", "therefore", "thus", "hence", "then"})
_CONTRAST = ("but", "however", "though", "although", "actually", "instead", "whereas", "yet")
_REPORTING = frozenset({"think", "thinks", "believe", "believes", "claim", "claims", "say", "says", "assume",
                        "assumes", "myth", "mistakenly", "legend", "supposedly"})
REFUSALS = (
    "i have no comment", "no comment", "i don t know", "i do not know", "i dont know", "don t know", "i m not sure",
    "i am not sure", "not sure", "i m not too sure", "not too sure", "i m not entirely sure",
    "i am not entirely sure", "not entirely sure", "i m not quite sure", "not quite sure", "i m not certain",
    "i am not certain", "i have no idea", "no idea", "i cannot answer", "i can t answer", "i can not answer",
    "i am unable to answer", "i m unable to answer", "i m not able to answer", "i am not able to answer",
    "i cannot say", "i can t say", "i won t answer", "i will not answer", "i cannot help", "i can t help",
    "i cannot tell", "i can t tell", "i d rather not", "i prefer not to", "i cannot determine", "i can t determine",
    "i cannot provide", "i can t provide", "i m unable to provide", "i am unable to provide", "unknown",
    "hard to say", "cannot be determined", "not possible to answer", "impossible to answer",
    "it is impossible to say", "as chatbot i", "as ai i", "as language model i", "i don t have capability",
    "i do not have capability", "i don t have ability", "i do not have ability",
)
_COURTESY = ("sorry", "i m sorry", "i am sorry", "unfortunately", "honestly", "but", "for error", "for mistake",
             "for confusion", "for any confusion", "for misunderstanding", "for any misunderstanding", *_DISCOURSE)
_GOES_ON = ("but", "maybe", "perhaps", "probably", "i think", "i guess", "i believe", "my guess", "though", "however")

_ECHO = re.compile(
    r"(?:\b(?:please\s+)?(?:answer|reply|respond|say)\s+(?:with\s+)?(?:only\s+)?(?:a\s+)?)?"
    r"\(?\b(?:yes|no)\s*(?:,?\s*or|/)\s*(?:yes|no)\b\)?\s*[.:?!]?", re.IGNORECASE)
#: the instructions the labs' workers are given, as a model may echo them back ("A name, a number, yes or no, or a
#: few words"), normalised
_INSTRUCTIONS = ("name number yes or no or few words", "name number or few words", "reply with short answer only",
                 "give brief factual answer in one short sentence", "you answer quiz questions",
                 "first check that question makes sense")
_INSIDE = re.compile(r"(?<=\w)(?:" + HIDDEN.pattern + r")+(?=\w)")
_LATIN = re.compile(r"[A-Za-z]")
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")  # Greek, Cyrillic: the usual homoglyphs of Latin letters
_WORD = re.compile(r"\w+")
#: a period after these ends no clause ("Robert Downey Jr. was not", "J.D. Salinger", "Dr. Seuss")
_ABBREVIATED = "".join(rf"(?<!\b{a})" for a in ("Jr", "Sr", "Dr", "Mr", "Ms", "St", "Mrs", "vs")) + r"(?<!\b[A-Z])"
#: clause breaks: punctuation, and before a contrast word other than "actually", an adverb inside its clause
#: ("Disney doesn't actually have an ice princess", "Paris is actually the largest" are one clause each)
_CLAUSE = re.compile(r"[;:!?()\[\]—–]|,(?!\d{3}\b)|" + _ABBREVIATED + r"\.(?!\d)|\s-\s|\n|(?=\b(?:"
                     + "|".join(c for c in _CONTRAST if c != "actually") + r")\b)", re.IGNORECASE)
def negations(words: list[str]) -> list[str]:
    """The negating words among canonical ``words``; "no" in the idioms "no doubt" and "no question" affirms."""
    return [w for i, w in enumerate(words) if w in NEGATORS
            and not (w == "no" and i + 1 < len(words) and words[i + 1] in ("doubt", "question"))]


def strip_echo(text: str) -> str:
    """``text`` without an echoed yes/no instruction ("Answer yes or no.", "(yes/no)", "yes or no")."""
    return _ECHO.sub(" ", text)


def echoed_instruction(text: str) -> str | None:
    """The worker instruction ``text`` echoes ("a name, a number, yes or no, or a few words"), or None."""
    norm = f" {normalise_answer(text)} "
    if norm.startswith(" name number "):
        return "a name, a number, …"  # its opening items, the rest garbled ("A name, a number, No")
    return next((p for p in _INSTRUCTIONS if f" {p} " in norm), None)


def disguised(text: str) -> str | None:
    """How ``text`` disguises a word, or None: an invisible character (zero-width, bidirectional control, NUL, …)
    between two letters ("Pa\\u200bris"), or a word mixing Latin with Greek or Cyrillic letters (a homoglyph,
    "\\u0420aris"). Such an answer does not read as the word it normalises to. Linear in ``len(text)``."""
    if text.isascii():
        return "a control character inside a word" if _INSIDE.search(text) else None
    m = _INSIDE.search(text)
    if m:
        return f"the invisible character U+{ord(m.group(0)[0]):04X} inside a word"
    for w in _WORD.finditer(text):
        if _LATIN.search(w.group(0)) and _OTHER_SCRIPT.search(w.group(0)):
            return f"the word {w.group(0)!r} mixes Latin with Greek or Cyrillic letters"
    return None


def _starts(words: list[str], phrases) -> str | None:
    for p in sorted(phrases, key=len, reverse=True):
        n = len(p.split())
        if words[:n] == p.split():
            return p
    return None


def _strip_hedges(words: list[str]) -> list[str]:
    while words:
        h = _starts(words, _HEDGES)
        if h is None:
            return words
        words = words[len(h.split()):]
    return words


def refusal(text: str) -> str | None:
    """The refusal phrase ``text`` opens with ("I have no comment", "I don't know", "I cannot answer", …; after
    an optional "Sorry,"), or None — also None when the answer goes on to give one ("I'm not sure, but …")."""
    words = normalise_answer(text[:VERDICT_CHARS]).split()
    while (c := _starts(words, _COURTESY)) is not None:
        words = words[len(c.split()):]
    found = _starts(words, REFUSALS)
    if found is None:
        return None
    rest = " " + " ".join(words[len(found.split()):]) + " "
    if any(f" {g} " in rest for g in _GOES_ON):
        return None
    return found


@dataclass(frozen=True)
class Answer:
    """An answer read into ``clauses`` (canonical words), which of them are ``verdict`` clauses, and the whole
    ``words`` stream with the clause of each word (``clause_of``)."""

    clauses: tuple[tuple[str, ...], ...]
    verdict: frozenset[int]
    contrast: frozenset[int]

    @property
    def words(self) -> list[str]:
        return [w for c in self.clauses for w in c]

    @property
    def clause_of(self) -> list[int]:
        return [k for k, c in enumerate(self.clauses) for _ in c]


@functools.lru_cache(maxsize=64)
def read_answer(text: str) -> Answer:
    """Cut ``text`` into canonical clauses (hedges such as "I think" or "the answer is" dropped from the first)
    and mark the verdict clauses (module doc)."""
    pieces = [p for p in _CLAUSE.split(text) if p and p.strip()]
    clauses, contrast = [], set()
    for p in pieces:
        words = canonical(p).split()
        if not words or (not clauses and " ".join(words) in _DISCOURSE):
            continue
        if words[0] in _CONTRAST:
            contrast.add(len(clauses))
            words = words[1:]
        if words:
            clauses.append(tuple(words))
    if clauses:
        clauses[0] = tuple(_strip_hedges(list(clauses[0]))) or clauses[0]
    verdict = set()
    for k, c in enumerate(clauses):
        reported = bool(_REPORTING.intersection(c)) and c[:1] != ("i",)
        if reported:
            continue
        if k == 0 or k in contrast or (k == 1 and NEGATORS.intersection(clauses[0])):
            verdict.add(k)
    return Answer(tuple(clauses), frozenset(verdict), frozenset(contrast))


#: the verdict is read from the answer's opening (a yes/no verdict comes first, or in a closing "so no" of a short
#: answer); this many characters, so a huge answer costs no more
VERDICT_CHARS = 4000
_NOT_VERDICT = frozenset({"doubt", "one", "longer", "answer", "matter", "wonder", "idea", "comment", "sense", "problem",
                          "way", "response", "reply"})
_ARTICLE_START = re.compile(r"\W*(?:the|a|an)\b", re.IGNORECASE)
#: a verdict word an article and an adjective introduce ("A definite no", "a resounding yes"): still the verdict
_QUALIFIED = re.compile(r"\W*(?:a|an) (?:definite|clear|firm|resounding|simple|flat|plain|straight|emphatic) "
                        r"(yes|no)\b", re.IGNORECASE)


#: an opening that calls the claim asked about false ("That's a myth", "That's a common misconception", "That is not
#: true"): a "no" (articles are already dropped)
_DENIES = re.compile(r"(?:that|this|it) (?:s|is|was) (?:just |simply |only )?(?:\w+ )?(?:myth|misconception|lie|"
                     r"falsehood|fallacy)\b|(?:that|this|it) (?:s|is|was) (?:not true|untrue|false)\b")


def _opening(first: list[str], text: str) -> tuple[str | None, str | None]:
    """The verdict the first clause opens with and the phrase, or (None, None). "No" as a determiner ("no answer",
    "no one"), or after an article the normaliser dropped ('The "No answer" response'), is no verdict."""
    m = _QUALIFIED.match(text)
    if m:
        return YES_NO[m.group(1).lower()], m.group(0).strip()
    if _ARTICLE_START.match(text):
        return None, None
    m = _DENIES.match(" ".join(first))
    if m:
        return "no", m.group(0)
    p = _starts(first, _NO_START)
    if p and not (p in ("no", "not") and first[1:2] and first[1] in _NOT_VERDICT):
        return "no", p
    p = _starts(first, _YES_START)
    if p:
        return "yes", p
    if (2 <= len(first) <= 4 and first[0] in _SHORT_SUBJECT and first[1] in _SHORT_AUX | {"cannot"}
            and set(first[2:]) <= _SHORT_TAIL):
        return ("no" if NEGATORS.intersection(first) else "yes"), " ".join(first)
    return None, None


def _mixed(said: str, clauses) -> str | None:
    """The opposite verdict the answer also gives ("Yes and no.", "Yes, but actually no."), or None."""
    other = "no" if said == "yes" else "yes"
    first = clauses[0]
    for i, w in enumerate(first[1:], start=1):
        if YES_NO.get(w) == other and (first[i - 1] in ("and", "or", "but", "also", "then", "actually")
                                       or i == len(first) - 1):
            return f"{first[i - 1]} {w}"
    for c in clauses[1:]:
        m = _ANSWER_IS.search(" ".join(c))
        if m and YES_NO[m.group(1)] == other:
            return m.group(0)
    return _short_verdict(other, clauses[1:])


def _short_verdict(said: str, clauses) -> str | None:
    """The first of ``clauses`` that is only the verdict ``said`` ("no", "but no", "so no", "and yes"), or None."""
    for c in clauses:
        if len(c) <= 2 and YES_NO.get(c[-1]) == said and (len(c) == 1 or c[0] in _CONTRAST or c[0] in _CONCLUDE
                                                           or c[0] in ("and", "also", "or")):
            return " ".join(c)
    return None


_ANSWER_IS = re.compile(r"\banswer(?:ed)? (?:is |would be |with (?:a |an )?(?:simple |plain |clear )?)?"
                        r"(yes|no|true|false)\b")
#: a first clause that is only a pronoun and an auxiliary ("It is", "I'm not", "They can't"): a verdict
_SHORT_AUX = frozenset({"is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "will", "would",
                        "has", "have", "should", "must"})
_SHORT_SUBJECT = frozenset({"it", "i", "they", "he", "she", "we", "you", "that", "this", "there"})
_SHORT_TAIL = frozenset({"not", "t", "never", "be", "indeed", "so", "too", "certainly", "definitely"})

#: the share of the question's content words a clause must hold to restate it
RESTATES = 0.75


_PREDICATE = NEGATORS | {"is", "are", "was", "were", "be", "do", "does", "did", "can", "could", "would", "will", "should",
                         "may", "might", "has", "have", "had", "must"}


def _restates(words: list[str], question: str) -> bool:
    """Whether the canonical ``words`` restate the question: they hold at least :data:`RESTATES` of its (stemmed)
    content words, or every content word they hold is one of the question's and they have a verb or a negation
    ("It cannot fit.", not a bare noun phrase)."""
    from .grading_meaning import asked_words, claim, stem

    asked = asked_words(question)
    if not asked:
        return False
    own = set(claim("", canonical_words=words).focus)
    if len(asked.intersection(stem(w) for w in words)) >= RESTATES * len(asked):
        return True
    return bool(own) and own <= asked and bool(_PREDICATE.intersection(words))


#: openings that make a restatement a possibility, not a verdict ("It's possible that a cat could fit")
_POSSIBLE = ("it s possible that", "it is possible that", "it s possible", "it is possible", "possibly", "it may",
             "it might", "it could", "perhaps")
_CONCEDE = frozenset({"while", "although", "though", "whereas"})
_REASON = frozenset({"because", "since", "as", "which", "who", "so", "due", "while", "when", "if"})


def _unasserted(words: list[str]) -> bool:
    """Whether a clause restating the question asserts nothing: it asks it again ("The question of whether X
    raises a dilemma") or is an infinitive phrase with no verb of its own ("To seat them all on one plane")."""
    return "whether" in words or (words[:1] == ["to"] and not _PREDICATE.intersection(words))


def main_clause(words: list[str]) -> list[str]:
    """``words`` up to a reason or relative clause ("… cannot kill them because the drug is not …")."""
    for i, w in enumerate(words):
        if w in _REASON and i:
            return words[:i]
    return words


def verdict(text: str, question: str | None = None, *, context: str | None = None) -> tuple[str | None, str]:
    """``("yes" | "no" | None, how)``: the answer's own yes/no verdict, the echoed instruction removed. In order:
    the first words after hedges ("Yes, …", "Of course not", "I think no"); a clause "the answer is no" or "so
    no"; a clause that is only "yes" / "no". With the ``question``, a first clause that restates it (holds
    :data:`RESTATES` of its content words): with the opposite negation parity → no ("A cat cannot fit"), the same
    → yes ("The pool is longer"). An answer that also gives the opposite verdict
    ("Yes and no.", "Yes, but actually no.") has none (None, "mixed …"). The question (``question`` or only
    ``context``, which enables no restatement) tells a determiner: "No birds have …" answering "Is it true that no
    birds have …?" opens with no verdict."""
    stripped = strip_echo(text[:VERDICT_CHARS])
    ans = read_answer(stripped)
    if not ans.clauses:
        return None, "nothing left after removing the echoed instruction"
    first = list(ans.clauses[0])
    asked = question or context
    determiner = asked and first[0] == "no" and len(first) > 1 and f" no {first[1]} " in f" {canonical(asked)} "
    said, p = (None, None) if determiner else _opening(first, stripped.lstrip(" \t\n\"'“‘(["))
    if said is not None:
        mixed = _mixed(said, ans.clauses)
        if mixed:
            return None, f"a mixed verdict: opens with {p!r} and also says {mixed!r}"
        return said, f"the answer opens with {p!r}"
    for c in ans.clauses:
        words = " ".join(c)
        m = _ANSWER_IS.search(words)
        if m:
            return YES_NO[m.group(1)], f"the answer says {m.group(0)!r}"
        if len(c) <= 2 and c[-1] in YES_NO and (len(c) == 1 or c[0] in _CONTRAST or c[0] in _CONCLUDE):
            said = YES_NO[c[-1]]
            mixed = _short_verdict("no" if said == "yes" else "yes", [o for o in ans.clauses if o is not c])
            if mixed:
                return None, f"a mixed verdict: the clause {words!r} and also {mixed!r}"
            return said, f"the clause {words!r}"
    if question and len(ans.clauses) > 1 and first[0] in _CONCEDE:
        first = list(ans.clauses[1])  # "While it is a fine game, it is not suited for solo play": the main clause
    if question and _restates(first, question) and not _unasserted(first):
        from .grading_meaning import claim

        main = main_clause(first)
        if claim("", canonical_words=main).unclear:
            return None, f"a restatement of the question that calls it unclear {' '.join(first)!r}: no verdict"
        hedge = _starts(first, _POSSIBLE)
        if hedge and not set(hedge.split()) & set(normalise_answer(question).split()) - {"it", "s", "is", "that"}:
            return None, f"a restatement of the question hedged with {hedge!r}: no verdict"
        if claim("", canonical_words=main).parity != claim(question).parity:
            return "no", f"a restatement of the question with the opposite polarity {' '.join(first)!r}"
        return "yes", f"a restatement of the question {' '.join(first)!r}"
    return None, "no yes/no verdict in the answer"
