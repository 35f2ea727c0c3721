"""Checks that a drawn matplotlib figure shows its data: each function takes a ``Figure`` (drawn with the Agg
backend; the checks draw it when needed) and returns the problems found as sentences, an empty list when none.

- :func:`outside_axes` — a data point, bar, band or error bar outside its axes; a marker counts by its whole
  extent, so one sitting on the axis limit (half hidden by the frame) is outside: pad the limits;
- :func:`texts_outside_axes` — an annotation inside an axes that runs past the frame (a clipped label);
- :func:`legend_over_data` — a legend box that holds a plotted point, a stretch of a data line or part of a bar,
  in any axes of the figure;
- :func:`hidden_series` — a line or marker set drawn under another at the same place and at least as wide, so
  the reader cannot see it (a reference line under a curve, identical points): dodge them or change markers;
- :func:`outside_figure` — a legend, axes or label past the figure's edge, cut off in a saved PNG;
- :func:`figure_problems` — all five.

"Data" is what is drawn in data coordinates (``transData``, also with an offset, e.g. a dodge): reference lines
(``axhline``, ``axvspan``), images and the legend itself are not data for the first three checks; a reference
line still has to be visible, so :func:`hidden_series` looks at every line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PatchCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.patches import Rectangle

__all__ = ["figure_problems", "hidden_series", "legend_over_data", "outside_axes", "outside_figure",
           "texts_outside_axes"]

#: pixels of slack when comparing positions (anti-aliasing, rounding)
TOL = 0.75
#: a series is hidden when at least this share of what it draws lies under later artists
HIDDEN_SHARE = 0.85
#: spacing in pixels of the points sampled along a drawn line
STEP_PX = 2.0


@dataclass
class Mark:
    """What one artist draws, in display pixels: marker centres with their radius, and polylines with their
    half-width (both zero-sized when absent)."""

    name: str
    points: np.ndarray  # (n, 2) marker centres
    radius: float  # marker radius, px
    filled: bool  # a filled marker hides what is under it; an open one or a tick does not
    lines: list[np.ndarray]  # polylines, (m, 2) each
    half_width: float  # line half-width, px
    opaque: bool  # opaque enough to hide what is under it
    solid: bool = True  # a solid line (a dashed one hides nothing)


def _drawn(fig: Figure) -> None:
    """Draw ``fig`` on an Agg canvas (a bare ``Figure`` gets one), so every extent is known."""
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()


def _px(fig: Figure, points: float) -> float:
    return float(points) * fig.dpi / 72.0


def _label(artist) -> str:
    label = str(artist.get_label() or "")
    return f"{type(artist).__name__} {label!r}" if label and not label.startswith("_") else type(artist).__name__


def _is_data(artist, ax) -> bool:
    """Drawn in data coordinates: ``transData`` itself, after a patch's own transform (a bar), or followed by an
    offset (``transData + ScaledTranslation(...)``, a dodge)."""
    t = artist.get_transform()
    if t == ax.transData:
        return True
    return any(ax.transData in (left, right) for left, right in t._iter_break_from_left_to_right())


def _finite(xy: np.ndarray) -> np.ndarray:
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    return xy[np.isfinite(xy).all(axis=1)]


def _has_marker(line: Line2D) -> bool:
    return line.get_marker() not in (None, "None", "none", "", " ") and line.get_markersize() > 0


def _has_line(line: Line2D) -> bool:
    return line.get_linestyle() not in ("None", "none", "", " ") and line.get_linewidth() > 0


def _solid(line: Line2D) -> bool:
    """A dashed or dotted line leaves gaps: what lies under it still shows."""
    return line.get_linestyle() in ("-", "solid")


def _marker_filled(line: Line2D) -> bool:
    if not MarkerStyle(line.get_marker()).is_filled():
        return False
    return to_rgba(line.get_markerfacecolor())[3] > 0


def _alpha(artist) -> float:
    a = artist.get_alpha()
    return 1.0 if a is None else float(a)


def _caplines(ax) -> set[int]:
    caps: set[int] = set()
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            caps.update(id(x) for x in c.lines[1])
    return caps


def _line_mark(fig: Figure, line: Line2D) -> Mark:
    xy = _finite(line.get_transform().transform(np.column_stack([line.get_xdata(orig=False),
                                                                 line.get_ydata(orig=False)])))
    marker = _has_marker(line)
    edge = _px(fig, line.get_markeredgewidth()) / 2 if marker else 0.0
    return Mark(_label(line), xy if marker else np.zeros((0, 2)),
                _px(fig, line.get_markersize()) / 2 + edge if marker else 0.0,
                marker and _marker_filled(line), [xy] if _has_line(line) and len(xy) > 1 else [],
                _px(fig, line.get_linewidth()) / 2 if _has_line(line) else 0.0,
                _alpha(line) >= 0.8 and to_rgba(line.get_color())[3] >= 0.8, _solid(line))


def _scatter_mark(fig: Figure, coll: PathCollection) -> Mark:
    xy = _finite(coll.get_offset_transform().transform(coll.get_offsets()))
    sizes = coll.get_sizes()
    widths = coll.get_linewidths()
    edge = _px(fig, float(np.max(widths)) if len(widths) else 0.0) / 2
    radius = _px(fig, np.sqrt(float(np.max(sizes)) if len(sizes) else 36.0)) / 2 + edge
    faces = coll.get_facecolors()
    filled = len(faces) > 0 and float(np.min(np.asarray(faces)[:, 3])) > 0
    return Mark(_label(coll), xy, radius, filled, [], 0.0, _alpha(coll) >= 0.8)


def _marks(fig: Figure, ax, *, data_only: bool) -> Iterator[tuple[object, Mark]]:
    """The lines and scatter sets of ``ax`` in drawing order (zorder, then insertion), error-bar caps left out."""
    caps = _caplines(ax)
    for artist in sorted(ax.get_children(), key=lambda a: a.get_zorder()):
        if not artist.get_visible() or id(artist) in caps:
            continue
        if data_only and not _is_data(artist, ax):
            continue
        if isinstance(artist, Line2D):
            yield artist, _line_mark(fig, artist)
        elif isinstance(artist, PathCollection):
            yield artist, _scatter_mark(fig, artist)


def _sample(polyline: np.ndarray, step: float = STEP_PX) -> np.ndarray:
    """Points every ``step`` pixels along a polyline (its vertices included)."""
    out = [polyline[:1]]
    for a, b in zip(polyline[:-1], polyline[1:], strict=True):
        n = max(1, int(np.ceil(np.hypot(*(b - a)) / step)))
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.concatenate(out) if out else np.zeros((0, 2))


def _inside(bbox, xy: np.ndarray, pad: float = 0.0) -> np.ndarray:
    return ((xy[:, 0] >= bbox.x0 - TOL + pad) & (xy[:, 0] <= bbox.x1 + TOL - pad)
            & (xy[:, 1] >= bbox.y0 - TOL + pad) & (xy[:, 1] <= bbox.y1 + TOL - pad))


def _collection_segments(coll) -> list[np.ndarray]:
    """The polylines of a line or polygon collection, in display pixels."""
    t = coll.get_transform()
    if isinstance(coll, LineCollection):
        return [_finite(t.transform(np.asarray(s))) for s in coll.get_segments() if len(s)]
    return [_finite(t.transform(p.vertices)) for p in coll.get_paths() if len(p.vertices)]


def _bars(ax) -> list[tuple[object, object]]:
    """(artist, display bbox) of the bars (rectangles in data coordinates)."""
    return [(p, p.get_window_extent()) for p in ax.patches
            if isinstance(p, Rectangle) and p.get_visible() and _is_data(p, ax)]


def _figure_legends(fig) -> list:
    """The legends of the figure and of its subfigures."""
    return list(fig.legends) + [lg for sub in getattr(fig, "subfigs", []) for lg in _figure_legends(sub)]


def _axes_of(fig: Figure) -> list:
    """The plotting axes (colour bars are left out: they have no data of their own)."""
    return [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]


# --- the checks ------------------------------------------------------------------------------------------------


def outside_axes(fig: Figure) -> list[str]:
    """Data drawn outside its axes: a marker not wholly inside the frame, a line vertex, a bar, a band's or an
    error bar's end past the limits."""
    _drawn(fig)
    problems = []
    for n, ax in enumerate(_axes_of(fig)):
        box, where = ax.get_window_extent(), f"axes {n} ({ax.get_title() or 'untitled'})"
        for _, m in _marks(fig, ax, data_only=True):
            bad = (~_inside(box, m.points, pad=m.radius)).sum() if len(m.points) else 0
            bad += sum(int((~_inside(box, pl)).sum()) for pl in m.lines) if not len(m.points) else 0
            if bad:
                problems.append(f"{where}: {bad} point(s) of {m.name} outside or on the edge of the axes")
        for coll in ax.collections:
            if isinstance(coll, (LineCollection, PolyCollection, PatchCollection)) and not isinstance(
                    coll, PathCollection) and _is_data(coll, ax) and coll.get_visible():
                bad = sum(int((~_inside(box, s)).sum()) for s in _collection_segments(coll))
                if bad:
                    problems.append(f"{where}: {bad} vertex/vertices of {_label(coll)} outside the axes")
        for p, ext in _bars(ax):
            if ext.x0 < box.x0 - TOL or ext.x1 > box.x1 + TOL or ext.y0 < box.y0 - TOL or ext.y1 > box.y1 + TOL:
                problems.append(f"{where}: a bar ({_label(p)}) runs outside the axes")
    return problems


