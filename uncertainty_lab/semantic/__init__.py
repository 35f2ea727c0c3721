"""Semantic uncertainty: sampling, equivalence judges, metrics and their evaluation (HASSUM)."""
