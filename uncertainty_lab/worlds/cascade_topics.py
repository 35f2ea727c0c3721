"""The invented topics of cascade worlds: each topic is a small vocabulary (subjects, verbs, objects) from which
headline-like phrases are drawn, and a text's topic is read back from the words only that topic uses.

Nothing here is real data: the topics are made up for the worlds (a harbour, an orchard, a glacier station, …),
with no word shared between two topics' subjects and objects, so a sentence encoder separates them and
:func:`topic_of` reads a text's topic back without ambiguity.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["TOPIC_BANK", "headline", "topic_of", "topic_words"]

#: name -> (subjects, verbs, objects); the world draws "<subject> <verb> <object>"
TOPIC_BANK: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "harbour": (("Harbour pilots", "Dockside crews", "Ferry captains", "Tugboat owners"),
                ("reroute", "moor", "anchor", "tow"),
                ("cargo barges at dawn", "ferries past the breakwater", "freighters through fog", "tankers by the pier")),
    "orchard": (("Orchard growers", "Apple pickers", "Cider pressers", "Pear farmers"),
                ("harvest", "graft", "prune", "sort"),
                ("blossoming saplings", "windfall fruit", "heirloom seedlings", "frost-bitten branches")),
    "glacier": (("Glacier monitors", "Icefield surveyors", "Meltwater hydrologists", "Crevasse guides"),
                ("measure", "chart", "drill", "sample"),
                ("retreating icefalls", "subglacial lakes", "calving moraines", "permafrost cores")),
    "comet": (("Comet watchers", "Observatory astronomers", "Telescope operators", "Meteor spotters"),
              ("track", "photograph", "catalogue", "sight"),
              ("a luminous coma", "debris tails", "nebula clusters", "orbiting asteroids")),
    "jazz": (("Jazz trumpeters", "Saxophone quartets", "Nightclub bandleaders", "Drummers and bassists"),
             ("improvise", "rehearse", "headline", "record"),
             ("late-night jam sessions", "swing ballads", "bebop encores", "smoky cabaret sets")),
    "chess": (("Chess grandmasters", "Tournament arbiters", "Endgame prodigies", "Opening theorists"),
              ("checkmate", "castle", "sacrifice", "resign"),
              ("rival bishops", "queenside pawns", "blitz rounds", "knight forks")),
    "volcano": (("Volcano seismologists", "Lava geologists", "Crater rangers", "Magma vulcanologists"),
                ("evacuate", "monitor", "vent", "erupt"),
                ("ash plumes", "basalt flows", "sulphur fumaroles", "pyroclastic slopes")),
    "textile": (("Textile weavers", "Loom mechanics", "Silk dyers", "Wool spinners"),
                ("weave", "dye", "spin", "stitch"),
                ("indigo tapestries", "cashmere bolts", "embroidered quilts", "linen yarns")),
    "railway": (("Railway signallers", "Locomotive engineers", "Sleeper-car conductors", "Freight dispatchers"),
                ("couple", "shunt", "derail", "timetable"),
                ("overnight carriages", "branch-line junctions", "steam locomotives", "cargo wagons at sidings")),
    "beekeeping": (("Beekeepers", "Apiary inspectors", "Honey producers", "Hive keepers"),
                   ("smoke", "swarm", "requeen", "pollinate"),
                   ("honeycomb frames", "lavender meadows", "wax cells", "nectar flowers")),
    "bakery": (("Sourdough bakers", "Pastry chefs", "Bread kneaders", "Croissant makers"),
               ("bake", "knead", "glaze", "proof"),
               ("rye loaves", "butter croissants", "cinnamon buns", "baguette batches")),
    "lighthouse": (("Lighthouse keepers", "Coastguard lamplighters", "Beacon technicians", "Foghorn wardens"),
                   ("relight", "repaint", "signal", "restore"),
                   ("lantern lenses", "granite towers", "rocky headlands", "storm beacons")),
}

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?")
#: words too common to tell topics apart (never used to read a topic)
_COMMON = frozenset({"a", "an", "the", "at", "by", "and", "of", "in", "past", "through", "on", "to"})


def topic_words(bank: dict[str, tuple[tuple[str, ...], ...]] | None = None) -> dict[str, str]:
    """word -> topic for every word that belongs to exactly one topic of ``bank`` (default :data:`TOPIC_BANK`)."""
    bank = TOPIC_BANK if bank is None else bank
    owners: dict[str, set[str]] = {}
    for name, parts in bank.items():
        for phrase in (p for part in parts for p in part):
            for w in _WORD.findall(phrase.lower()):
                if w not in _COMMON:
                    owners.setdefault(w, set()).add(name)
    return {w: next(iter(names)) for w, names in owners.items() if len(names) == 1}


_LOOKUP = topic_words()


def topic_of(text: str, topics: Sequence[str] | None = None) -> str | None:
    """The topic whose own words ``text`` uses most (ties: the first in ``topics`` order); None when it uses none.
    ``topics``: the topics that count (default: all of the bank)."""
    allowed = set(TOPIC_BANK if topics is None else topics)
    counts = Counter(_LOOKUP[w] for w in _WORD.findall(text.lower()) if w in _LOOKUP and _LOOKUP[w] in allowed)
    if not counts:
        return None
    best = max(counts.values())
    order = list(TOPIC_BANK if topics is None else topics)
    return min((t for t, c in counts.items() if c == best), key=order.index)


def headline(topic: str, rng: np.random.Generator) -> str:
    """A headline-like phrase of ``topic``: a subject, a verb and an object drawn uniformly with ``rng``."""
    subjects, verbs, objects = TOPIC_BANK[topic]
    return f"{subjects[rng.integers(len(subjects))]} {verbs[rng.integers(len(verbs))]} " \
           f"{objects[rng.integers(len(objects))]}"
