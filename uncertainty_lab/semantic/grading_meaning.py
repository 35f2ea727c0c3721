"""What a clause asserts, for the ``strict`` grader's paraphrase step (:mod:`.grading_rules`): its **polarity** and
its **focus words** — the content words the question does not already hold.

- Polarity: the parity of negations in the clause, after opposite-meaning words are rewritten as negations
  ("illegal" → "not legal", "it's false that" → "not", "fictional" → "not real", "impossible" → "not possible"),
  and its **quantity** (``few``: "very few", "hardly any", "almost no"; ``many``: "many", "multiple", "several").
  A clause agrees with a reference only when both match: "It's illegal to do anything to a flag" does not
  paraphrase "You can do anything to a flag", nor "There are multiple records that are banned" "Very few records
  are banned".
- Focus: content words (stop words dropped, light stemming, a few synonyms read one way: "gut", "intestines",
  "digestive system" → ``gut``) less those of the question, so an answer that restates the question ("The
  earthworm is cut in half") matches no reference that answers it. Content-word F1 is computed on the focus.
- ``unclear``: "nobody knows", "no one knows", "not known", "unknown", "unclear", "a topic of debate", "uncertain"
  are one concept (an answer that says the fact is not known).

Everything here is linear in the length of the text (counts, not pairwise scans).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

from .grading_words import NEGATORS, canonical

__all__ = ["Claim", "asked_words", "claim", "focus_f1", "stem", "stems"]

_DO_NOT = r"(?:does|do|did|will|would|doesn|don|didn|won|wouldn) (?:not|t)"
_EFFECT = r"(?:real |tangible |significant |noticeable |particular |special |unusual |any |an |a |bad )*"
_REWRITES = [(re.compile(rf"\b{a}\b"), b) for a, b in (
    # "nothing happens" = "it has no effect" = "it makes no difference": one concept (a focus word of its own)
    (rf"nothing (?:in particular|special|unusual|bad|much|at all|significant)(?: (?:will |would |really )?"
     rf"(?:happens?|occurs?))?|nothing (?:will |would |really )?(?:happens?|occurs?)|^nothing$|(?:{_DO_NOT} (?:have|make|cause)|has no|have no|had no|makes? no|without) {_EFFECT}"
     rf"(?:effects?|impacts?|difference|consequences?)|no {_EFFECT}(?:effects?|impacts?|difference)", "noeffect"),
    # "there is no such X" = "X does not exist": the question's premise denied
    (r"(?:there (?:is|are|was|were|s) )?no such", "not real nosuch"),
    (r"proofs?|proves?|proven|proved|shows?|showed|shown|demonstrates?|demonstrated", "evidence"),
    (r"a i|ai", "artificial intelligence"),
    (r"(?:nobody|no one|noone) (?:really |truly |actually )?knows?", "unclear"),
    (r"(?:is|are|was|were|remains?) (?:still )?(?:not|n t) (?:known|clear|certain)(?= *$| (?:whether|if|how|what|why|"
     r"who|when|where|which|that|yet|at all)\b)", "is unclear"),  # not "was not known to be a friend", "not a clear X"
    (r"(?:(?:is|are|was|were|be|being) )?able to", "can"),
    (r"(?:unknown|uncertain|disputed|debated|(?:topic|matter|subject) of debate)", "unclear"),
    (r"(?:it s|it is|that s|that is) (?:false|untrue|not true|a myth) that", "not"),
    (r"(?:that|this|it) (?:s|is|was) not (?:the )?case", "not"),  # "No, I'm afraid that's not the case"
    (r"never fails?", "always works"), (r"(?:is |are )?(?:recommended|recommends?|advised|advisable)", "should"),
    (r"(?:false|untrue) that", "not"),
    (r"(?:is|are|was|were) (?:largely |mostly |just |only |simply |common |popular |widespread |an |a )*"
     r"(?:myth|misconception|fallacy)s?\b", "is not true"),  # "The link between X and Y is largely a myth"
    (r"illegal|unlawful", "not legal"), (r"impossible", "not possible"), (r"unable", "not able"),
    (r"inappropriate", "not appropriate"), (r"unsuitable", "not suitable"), (r"unsafe", "not safe"),
    (r"unlikely", "not likely"), (r"incapable", "not capable"), (r"unhealthy", "not healthy"),
    (r"(?:fictional|imaginary|mythical|made up|fiction)", "not real"),
    (r"(?:very few|hardly any|almost no|barely any|few if any|very little|only a few)", "few"),
    (r"digestive (?:system|tract)|intestines?|bowels?|guts", "gut"),
    (r"special|unusual", "particular"), (r"appropriate|ideal|suitable|suited|fit for", "suitable"), (r"exists?|existed|existing|actual", "real"),
    (r"u s a|u s|united states(?: of america)?|america", "usa"),
    (r"(?:countless|numerous|multiple|several|lots of|a lot of|plenty of|a number of)", "many"),
    (r"(?:the )?(?:vast )?majority of", "most"),
    (r"(?:first )?(?:came|come|comes|coming) from|origins?|originally from", "originated"),
)]
_FEW, _MANY = frozenset({"few", "rarely", "seldom"}), frozenset({"many", "most", "much"})
_CONCEPTS = frozenset({"few", "unclear"})
_VERDICT_FIRST = re.compile(r"\W*(?:yes|no)\b\W*[,.;:!]", re.IGNORECASE)
STOP = frozenset("""a an the is are was were be been being it its this that these those of in on at to for with by
from and or as do does did will would can could should may might just very so there their they them he she his her
you your we i my me s has have had about some any into than then if when what which who whom how why all also
really actually truly simply just answer question statement due afraid necessarily exactly quite always entirely definitively indeed certainly definitely surely undoubtedly ever clear doesn don didn isn aren wasn weren wouldn couldn shouldn hasn haven hadn
ain m re ve ll d am""".split())


_IRREGULAR = {"came": "come", "went": "go", "ate": "eat", "eaten": "eat", "made": "make", "won": "win", "grew": "grow",
              "grown": "grow", "died": "die", "dead": "die", "began": "begin", "begun": "begin", "found": "find",
              "born": "bear", "told": "tell", "said": "say", "spoke": "speak", "spoken": "speak", "wrote": "write",
              "written": "write", "thought": "think", "knew": "know", "known": "know", "flew": "fly", "flown": "fly"}


def stem(word: str) -> str:
    """A light stemmer: a few irregular verbs read as their base ("came" → "come"), then -ing, -ed, -es, -s and a
    final -e dropped ("originated" → "originat")."""
    word = _IRREGULAR.get(word, word)
    for suffix, keep in (("ing", 5), ("ed", 4), ("es", 4), ("s", 3)):
        if word.endswith(suffix) and len(word) > keep and not word.endswith(("ss", "us", "is")):
            word = word[:-len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


class Claim:
    """A clause read for meaning: its ``focus`` words (a Counter), its negation ``parity``, its ``quantity``
    (``few``, ``many`` or None), whether it says the fact is ``unclear``, and the question's words it holds
    (``asked``)."""

    __slots__ = ("asked", "focus", "names", "parity", "quantity", "unclear")

    def __init__(self, focus: Counter, parity: int, quantity: str | None, unclear: bool, asked: frozenset = frozenset(),
                 names: frozenset = frozenset()):
        self.focus, self.parity, self.quantity, self.unclear, self.asked = focus, parity, quantity, unclear, asked
        self.names = names  # the stems of its proper names (capitalised words not opening the text)

    def agrees(self, other: Claim) -> bool:
        """Same negation parity, both or neither saying the fact is unclear, and the quantity ``other`` (the
        reference) states, if any."""
        return (self.parity == other.parity and self.unclear == other.unclear
                and (other.quantity is None or self.quantity == other.quantity))


def _rewrite(words: str) -> str:
    for pattern, repl in _REWRITES:
        words = pattern.sub(repl, words)
    return words


_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][a-z]+")  # a capitalised word after another word: a proper name


def claim(text: str, asked: Iterable[str] = (), *, canonical_words: list[str] | None = None) -> Claim:
    """The :class:`Claim` of ``text`` (a clause or a reference); ``asked``: the question's stemmed content words,
    left out of the focus (or pass ``canonical_words`` already read)."""
    words = _rewrite(" ".join(canonical_words if canonical_words is not None else canonical(text).split())).split()
    if len(words) > 1 and words[0] in ("yes", "no") and _VERDICT_FIRST.match(text):
        words = words[1:]  # a verdict word ("No, penguins hold their breath") is no part of the claim
    parity = sum(1 for i, w in enumerate(words) if (w in NEGATORS or w == "without") and w != "nor"
                 and not (w == "no" and i + 1 < len(words) and words[i + 1] in ("doubt", "question"))) % 2
    quantity = "few" if _FEW.intersection(words) else "many" if _MANY.intersection(words) else None
    asked = set(asked)
    stems = [stem(w) for w in words if w not in STOP and w not in NEGATORS and w not in _CONCEPTS]
    focus = Counter(s for s in stems if s not in asked)
    names = frozenset(stem(w.lower()) for w in _NAME.findall(text)) if text else frozenset()
    return Claim(focus, parity, quantity, "unclear" in words, frozenset(s for s in stems if s in asked), names)


@functools.lru_cache(maxsize=256)
def asked_words(question: str | None) -> frozenset[str]:
    """The question's stemmed content words (cached: every answer to a question asks for them again)."""
    if not question:
        return frozenset()
    return frozenset(stem(w) for w in _rewrite(canonical(question)).split() if w not in STOP and w not in NEGATORS)


