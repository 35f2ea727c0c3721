"""Which notebook mode a completion cache holds answers for: ``fast`` (``UL_FAST=1``) or ``full`` (``UL_FAST`` unset).

Every notebook reads ``UL_FAST``: fast mode runs a smaller version of each section (fewer samples, questions and
steps, shorter answers), so it asks the model *other* requests than full mode, and a recording of one mode cannot
answer a replay in the other. So the mode is part of what is recorded: a process that writes an answer into a cache
marks the cache with its mode (the table ``recorded_modes``, one row per mode), ``cache export`` copies the table
with the file, ``cache import`` merges it as a set, and a replay that misses in a mode the recording lacks says so in
one line with the command that fixes it (:func:`mismatch`). A cache written before modes were recorded has no
marks: its mode is unknown (:func:`recorded_modes` is empty), and it replays as before.

    current_mode()                  # "fast" or "full": the mode this process (a notebook kernel) runs in
    recorded_modes("class.sqlite")  # frozenset({"fast"}), ({"full"}), both, or () for an unmarked cache
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

FAST_ENV = "UL_FAST"
MODES = ("fast", "full")
TABLE = "recorded_modes"
SCHEMA = f"CREATE TABLE IF NOT EXISTS {TABLE} (mode TEXT PRIMARY KEY);"
#: how each mode is set, as a lecturer types it
SETTING = {"fast": f"{FAST_ENV}=1", "full": f"{FAST_ENV} unset"}
#: the command that records each mode into the class cache (README "Running a class")
RECORD = {"fast": "UL_CACHE_DIR=class-cache make tour TOUR_ARGS=--fast", "full": "UL_CACHE_DIR=class-cache make tour"}
#: the command a student replays each mode with
REPLAY = {"fast": "UL_LLM=replay UL_FAST=1 uncertainty-lab lab build/student",
          "full": "UL_LLM=replay uncertainty-lab lab build/student, with UL_FAST unset"}
_MAX_ROWS = 16  # a marked cache holds at most two rows; a file with more is not ours and is read no further

__all__ = ["FAST_ENV", "MODES", "current_mode", "describe", "mismatch", "read_modes", "recorded_modes",
           "unknown_hint"]


def current_mode(env: Mapping[str, str] | None = None) -> str:
    """``"fast"`` when ``env`` (default ``os.environ``) sets ``UL_FAST=1`` — the test the notebooks make — else
    ``"full"``."""
    env = os.environ if env is None else env
    return "fast" if env.get(FAST_ENV) == "1" else "full"


def read_modes(con: sqlite3.Connection) -> frozenset[str]:
    """The modes marked in the cache open on ``con``: the known mode names among the first rows of a real
    ``recorded_modes`` table. No such table (a cache from before modes were recorded), a view or virtual table in its
    place, or a value that is not a mode name counts as no mark: the file is untrusted, nothing it defines is run."""
    row = con.execute("SELECT type, sql FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone()
    if row is None or row[0] != "table" or (row[1] or "").lstrip().upper().startswith("CREATE VIRTUAL"):
        return frozenset()
    rows = con.execute(f"SELECT CASE WHEN typeof(mode) = 'text' AND length(mode) <= 8 THEN mode END FROM {TABLE} "
                       f"LIMIT {_MAX_ROWS}").fetchall()
    return frozenset(r[0] for r in rows if r[0] in MODES)


def recorded_modes(cache_path: str | os.PathLike) -> frozenset[str]:
    """The modes a completion cache file or a ``cache export`` holds answers for, read without changing the file:
    ``{"fast"}``, ``{"full"}``, both, or empty when it does not say (recorded before modes were). A file that does
    not exist is a ``FileNotFoundError``, one that is not an SQLite file a ``ValueError``, each naming it.

    ``uncertainty-lab class grade`` uses it to replay a submission in the recording's mode."""
    from .cache_file import connect_read_only

    path = Path(cache_path).expanduser().absolute()
    if not path.is_file():
        raise FileNotFoundError(f"no completion cache at {path}; pass the path of a cache or of an exported recording")
    try:
        con = connect_read_only(path)
    except sqlite3.Error as exc:
        raise ValueError(f"{path} is not a completion cache ({exc}); pass a file written by "
                         "`uncertainty-lab cache export`") from None
    try:
        return read_modes(con)
    except sqlite3.Error as exc:
        raise ValueError(f"cannot read the recorded modes of {path} ({exc}); pass a file written by "
                         "`uncertainty-lab cache export`") from None
    finally:
        con.close()


def describe(modes: Iterable[str]) -> str:
    """The modes in words: ``"fast mode (UL_FAST=1)"``, ``"fast and full mode"``, or ``"an unknown mode"``."""
    modes = [m for m in MODES if m in set(modes)]
    if not modes:
        return "an unknown mode"
    if len(modes) == 1:
        return f"{modes[0]} mode ({SETTING[modes[0]]})"
    return " and ".join(modes) + " mode"


def mismatch(recorded: Iterable[str], mode: str) -> str:
    """The one line a replay in ``mode`` says when the recording holds answers of the other mode only: which mode
    each is, and the two fixes (replay in the recorded mode, or record this one). ``""`` when the recording holds
    ``mode`` or does not say (see :func:`unknown_hint`)."""
    recorded = frozenset(recorded) & set(MODES)
    if not recorded or mode in recorded:
        return ""
    (other,) = recorded
    return (f"this class recording holds {other}-mode answers ({SETTING[other]}) and this run is in {mode} mode "
            f"({SETTING[mode]}), which asks the model other questions: replay in {other} mode ({REPLAY[other]}), "
            f"or record {mode} mode too ({RECORD[mode]}, then export again)")


def unknown_hint(mode: str, recorded: Iterable[str] = ()) -> str:
    """What a miss adds when the marks cannot tell the recording's mode: none (recorded before modes were), or both
    (a student's cache holds the imported recording and answers of their own, each marked)."""
    other = "full" if mode == "fast" else "fast"
    says = ("the cache holds answers of both modes" if set(recorded) >= set(MODES)
            else "the recording does not say which mode it was made in")
    return (f"this run is in {mode} mode ({SETTING[mode]}) and {says}: if the class recording was made in {other} "
            f"mode, replay with {SETTING[other]}")
