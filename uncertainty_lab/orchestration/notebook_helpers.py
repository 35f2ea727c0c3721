"""Deprecated alias of notebook 04's helpers (moved to .explore, .cases, .figures, .sample_size and .scripted);
removed in 0.3."""

from .cases import CASE_KINDS, case_table, category_table, find_cases
from .explore import decisions_table, dry_run, policy_table, score_answers, short_concerns, short_reason, trace_table
from .figures import draw_signal_map
from .sample_size import sample_size_table, smallest_significant_gap
from .scripted import ScriptedLLM

__all__ = ["CASE_KINDS", "ScriptedLLM", "case_table", "category_table", "decisions_table", "draw_signal_map",
           "dry_run", "find_cases", "policy_table", "sample_size_table", "score_answers", "short_concerns",
           "short_reason", "smallest_significant_gap", "trace_table"]