def texts_outside_axes(fig: Figure) -> list[str]:
    """Annotations of an axes (``ax.text`` / ``ax.annotate``) whose box runs past the axes frame."""
    _drawn(fig)
    renderer = fig.canvas.get_renderer()
    problems = []
    for n, ax in enumerate(_axes_of(fig)):
        box = ax.get_window_extent()
        for t in ax.texts:
            if not t.get_visible() or not t.get_text():
                continue
            e = t.get_window_extent(renderer)
            if e.x0 < box.x0 - TOL or e.x1 > box.x1 + TOL or e.y0 < box.y0 - TOL or e.y1 > box.y1 + TOL:
                problems.append(f"axes {n} ({ax.get_title() or 'untitled'}): the label {t.get_text()!r} runs "
                                "past the axes")
    return problems


def _overlaps(box, m: Mark, clip) -> int:
    """How many of a mark's points, line samples or markers, the box ``box`` holds (within the clip box)."""
    hit = 0
    if len(m.points):
        p = m.points[_inside(clip, m.points)]
        hit += int(((p[:, 0] + m.radius > box.x0) & (p[:, 0] - m.radius < box.x1)
                    & (p[:, 1] + m.radius > box.y0) & (p[:, 1] - m.radius < box.y1)).sum())
    for pl in m.lines:
        s = _sample(pl)
        s = s[_inside(clip, s)]
        hit += int(((s[:, 0] > box.x0) & (s[:, 0] < box.x1) & (s[:, 1] > box.y0) & (s[:, 1] < box.y1)).sum())
    return hit


