"""A slider's range as data: what the widget shows and what the plain functions behind it accept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SliderRange"]


@dataclass(frozen=True)
class SliderRange:
    """One slider's range: ``min``, ``max``, ``step`` and the starting ``value`` (``mid`` lies on the grid)."""

    min: float
    max: float
    step: float
    value: float

    @property
    def mid(self) -> float:
        return (self.min + self.max) / 2

    def check(self, name: str, value: Any, kind: type = float) -> None:
        """A ValueError naming ``name`` unless ``value`` is a number (an integer when ``kind`` is int) in range."""
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (kind is float or float(value).is_integer())
        if not ok or not self.min <= value <= self.max:
            raise ValueError(f"{name} must be {'an integer' if kind is int else 'a number'} in "
                             f"[{self.min:g}, {self.max:g}], got {value!r}")


def png_bytes(fig: Any, dpi: int) -> bytes:
    """A matplotlib figure as PNG bytes (what an ``Image`` widget shows), the figure closed after."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return buf.getvalue()
