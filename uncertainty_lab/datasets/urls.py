"""The identity of a news article for de-duplication: normalised domains, URLs and headlines, and a headline read
from a URL's slug only when the slug is made of words (never from an article id such as ``ar-BBxxxx``,
``idUSKBN…`` or ``articleshow/123.cms``).
"""

from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit

__all__ = ["clean_text", "is_id_like", "normalise_domain", "normalise_title", "normalise_url", "title_from_url"]

_SLUG_EXT_RE = re.compile(r"\.(s?html?|php\d?|aspx?|jsp|cms|ece|story|amp)$", re.I)
#: Path segments that name a page kind or a section, never the article.
_SLUG_SKIP = frozenset({
    "index", "amp", "story", "stories", "article", "articles", "news", "default", "home", "page", "print",
    "articleshow", "articlelist", "photostory", "videoshow", "liveblog", "slideshow", "amp_articleshow",
})
#: Whole segments that are ids of known sites: MSN (``ar-``/``vi-``/``gm-``… + code), Reuters (``id`` + code).
_ID_SEGMENT_RE = re.compile(r"^(?:(?:ar|vi|gm|ss|cm|bb|ba|sp)-[A-Za-z0-9]{5,}|id[A-Z0-9]{6,})$")
_LOCALE_RE = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2})?$", re.I)
_SUFFIX_SPLIT_RE = re.compile(r"\s+[|\-\u2013\u2014:]\s+")
_TRACKING_PARAMS = ("utm_", "fbclid", "gclid", "ocid", "cmpid")


def clean_text(text: str) -> str:
    """HTML entities resolved (twice: GDELT escapes some twice) and whitespace collapsed."""
    text = html.unescape(html.unescape(text))
    return re.sub(r"\s+", " ", text).strip()


def _split(url: str) -> SplitResult:
    """``urlsplit``, with a URL it cannot parse (``a://[``: an unclosed IPv6 bracket) read as no URL at all."""
    try:
        return urlsplit(url)
    except ValueError:
        return SplitResult("", "", "", "", "")


def normalise_domain(value: str) -> str:
    """``'https://www.News.Example.com:443/x'`` → ``'news.example.com'`` (lower case, no scheme, ``www.``, port)."""
    s = str(value).strip().lower()
    if "://" in s:
        s = _split(s).hostname or ""
    s = s.split("/")[0].split("?")[0].split("#")[0]
    s = s.rsplit("@", 1)[-1].split(":")[0].strip(".")
    while s.startswith("www.") or re.match(r"^www\d\.", s):
        s = s.split(".", 1)[1] if "." in s else ""
    return s


def normalise_url(url: str) -> str:
    """A URL's identity for de-duplication: no scheme, ``www.``, fragment, tracking parameters or trailing slash."""
    parts = _split(str(url).strip())
    host = normalise_domain(parts.netloc) if parts.netloc else ""
    path = parts.path.rstrip("/")
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not k.lower().startswith(_TRACKING_PARAMS)))
    if not host:
        return str(url).strip().lower().rstrip("/")
    return f"{host}{path}" + (f"?{query}" if query else "")


def normalise_title(title: str) -> str:
    """A headline's identity for de-duplication: unescaped, NFKC, case-folded, punctuation removed, and a short
    trailing site name after `` | `` / `` - `` / `` — `` dropped (``'Crew lands - Example News'`` → ``'crew lands'``)."""
    s = unicodedata.normalize("NFKC", clean_text(str(title)))
    parts = _SUFFIX_SPLIT_RE.split(s)
    if len(parts) > 1 and len(parts[-1].split()) <= 4 and len(" ".join(parts[:-1]).split()) >= 3:
        s = " ".join(parts[:-1])
    s = s.casefold()
    s = "".join(ch if ch.isalnum() else " " for ch in s)
    return " ".join(s.split())


def is_id_like(token: str) -> bool:
    """True for a slug token that is a code, not a word: digits, long hex, ``a123``, a mix of digits and capitals
    (``L2N2790KV``), or capitals scattered through lower case (``BBNtJPu``)."""
    return bool(
        token.isdigit()
        or (len(token) >= 8 and re.fullmatch(r"[0-9a-fA-F]+", token))
        or re.fullmatch(r"[a-z]?\d+[a-z]?", token, re.I)
        or (re.search(r"\d", token) and re.search(r"[A-Z]", token))
        or (re.search(r"[a-z][A-Z]", token) and re.search(r"[A-Z]{2}", token))
    )


def title_from_url(url: str) -> str:
    """A readable headline from a URL's slug: ``…/2031/09/02/crew-lifts-off-toward-moon-1234567.html`` →
    ``'Crew lifts off toward moon'``; ``''`` when no segment has words.

    Segments are tried from the last one back; a segment counts when, with its id-like tokens dropped
    (:func:`is_id_like`), at least two words remain and one has four letters or more. Page kinds and sections
    (``articleshow``, ``news``…), locales (``en-us``) and whole-segment ids of known sites (``ar-…``, ``id…``)
    are skipped, so ``…/crew-returns/articleshow/123.cms`` gives ``'Crew returns'`` and an id-only URL gives ``''``.
    """
    path = _split(str(url).strip()).path
    for seg in reversed([s for s in path.split("/") if s]):
        seg = _SLUG_EXT_RE.sub("", unquote(seg))
        if seg.lower() in _SLUG_SKIP or _ID_SEGMENT_RE.fullmatch(seg) or _LOCALE_RE.fullmatch(seg):
            continue
        words = [t for t in re.split(r"[-_+.\s]+", seg) if t and not is_id_like(t)]
        if len(words) >= 2 and any(len(w) >= 4 for w in words):
            text = " ".join(words)
            return text[:1].upper() + text[1:]
    return ""
