"""The ``memory_selectors`` contract: the history a selector reads and the memory it returns.

A selector implements ``select(history, t_next, node_next, k, model=None, rng=None) -> list[MemoryItem]``:
at most k past events e_m = (τ_m, n_m, x_m) with τ_m < t_next, each with a normalised weight (the weights sum
to 1 when the list is not empty), most relevant first; :func:`check_memory` checks an answer. The history H_t
keeps the per-node state that makes a memory-selection step O(N) instead of O(history):

    state_j(t) = Σ_{τ_m < t, n_m = j} e^{-β(t − τ_m)}

is stored at the last event time t_ref (the part from events before t_ref, and the jump from the events exactly at
t_ref) and advanced to any t > t_ref by the factor e^{-β(t − t_ref)}; appending an event multiplies by e^{-β Δt}
and adds 1 at its node. One state vector is kept per decay that has been asked for (built by one pass over the
history the first time).

These types live in the core (not in the cascade lab) so that a selector plugin imports only the core.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["CascadeError", "Event", "History", "MemoryItem", "MemorySelector", "NodeSpec", "as_node_specs", "check_memory"]


class CascadeError(ValueError):
    """Bad input to the cascade lab; the message names the argument and the fix."""


@dataclass(frozen=True)
class Event:
    """One event e_m = (τ_m, n_m, x_m): a time (in the model's time unit, hours in the labs), a node index
    0..N-1 and the text it wrote. ``Event(time, node, text)``."""

    time: float
    node: int
    text: str

    def __post_init__(self):
        try:
            t = float(self.time)
        except (TypeError, ValueError):
            raise CascadeError(f"Event time must be a number, got {self.time!r}") from None
        if not math.isfinite(t):
            raise CascadeError(f"Event time must be finite, got {self.time!r}")
        if isinstance(self.node, bool) or not isinstance(self.node, (int, np.integer)) or self.node < 0:
            raise CascadeError(
                f"Event node must be a node index (an int >= 0), got {self.node!r}; map names to indices with "
                "the position of the node in node_specs"
            )
        if not isinstance(self.text, str):
            raise CascadeError(f"Event text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "time", t)
        object.__setattr__(self, "node", int(self.node))

    def to_record(self) -> dict[str, Any]:
        return {"time": self.time, "node": self.node, "text": self.text}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Event:
        return cls(rec["time"], rec["node"], rec["text"])


@dataclass(frozen=True)
class NodeSpec:
    """A node (an agent): its ``name`` (a label shown in prompts) and its fixed style instruction a_i."""

    name: str
    instruction: str

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise CascadeError(f"NodeSpec name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.instruction, str):
            raise CascadeError(f"NodeSpec instruction must be a string, got {type(self.instruction).__name__}")

    def to_record(self) -> dict[str, str]:
        return {"name": self.name, "instruction": self.instruction}


def as_node_specs(node_specs: Any) -> tuple[NodeSpec, ...]:
    """A tuple of NodeSpec from NodeSpecs, ``(name, instruction)`` pairs or ``{"name", "instruction"}`` dicts,
    or a ``{name: instruction}`` mapping (in its order)."""
    if node_specs is None:
        return ()
    if isinstance(node_specs, dict):
        node_specs = list(node_specs.items())
    if isinstance(node_specs, (str, bytes)) or not isinstance(node_specs, Iterable):
        raise CascadeError(
            "node_specs must be a list of NodeSpec(name, instruction) (or (name, instruction) pairs), one per node, "
            f"got {type(node_specs).__name__}"
        )
    out = []
    for i, spec in enumerate(node_specs):
        if isinstance(spec, NodeSpec):
            out.append(spec)
        elif isinstance(spec, dict):
            out.append(NodeSpec(spec.get("name"), spec.get("instruction", "")))
        elif isinstance(spec, Sequence) and not isinstance(spec, str) and len(spec) == 2:
            out.append(NodeSpec(spec[0], spec[1]))
        else:
            raise CascadeError(f"node_specs[{i}] must be a NodeSpec(name, instruction), got {spec!r}")
    names = [s.name for s in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise CascadeError(f"node_specs names must be distinct; repeated: {dupes}")
    return tuple(out)


class _ExpState:
    """For one decay β: ``pre_j`` = Σ_{τ_m < t_ref, n_m = j} e^{-β(t_ref − τ_m)} and ``jump_j`` = the number of node-j
    events exactly at t_ref (the last event time). Kept apart so that the left limit at t_ref is exact (no
    cancellation), and state_j(t) = (pre_j + jump_j) e^{-β(t − t_ref)} for t > t_ref."""

    __slots__ = ("beta", "jump", "pre", "t_ref")

    def __init__(self, beta: float, n_nodes: int):
        self.beta = beta
        self.pre = np.zeros(n_nodes)
        self.jump = np.zeros(n_nodes)
        self.t_ref = -math.inf

    def push(self, time: float, node: int) -> None:
        if time > self.t_ref:
            if self.t_ref > -math.inf:
                self.pre += self.jump
                self.pre *= math.exp(-self.beta * (time - self.t_ref))
                self.jump[:] = 0.0
            self.t_ref = time
        self.jump[node] += 1.0

    def at(self, t: float, right: bool) -> np.ndarray:
        if t > self.t_ref:
            if self.t_ref == -math.inf:
                return np.zeros_like(self.pre)
            return (self.pre + self.jump) * math.exp(-self.beta * (t - self.t_ref))
        # t == t_ref (the caller checked t >= t_ref): events exactly at t count only for the right limit
        return self.pre + self.jump if right else self.pre.copy()


class History:
    """The events so far, H_t = {e_0, …, e_{t−1}}, in order of time (ties allowed, across nodes or not).

    ``History(node_specs, events=())`` — ``node_specs`` gives the nodes (NodeSpec list; an int N is accepted
    for a history without names). Indexing gives events; index 0 is the seed event. Besides the events it keeps

    - ``latest[j]``: the index of node j's latest event (None when node j has not spoken — never -1, which in
      Python would silently mean "the last event");
    - arrays ``times`` and ``nodes`` (views, amortised O(1) append) for the Hawkes sampler;
    - per decay β, the per-node exponential state (module docstring) — :meth:`excitation` is O(N).
    """

    def __init__(self, node_specs: Any, events: Iterable[Event] = ()):
        if isinstance(node_specs, (int, np.integer)) and not isinstance(node_specs, bool):
            if node_specs < 1:
                raise CascadeError(f"a history needs at least one node, got n_nodes={node_specs}")
            self.node_specs: tuple[NodeSpec, ...] = ()
            self.n_nodes = int(node_specs)
        else:
            self.node_specs = as_node_specs(node_specs)
            if not self.node_specs:
                raise CascadeError("node_specs is empty; give one NodeSpec(name, instruction) per node")
            self.n_nodes = len(self.node_specs)
        self.events: list[Event] = []
        self.latest: list[int | None] = [None] * self.n_nodes
        self._prev_same: list[int | None] = []
        self._t = np.empty(64)
        self._n = np.empty(64, dtype=np.int64)
        self._states: dict[float, _ExpState] = {}
        for e in events:
            self.append(e)

    # --- container ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index):
        return self.events[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __repr__(self) -> str:
        last = f", last t={self.last_time:g}" if self.events else ""
        return f"History({len(self)} events, {self.n_nodes} nodes{last})"

    @property
    def times(self) -> np.ndarray:
        """Event times, shape (M,) (a read-only view; valid until the next append)."""
        v = self._t[: len(self.events)]
        v.flags.writeable = False
        return v

    @property
    def nodes(self) -> np.ndarray:
        """Event nodes, shape (M,) (a read-only view; valid until the next append)."""
        v = self._n[: len(self.events)]
        v.flags.writeable = False
        return v

    @property
    def last_time(self) -> float:
        if not self.events:
            raise CascadeError("the history is empty; start it with the seed event")
        return self.events[-1].time

    def node_name(self, node: int) -> str:
        return self.node_specs[node].name if self.node_specs else f"node {node}"

    # --- updates --------------------------------------------------------------------------------------
    def append(self, event: Event) -> int:
        """Add an event (not earlier than the last one); O(N) per tracked decay. Returns its index."""
        if not isinstance(event, Event):
            raise CascadeError(f"history events must be Event(time, node, text), got {type(event).__name__}")
        if event.node >= self.n_nodes:
            raise CascadeError(
                f"event node {event.node} is out of range: this history has {self.n_nodes} nodes (0..{self.n_nodes - 1})"
            )
        if self.events and event.time < self.events[-1].time:
            raise CascadeError(
                f"events must come in time order: t={event.time!r} is before the last event at "
                f"t={self.events[-1].time!r}"
            )
        m = len(self.events)
        if m == self._t.size:
            self._t = np.resize(self._t, 2 * m)
            self._n = np.resize(self._n, 2 * m)
        self._t[m], self._n[m] = event.time, event.node
        self.events.append(event)
        self._prev_same.append(self.latest[event.node])
        self.latest[event.node] = m
        for st in self._states.values():
            st.push(event.time, event.node)
        return m

    def extend(self, events: Iterable[Event]) -> None:
        for e in events:
            self.append(e)

    # --- O(N) queries ---------------------------------------------------------------------------------
    def _check_query(self, t: float) -> float:
        t = float(t)
        if not math.isfinite(t):
            raise CascadeError(f"query time must be finite, got {t!r}")
        if self.events and t < self.events[-1].time:
            raise CascadeError(
                f"t={t!r} is before the last history event at t={self.events[-1].time!r}; the incremental state "
                "answers only for times at or after the last event (select memory for the next event)"
            )
        return t

    def excitation(self, t: float, beta: float, *, right: bool = False) -> np.ndarray:
        """state_j(t) = Σ_{τ_m < t, n_m = j} e^{-β(t − τ_m)} for every node j (shape (N,)), in O(N).

        ``t`` must be ≥ the last event time. ``right=True`` also counts events at exactly t (the right limit).
        The first call for a new β makes one O(M·N) pass; later appends keep it current.
        """
        t = self._check_query(t)
        beta = float(beta)
        if not (math.isfinite(beta) and beta > 0):
            raise CascadeError(f"beta must be a finite number > 0, got {beta!r}")
        st = self._states.get(beta)
        if st is None:
            st = _ExpState(beta, self.n_nodes)
            for e in self.events:
                st.push(e.time, e.node)
            self._states[beta] = st
        return st.at(t, right)

    def latest_before(self, t: float) -> list[int | None]:
        """For each node j, the index of its latest event with τ_m < t (None if it has none); O(N) (plus the
        few events tied at exactly t)."""
        t = self._check_query(t)
        out: list[int | None] = []
        times = self._t
        for idx in self.latest:
            while idx is not None and times[idx] >= t:
                idx = self._prev_same[idx]
            out.append(idx)
        return out

    def before(self, t: float) -> int:
        """The number of events with τ_m < t (they are the prefix H_t)."""
        return int(np.searchsorted(self._t[: len(self.events)], float(t), side="left"))


@dataclass(frozen=True)
class MemoryItem:
    """One remembered event: ``index`` into the history (0 is the seed), its ``node`` and its normalised ``weight``."""

    index: int
    node: int
    weight: float

    def to_record(self) -> dict[str, Any]:
        return {"index": self.index, "node": self.node, "weight": self.weight}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> MemoryItem:
        return cls(int(rec["index"]), int(rec["node"]), float(rec["weight"]))


def check_memory(items: Any, history: History, t_next: float, *, who: str = "memory selector") -> list[MemoryItem]:
    """Validate a selector's answer (used by the loop on third-party selectors): MemoryItems whose indices point
    at events before t_next, with finite non-negative weights summing to 1 (within 1e-6)."""
    if items is None:
        raise CascadeError(f"{who} returned None; return an empty list for an empty memory")
    items = list(items)
    for i, it in enumerate(items):
        if not all(hasattr(it, a) for a in ("index", "node", "weight")):
            raise CascadeError(f"{who} item {i} must have .index, .node and .weight, got {it!r}")
        if not isinstance(it.index, (int, np.integer)) or isinstance(it.index, bool) or not 0 <= it.index < len(history):
            raise CascadeError(f"{who} item {i} has index {it.index!r}, not an index into the history (0..{len(history) - 1})")
        if int(it.node) != history[int(it.index)].node:
            raise CascadeError(f"{who} item {i} says node {it.node!r} but event {it.index} is from node {history[int(it.index)].node}")
        if history[int(it.index)].time >= t_next:
            raise CascadeError(f"{who} item {i} points at event {it.index} at t={history[int(it.index)].time}, not before t_next={t_next}")
        if not np.isfinite(it.weight) or it.weight < 0:
            raise CascadeError(f"{who} item {i} has weight {it.weight!r}; weights must be finite and >= 0")
    if items:
        total = float(sum(it.weight for it in items))
        if abs(total - 1.0) > 1e-6:
            raise CascadeError(f"{who} weights sum to {total:.6g}; they must sum to 1 (normalise them)")
    return [MemoryItem(int(it.index), int(it.node), float(it.weight)) for it in items]


class MemorySelector:
    """Optional base of a ``memory_selectors`` plugin: set ``name``, ``summary`` (and ``reference``), declare
    parameters as dataclass fields, implement :meth:`select`. Any class with a ``select`` method is accepted."""

    name: ClassVar[str] = "base"
    summary: ClassVar[str] = ""
    reference: ClassVar[str] = ""

    def select(self, history: History, t_next: float, node_next: int, k: int, model: Any = None,
               rng: Any = None) -> list[MemoryItem]:
        raise NotImplementedError
