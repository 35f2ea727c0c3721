"""The words of an answer read one way: numbers as digits, units in one spelling, the negating words — what the
grading rules (:mod:`.grading_text`, :mod:`.grading_meaning`) compare. A module of its own so both can use it."""

from __future__ import annotations

import re

from .text import normalise_answer

__all__ = ["NEGATORS", "canonical"]

NEGATORS = frozenset({"not", "no", "never", "t", "cannot", "neither", "nor", "none", "nothing", "nobody"})

_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)")

_UNITS = {"celsius": "c", "centigrade": "c", "fahrenheit": "f", "kilometres": "km", "kilometers": "km",
          "kilometre": "km", "kilometer": "km", "metres": "m", "meters": "m", "metre": "m", "meter": "m",
          "centimetres": "cm", "centimeters": "cm", "centimetre": "cm", "centimeter": "cm", "kilograms": "kg",
          "kilogram": "kg", "kilos": "kg", "grams": "g", "gram": "g", "litres": "l", "liters": "l", "litre": "l",
          "liter": "l", "mph": "miles h", "kph": "km h", "hours": "h", "hour": "h", "hrs": "h", "minutes": "min",
          "minute": "min", "mins": "min", "seconds": "s", "secs": "s", "sec": "s", "mile": "miles"}
_SMALL = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}


_NUMBER_WORDS = frozenset(_SMALL) | frozenset(_TENS) | frozenset(_SCALES)
_UNIT_WORDS = frozenset(_UNITS) | {"degrees", "degree", "per", "cent", "second"}


def _kind(word: str) -> str:
    if word in _SCALES:
        return "scale"
    v = _SMALL.get(word, _TENS.get(word))
    return "unit" if v is not None and v < 10 else "teen" if v is not None and v < 20 else "tens"


def _extends(prev: str, word: str) -> bool:
    """Whether number word ``word`` continues the number ending in ``prev`` ("twenty" + "one": yes; "nineteen" +
    "sixty": no, a new group)."""
    kind, last = _kind(word), _kind(prev)
    if kind == "scale":
        return last != "scale" or _SCALES[word] > _SCALES[prev]
    return last == "scale" or (last == "tens" and kind == "unit")


def _value(group: list[str]) -> int:
    total = current = 0
    for w in group:
        if w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = 0
        else:
            current += _SMALL.get(w, _TENS.get(w, 0))
    return total + current


def _numbers(words: list[str]) -> list[str]:
    """Number words as digits: "twenty one" → "21", "one hundred and five" → "105", "nineteen sixty nine" →
    "1969" (two groups, the first of two digits, read as a year)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] not in _SMALL and words[i] not in _TENS and words[i] not in _SCALES:
            out.append(words[i])
            i += 1
            continue
        groups: list[list[str]] = [[words[i]]]
        i += 1
        while i < len(words):
            w = words[i]
            if w == "and" and groups[-1][-1] in _SCALES and i + 1 < len(words) and words[i + 1] in {**_SMALL, **_TENS}:
                i += 1
                continue
            if w not in _SMALL and w not in _TENS and w not in _SCALES:
                break
            if _extends(groups[-1][-1], w):
                groups[-1].append(w)
            else:
                groups.append([w])
            i += 1
        values = [_value(g) for g in groups]
        if len(values) == 2 and 10 <= values[0] < 100 and values[1] < 100:
            out.append(f"{values[0]}{values[1]:02d}")
        else:
            out.extend(str(v) for v in values)
    return out


def _units(words: list[str]) -> list[str]:
    out: list[str] = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("degrees", "degree") and nxt in ("c", "f", "celsius", "fahrenheit", "centigrade"):
            continue
        if w == "per" and (nxt in _UNITS or nxt in ("second", "s", "h", "cent")):
            if nxt == "cent":
                out.append("percent")
            continue
        if w == "cent" and out and out[-1] == "percent":
            continue
        if w == "second" and i > 0 and words[i - 1] == "per":
            out.append("s")
            continue
        out.extend(_UNITS.get(w, w).split())
    return out


#: contractions as the normaliser leaves them ("I'm" → "i m") written out, so "I'm an AI" holds "I am an AI"
_CONTRACTIONS = {"i m": "i am", "you re": "you are", "we re": "we are", "they re": "they are", "won t": "will not",
                 "can t": "cannot", **{f"{v}n t": f"{v} not" for v in (
                     "do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "would", "could",
                     "should")}}
_CONTRACTED = re.compile(r"\b(?:" + "|".join(sorted(_CONTRACTIONS, key=len, reverse=True)) + r")\b")


def canonical(text: str) -> str:
    """:func:`~.text.normalise_answer` with thousands separators dropped, "%" read as "percent", number words as
    digits, units in one spelling (``"One hundred degrees Celsius"`` → ``"100 c"``) and contractions written out
    ("don't" → "do not")."""
    text = _THOUSANDS.sub("", text.replace("%", " percent"))
    words = normalise_answer(text).split()
    if not _NUMBER_WORDS.isdisjoint(words):
        words = _numbers(words)
    if not _UNIT_WORDS.isdisjoint(words):
        words = _units(words)
    text = " ".join(words)
    return _CONTRACTED.sub(lambda m: _CONTRACTIONS[m.group(0)], text) if " m " in f"{text} " or " re " in f"{text} " \
        or " t " in f"{text} " else text
