"""The identity of a news article for de-duplication: normalised domains, URLs and headlines, and a headline read
from a URL's slug only when the slug is made of words (never from an article id such as ``ar-BBxxxx``,
``idUSKBN…``, ``articleshow/123.cms``, a UUID or a code like ``rtr102319``, nor from a tag, category, topic or
index page), keeping the numbers between its words (``sell-for-5-million`` → ``sell for 5 million``).
"""

from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit

__all__ = ["clean_text", "is_id_like", "is_listing_url", "normalise_domain", "normalise_title", "normalise_url",
           "title_from_url"]

_SLUG_EXT_RE = re.compile(r"\.(s?html?|php\d?|aspx?|jsp|cms|ece|story|amp)$", re.I)
#: Path segments that name a page kind or a section, never the article.
_SLUG_SKIP = frozenset({
    "index", "amp", "story", "stories", "article", "articles", "news", "default", "home", "page", "print",
    "articleshow", "articlelist", "photostory", "videoshow", "liveblog", "slideshow", "amp_articleshow",
})
#: Whole segments that are ids of known sites: MSN (``ar-``/``vi-``/``gm-``… + code), Reuters (``id`` + code).
_ID_SEGMENT_RE = re.compile(r"^(?:(?:ar|vi|gm|ss|cm|bb|ba|sp)-[A-Za-z0-9]{5,}|id[A-Z0-9]{6,})$")
#: Path segments naming a list of articles (a tag, category, topic, section, author or search page).
_LISTING = frozenset({
    "tag", "tags", "category", "categories", "topic", "topics", "section", "sections", "author", "authors",
    "search", "keyword", "keywords", "subject", "subjects", "label", "labels", "feed", "rss",
})
#: First slug tokens that make the slug a listing's name (``index-id-news-sc-africa-byo``, ``tag-artemis``).
_LISTING_LEAD = frozenset({"index", "tag", "tags", "category", "topic", "topics", "section"})
_UUID_RE = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_HEX_WORD_RE = re.compile(r"[a-f]{8,}", re.I)
_UNIT_RE = re.compile(r"\d{1,4}(?:st|nd|rd|th|s|m|k|bn|g|gb|tb|mw|gw|kw|kg|km|mph|am|pm|x|d|ft|mm|cm)", re.I)
_NAMED_NUMBER_RE = re.compile(r"[a-z]{2,8}\d{1,2}|[a-z]\d{1,2}", re.I)
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


def _token_kind(token: str) -> str:
    """``"word"`` (letters; or letters with a short number: ``covid19``, ``g7``; or a number with a unit or ordinal:
    ``5g``, ``100m``, ``21st``), ``"number"`` (up to 4 digits), else ``"id"`` (a code: :func:`is_id_like`, a long
    number, or letters and digits mixed otherwise: ``rtr102319``, ``5c5d``, ``11e9``)."""
    if token.isdigit():
        return "number" if len(token) <= 4 else "id"
    if token.isalpha():
        return "id" if is_id_like(token) or _HEX_WORD_RE.fullmatch(token) else "word"
    if _UNIT_RE.fullmatch(token) or _NAMED_NUMBER_RE.fullmatch(token):
        return "word"
    return "id"


def is_listing_url(url: str) -> bool:
    """True for a tag, category, topic, section, author or search page (a path segment names one: ``/tag/…``,
    ``/category/…``, ``/topics/…``), or an index page whose slug starts with ``index`` (``index-id-news-…``):
    a list of articles, whose name is no headline."""
    for seg in (s for s in _split(str(url).strip()).path.split("/") if s):
        seg = _SLUG_EXT_RE.sub("", unquote(seg)).lower()
        if seg in _LISTING or re.split(r"[-_+.\s]+", seg)[0] in _LISTING_LEAD and "-" in seg:
            return True
    return False


def title_from_url(url: str) -> str:
    """A readable headline from a URL's slug: ``…/2031/09/02/crew-lifts-off-toward-moon-1234567.html`` →
    ``'Crew lifts off toward moon'``, ``…/homes-sell-for-5-million`` → ``'Homes sell for 5 million'``; ``''``
    when the URL has no slug of words.

    Segments are tried from the last one back. UUIDs are removed first; then tokens that are codes are dropped
    (:func:`_token_kind`: ``5c5d``, ``11e9``, ``rtr102319``, long numbers), and numbers are kept only between two
    words (a leading date or a trailing id is not part of the headline). A segment counts when at least two
    words remain that are not page kinds (``article``, ``news``…) and one has four letters or more. Page kinds and
    sections (``articleshow``, ``news``…), locales (``en-us``) and whole-segment ids of known sites (``ar-…``,
    ``id…``) are skipped, and a listing page (:func:`is_listing_url`: ``/tag/…``, ``/category/…``, ``/topics/…``,
    ``index-…``) gives ``''``: so ``…/crew-returns/articleshow/123.cms`` gives ``'Crew returns'`` and an id-only
    URL gives ``''``.
    """
    if is_listing_url(url):
        return ""
    path = _split(str(url).strip()).path
    for seg in reversed([s for s in path.split("/") if s]):
        seg = _SLUG_EXT_RE.sub("", unquote(seg))
        if seg.lower() in _SLUG_SKIP or _ID_SEGMENT_RE.fullmatch(seg) or _LOCALE_RE.fullmatch(seg):
            continue
        tokens = [t for t in re.split(r"[-_+.\s]+", _UUID_RE.sub(" ", seg)) if t]
        kinds = [_token_kind(t) for t in tokens]
        kept = [t for t, k in zip(tokens, kinds, strict=True) if k != "id"]
        kept_kinds = [k for k in kinds if k != "id"]
        words = [t for i, t in enumerate(kept) if kept_kinds[i] == "word" or (
            0 < i < len(kept) - 1 and kept_kinds[i - 1] == "word" and kept_kinds[i + 1] == "word")]
        real = [w for w in words if w.isalpha() and w.lower() not in _SLUG_SKIP]
        if len(real) >= 2 and any(len(w) >= 4 for w in real):
            text = " ".join(words)
            return text[:1].upper() + text[1:]
    return ""