def legend_over_data(fig: Figure) -> list[str]:
    """Legends (of an axes or the figure) whose box holds data of any axes: markers, data lines, error bars or
    bars. Reference lines and shaded spans do not count."""
    _drawn(fig)
    renderer = fig.canvas.get_renderer()
    legends = [lg for ax in fig.axes if (lg := ax.get_legend()) is not None] + _figure_legends(fig)
    problems = []
    for lg in legends:
        if not lg.get_visible():
            continue
        box = lg.get_window_extent(renderer).shrunk(1.0, 1.0)
        box = type(box).from_extents(box.x0 + TOL, box.y0 + TOL, box.x1 - TOL, box.y1 - TOL)
        for n, ax in enumerate(_axes_of(fig)):
            clip = ax.get_window_extent()
            hits = [f"{m.name}: {k}" for _, m in _marks(fig, ax, data_only=True) if (k := _overlaps(box, m, clip))]
            for coll in ax.collections:
                if isinstance(coll, LineCollection) and _is_data(coll, ax):
                    k = _overlaps(box, Mark(_label(coll), np.zeros((0, 2)), 0, False,
                                            _collection_segments(coll), 0, True), clip)
                    if k:
                        hits.append(f"{_label(coll)}: {k}")
            hits += [f"bar {_label(p)}" for p, e in _bars(ax)
                     if min(e.x1, box.x1) - max(e.x0, box.x0) > TOL and min(e.y1, box.y1) - max(e.y0, box.y0) > TOL]
            if hits:
                title = ax.get_title() or "untitled"
                problems.append(f"the legend ({', '.join(t.get_text() for t in lg.get_texts())[:60]}) covers data "
                                f"of axes {n} ({title}): {'; '.join(hits)[:200]}")
    return problems


