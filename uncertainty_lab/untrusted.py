"""Reading untrusted files, the one way the package does it: data files, configs, run journals, cache exports and
the notebooks it grades all come through here.

- **Regular files only** unless the caller allows another kind: a named pipe (it would block), a device
  (``/dev/zero`` never ends), a socket or a folder is refused before it is opened.
- **Bytes are counted while they are read**, decompressed bytes included, in total (``max_bytes``) and per line
  (``max_line``): a size on disk is never trusted (it is 0 for a device, and a 1.5 MB ``.gz`` can hold a 1.5 GB
  line). One :class:`Budget` can span several files.
- **Nesting depth is checked before parsing** JSON and TOML (:func:`nesting_depth`, one linear pass), so a 100k-deep
  list is this module's error, not Python's ``RecursionError``; integers longer than :data:`MAX_INT_DIGITS` digits
  are refused too.
- **Text is decoded with the file and line named** on failure, and a lone surrogate (a ``"\\ud800"`` escape) is
  refused where it would otherwise fail far from the file.
- **Messages quote at most a short, escaped excerpt** (:func:`excerpt`): a file's bytes are never echoed raw.

Every failure is an :class:`UntrustedFileError` (a ``ValueError``) whose message names the file (and the line or
record) and the fix; a missing file stays a ``FileNotFoundError``. Nothing here imports or calls code that a file
names.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import tomllib
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LINE",
    "MAX_INT_DIGITS",
    "Budget",
    "IsAFolderError",
    "UntrustedFileError",
    "check_path",
    "decode",
    "excerpt",
    "iter_lines",
    "load_json",
    "load_toml",
    "nesting_depth",
    "open_binary",
    "read_bytes",
    "read_text",
]

#: What a reader reads at most unless told otherwise (bytes, after decompression): 256 MiB.
DEFAULT_MAX_BYTES = 256 * 2**20
#: The longest line a line reader accepts (bytes): 16 MiB.
DEFAULT_MAX_LINE = 16 * 2**20
#: The deepest nesting of lists/objects (JSON) or arrays/inline tables (TOML) a parser is given.
DEFAULT_MAX_DEPTH = 64
#: The most digits an integer in a JSON file may have (Python's own limit, 4300, fails without naming the file).
MAX_INT_DIGITS = 100
#: The longest path accepted (characters).
MAX_PATH_CHARS = 4096

_KINDS = {"fifo": (stat.S_ISFIFO, "a named pipe (FIFO)"), "device": (lambda m: stat.S_ISCHR(m) or stat.S_ISBLK(m),
          "a device"), "socket": (stat.S_ISSOCK, "a socket")}
_CHUNK = 2**20
_CUT_SHORT = "the file looks truncated: download it again"
NEWLINE = b"\n"


class UntrustedFileError(ValueError):
    """A file could not be read safely or is not in the expected form; the message names the file, the ``row``
    (``"line 3"``, ``"record 2"``) and ``column`` where known, and the fix."""

    _column_word = "column"
    #: true when the file ends in the middle of a record (an interrupted download)
    truncated: bool = False

    def __init__(self, path: str | os.PathLike[str], message: str, *, row: str | None = None,
                 column: str | None = None):
        self.path = str(path)
        self.row = row
        self.column = column
        where = self.path
        if row is not None:
            where += f", {row}"
        if column is not None:
            where += f", {self._column_word} {column!r}"
        super().__init__(f"{where}: {message}")

    @classmethod
    def cut_short(cls, path: str | os.PathLike[str], line: int) -> UntrustedFileError:
        """The error for a file that stops inside a record at ``line`` (1-based); ``truncated`` is set."""
        error = cls(path, f"ends in the middle of a record ({_CUT_SHORT})", row=f"line {line}")
        error.truncated = True
        error.args = (f"{path} ends in the middle of a record at line {line} ({_CUT_SHORT})",)
        return error


class IsAFolderError(UntrustedFileError, IsADirectoryError):
    """A folder where a file was expected (both a ``ValueError`` for the command line and an ``IsADirectoryError``
    for code that caught that before)."""


def excerpt(data: bytes | str, limit: int = 40, *, quote: bool = True) -> str:
    """At most ``limit`` characters of ``data``, escaped (``repr``-style, ASCII only), with ``…`` when cut: what a
    message may quote of a file."""
    cut = data[:limit]
    shown = repr(cut)[2:-1] if isinstance(cut, bytes) else ascii(cut)[1:-1]
    shown += "…" if len(data) > limit else ""
    return f"'{shown}'" if quote else shown


def listing(items: Any, shown: int = 5, *, limit: int = 40, quote: bool = True) -> str:
    """The first ``shown`` of ``items``, each an :func:`excerpt` of at most ``limit`` characters, comma-separated,
    then ``… and N more``: how a message lists values that came from a user or a file (a list of a million
    categories or columns stays one short line)."""
    items = list(items)
    text = ", ".join(excerpt(str(i), limit, quote=quote) for i in items[:shown])
    return text + (f" … and {len(items) - shown} more" if len(items) > shown else "")


def _as_path(path: Any, what: str) -> Path:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path (a string), got {type(path).__name__} {excerpt(repr(path))}; "
                        f"write the file's path in quotes")
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise ValueError(f"{what} must be a non-empty path, got {excerpt(repr(path))}")
    if len(text) > MAX_PATH_CHARS or "\x00" in text:
        raise ValueError(f"{what} is not a usable path ({len(text)} characters{', holds a NUL' if chr(0) in text else ''}"
                         f"): {excerpt(text)}; give the data file's path")
    return Path(text)


def check_path(path: Any, *, what: str = "path", allow: tuple[str, ...] = (),
               error: type[UntrustedFileError] = UntrustedFileError) -> Path:
    """``path`` as a :class:`Path` once it is known to be a regular file (or one of the ``allow``-ed kinds:
    ``"fifo"``, ``"device"``, ``"socket"``); otherwise an error naming ``what`` and the fix. Nothing is opened."""
    p = _as_path(path, what)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        how = " (a link that points at nothing)" if p.is_symlink() else ""
        raise FileNotFoundError(f"{what}: no such file {excerpt(str(p), 200)}{how}; check the path (nothing is "
                                "downloaded: the file must already be on disk)") from None
    except OSError as exc:  # a symlink loop, a name too long, a folder we may not enter
        raise error(p, f"cannot be read ({exc.strerror or exc}); give {what} a readable "
                                 "regular file") from None
    if stat.S_ISREG(mode):
        return p
    if stat.S_ISDIR(mode):
        raise IsAFolderError(p, f"is a folder; {what} must name the file itself")
    for kind, (test, name) in _KINDS.items():
        if test(mode):
            if kind in allow:
                return p
            raise error(p, f"is {name}, not a regular file; {what} must name a file on disk (a pipe "
                                     "or device could block or never end)")
    raise error(p, f"is not a regular file; {what} must name a file on disk")


def open_binary(path: Any, *, what: str = "path", allow: tuple[str, ...] = (),
                error: type[UntrustedFileError] = UntrustedFileError) -> IO[bytes]:
    """The file opened for binary reading after :func:`check_path`; it is checked again once open (the name
    could have been swapped for a pipe in between) and a pipe never blocks the open itself."""
    p = check_path(path, what=what, allow=allow, error=error)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(p, f"cannot be opened ({exc.strerror or exc}); check its permissions") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode) and not any(_KINDS[k][0](mode) for k in allow):
        os.close(fd)
        raise error(p, f"changed into something that is not a regular file while it was opened; "
                                 f"{what} must name a file on disk")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class Budget:
    """How many bytes a reader may still read (``max_bytes=None``: no cap); one budget can span several files."""

    def __init__(self, max_bytes: int | None = DEFAULT_MAX_BYTES):
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1):
            raise ValueError(f"max_bytes must be a positive number of bytes or None (no cap), got {max_bytes!r}")
        self.max_bytes = max_bytes
        self.used = 0

    def spend(self, n: int, where: str | os.PathLike[str], error: type[UntrustedFileError] = UntrustedFileError):
        """Count ``n`` more bytes read from ``where``; past the cap, an error saying how to raise it."""
        self.used += n
        if self.max_bytes is not None and self.used > self.max_bytes:
            raise error(where, f"more than max_bytes={self.max_bytes} bytes ({self.max_bytes / 2**20:.0f} MiB) to "
                        "read; reads are capped because files are untrusted input: pass a larger max_bytes= (or "
                        "max_bytes=None for no cap) if you trust this file")

    @property
    def left(self) -> int | None:
        return None if self.max_bytes is None else max(0, self.max_bytes - self.used)


def _stream(raw: IO[bytes], p: Path) -> IO[bytes]:
    """``raw``, decompressed when the file is gzip (by its magic bytes, whatever its name)."""
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def _budget(budget: Budget | None, max_bytes: int | None) -> Budget:
    return budget if budget is not None else Budget(max_bytes)


def _archive_error(p: Path, exc: Exception, error: type[UntrustedFileError]) -> UntrustedFileError:
    return error(p, f"not a readable gzip archive ({exc}; an interrupted download? download it again)")


def read_bytes(path: Any, *, what: str = "path", max_bytes: int | None = DEFAULT_MAX_BYTES,
               budget: Budget | None = None, allow: tuple[str, ...] = (), decompress: bool = True,
               error: type[UntrustedFileError] = UntrustedFileError) -> bytes:
    """The file's bytes (gzip decompressed when ``decompress``), counted against the cap while read."""
    budget = _budget(budget, max_bytes)
    p = check_path(path, what=what, allow=allow, error=error)
    parts = []
    with open_binary(p, what=what, allow=allow, error=error) as f:
        raw = io.BufferedReader(f) if not hasattr(f, "peek") else f
        src = _stream(raw, p) if decompress else raw
        try:
            while True:
                want = _CHUNK if budget.left is None else min(_CHUNK, budget.left + 1)
                chunk = src.read(want)
                if not chunk:
                    break
                budget.spend(len(chunk), p, error)
                parts.append(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise _archive_error(p, exc, error) from None
    return b"".join(parts)


def decode(data: bytes, where: str | os.PathLike[str], *, error: type[UntrustedFileError] = UntrustedFileError,
           row: str | None = None) -> str:
    """UTF-8 text (a byte-order mark dropped); on failure the line (or ``row``) and an escaped excerpt are named."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = row or f"line {data.count(NEWLINE, 0, exc.start) + 1}"
        raise error(where, f"not UTF-8 text ({exc.reason} at byte {exc.start}, near "
                    f"{excerpt(data[max(0, exc.start - 10):exc.start + 10])}); save the file as UTF-8",
                    row=line) from None


def read_text(path: Any, *, what: str = "path", max_bytes: int | None = DEFAULT_MAX_BYTES,
              budget: Budget | None = None, allow: tuple[str, ...] = (),
              error: type[UntrustedFileError] = UntrustedFileError) -> str:
    """The whole file as UTF-8 text (gzip decompressed, newlines made ``\\n``), within the cap."""
    p = check_path(path, what=what, allow=allow, error=error)
    text = decode(read_bytes(p, what=what, max_bytes=max_bytes, budget=budget, allow=allow, error=error), p,
                  error=error)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def iter_lines(path: Any, *, what: str = "path", max_bytes: int | None = DEFAULT_MAX_BYTES,
               max_line: int = DEFAULT_MAX_LINE, budget: Budget | None = None, allow: tuple[str, ...] = (),
               error: type[UntrustedFileError] = UntrustedFileError) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` for each line (its ``\\n`` kept; a last line without one was cut short), gzip
    decompressed; a line longer than ``max_line`` bytes is refused before more of it is read."""
    budget = _budget(budget, max_bytes)
    p = check_path(path, what=what, allow=allow, error=error)
    with open_binary(p, what=what, allow=allow, error=error) as f:
        src = _stream(f if hasattr(f, "peek") else io.BufferedReader(f), p)
        n = 0
        try:
            while True:
                line = src.readline(max_line + 1)
                if not line:
                    return
                n += 1
                budget.spend(len(line), p, error)
                if len(line) > max_line:
                    raise error(p, f"a line longer than max_line={max_line} bytes; this is not a line-based "
                                "text file of the expected kind (pass a larger max_line= if you trust it)",
                                row=f"line {n}")
                yield n, line
        except EOFError:  # a gzip stream cut short
            raise error.cut_short(p, n + 1) from None
        except (OSError, zlib.error) as exc:
            raise _archive_error(p, exc, error) from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str, *, toml: bool = False) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (and, for TOML, comments), in one linear pass: what a
    recursive parser would recurse into. JSON: strings are cut out by a regular expression and only the brackets
    are visited (a journal line costs C speed); TOML (configs, small): a character scan that knows its four
    string forms; a ``[table]`` header counts as one level."""
    if not toml:
        depth = deepest = 0
        for m in _BRACKET.finditer(_JSON_STRING.sub("", text)):
            depth = depth + 1 if m.group() in "[{" else max(0, depth - 1)
            deepest = max(deepest, depth)
        return deepest
    depth = deepest = 0
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote in ('"', '"""'):
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            i += 1
            continue
        if c in "\"'":
            triple = c * 3
            quote = triple if text.startswith(triple, i) else c
            i += len(quote)
            continue
        if c == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def _check_depth(text: str, where, max_depth: int, toml: bool, error, row: str | None) -> None:
    depth = nesting_depth(text, toml=toml)
    if depth > max_depth:
        raise error(where, f"nested {depth} levels deep (at most {max_depth}); no file the package reads nests "
                    "that deep: this is not a file of the expected kind", row=row)


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise OverflowError(f"an integer of {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _lone_surrogate(value: Any) -> str | None:
    """An escaped excerpt of the first string (key or value) in ``value`` holding a lone surrogate, else None."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return excerpt(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def load_json(text: str | bytes, where: str | os.PathLike[str], *, row: str | None = None,
              max_depth: int = DEFAULT_MAX_DEPTH, error: type[UntrustedFileError] = UntrustedFileError) -> Any:
    """One JSON value parsed from untrusted ``text``: depth checked first, huge integers and lone surrogates
    refused; every failure names ``where`` (and ``row``). A ``json.JSONDecodeError`` is re-raised as is (callers
    tell a cut-short file from a broken one by it)."""
    if isinstance(text, bytes):
        text = decode(text, where, error=error, row=row)
    _check_depth(text, where, max_depth, False, error, row)
    try:
        value = json.loads(text, parse_int=_parse_int)
    except OverflowError as exc:
        raise error(where, f"{exc}; no value the package reads is that large", row=row) from None
    bad = _lone_surrogate(value)
    if bad is not None and row is None and isinstance(value, list):  # an array of records: name the record
        n = next(i for i, v in enumerate(value) if _lone_surrogate(v) is not None)
        row = f"record {n + 1}"
    if bad is not None:
        raise error(where, f"a string holds a lone surrogate escape ({bad}): not text; fix or remove it", row=row)
    return value


def load_toml(text: str, where: str | os.PathLike[str], *, max_depth: int = DEFAULT_MAX_DEPTH,
              error: type[UntrustedFileError] = UntrustedFileError) -> dict[str, Any]:
    """A TOML document parsed from untrusted ``text`` (depth checked first); a ``tomllib.TOMLDecodeError`` is
    re-raised as is (its message has the line and column)."""
    _check_depth(text, where, max_depth, True, error, None)
    return tomllib.loads(text)
