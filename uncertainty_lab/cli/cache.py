"""``uncertainty-lab cache``: stats, clear, export and import of the completion cache."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..llm.transfer import MAX_BYTES, MAX_ROW_BYTES, MAX_ROWS
from .doctor import _size


def _cache_action(cache, args) -> int:
    if args.action == "stats":
        s = cache.stats()
        print(f"path:    {s.path}\nentries: {s.entries}\nsize:    {_size(s.size_bytes)}\nmodes:   {_modes(s.modes)}")
        for label, n in sorted(s.by_model.items()):
            print(f"  {n:>7}  {label}")
    elif args.action == "clear":
        print(f"removed {cache.clear()} entries from {cache.path}")
    elif args.action == "export":
        if Path(args.path).resolve() == cache.path.resolve():
            print(f"error: {args.path} is the cache itself; export to another file", file=sys.stderr)
            return 1
        dest = cache.export(args.path, force=args.force)
        print(f"exported {len(cache)} entries to {dest}")
    else:
        return _cache_import(cache, args)
    return 0


def _modes(modes) -> str:
    """The notebook modes a cache holds answers for, and how to replay them (see uncertainty_lab/llm/modes.py)."""
    from ..llm.modes import REPLAY, describe

    if len(modes) == 1:
        (mode,) = modes
        return f"{describe(modes)}: replay it with {REPLAY[mode]}"
    if not modes:
        return f"{describe(modes)} (recorded before modes were; a replay in the other mode misses)"
    return f"{describe(modes)}: replays in either"


def _cache_import(cache, args) -> int:
    """Exit 1 when the file held no usable row or a cap stopped the import; skipped rows are warnings."""
    mb = 1 << 20
    report = cache.import_file(args.path, max_rows=args.max_rows, max_bytes=int(args.max_mb * mb),
                               max_row_bytes=int(args.max_row_mb * mb))
    print(f"imported {report.added} new entries from {args.path} ({len(cache)} in {cache.path})")
    if report.added or report.present:
        print(f"the recording holds answers for {_modes(report.modes)}")
    for line in report.problems():
        print(f"{'error' if line == report.stopped else 'warning'}: {line}", file=sys.stderr)
    useless = report.skipped and not (report.added or report.present)
    return 1 if report.stopped or useless else 0


def cmd_cache(args) -> int:
    """``cache stats|clear|export|import``; any fault of the cache or of PATH is one ``error:`` line, exit 1."""
    from ..llm.cache import CacheError, CompletionCache

    try:
        cache = CompletionCache()  # cache_dir()/completions.sqlite: respects UL_CACHE_DIR
    except CacheError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        return _cache_action(cache, args)
    except (CacheError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        cache.close()




def _positive(kind: type):
    """An argparse type: a positive ``kind`` (int or float)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive {kind.__name__}, got {text!r}")
        return value
    return parse


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    p = sub.add_parser("cache", help="inspect, clear, export or import the completion cache ($UL_CACHE_DIR)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("stats", help="path, entries, size and counts per backend:model")
    actions.add_parser("clear", help="delete every entry (no question asked)")
    export = actions.add_parser("export", help="write a self-contained copy to PATH (a new file)")
    export.add_argument("path", metavar="PATH")
    export.add_argument("--force", action="store_true", help="replace PATH when it is an existing file")
    imp = actions.add_parser("import", help="merge the verified entries of an exported cache at PATH")
    imp.add_argument("path", metavar="PATH")
    imp.add_argument("--max-rows", type=_positive(int), default=MAX_ROWS, help=f"rows to read at most ({MAX_ROWS})")
    imp.add_argument("--max-mb", type=_positive(float), default=MAX_BYTES / (1 << 20),
                     help=f"MB of requests and answers to read at most ({MAX_BYTES >> 20})")
    imp.add_argument("--max-row-mb", type=_positive(float), default=MAX_ROW_BYTES / (1 << 20),
                     help=f"skip a row larger than this many MB ({MAX_ROW_BYTES >> 20})")
    p.set_defaults(func=cmd_cache)
