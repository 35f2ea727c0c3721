"""A pool of Ollama servers for one run: the units of an experiment spread over the healthy hosts, a host that
fails handing its unit to the next, and a table of which host served what.

    hosts    ``llm_hosts`` in the config, else ``$OLLAMA_HOST`` (which may list several, separated by commas); a
             pool is used when an Ollama model runs and ``llm_hosts`` is given or ``$OLLAMA_HOST`` lists two or more
    health   every host is asked for its models first (within :data:`HEALTH_TIMEOUT`, the backend's deadline); a
             host that does not answer, or lacks a model the run needs, serves nothing
    assign   unit i tries the healthy hosts in the order h[i mod n], h[i+1 mod n], … (round-robin in unit order, so
             the same run assigns the same hosts); a host that fails (:class:`~.ollama_backend.HostFailover`) is
             dropped for the units assigned after it, and the failed unit resumes its journal on the next host

The completion cache never names the host (its key is backend, model, request, seed, index), so the same model
on any host shares answers, and the results do not depend on which host served a unit.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .errors import LLMUnavailableError
from .ollama_backend import HostFailover, default_model, parse_hosts, serving

__all__ = ["HEALTH_TIMEOUT", "HostPool", "Served", "configured_hosts", "ollama_models"]

#: seconds a host has to list its models before the run counts it as down
HEALTH_TIMEOUT = 10.0


def ollama_models(config: Any) -> list[str]:
    """The Ollama models a config runs: ``llm = "ollama:<model>"`` (``"ollama"``: ``$UL_OLLAMA_MODEL``) and
    orchestration's ``ollama_model``."""
    models = []
    llm = getattr(config, "llm", None)
    if isinstance(llm, str) and llm.partition(":")[0] == "ollama":
        models.append(llm.partition(":")[2] or default_model())
    extra = getattr(config, "ollama_model", None)
    if isinstance(extra, str) and extra and extra not in models:
        models.append(extra)
    return models


def configured_hosts(config: Any) -> list[str]:
    """The hosts a run spreads its Ollama units over: ``config.llm_hosts``, else the ``$OLLAMA_HOST`` list when it
    names two or more; ``[]`` (no pool: the backend's own host) when the run uses no Ollama model or one host."""
    if not ollama_models(config):
        return []
    given = getattr(config, "llm_hosts", None)
    if given:
        return parse_hosts(given)
    hosts = parse_hosts(os.environ.get("OLLAMA_HOST"))
    return hosts if len(hosts) > 1 else []


def _health(host: str, models: Sequence[str], timeout: float) -> str:
    """Why ``host`` cannot serve ``models`` ("" when it can)."""
    from .ollama_backend import OllamaLLM

    try:
        probe = OllamaLLM(model=models[0], host=host, timeout=timeout)
        have = probe.available_models(timeout)
        probe.close()
    except HostFailover as exc:  # a pool's context around the check: still just a reason
        return exc.message
    except Exception as exc:  # a host that cannot be reached or misbehaves is down, for whatever reason
        return str(exc).split(". ")[0]
    missing = [m for m in models if m not in have and f"{m}:latest" not in have]
    return f"does not have model {missing[0]!r} (ollama pull {missing[0]})" if missing else ""


@dataclass
class Served:
    """What :meth:`HostPool.serve` did for one unit: the ``host`` that finished it, the hosts that ``failed`` on
    the way (``[(host, why)]``) and the ``seconds`` it took."""

    host: str
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class HostPool:
    """The healthy ``hosts`` of a run (in the order given), the hosts ``down`` (``{host: why}``) and, per unit
    label, the host that ``served`` it."""

    hosts: list[str]
    down: dict[str, str] = field(default_factory=dict)
    served: dict[str, Served] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def check(cls, hosts: Sequence[str], models: Sequence[str], timeout: float = HEALTH_TIMEOUT) -> HostPool:
        """Ask every host (at once) whether it serves ``models``; an LLMUnavailableError naming each host's
        problem when none does."""
        with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as threads:
            problems = list(threads.map(lambda h: _health(h, models, timeout), hosts))
        down = {h: why for h, why in zip(hosts, problems, strict=True) if why}
        healthy = [h for h in hosts if h not in down]
        if not healthy:
            detail = "; ".join(f"{h}: {why}" for h, why in down.items())
            raise LLMUnavailableError(f"no Ollama host of the pool can serve {', '.join(models)} ({detail}); start "
                                      "a server, pull the model, or correct llm_hosts / OLLAMA_HOST")
        return cls(healthy, down)

    def order(self, index: int) -> list[str]:
        """The hosts unit ``index`` tries, in order: the healthy ones rotated to start at ``index mod n``."""
        with self._lock:
            live = [h for h in self.hosts if h not in self.down]
        if not live:
            raise LLMUnavailableError("every Ollama host of the pool has failed: "
                                      + "; ".join(f"{h}: {why}" for h, why in self.down.items()))
        k = index % len(live)
        return live[k:] + live[:k]

    def record(self, label: str, served: Served) -> None:
        """Note which host served unit ``label`` and drop the hosts that failed on the way."""
        with self._lock:
            self.served[label] = served
            for host, why in served.failed:
                self.down.setdefault(host, why)

    def rows(self) -> list[dict[str, Any]]:
        """Per host: the units it finished, the failures seen on it and the seconds its units took."""
        out = []
        for host in [*self.hosts, *(h for h in self.down if h not in self.hosts)]:
            mine = [s for s in self.served.values() if s.host == host]
            failures = sum(1 for s in self.served.values() for h, _ in s.failed if h == host)
            out.append({"host": host, "units": len(mine), "failures": failures,
                        "seconds": round(sum(s.seconds for s in mine), 3), "down": self.down.get(host, "")})
        return out

    def markdown(self) -> str:
        """The report's section: the per-host table and the units that moved."""
        lines = ["## Model servers", "", "| host | units served | failures | seconds | status |", "|---|---|---|---|---|"]
        lines += [f"| {r['host']} | {r['units']} | {r['failures']} | {r['seconds']:.1f} | "
                  f"{('down: ' + r['down']) if r['down'] else 'up'} |" for r in self.rows()]
        moved = [(label, s) for label, s in self.served.items() if s.failed]
        if moved:
            lines += ["", "Units moved to another host after a failure:"]
            lines += [f"- {label}: {', '.join(h for h, _ in s.failed)} → {s.host}" for label, s in moved]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The table and, per unit label, the host that served it (``results.json``'s ``hosts``)."""
        return {"hosts": self.rows(), "served_by": {label: s.host for label, s in self.served.items()},
                "moved": {label: [h for h, _ in s.failed] for label, s in self.served.items() if s.failed}}


def serve(fn: Callable[[], Any], hosts: Sequence[str]) -> tuple[Any, Served]:
    """``fn()`` served by the first of ``hosts`` that does not fail (:class:`HostFailover`): each retry resumes
    where the failed host left off (the unit's journal keeps what was done). ``(value, Served)``; an
    LLMUnavailableError naming every failure when all fail."""
    failed: list[tuple[str, str]] = []
    start = time.perf_counter()
    for host in hosts:
        try:
            with serving(host):
                value = fn()
        except HostFailover as exc:
            failed.append((exc.host, exc.message))
            continue
        return value, Served(host, failed, time.perf_counter() - start)
    raise LLMUnavailableError("every Ollama host failed for this unit: "
                              + "; ".join(f"{h}: {why}" for h, why in failed))
