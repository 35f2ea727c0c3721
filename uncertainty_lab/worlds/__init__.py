"""Worlds with a known truth: simulated environments every lab runs on unchanged (``llm = "world:<name>"``);
see :mod:`.base`. Each kind's module registers itself on import (listed here)."""

from .base import KINDS, MAX_WORLD_BYTES, World, WorldError, WorldLLM, load_world, shipped_worlds, world_kind
from .cascade import CascadeWorld  # noqa: F401  (registers kind "cascade")
from .qa import QAWorld  # noqa: F401  (registers kind "qa")
from .search import SearchWorld  # noqa: F401  (registers kind "search")

__all__ = ["KINDS", "MAX_WORLD_BYTES", "World", "WorldError", "WorldLLM", "load_world", "shipped_worlds", "world_kind"]
