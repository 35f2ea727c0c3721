"""The machine line every benchmark report starts with (the scripts run as `python benchmarks/<name>.py`)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine(*, load: bool = False) -> str:
    """CPU model, core count, Python and OS; with ``load``, the 1-minute load average (shared machines)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    if load and hasattr(os, "getloadavg"):
        text += f", load average {os.getloadavg()[0]:.1f}"
    return text
