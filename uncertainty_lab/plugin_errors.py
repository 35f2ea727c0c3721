"""The plugin registry's errors, and how a plugin's own KeyboardInterrupt at import is told from the user's Ctrl-C
(a module of its own so the registry stays one job)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["PluginLoadError", "PluginWarning", "RegistryError", "UnknownKindError", "UnknownPluginError",
           "ctrl_c_watch"]


class RegistryError(Exception):
    """Base class of the registry's errors."""


class UnknownKindError(RegistryError, LookupError):
    """A kind that is not one of :data:`KINDS`."""


class UnknownPluginError(RegistryError, LookupError):
    """No plugin of this kind has this name; the message lists the available ones."""


class PluginLoadError(RegistryError):
    """A plugin failed to import or does not follow its kind's protocol."""

    def __init__(self, message: str, *, kind: str, name: str, distribution: str, entry_point: str):
        super().__init__(message)
        self.kind, self.name = kind, name
        self.distribution, self.entry_point = distribution, entry_point


class PluginWarning(UserWarning):
    """A registry problem that does not stop the healthy plugins (``strict=True`` raises instead)."""



@contextlib.contextmanager
def ctrl_c_watch() -> Iterator[threading.Event]:
    """An event set when a real Ctrl-C (SIGINT) arrives inside the block, which still interrupts as before; so a
    KeyboardInterrupt a plugin raises by itself when imported is told from the user's. Off the main thread no
    signal arrives, so the event stays clear."""
    seen = threading.Event()
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is None:  # off the main thread, or a handler not set from Python: leave it alone
        yield seen
        return

    def handler(signum: int, frame: Any) -> None:
        seen.set()
        if callable(previous):  # Python's own raises KeyboardInterrupt
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)