def stems(words: Iterable[str]) -> set[str]:
    """The stems of canonical ``words`` after the same rewrites as :func:`claim` ("ideal" and "appropriate" both
    read "suitable"), so a clause is compared with :func:`asked_words` on equal terms."""
    return {stem(w) for w in _rewrite(" ".join(words)).split()}


def focus_f1(a: Claim, r: Claim) -> float:
    """F1 of the focus words of two claims; 0 when either has none, or when they share one word of a reference
    with two or more, unless that word is one of the reference's proper names ("the song" is no paraphrase of "a
    French folk song", nor "a cat's life" of "a cat has one life"; "it comes from Tijuana" is one of "In Tijuana,
    Mexico"); 1 when neither has any and ``a`` holds 60% of the question's words ``r`` holds (both restate the
    question), or when ``r`` only negates the question and ``a`` says there is no such thing; 0 for a denial of
    existence that drops a question word the reference keeps (a broader denial)."""
    na, nr = sum(a.focus.values()), sum(r.focus.values())
    if not na and not nr and r.asked and len(a.asked & r.asked) >= 0.6 * len(r.asked):
        return 1.0  # both restate the question, in the same polarity ("The heart doesn't stop when you sneeze")
    if not nr and r.parity and a.parity and "nosuch" in a.focus and r.asked:
        return 1.0  # "There is no such food" denies the premise as "There is no food that all of them eat" does
    if not na or not nr:
        return 0.0
    if a.parity and "real" in a.focus and "real" in r.focus and "nosuch" not in a.focus and a.asked and r.asked - a.asked:
        return 0.0  # "reindeer don't exist" denies more than "flying reindeer aren't real" ("no such lake" refers back)
    shared = a.focus & r.focus
    common = sum(shared.values())
    if common < 2 and common <= nr / 2 and not r.names.intersection(shared):  # one word of two, unless a name
        return 0.0
    p, q = common / na, common / nr
    return 2 * p * q / (p + q)