def _distance_to(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance of each point to a polyline (pixels)."""
    if len(polyline) == 1:
        return np.hypot(*(points - polyline[0]).T)
    a, b = polyline[:-1][None], polyline[1:][None]
    p = points[:, None]
    ab = b - a
    t = np.clip(((p - a) * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12), 0, 1)
    d = np.hypot(*(a + t[..., None] * ab - p).transpose(2, 0, 1))
    return d.min(axis=1)


def _covered(points: np.ndarray, size: float, above: list[Mark]) -> np.ndarray:
    """Which points (of a mark with radius / half-width ``size``) lie wholly under one of the marks ``above``."""
    hidden = np.zeros(len(points), dtype=bool)
    for b in above:
        if not b.opaque:
            continue
        if b.filled and len(b.points) and b.radius + TOL >= size:
            d = np.min(np.hypot(points[:, None, 0] - b.points[None, :, 0], points[:, None, 1] - b.points[None, :, 1]),
                       axis=1)
            hidden |= d + size <= b.radius + TOL
        for pl in b.lines:
            if b.solid and b.half_width + TOL >= size:
                hidden |= _distance_to(points, pl) + size <= b.half_width + TOL
    return hidden


def hidden_series(fig: Figure) -> list[str]:
    """Lines and marker sets (reference lines included) of which at least :data:`HIDDEN_SHARE` of the drawn
    points lie under artists drawn later that are at least as wide: an identical series drawn on top, a curve on a
    reference line of the same width."""
    _drawn(fig)
    problems = []
    for n, ax in enumerate(_axes_of(fig)):
        box = ax.get_window_extent()
        marks = [m for _, m in _marks(fig, ax, data_only=False)]
        for i, m in enumerate(marks):
            above = marks[i + 1:]
            parts = []
            if len(m.points):
                pts = m.points[_inside(box, m.points)]
                if len(pts):
                    parts.append(_covered(pts, m.radius, above))
            for pl in m.lines:
                s = _sample(pl)
                s = s[_inside(box, s)]
                if len(s):
                    parts.append(_covered(s, m.half_width, above))
            if parts:
                share = float(np.concatenate(parts).mean())
                if share >= HIDDEN_SHARE:
                    problems.append(f"axes {n} ({ax.get_title() or 'untitled'}): {m.name} is hidden under later "
                                    f"artists ({share:.0%} of it covered)")
    return problems


def outside_figure(fig: Figure) -> list[str]:
    """Legends, axes and their annotations that run past the figure's edge: a saved PNG (``figure.png``, a
    widget's image) cuts them off."""
    _drawn(fig)
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    parts = [(f"the legend of axes {n}", lg) for n, ax in enumerate(fig.axes) if (lg := ax.get_legend())]
    parts += [(f"a figure legend ({i})", lg) for i, lg in enumerate(_figure_legends(fig))]
    parts += [(f"axes {n} ({ax.get_title() or 'untitled'})", ax) for n, ax in enumerate(fig.axes)]
    parts += [(f"the label {t.get_text()!r}", t) for ax in fig.axes for t in ax.texts if t.get_text()]
    problems = []
    for name, artist in parts:
        if not artist.get_visible():
            continue
        e = artist.get_window_extent(renderer)
        if e.x0 < page.x0 - TOL or e.x1 > page.x1 + TOL or e.y0 < page.y0 - TOL or e.y1 > page.y1 + TOL:
            problems.append(f"{name} runs past the edge of the figure (cut off when saved)")
    return problems


def figure_problems(fig: Figure) -> list[str]:
    """Every problem the five checks find."""
    return (outside_axes(fig) + texts_outside_axes(fig) + outside_figure(fig) + legend_over_data(fig)
            + hidden_series(fig))
