"""Write the synthetic multi-hop search corpus the package ships: an invented world, its documents and questions.

The CGDP lab needs questions that no language model can answer from memory, so the world is made up: people,
cities, regions, organisations, events and artefacts whose names are composed from syllable tables with a seeded
random generator (and checked against a stop-list of famous real names). The script works in four stages:

1. **World** — a knowledge graph of typed facts (``born_in``, ``founded_by``, ``hq_in``, ``located_in``,
   ``member_of``, ``designed_by``, ``led_by``, ``occurred_in``, ``married_to``, ``succeeded``, year facts …),
   with consistent years (nobody founds anything before they are twenty) and deliberate look-alikes: families that
   share a surname, near-duplicate names (``Kalvenn`` / ``Kalven``), organisations that share a root, things
   named after a city or a person they have nothing to do with, and ships that share a city's name.
2. **Documents** — one short encyclopedic document (2–6 sentences) per entity. Every fact is *stated in exactly
   one document*, either its subject's or its object's, so facts are spread across documents; sentence templates
   vary. The generator records which document states which fact.
3. **Questions** — relation paths of 2–4 hops through the graph (bridge questions: "In which city was the founder
   of X born?") and comparisons of two year facts, either side optionally one bridge hop away ("Who was born
   earlier, A or the designer of B?"). A candidate is kept only if it passes :func:`check_question`: each hop's
   fact is stated in a different document, those documents are the supporting documents, each hop's two surface
   forms occur together in no other document, the answer occurs in the last supporting document, and (bridge) the
   answer never occurs in a document that names the question's entity.
4. **Distractors** — per question, documents outside the support that share surface words with it: look-alike
   titles, documents that mention the question's entity but state nothing on its chain, and documents with the
   most question words.

Run::

    python -m uncertainty_lab.datasets.build_search_corpus            # rewrite the three shipped files
    python -m uncertainty_lab.datasets.build_search_corpus --check    # exit 1 if the shipped files are stale
    python -m uncertainty_lab.datasets.build_search_corpus --out DIR  # write them somewhere else

Output is deterministic (one seeded :class:`random.Random`, fixed key order, UTF-8, ``\\n`` line ends), so
regenerating reproduces the shipped bytes; a test checks that. See ``data/search_corpus.md`` (written by this
script too) for counts and limits.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20260507
DEFAULT_OUT = Path(__file__).resolve().parent / "data"
CORPUS_FILE = "search_corpus.jsonl"
QUESTIONS_FILE = "search_questions.jsonl"
CARD_FILE = "search_corpus.md"

N_REGIONS = 8
N_CITIES = 40
N_PERSONS = 110
N_ORGS = 56
N_EVENTS = 42
N_ARTEFACTS = 44

#: questions wanted per (type, hops); 100 in all
QUOTAS: dict[tuple[str, int], int] = {
    ("bridge", 2): 28,
    ("bridge", 3): 24,
    ("bridge", 4): 18,
    ("comparison", 2): 12,
    ("comparison", 3): 10,
    ("comparison", 4): 8,
}
MAX_SENTENCES = 6
LAST_YEAR = 1905  # the world's history runs from 1700 (first births) to here
MAX_DISTRACTORS = 6

# ----------------------------------------------------------------------------------------------------------------
# Names: syllable tables and the stop-list of famous real names (and English words) a name must not hit
# ----------------------------------------------------------------------------------------------------------------

FIRST_A = ["Al", "Bry", "Cae", "Dar", "Ey", "Fen", "Gal", "Hal", "Ier", "Jor", "Kel", "Lis", "Myr", "Ner", "Oss",
           "Per", "Quel", "Ris", "Sev", "Tal", "Ul", "Ves", "Wyn", "Yr", "Zan", "Ith", "Orl", "Ed"]
FIRST_F = ["ra", "wen", "ith", "isse", "ara", "ine", "ys", "elle", "iva", "oa"]
FIRST_M = ["an", "ric", "ten", "mund", "ias", "ek", "oth", "um", "arn", "ost"]
SUR_A = ["Ald", "Brev", "Cald", "Dorv", "Eskr", "Fenw", "Gald", "Hazz", "Ilv", "Jorr", "Kalv", "Lith", "Morv",
         "Nesk", "Orr", "Pell", "Quar", "Rith", "Skel", "Tarr", "Ulv", "Vask", "Wend", "Yth", "Zorr", "Thend", "Brosk"]
SUR_B = ["enn", "ane", "oth", "ish", "ary", "eck", "ume", "ell", "ard", "ith", "ow", "ast", "ick", "urn"]
CITY_A = ["Ost", "Vel", "Kar", "Brenn", "Tis", "Hal", "Mor", "Sund", "Ev", "Lorr", "Quen", "Dras", "Fyl", "Grav",
          "Ith", "Nor", "Pask", "Rav", "Tull", "Vorn", "Ysk", "Carn", "Hed", "Olm"]
CITY_B = ["mar", "holt", "vik", "ora", "esk", "wick", "enna", "ath", "by", "stad", "ova", "ium", "ance", "ir"]
REGION_A = ["Vast", "Kell", "Drun", "Ost", "Pyr", "Sael", "Tarn", "Umbr", "Wyr", "Esk", "Harr", "Lom"]
REGION_B = ["mark", "reach", "moor", "vale", "march", "wold"]
ROOT_A = ["Vel", "Orm", "Tass", "Bryn", "Quill", "Zev", "Ambr", "Cor", "Dess", "Ferr", "Gil", "Hav", "Ist", "Jass",
          "Lum", "Nev", "Pav", "Rell", "Sev", "Thol", "Ucc", "Wist", "Xan", "Yv", "Marr", "Kest"]
ROOT_B = ["ane", "oric", "essa", "ith", "ond", "ura", "elt", "ova", "iax", "orn", "imar", "eth"]

#: famous real names and English words (lower case); a generated name, or any word in it, must not be one of these
STOP_LIST: frozenset[str] = frozenset("""
    paris london rome berlin vienna madrid lisbon athens venice milan naples florence turin ravenna verona genoa
    oslo bergen stockholm uppsala copenhagen helsinki tallinn riga vilnius warsaw krakow prague budapest sofia
    moscow kiev kyiv minsk dublin cork york bath derby leeds norwich ipswich warwick berwick alnwick harwich
    boston salem dover jersey orleans lyon nice nantes lille brest bruges ghent antwerp delft leiden utrecht
    zurich geneva basel bern lucerne hamburg bremen munich dresden leipzig cologne bonn mainz trier kiel
    cairo tunis fez rabat lagos accra nairobi delhi agra goa lima quito bogota caracas havana havane santiago
    tokyo kyoto osaka seoul beijing shanghai hanoi manila sydney perth hobart darwin auckland wellington
    evora porto braga toledo seville cordoba granada malaga valencia bilbao burgos leon avila
    kalmar malmo lund visby orebro karlstad narvik tromso alta molde sundby halstad morvik norvik
    ostermark finnmark denmark lapland iceland ireland scotland england wales norway sweden finland
    tesla edison newton kepler galileo darwin einstein curie bohr planck faraday maxwell euler gauss
    mozart bach handel haydn verdi wagner chopin liszt brahms ravel elgar holst purcell
    dante homer virgil ovid plato socrates aristotle euclid caesar nero augustus cicero
    shakespeare milton chaucer dickens austen bronte byron shelley keats wordsworth tolkien orwell
    napoleon bismarck lincoln washington jefferson churchill victoria elizabeth albert
    gandalf frodo bilbo aragorn arwen legolas gimli sauron mordor gondor rohan shire narnia aslan hogwarts
    westeros winterfell dorne tyrion arya stark lannister targaryen dune arrakis atreides harkonnen
    atlantis avalon camelot arthur merlin lancelot gawain morgana excalibur valhalla asgard odin thor loki freya
    zeus hera athena apollo ares hermes hades poseidon artemis demeter orion perseus achilles hector troy sparta
    ithaca thebes corinth delphi olympus carthage babylon sumer akkad persia
    wendell hazzard brevard caldwell pellow alden orrell ulster munster calder tarrant thorn
    sara ara isla ella alan eric ian iris aria carol morgan tara nora lisa dara ana anna wyn ed
    ravine pavane corona lumen marrow tassel hallow fennel gallant perish relish varnish banish vanish garnish
    ostrich anise avalanche alliance balance finance romance stance
    nevada havana corvette ostmark karstad morvan alum orlan quarrel ostby sundance fenwick ulten
""".split())

ORG_KINDS = [
    ("Society", "a learned society devoted to {topic}"),
    ("Academy", "an academy for the study of {topic}"),
    ("Guild", "a craft guild of {craft}"),
    ("Trading Company", "a trading company dealing in {goods}"),
    ("Observatory", "an astronomical observatory"),
    ("Bank", "a private bank"),
    ("Lyceum", "a school of {topic}"),
    ("Conservatory", "a school of music"),
    ("Printing House", "a printing house"),
    ("Brotherhood", "a mutual-aid brotherhood of {craft}"),
    ("Institute", "a research institute for {topic}"),
    ("Archive", "an archive of {topic} records"),
]
EVENT_KINDS = [
    ("Congress", "a congress of scholars of {topic}"),
    ("Exhibition", "an exhibition of {goods}"),
    ("Accord", "a trade agreement on {goods}"),
    ("Regatta", "a rowing regatta"),
    ("Expedition", "a surveying expedition"),
    ("Fair", "a market fair for {goods}"),
    ("Conclave", "a conclave of {craft}"),
    ("Games", "a festival of athletic games"),
    ("Uprising", "a short-lived uprising of {craft}"),
    ("Eclipse Survey", "a campaign to observe a solar eclipse"),
]
ARTEFACT_KINDS = [
    ("Astrolabe", "a brass astrolabe"),
    ("Codex", "an illuminated codex"),
    ("Orrery", "a clockwork orrery"),
    ("Lantern", "a lighthouse lantern"),
    ("Tapestry", "a woven tapestry"),
    ("Bell", "a bronze bell"),
    ("Chronometer", "a marine chronometer"),
    ("Atlas", "a hand-coloured atlas"),
    ("Loom", "a mechanical loom"),
    ("Organ", "a pipe organ"),
]
TOPICS = ["natural philosophy", "botany", "navigation", "mineralogy", "optics", "hydraulics", "cartography",
          "astronomy", "medicine", "languages", "mathematics", "agriculture"]
CRAFTS = ["glassmakers", "weavers", "clockmakers", "printers", "dyers", "masons", "shipwrights", "bell founders",
          "lens grinders", "tanners"]
GOODS = ["salt", "amber", "wool", "dyes", "spices", "timber", "copper", "glassware", "porcelain", "furs"]
OCCUPATIONS = ["cartographer", "glassmaker", "astronomer", "shipwright", "engraver", "merchant", "botanist",
               "clockmaker", "architect", "physician", "composer", "surveyor", "printer", "weaver", "magistrate",
               "instrument maker", "bell founder", "lexicographer", "naval officer", "mathematician"]
ROLES = ["harbour master", "royal surveyor", "keeper of the archives", "master of the mint", "chief engineer",
         "court astronomer", "warden of the bridges", "first magistrate"]
CITY_KINDS = ["walled market town", "river port", "hill town", "harbour city", "mining town", "garrison town",
              "university town", "fishing town", "cathedral city", "lake town"]
CITY_FILLER = ["It is known for its {goods} market.", "Its old quarter is built of grey stone.",
               "A stone bridge of eleven arches crosses its river.", "It holds a fair every autumn.",
               "Its harbour freezes in hard winters.", "Its streets climb a steep hill."]
REGION_KINDS = ["upland", "coastal", "forested", "lowland", "lake", "mountain"]
REGION_FILLER = ["It is known for its {goods}.", "Its winters are long and dry.", "Most of it is farmland.",
                 "It is crossed by two navigable rivers.", "It has few roads and many ferries."]
PERSON_FILLER = ["{Pro} kept detailed diaries.", "{Pro} travelled widely as a young {occupation}.",
                 "{Pro} wrote two treatises on {topic}.", "{Pro} corresponded with many scholars of {topic}."]
ORG_FILLER = ["Its records survive almost complete.", "It publishes a yearly report.",
              "Its library is open to visiting scholars.", "It admits members by election."]
EVENT_FILLER = ["Its proceedings were printed the following year.", "Several hundred people took part.",
                "Contemporary accounts describe it in detail."]
ARTEFACT_FILLER = ["It has been restored twice.", "It is shown to visitors on feast days.",
                   "Its maker's mark is still legible."]
VESSEL_FILLER = ["She carried grain and timber on the inland waterways.", "She was refitted after a collision."]


# ----------------------------------------------------------------------------------------------------------------
# The world
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Entity:
    id: str
    kind: str  # region, city, person, org, event, artefact
    name: str  # as written in running text, without article
    title: str  # document title
    article: bool = False  # "the" before the name in running text
    ref: str = ""  # how questions refer to it (defaults to the running-text form)
    attrs: dict = field(default_factory=dict)

    def text(self, start: bool = False) -> str:
        if not self.article:
            return self.name
        return ("The " if start else "the ") + self.name

    def question_ref(self) -> str:
        return self.ref or self.text()


@dataclass(frozen=True)
class Fact:
    subject: str  # entity id
    relation: str
    object: str | int  # entity id, or a year
    role: str = ""  # the office, for ``succeeded``


#: relation -> (subject kind, object kind or "year")
RELATIONS: dict[str, tuple[str, str]] = {
    "born_in": ("person", "city"),
    "birth_year": ("person", "year"),
    "member_of": ("person", "org"),
    "married_to": ("person", "person"),
    "succeeded": ("person", "person"),
    "founded_by": ("org", "person"),
    "founded_year": ("org", "year"),
    "hq_in": ("org", "city"),
    "led_by": ("org", "person"),
    "located_in": ("city", "region"),
    "occurred_in": ("event", "city"),
    "event_year": ("event", "year"),
    "organised_by": ("event", "org"),
    "event_led_by": ("event", "person"),
    "designed_by": ("artefact", "person"),
    "made_year": ("artefact", "year"),
    "kept_at": ("artefact", "org"),
}
YEAR_RELATIONS = ("birth_year", "founded_year", "event_year", "made_year")
RELATION_MEANING: dict[str, str] = {
    "born_in": "person → city of birth",
    "birth_year": "person → year of birth",
    "member_of": "person → organisation they belonged to",
    "married_to": "person ↔ spouse",
    "succeeded": "person → the person they followed in an office (the office is named)",
    "founded_by": "organisation → founder",
    "founded_year": "organisation → year founded",
    "hq_in": "organisation → city of its headquarters",
    "led_by": "organisation → its head",
    "located_in": "city → region",
    "occurred_in": "event → city where it took place",
    "event_year": "event → year",
    "organised_by": "event → organisation that organised it",
    "event_led_by": "event → person who led it",
    "designed_by": "artefact or ship → designer",
    "made_year": "artefact or ship → year made (built)",
    "kept_at": "artefact or ship → organisation that holds (owns) it",
}


@dataclass
class World:
    entities: dict[str, Entity]
    facts: list[Fact]
    graph: dict[tuple[str, str], Fact]  # (subject, relation) -> fact; married_to is indexed from both sides
    fact_doc: dict[Fact, str] = field(default_factory=dict)  # fact -> entity id whose document states it

    def follow(self, eid: str, relation: str) -> tuple[Fact, str | int] | None:
        fact = self.graph.get((eid, relation))
        if fact is None:
            return None
        if relation == "married_to" and fact.object == eid:
            return fact, fact.subject
        return fact, fact.object

    def answer_text(self, target: str | int) -> str:
        return str(target) if isinstance(target, int) else self.entities[target].name


#: three vowels in a row, a letter three times, a doubled consonant next to another consonant, a repeated syllable
_UNPRONOUNCEABLE = re.compile(r"[aeiouy]{3}|(.)\1\1|([^aeiouy])\2[^aeiouy]|[^aeiouy]([^aeiouy])\3|(\w{3,})\4")


class _Names:
    """Unique invented names: every generated name is checked against the stop-list and against the names used."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()  # lower-cased single words and full names already taken

    @staticmethod
    def allowed(name: str) -> bool:
        words = name.lower().split()
        if name.lower() in STOP_LIST or any(w in STOP_LIST for w in words):
            return False
        return not any(_UNPRONOUNCEABLE.search(w) for w in words)

    def fresh(self, make, *, claim: bool = True, tries: int = 500) -> str:
        for _ in range(tries):
            name = make()
            if self.allowed(name) and name.lower() not in self.used:
                if claim:
                    self.used.add(name.lower())
                return name
        raise RuntimeError("could not find a fresh name; widen the syllable tables")

    def near_duplicate(self, name: str) -> str:
        """A look-alike of ``name``: one letter doubled, dropped or changed, or an ending added/removed."""
        vowels = {"a": "e", "e": "a", "o": "u", "u": "o", "i": "y", "y": "i"}

        def mutate() -> str:
            op = self.rng.randrange(4)
            if op == 0 and len(name) > 4 and name[-1] == name[-2]:
                return name[:-1]
            if op == 1 and name[-1] not in "aeiouy":
                return name + name[-1] if self.rng.random() < 0.5 else name + "e"
            if op == 2:
                idx = [i for i, ch in enumerate(name) if ch in vowels and i > 0]
                if idx:
                    i = self.rng.choice(idx)
                    return name[:i] + vowels[name[i]] + name[i + 1:]
            return name + "a" if name[-1] not in "aeiouy" else name[:-1]

        return self.fresh(mutate)


def build_world(rng: random.Random) -> World:
    names = _Names(rng)
    ents: dict[str, Entity] = {}
    facts: list[Fact] = []

    def add(e: Entity) -> Entity:
        ents[e.id] = e
        return e

    # -- regions and cities --------------------------------------------------------------------------------------
    regions = [add(Entity(f"region:{i:02d}", "region",
                          n := names.fresh(lambda: rng.choice(REGION_A) + rng.choice(REGION_B)), n,
                          attrs={"kind": rng.choice(REGION_KINDS)}))
               for i in range(N_REGIONS)]
    city_names: list[str] = []
    while len(city_names) < N_CITIES:
        if len(city_names) % 10 == 9:  # every tenth city is a look-alike of an earlier one
            city_names.append(names.near_duplicate(rng.choice(city_names)))
        else:
            city_names.append(names.fresh(lambda: rng.choice(CITY_A) + rng.choice(CITY_B)))
    cities = [add(Entity(f"city:{i:02d}", "city", n, n, attrs={"kind": rng.choice(CITY_KINDS)}))
              for i, n in enumerate(city_names)]
    for i, c in enumerate(cities):  # every region gets at least three cities
        region = regions[i % N_REGIONS] if i < 3 * N_REGIONS else rng.choice(regions)
        facts.append(Fact(c.id, "located_in", region.id))

    # -- people: families share surnames, some surnames have a look-alike ----------------------------------------
    surnames: list[str] = []
    while len(surnames) < 52:
        if len(surnames) % 8 == 7:
            surnames.append(names.near_duplicate(rng.choice(surnames)))
        else:
            surnames.append(names.fresh(lambda: rng.choice(SUR_A) + rng.choice(SUR_B)))
    firsts: dict[str, list[str]] = {"f": [], "m": []}
    for gender, endings in (("f", FIRST_F), ("m", FIRST_M)):
        while len(firsts[gender]) < 34:
            firsts[gender].append(names.fresh(lambda e=endings: rng.choice(FIRST_A) + rng.choice(e)))
    persons: list[Entity] = []
    full_names: set[str] = set()
    for i in range(N_PERSONS):
        while True:
            gender = rng.choice("fm")
            first, last = rng.choice(firsts[gender]), surnames[i % len(surnames)] if i < 2 * len(surnames) \
                else rng.choice(surnames)
            full = f"{first} {last}"
            if full not in full_names:
                break
        full_names.add(full)
        birth = rng.randint(1700, 1850)
        persons.append(add(Entity(f"person:{i:03d}", "person", full, full, attrs={
            "gender": gender, "first": first, "surname": last, "birth": birth,
            "occupation": rng.choice(OCCUPATIONS), "topic": rng.choice(TOPICS)})))
        facts.append(Fact(persons[-1].id, "birth_year", birth))
        facts.append(Fact(persons[-1].id, "born_in", rng.choice(cities).id))

    # -- organisations: some share a root ("twins"), some are named after a city they are not in ------------------
    roots: list[str] = []
    org_specs: list[tuple[str, str, str]] = []  # (name, root, kind)
    kinds_cycle = [k for k, _ in ORG_KINDS]
    city_named: dict[str, str] = {}  # org name -> city id it is named after (and must not be in)
    while len(org_specs) < N_ORGS:
        i = len(org_specs)
        if i % 7 == 6:  # named after a city
            city = rng.choice(cities)
            kind = rng.choice(["Trading Company", "Bank", "Guild", "Printing House"])
            name = f"{city.name} {kind}"
            if name.lower() in names.used:
                continue
            names.used.add(name.lower())
            city_named[name] = city.id
            org_specs.append((name, city.name, kind))
        elif i % 7 == 5 and roots:  # a twin: same root as an earlier organisation, another kind
            root = rng.choice(roots)
            taken = {k for n, r, k in org_specs if r == root}
            kind = rng.choice([k for k in kinds_cycle if k not in taken])
            org_specs.append((f"{root} {kind}", root, kind))
        else:
            root = names.fresh(lambda: rng.choice(ROOT_A) + rng.choice(ROOT_B))
            roots.append(root)
            kind = rng.choice(kinds_cycle)
            org_specs.append((f"{root} {kind}", root, kind))
    orgs: list[Entity] = []
    for i, (name, root, kind) in enumerate(org_specs):
        desc = dict(ORG_KINDS)[kind].format(topic=rng.choice(TOPICS), craft=rng.choice(CRAFTS),
                                            goods=rng.choice(GOODS))
        founder = rng.choice([p for p in persons if p.attrs["birth"] <= 1840])
        founded = founder.attrs["birth"] + rng.randint(24, min(60, LAST_YEAR - founder.attrs["birth"]))
        org = add(Entity(f"org:{i:02d}", "org", name, name, article=True, attrs={
            "root": root, "kind": kind, "desc": desc, "founded": founded, "founder": founder.id}))
        orgs.append(org)
        hq = rng.choice([c for c in cities if c.id != city_named.get(name)])
        facts += [Fact(org.id, "founded_by", founder.id), Fact(org.id, "founded_year", founded),
                  Fact(org.id, "hq_in", hq.id)]
        if rng.random() < 0.6:
            heads = [p for p in persons if p.id != founder.id
                     and founder.attrs["birth"] < p.attrs["birth"] and p.attrs["birth"] + 30 >= founded]
            if heads:
                facts.append(Fact(org.id, "led_by", rng.choice(heads).id))

    # membership: not of an organisation one founded or heads; only if alive after its founding
    involved = {(f.object, f.subject) for f in facts if f.relation in ("founded_by", "led_by")}
    for p in persons:
        if rng.random() < 0.8:
            options = [o for o in orgs if (p.id, o.id) not in involved and o.attrs["founded"] <= p.attrs["birth"] + 60]
            if options:
                facts.append(Fact(p.id, "member_of", rng.choice(options).id))

    # marriages (birth years within twelve years) and successions in an office (successor 8-45 years younger)
    unmarried = persons[:]
    rng.shuffle(unmarried)
    pairs = 0
    while pairs < 30 and len(unmarried) > 1:
        a = unmarried.pop()
        match = next((b for b in unmarried if abs(a.attrs["birth"] - b.attrs["birth"]) <= 12), None)
        if match is not None:
            unmarried.remove(match)
            facts.append(Fact(a.id, "married_to", match.id))
            pairs += 1
    has_pred: set[str] = set()
    has_succ: set[str] = set()
    order = persons[:]
    rng.shuffle(order)
    for succ in order:
        if len(has_pred) >= 26:
            break
        if succ.id in has_pred:
            continue
        options = [p for p in persons if p.id not in has_succ and p.id != succ.id
                   and 8 <= succ.attrs["birth"] - p.attrs["birth"] <= 45]
        if options:
            pred = rng.choice(options)
            facts.append(Fact(succ.id, "succeeded", pred.id, role=rng.choice(ROLES)))
            has_pred.add(succ.id)
            has_succ.add(pred.id)

    # -- events: some are named after an organisation's root (and organised by another one) ---------------------
    events: list[Entity] = []
    for i in range(N_EVENTS):
        kind, template = rng.choice(EVENT_KINDS)
        if i % 8 == 7:
            root = rng.choice(roots)
            if f"{root} {kind}".lower() in names.used:
                root = names.fresh(lambda: rng.choice(ROOT_A) + rng.choice(ROOT_B))
        else:
            root = names.fresh(lambda: rng.choice(ROOT_A) + rng.choice(ROOT_B))
        name = f"{root} {kind}"
        names.used.add(name.lower())
        organiser = rng.choice([o for o in orgs if o.attrs["root"] != root and o.attrs["founded"] < LAST_YEAR - 5])
        year = rng.randint(organiser.attrs["founded"] + 1, LAST_YEAR)
        ev = add(Entity(f"event:{i:02d}", "event", name, name, article=True, attrs={
            "root": root, "kind": kind, "year": year,
            "desc": template.format(topic=rng.choice(TOPICS), craft=rng.choice(CRAFTS), goods=rng.choice(GOODS))}))
        events.append(ev)
        facts += [Fact(ev.id, "event_year", year), Fact(ev.id, "occurred_in", rng.choice(cities).id),
                  Fact(ev.id, "organised_by", organiser.id)]
        if rng.random() < 0.55:
            leaders = [p for p in persons if 20 <= year - p.attrs["birth"] <= 75]
            if leaders:
                facts.append(Fact(ev.id, "event_led_by", rng.choice(leaders).id))

    # -- artefacts: some named after a surname (never their designer's), some ships share a city's name ----------
    artefacts: list[Entity] = []
    for i in range(N_ARTEFACTS):
        if i % 11 == 10:  # a ship with a city's name
            city = rng.choice([c for c in cities if f"{c.name} (ship)".lower() not in names.used])
            title = f"{city.name} (ship)"
            names.used.add(title.lower())
            art = Entity(f"artefact:{i:02d}", "artefact", city.name, title, article=True,
                         ref=f"the ship {city.name}", attrs={"root": city.name, "kind": "ship",
                                                             "desc": "a river barge"})
            named_after = None
        else:
            kind, desc = rng.choice(ARTEFACT_KINDS)
            if i % 6 == 5:
                named_after = rng.choice(surnames)
                root = named_after
            else:
                named_after = None
                root = names.fresh(lambda: rng.choice(ROOT_A) + rng.choice(ROOT_B))
            name = f"{root} {kind}"
            if name.lower() in names.used:
                root, named_after = names.fresh(lambda: rng.choice(ROOT_A) + rng.choice(ROOT_B)), None
                name = f"{root} {kind}"
            names.used.add(name.lower())
            art = Entity(f"artefact:{i:02d}", "artefact", name, name, article=True,
                         attrs={"root": root, "kind": kind, "desc": desc})
        look_alikes = {named_after, *(s for s in surnames if named_after and _edit1(s, named_after))}
        designer = rng.choice([p for p in persons if p.attrs["surname"] not in look_alikes and p.attrs["birth"] < 1860])
        year = designer.attrs["birth"] + rng.randint(20, min(70, LAST_YEAR - designer.attrs["birth"]))
        art.attrs["year"] = year
        artefacts.append(add(art))
        facts += [Fact(art.id, "made_year", year), Fact(art.id, "designed_by", designer.id),
                  Fact(art.id, "kept_at", rng.choice(orgs).id)]

    graph: dict[tuple[str, str], Fact] = {}
    for f in facts:
        key = (f.subject, f.relation)
        assert key not in graph, f"relation is not functional: {key}"
        graph[key] = f
        if f.relation == "married_to":
            graph[(f.object, "married_to")] = f
    return World(ents, facts, graph)


def _edit1(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by at most one insertion, deletion or substitution (case-insensitive)."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] if len(a) == len(b) else a[i:] == b[i + 1:]


# ----------------------------------------------------------------------------------------------------------------
# Placing facts in documents, and rendering the documents
# ----------------------------------------------------------------------------------------------------------------

#: relation -> (probability of the subject's document, cap on how many such facts the object's document takes)
PLACEMENT: dict[str, tuple[float, int]] = {
    "born_in": (0.7, 2), "member_of": (0.6, 2), "married_to": (0.5, 1), "succeeded": (0.5, 1),
    "founded_by": (0.55, 1), "hq_in": (0.7, 2), "led_by": (0.6, 1), "located_in": (0.75, 2),
    "occurred_in": (0.7, 2), "organised_by": (0.7, 1), "event_led_by": (0.6, 1), "designed_by": (0.6, 1),
    "kept_at": (0.7, 1),
}
#: facts that share a sentence with another fact or the intro (they add no sentence of their own)
_MERGED = {"event_year", "made_year"}


def place_facts(world: World, rng: random.Random) -> None:
    load: Counter[str] = Counter()  # planned sentences per document
    for eid in world.entities:
        load[eid] = 1  # the intro
    taken: Counter[tuple[str, str]] = Counter()  # (document, relation) placed in an object's document
    for f in world.facts:
        if f.relation in YEAR_RELATIONS:
            world.fact_doc[f] = f.subject
            load[f.subject] += 0 if f.relation in _MERGED else 1
    for f in world.facts:
        if f.relation in YEAR_RELATIONS:
            continue
        p_subject, cap = PLACEMENT[f.relation]
        obj = str(f.object)
        prefer_subject = rng.random() < p_subject
        object_ok = taken[(obj, f.relation)] < cap and load[obj] < MAX_SENTENCES
        subject_ok = load[f.subject] < MAX_SENTENCES
        doc = f.subject if (prefer_subject and subject_ok) or not object_ok else obj
        world.fact_doc[f] = doc
        if doc == obj:
            # object-side facts of one relation share a sentence (e.g. "A and B were born here")
            if taken[(obj, f.relation)] == 0:
                load[obj] += 1
            taken[(obj, f.relation)] += 1
        elif not (f.relation == "born_in"):  # born_in shares the birth sentence in the person's document
            load[f.subject] += 1


def _pronoun(e: Entity, start: bool = True) -> str:
    if e.kind == "person":
        word = "she" if e.attrs["gender"] == "f" else "he"
    elif e.kind == "artefact" and e.attrs["kind"] == "ship":
        word = "she"
    else:
        word = "it"
    return word.capitalize() if start else word


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render_documents(world: World, rng: random.Random) -> dict[str, tuple[str, str]]:
    """entity id -> (title, text); one document per entity, facts as placed by :func:`place_facts`."""
    E = world.entities
    by_doc: dict[str, list[Fact]] = {eid: [] for eid in E}
    for f in world.facts:
        by_doc[world.fact_doc[f]].append(f)

    def t(eid) -> str:
        return E[eid].text()

    docs: dict[str, tuple[str, str]] = {}
    for eid, e in E.items():
        here = by_doc[eid]
        own = {f.relation: f for f in here if f.subject == eid}
        incoming: dict[str, list[Fact]] = {}
        for f in here:
            if f.subject != eid:
                incoming.setdefault(f.relation, []).append(f)
        S: list[str] = []
        filler: list[str] = []
        Name, Pro = e.text(start=True), _pronoun(e)

        def who(start=True, name=Name, pro=Pro):  # the subject: name or pronoun
            return name if rng.random() < 0.35 else (pro if start else pro.lower())

        if e.kind == "region":
            S.append(f"{Name} is {'an' if e.attrs['kind'][0] in 'aeiou' else 'a'} {e.attrs['kind']} region.")
            towns = [t(f.subject) for f in incoming.get("located_in", [])]
            if towns:
                verb = "lie" if len(towns) > 1 else "lies"
                S.append(rng.choice([f"Its towns include {_join(towns)}.", f"{_join(towns)} {verb} in {Name}."]))
            filler = [s.format(goods=rng.choice(GOODS)) for s in REGION_FILLER]
        elif e.kind == "city":
            S.append(f"{Name} is a {e.attrs['kind']}.")
            if "located_in" in own:
                r = t(own["located_in"].object)
                S.append(rng.choice([f"{who()} lies in {r}.", f"{who()} is a town of {r}.",
                                     f"{Name} is in the region of {r}."]))
            born = [t(f.subject) for f in incoming.get("born_in", [])]
            if born:
                S.append(rng.choice([f"{_join(born)} {'were' if len(born) > 1 else 'was'} born in {Name}.",
                                     f"{Name} is the birthplace of {_join(born)}."]))
            seats = [t(f.subject) for f in incoming.get("hq_in", [])]
            if len(seats) == 1:
                S.append(rng.choice([f"{seats[0][0].upper() + seats[0][1:]} has its headquarters in {Name}.",
                                     f"{Name} is the seat of {seats[0]}."]))
            elif seats:
                S.append(f"{Name} is the seat of {_join(seats)}.")
            hosted = [t(f.subject) for f in incoming.get("occurred_in", [])]
            if hosted:
                S.append(rng.choice([f"{Name} hosted {_join(hosted)}.",
                                     f"{_join(hosted)[0].upper() + _join(hosted)[1:]} took place in {Name}."]))
            filler = [s.format(goods=rng.choice(GOODS)) for s in CITY_FILLER]
        elif e.kind == "person":
            occ = e.attrs["occupation"]
            S.append(f"{Name} was {'an' if occ[0] in 'aeiou' else 'a'} {occ}.")
            year = own["birth_year"].object
            if "born_in" in own:
                c = t(own["born_in"].object)
                S.append(rng.choice([f"{who()} was born in {c} in {year}.", f"{who()} was born in {year} in {c}.",
                                     f"{who()} was born in {c}, in {year}."]))
            else:
                S.append(rng.choice([f"{who()} was born in {year}.", f"{Name} was born in the year {year}."]))
            if "member_of" in own:
                o = t(own["member_of"].object)
                S.append(rng.choice([f"{who()} was a member of {o}.", f"{who()} belonged to {o}.",
                                     f"{who()} joined {o} as a young {occ}."]))
            for f in [own.get("married_to"), *incoming.get("married_to", [])]:
                if f is None:
                    continue
                other = t(f.object if f.subject == eid else f.subject)
                S.append(rng.choice([f"{who()} married {other}.", f"{who()} was married to {other}.",
                                     f"{Name} and {other} were married."]))
            if "succeeded" in own:
                f = own["succeeded"]
                S.append(rng.choice([f"{who()} succeeded {t(f.object)} as {f.role}.",
                                     f"As {f.role}, {who(False)} followed {t(f.object)}."]))
            for f in incoming.get("succeeded", []):
                S.append(rng.choice([f"{who()} was succeeded as {f.role} by {t(f.subject)}.",
                                     f"{Name}'s successor as {f.role} was {t(f.subject)}."]))
            for f in incoming.get("founded_by", []):
                S.append(rng.choice([f"{who()} founded {t(f.subject)}.", f"{Name} was the founder of {t(f.subject)}.",
                                     f"{who()} established {t(f.subject)}."]))
            for f in incoming.get("led_by", []):
                S.append(rng.choice([f"{who()} served as head of {t(f.subject)}.", f"{who()} headed {t(f.subject)}."]))
            for f in incoming.get("event_led_by", []):
                S.append(rng.choice([f"{who()} led {t(f.subject)}.", f"{Name} was the leader of {t(f.subject)}."]))
            for f in incoming.get("designed_by", []):
                S.append(rng.choice([f"{who()} designed {t(f.subject)}.",
                                     f"{Name} was the designer of {t(f.subject)}."]))
            filler = [s.format(Pro=Pro, occupation=occ, topic=e.attrs["topic"]) for s in PERSON_FILLER]
        elif e.kind == "org":
            S.append(f"{Name} is {e.attrs['desc']}.")
            year = own["founded_year"].object
            kind = e.attrs["kind"].lower()
            if "founded_by" in own:
                p = t(own["founded_by"].object)
                S.append(rng.choice([f"It was founded in {year} by {p}.", f"It was founded by {p} in {year}.",
                                     f"{p} founded the {kind} in {year}."]))
            else:
                S.append(rng.choice([f"It was founded in {year}.", f"The {kind} was established in {year}."]))
            if "hq_in" in own:
                c = t(own["hq_in"].object)
                S.append(rng.choice([f"It is headquartered in {c}.", f"Its headquarters are in {c}."]))
            if "led_by" in own:
                p = t(own["led_by"].object)
                S.append(rng.choice([f"It was headed by {p}.", f"{p} served as its head."]))
            members = [t(f.subject) for f in incoming.get("member_of", [])]
            if members:
                S.append(rng.choice([f"Its members included {_join(members)}.",
                                     f"{_join(members)} {'were' if len(members) > 1 else 'was'} among its members."]))
            for f in incoming.get("kept_at", []):
                S.append(rng.choice([f"It holds {t(f.subject)}.",
                                     f"{E[f.subject].text(True)} is kept in its collection."]))
            for f in incoming.get("organised_by", []):
                S.append(rng.choice([f"It organised {t(f.subject)}.", f"The {kind} organised {t(f.subject)}."]))
            filler = list(ORG_FILLER)
        elif e.kind == "event":
            year = own["event_year"].object
            S.append(rng.choice([f"{Name} was {e.attrs['desc']} held in {year}.",
                                 f"{Name} of {year} was {e.attrs['desc']}."]))
            kind = e.attrs["kind"].lower()
            if "occurred_in" in own:
                c = t(own["occurred_in"].object)
                S.append(rng.choice([f"It took place in {c}.", f"It was held in {c}."]))
            if "organised_by" in own:
                o = t(own["organised_by"].object)
                organiser = E[own["organised_by"].object].text(True)
                S.append(rng.choice([f"It was organised by {o}.", f"{organiser} organised the {kind}."]))
            if "event_led_by" in own:
                p = t(own["event_led_by"].object)
                S.append(rng.choice([f"It was led by {p}.", f"{p} led the {kind}."]))
            filler = list(EVENT_FILLER)
        elif e.kind == "artefact":
            year = own["made_year"].object
            ship = e.attrs["kind"] == "ship"
            made = "built" if ship else "made"
            S.append(rng.choice([f"{Name} is {e.attrs['desc']} {made} in {year}.",
                                 f"{Name} is {e.attrs['desc']}, {made} in {year}."]))
            if "designed_by" in own:
                p = t(own["designed_by"].object)
                S.append(rng.choice([f"{Pro} was designed by {p}.", f"{p} designed {'her' if ship else 'it'}."]))
            if "kept_at" in own:
                o = t(own["kept_at"].object)
                S.append(f"{Pro} belongs to {o}." if ship else
                         rng.choice([f"It is kept at {o}.", f"It is held by {o}."]))
            filler = list(VESSEL_FILLER if ship else ARTEFACT_FILLER)
        # filler: at least two sentences per document, sometimes one more for variety
        rng.shuffle(filler)
        while len(S) < 2 or (len(S) < 4 and filler and rng.random() < 0.35):
            S.insert(rng.randint(1, len(S)), filler.pop())
        docs[eid] = (e.title, " ".join(S))
    return docs


# ----------------------------------------------------------------------------------------------------------------
# Questions
# ----------------------------------------------------------------------------------------------------------------

#: relation -> noun phrase for the object reached from {x}
NP: dict[str, list[str]] = {
    "born_in": ["the birthplace of {x}", "the city where {x} was born"],
    "member_of": ["the organisation that {x} belonged to", "the organisation of which {x} was a member"],
    "married_to": ["the spouse of {x}"],
    "succeeded": ["the {role} before {x}"],
    "founded_by": ["the founder of {x}"],
    "hq_in": ["the city where {x} is headquartered", "the home city of {x}"],
    "led_by": ["the head of {x}"],
    "located_in": ["the region that contains {x}"],
    "occurred_in": ["the city where {x} took place", "the host city of {x}"],
    "organised_by": ["the organisation that organised {x}", "the organiser of {x}"],
    "event_led_by": ["the leader of {x}", "the person who led {x}"],
    "designed_by": ["the designer of {x}", "the person who designed {x}"],
    "kept_at": ["the institution that holds {x}"],
}
#: relation -> final question about {x}
ASK: dict[str, list[str]] = {
    "born_in": ["In which city was {x} born?", "Where was {x} born?"],
    "birth_year": ["In what year was {x} born?"],
    "member_of": ["Which organisation was {x} a member of?"],
    "married_to": ["Who was {x} married to?", "Who was the spouse of {x}?"],
    "succeeded": ["Who was {role} before {x}?"],
    "founded_by": ["Who founded {x}?"],
    "founded_year": ["In what year was {x} founded?"],
    "hq_in": ["In which city is {x} headquartered?"],
    "led_by": ["Who was the head of {x}?"],
    "located_in": ["In which region is {x}?", "In which region does {x} lie?"],
    "occurred_in": ["In which city did {x} take place?"],
    "event_year": ["In what year did {x} take place?"],
    "organised_by": ["Which organisation organised {x}?"],
    "event_led_by": ["Who led {x}?"],
    "designed_by": ["Who designed {x}?"],
    "made_year": ["In what year was {x} made?"],
    "kept_at": ["Which institution holds {x}?"],
}
#: the final question of a chain, where {x} is always a long noun phrase: forms that keep the verb next to it
ASK_FINAL: dict[str, list[str]] = {
    "married_to": ["Who was the spouse of {x}?"],
    "member_of": ["Which organisation did {x} belong to?"],
}


def _noun_phrase(relation: str, x: str, role: str, rng: random.Random) -> str:
    options = NP[relation]
    if relation == "member_of" and "belonged to" in x:  # not "... belonged to belonged to"
        options = options[1:]
    return rng.choice(options).format(x=x, role=role)


#: year relation -> comparison question
COMPARE: dict[str, str] = {
    "birth_year": "Who was born earlier, {a} or {b}?",
    "founded_year": "Which was founded earlier, {a} or {b}?",
    "event_year": "Which took place earlier, {a} or {b}?",
    "made_year": "Which was made earlier, {a} or {b}?",
}
#: for a comparison side one hop away: relations from another entity that lead to an entity of the compared kind
BRIDGE_TO: dict[str, list[str]] = {
    "person": ["founded_by", "led_by", "designed_by", "event_led_by", "married_to", "succeeded"],
    "org": ["organised_by", "kept_at", "member_of"],
    "event": [],
    "artefact": [],
}
YEAR_OF = {"person": "birth_year", "org": "founded_year", "event": "event_year", "artefact": "made_year"}
OUT: dict[str, list[str]] = {}
for _rel, (_subj, _obj) in RELATIONS.items():
    OUT.setdefault(_subj, []).append(_rel)


@dataclass
class Candidate:
    type: str  # bridge | comparison
    question: str
    answer: str
    answer_id: str | int  # entity id, or the year
    hops: list[tuple[Fact, str | int, str]]  # (fact, target reached, sub-question with #k placeholders)
    topics: list[str]  # entity ids named in the question
    signature: str

    @property
    def n_hops(self) -> int:
        return len(self.hops)


def _sub_question(relation: str, x: str, role: str = "") -> str:
    return ASK[relation][0].format(x=x, role=role)


def bridge_candidates(world: World, rng: random.Random) -> list[Candidate]:
    E = world.entities
    out: list[Candidate] = []

    def walk(path: list[tuple[Fact, str | int, str]], current: str, seen: list[str]):
        if len(path) >= 2:
            yield path
        if len(path) == 4 or isinstance(current, int):
            return
        for rel in OUT.get(E[current].kind, []):
            step = world.follow(current, rel)
            if step is None:
                continue
            fact, target = step
            if not isinstance(target, int) and target in seen:
                continue
            if path and rel == "married_to" and path[-1][0].relation == "married_to":
                continue
            yield from walk(path + [(fact, target, rel)], target, seen + ([] if isinstance(target, int) else [target]))

    for eid, e in E.items():
        if e.kind in ("region",):
            continue
        for path in walk([], eid, [eid]):
            x = e.question_ref()
            subs: list[str] = []
            for k, (fact, _target, rel) in enumerate(path):
                subject_ref = e.question_ref() if k == 0 else f"#{k}"
                subs.append(_sub_question(rel, subject_ref, fact.role))
                if k < len(path) - 1:
                    x = _noun_phrase(rel, x, fact.role, rng)
            last_fact, last_target, last_rel = path[-1]
            options = ASK_FINAL.get(last_rel, ASK[last_rel])
            if last_rel == "member_of" and "belonged to" in x:
                options = ["Of which organisation was {x} a member?"]
            question = rng.choice(options).format(x=x, role=last_fact.role)
            question = question[0].upper() + question[1:]
            out.append(Candidate("bridge", question, world.answer_text(last_target), last_target,
                                 [(f, tgt, s) for (f, tgt, _r), s in zip(path, subs, strict=True)], [eid],
                                 e.kind + ">" + ">".join(r for _f, _t, r in path)))
    return out


def comparison_candidates(world: World, rng: random.Random) -> list[Candidate]:
    E = world.entities
    sides: dict[str, list[tuple[str, list[tuple[Fact, str | int, str]], str, str]]] = {}
    # a side: (ref in the question, hops, final entity id, topic entity id)
    for eid, e in E.items():
        if e.kind in YEAR_OF:
            fact, year = world.follow(eid, YEAR_OF[e.kind])
            sides.setdefault(e.kind, []).append(
                (e.question_ref(), [(fact, year, _sub_question(YEAR_OF[e.kind], e.question_ref()))], eid, eid))
        for kind, rels in BRIDGE_TO.items():
            for rel in rels:
                if RELATIONS[rel][0] != e.kind:
                    continue
                step = world.follow(eid, rel)
                if step is None:
                    continue
                fact, target = step
                yfact, year = world.follow(target, YEAR_OF[kind])
                ref = _noun_phrase(rel, e.question_ref(), fact.role, rng)
                sides.setdefault(kind, []).append((ref, [
                    (fact, target, _sub_question(rel, e.question_ref(), fact.role)),
                    (yfact, year, _sub_question(YEAR_OF[kind], "#1")),
                ], target, eid))
    out: list[Candidate] = []
    for kind, items in sides.items():
        rel = YEAR_OF[kind]
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                if a[2] == b[2] or a[3] == b[3] or a[2] in (b[3],) or b[2] in (a[3],):
                    continue
                ya, yb = a[1][-1][1], b[1][-1][1]
                if abs(ya - yb) < 3:
                    continue
                first, second = (a, b) if rng.random() < 0.5 else (b, a)
                winner, loser = (a, b) if ya < yb else (b, a)
                question = COMPARE[rel].format(a=first[0], b=second[0])
                question = question[0].upper() + question[1:]
                # supporting order: the loser's chain, then the winner's, so the last document names the answer
                hops = list(loser[1]) + [(f, tgt, s.replace("#1", f"#{len(loser[1]) + 1}")) for f, tgt, s in winner[1]]
                out.append(Candidate("comparison", question, E[winner[2]].name, winner[2], hops,
                                     [first[3], second[3]],
                                     f"compare:{kind}:{len(a[1])}+{len(b[1])}"))
    return out


_STOPWORDS = {"the", "of", "in", "a", "an", "or", "was", "is", "who", "what", "which", "whom", "where", "did", "that",
              "as", "to", "by", "and", "before"}


class CorpusIndex:
    """Which documents contain a surface form (whole-word, case-sensitive); word sets and idf for distractors."""

    def __init__(self, docs: dict[str, tuple[str, str]]):
        self.docs = docs
        self._cache: dict[str, frozenset[str]] = {}
        self._words = {d: frozenset(_tokens(title + " " + text)) for d, (title, text) in docs.items()}
        df = Counter(w for ws in self._words.values() for w in ws)
        self._idf = {w: math.log(len(docs) / n) for w, n in df.items()}

    def words(self, doc: str) -> frozenset[str]:
        return self._words[doc]

    def idf(self, word: str) -> float:
        return self._idf.get(word, 0.0)

    def containing(self, surface: str) -> frozenset[str]:
        hit = self._cache.get(surface)
        if hit is None:
            pattern = re.compile(r"(?<!\w)" + re.escape(surface) + r"(?!\w)")
            hit = frozenset(d for d, (title, text) in self.docs.items() if pattern.search(title + "\n" + text))
            self._cache[surface] = hit
        return hit


def _surface(world: World, x: str | int) -> str:
    return str(x) if isinstance(x, int) else world.entities[x].name


def check_question(world: World, index: CorpusIndex, cand: Candidate) -> str | None:
    """Why ``cand`` is not a clean multi-hop question, or ``None`` when it is. Entity ids stand for documents."""
    docs = [world.fact_doc[f] for f, _t, _s in cand.hops]
    if len(set(docs)) != len(docs):
        return "two hops are stated in the same document"
    for (f, _t, _s), d in zip(cand.hops, docs, strict=True):
        subject, obj = f.subject, f.object
        both = index.containing(_surface(world, subject)) & index.containing(_surface(world, obj))
        if both != {d}:
            return f"a hop's two names occur together outside its document ({f.relation})"
    answer_docs = index.containing(cand.answer)
    if docs[-1] not in answer_docs:
        return "the answer is not in the last supporting document"
    if cand.type == "bridge":
        if re.search(r"(?<!\w)" + re.escape(cand.answer) + r"(?!\w)", cand.question):
            return "the answer occurs in the question"
        topic_docs = index.containing(world.entities[cand.topics[0]].name)
        if topic_docs & answer_docs:
            return "the answer and the question's entity occur in one document"
    return None


def recompute_answer(world: World, cand: Candidate) -> str:
    """Follow the candidate's relations through the graph again, independently of how it was built."""
    if cand.type == "bridge":
        current: str | int = cand.topics[0]
        for f, _t, _s in cand.hops:
            step = world.follow(current, f.relation)
            assert step is not None and step[0] == f
            current = step[1]
        return world.answer_text(current)
    finals = []
    for f, tgt, _s in cand.hops:
        if f.relation in YEAR_RELATIONS:
            finals.append((tgt, f.subject))
    assert len(finals) == 2 and finals[0][0] != finals[1][0]
    return world.entities[min(finals)[1]].name


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


_GENERIC = {w.lower() for k, _ in ORG_KINDS + EVENT_KINDS + ARTEFACT_KINDS for w in k.split()} | {
    "the", "of", "in", "a", "an", "and", "or", "which", "who", "what", "whom", "where", "was", "is", "did", "year",
    "city", "born", "founded", "organisation", "region", "earlier", "took", "place", "made", "person", "ship",
    "head", "leader", "designer", "founder", "spouse", "member", "that", "as", "to", "by", "led", "designed",
    "institution", "holds", "predecessor", "succeed", "married", "headquartered", "home", "host", "contains",
    "belonged", "organised", "organiser", "birthplace", "s"}


def distractors(world: World, docs: dict[str, tuple[str, str]], index: CorpusIndex, cand: Candidate,
                supporting: set[str]) -> tuple[list[str], int]:
    """Up to MAX_DISTRACTORS entity ids of look-alike documents, and how many came from the first two tiers."""
    E = world.entities
    names = [E[t].name for t in cand.topics]
    # look-alike words: a person's surname (first names are shared too widely to mislead), other names whole
    name_words = {w for t in cand.topics
                  for w in _tokens(E[t].attrs["surname"] if E[t].kind == "person" else E[t].name)
                  if w not in _GENERIC and not w.isdigit()}
    tier1, tier2 = [], []
    for eid, (title, _text) in docs.items():
        if eid in supporting or eid in cand.topics:
            continue
        words = {w for w in _tokens(title) if w not in _GENERIC}
        if any(w == v or (len(w) >= 4 and len(v) >= 4 and _edit1(w, v)) for w in words for v in name_words):
            tier1.append(eid)
    for n in names:
        for eid in sorted(index.containing(n)):
            if eid not in supporting and eid not in tier1 and eid not in tier2 and eid not in cand.topics:
                tier2.append(eid)
    # tier 3: most question words, weighted by rarity (idf), so other "... Organ" documents beat any "born in"
    qwords = set(_tokens(cand.question)) - _STOPWORDS
    scored = []
    for eid in docs:
        if eid in supporting or eid in tier1 or eid in tier2 or eid in cand.topics:
            continue
        scored.append((-round(sum(index.idf(w) for w in qwords if w in index.words(eid)), 9), eid))
    scored.sort()
    tier3 = [eid for _s, eid in scored]
    chosen = (tier1[:4] + tier2)[:MAX_DISTRACTORS - 1]
    n_named = len(chosen)
    chosen += tier3[:MAX_DISTRACTORS - len(chosen)]
    return chosen, n_named


def select_questions(world: World, docs: dict[str, tuple[str, str]], rng: random.Random):
    index = CorpusIndex(docs)
    candidates = bridge_candidates(world, rng) + comparison_candidates(world, rng)
    rejected: Counter[str] = Counter()
    groups: dict[tuple[str, int], dict[str, list[Candidate]]] = {}
    for cand in candidates:
        key = (cand.type, cand.n_hops)
        if key not in QUOTAS:
            continue
        why = check_question(world, index, cand)
        if why is not None:
            rejected[why] += 1
            continue
        assert recompute_answer(world, cand) == cand.answer
        groups.setdefault(key, {}).setdefault(cand.signature, []).append(cand)
    chosen: list[tuple[Candidate, list[str]]] = []
    used_topics: set[str] = set()
    used_answers: Counter[str] = Counter()
    for key, quota in QUOTAS.items():
        by_sig = groups.get(key, {})
        sigs = sorted(by_sig)
        for s in sigs:
            rng.shuffle(by_sig[s])
        rng.shuffle(sigs)
        taken = 0
        while taken < quota and any(by_sig[s] for s in sigs):
            for s in sigs:  # round robin over relation paths, one question per path per round
                if taken >= quota:
                    break
                while by_sig[s]:
                    cand = by_sig[s].pop()
                    if any(t in used_topics for t in cand.topics) or used_answers[cand.answer] >= 2:
                        continue
                    supporting = {world.fact_doc[f] for f, _t, _s in cand.hops}
                    dis, n_named = distractors(world, docs, index, cand, supporting)
                    if n_named < 1 or len(dis) < 2:
                        rejected["no look-alike distractor"] += 1
                        continue
                    chosen.append((cand, dis))
                    used_topics.update(cand.topics)
                    used_answers[cand.answer] += 1
                    taken += 1
                    break
        if taken < quota:
            raise RuntimeError(f"only {taken} questions of type {key[0]!r} with {key[1]} hops pass the checks "
                               f"(wanted {quota}); rejections: {dict(rejected)}")
    return chosen, rejected


def aliases(world: World, answer_id: str | int) -> list[str]:
    """Other accepted forms of an answer: an initial for a person (when no one else shares it), the article form."""
    if isinstance(answer_id, int):
        return []
    e = world.entities[answer_id]
    if e.kind == "person":
        short = f"{e.attrs['first'][0]}. {e.attrs['surname']}"
        same = [p for p in world.entities.values() if p.kind == "person"
                and f"{p.attrs['first'][0]}. {p.attrs['surname']}" == short]
        return [short] if len(same) == 1 else []
    if e.kind == "org":
        out = [f"the {e.name}"]
        if e.attrs["kind"] == "Trading Company":
            out.append(f"{e.attrs['root']} Company")
        return out
    if e.kind == "region":
        return [f"{e.name} region"]
    if e.kind in ("event", "artefact"):
        return [f"the {e.name}"]
    return []


# ----------------------------------------------------------------------------------------------------------------
# Building and writing
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Built:
    world: World
    doc_id: dict[str, str]  # entity id -> document id
    documents: list[dict]
    questions: list[dict]
    card: str
    rejected: Counter
    chains: list[Candidate] = field(default_factory=list)  # the question behind each record, same order


def build(seed: int = SEED) -> Built:
    rng = random.Random(seed)
    world = build_world(rng)
    place_facts(world, rng)
    docs = render_documents(world, rng)
    chosen, rejected = select_questions(world, docs, rng)

    order = list(world.entities)
    rng.shuffle(order)
    doc_id = {eid: f"doc-{i:03d}" for i, eid in enumerate(order, start=1)}
    documents = [{"id": doc_id[eid], "title": docs[eid][0], "text": docs[eid][1]}
                 for eid in sorted(order, key=lambda e: doc_id[e])]

    rng.shuffle(chosen)
    questions = []
    for i, (cand, dis) in enumerate(chosen, start=1):
        supporting = [doc_id[world.fact_doc[f]] for f, _t, _s in cand.hops]
        questions.append({
            "id": f"q{i:03d}",
            "question": cand.question,
            "answer": cand.answer,
            "aliases": aliases(world, cand.answer_id),
            "hops": cand.n_hops,
            "type": cand.type,
            "supporting_ids": supporting,
            "distractor_ids": [doc_id[d] for d in dis],
            "decomposition": [{"question": s, "answer": world.answer_text(t), "support_id": doc_id[world.fact_doc[f]]}
                              for f, t, s in cand.hops],
        })
    built = Built(world, doc_id, documents, questions, "", rejected, [cand for cand, _dis in chosen])
    validate(built)
    built.card = render_card(built)
    return built


def validate(built: Built) -> None:
    """Checks on the finished files; raise AssertionError on the first failure."""
    world, documents, questions = built.world, built.documents, built.questions
    ids = [d["id"] for d in documents]
    assert len(set(ids)) == len(ids), "duplicate document ids"
    assert len({d["title"] for d in documents}) == len(documents), "duplicate titles"
    for d in documents:
        n = len(re.findall(r"[.?!](?:\s|$)", d["text"]))
        assert 2 <= n <= MAX_SENTENCES, f"{d['id']} has {n} sentences"
    for e in world.entities.values():
        for word in e.name.lower().split():
            assert word not in STOP_LIST, f"stop-listed name {e.name!r}"
    # every fact is written in the document it was placed in: both surface forms occur there
    by_id = {d["id"]: d for d in documents}
    for f in world.facts:
        d = by_id[built.doc_id[world.fact_doc[f]]]
        text = d["title"] + "\n" + d["text"]
        for x in (f.subject, f.object):
            assert re.search(r"(?<!\w)" + re.escape(_surface(world, x)) + r"(?!\w)", text), (f, d["id"])
    qids = [q["id"] for q in questions]
    assert len(set(qids)) == len(qids)
    assert len({q["question"] for q in questions}) == len(questions), "two questions have the same text"
    known = set(ids)
    for q in questions:
        assert set(q["supporting_ids"]) <= known and set(q["distractor_ids"]) <= known
        assert len(set(q["supporting_ids"])) == q["hops"] == len(q["supporting_ids"])
        assert not set(q["supporting_ids"]) & set(q["distractor_ids"])
        last = by_id[q["supporting_ids"][-1]]
        assert re.search(r"(?<!\w)" + re.escape(q["answer"]) + r"(?!\w)", last["text"]), q["id"]


def render_jsonl(records: Iterable[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def render_card(built: Built) -> str:
    qs, world = built.questions, built.world
    kinds = Counter(e.kind for e in world.entities.values())
    table = Counter((q["type"], q["hops"]) for q in qs)
    rel_count = Counter(f.relation for f in world.facts)
    sentences = [len(re.findall(r"[.?!](?:\s|$)", d["text"])) for d in built.documents]
    words = [len(d["text"].split()) for d in built.documents]
    n_dis = [len(q["distractor_ids"]) for q in qs]
    kind_label = {"person": "people", "city": "cities", "region": "regions", "org": "organisations",
                  "event": "events", "artefact": "artefacts and ships"}
    example = {t: next(q for q in qs if q["type"] == t and q["hops"] == h)
               for t, h in (("bridge", 4), ("comparison", 3))}
    lines = [
        "# Synthetic multi-hop search corpus (`search_corpus.jsonl`, `search_questions.jsonl`)",
        "",
        "Written by `uncertainty_lab/datasets/build_search_corpus.py` (this card too). Do not edit by hand: change",
        "the script and run `python -m uncertainty_lab.datasets.build_search_corpus`; `--check` tells whether the",
        f"shipped files are current. Seed {SEED}; output is byte-identical on every run.",
        "",
        "## What it is",
        "",
        f"{len(built.documents)} short encyclopedic documents about an **invented world** and {len(qs)} questions "
        "that need",
        "2–4 of them. Nothing in it is true; every name is made up. It exists so that agentic-search experiments",
        "(the CGDP lab: belief states, stopping gates, loops and premature stops) can be run on questions a language",
        "model cannot answer from memory — success has to come from the documents the agent gathered.",
        "",
        "| documents about | count |",
        "|---|---|",
        *[f"| {kind_label[k]} | {kinds[k]} |" for k in ("person", "city", "region", "org", "event", "artefact")],
        "",
        f"Documents have {min(sentences)}–{max(sentences)} sentences "
        f"(mean {sum(sentences) / len(sentences):.1f}) and "
        f"{min(words)}–{max(words)} words (mean {sum(words) / len(words):.0f}).",
        "",
        "## Questions",
        "",
        "| type | 2 hops | 3 hops | 4 hops | total |",
        "|---|---|---|---|---|",
        *[f"| {t} | {table[(t, 2)]} | {table[(t, 3)]} | {table[(t, 4)]} | {sum(table[(t, h)] for h in (2, 3, 4))} |"
          for t in ("bridge", "comparison")],
        f"| all | {sum(table[(t, 2)] for t in ('bridge', 'comparison'))} | "
        f"{sum(table[(t, 3)] for t in ('bridge', 'comparison'))} | "
        f"{sum(table[(t, 4)] for t in ('bridge', 'comparison'))} | {len(qs)} |",
        "",
        "- **bridge**: follow a chain of relations from the entity named in the question; the answer is an entity",
        "  name or a year. Example ({} hops): *{}* → {}.".format(example["bridge"]["hops"],
                                                            example["bridge"]["question"],
                                                            example["bridge"]["answer"]),
        "- **comparison**: compare two year facts; either side may be one bridge hop away, so a comparison has 2, 3",
        "  or 4 hops. The answer is the name of the earlier entity. Example: *{}* → {}.".format(
            example["comparison"]["question"], example["comparison"]["answer"]),
        "",
        "Fields of `search_questions.jsonl`: `id`, `question`, `answer`, `aliases` (other accepted forms, may be",
        "empty), `hops`, `type`, `supporting_ids` (one document per hop, in reasoning order — for comparisons the",
        "losing side first — so the last one states the answer), `distractor_ids` (documents that look relevant",
        "and are not), `decomposition` (one sub-question per hop, MuSiQue style with `#k` for the answer of hop k,",
        "its answer and the id of the document that states it). `search_corpus.jsonl` has `id`, `title`, `text`.",
        "",
        "## How it was generated",
        "",
        "1. **Names** are composed from syllable tables with a seeded generator; every name and every word of a name",
        "   is checked against a stop-list of famous real names (cities, people, mythical and fictional places) and",
        "   common English words that the syllables can spell. Obscure real words may still occur by chance.",
        "2. **A knowledge graph** of typed, functional relations with consistent years (founders are 24–60 when they",
        "   found something, designers 20–70 when they make something, events follow their organiser's founding):",
        "",
        "   | relation | meaning | facts |",
        "   |---|---|---|",
        *[f"   | `{r}` | {RELATION_MEANING[r]} | {rel_count[r]} |" for r in RELATIONS],
        "",
        "3. **Documents**: one per entity. Every fact is stated in **exactly one** document — its subject's or its",
        "   object's, chosen at random within a six-sentence cap — so facts are spread across documents, and",
        "   sentence templates vary. The generator records which document states each fact.",
        "4. **Questions** are relation paths drawn from the graph and kept only if they pass these checks:",
        "   - each hop's fact is stated in a different document, and those are exactly the supporting documents,",
        "     so answering needs all of them;",
        "   - the two surface forms of each hop (two names, or a name and a year) occur together in no other document;",
        "   - following the relations through the graph again gives the gold answer, and the answer occurs in the last",
        "     supporting document;",
        "   - bridge questions: the answer does not occur in the question, and no document mentions both the",
        "     question's entity and the answer, so no single document answers it;",
        "   - comparisons: the two years differ by at least three.",
        "",
        "   A question's entity is not reused by another question, no answer is used more than twice, and relation",
        "   paths are drawn round-robin so that no single path dominates.",
        "5. **Distractors** ({} per question, {} in all): documents outside the support that share".format(
            f"{min(n_dis)}–{max(n_dis)}" if min(n_dis) != max(n_dis) else min(n_dis), sum(n_dis)),
        "   surface words with the question — first look-alike titles (a family member with the same surname, a",
        "   near-duplicate name such as one letter changed, an organisation with the same root and another kind, a",
        "   ship with a city's name, an artefact named after a person who did not make it, an organisation named",
        "   after a city it is not in), then documents that mention the question's entity but state nothing on its",
        "   chain, then the documents sharing the most question words. Every question has at least one of the first",
        "   two kinds. Names never give an answer away: an organisation named after a city is headquartered",
        "   elsewhere, an artefact named after a surname was designed by someone without it.",
        "",
        "## Intended use",
        "",
        "- Agentic search without parametric knowledge: stopping gates (exhaustion, self-stop, belief-complete),",
        "  belief states (implicit vs predicate), loop and premature-stop rates, and their token costs.",
        "- Premature stopping is measurable: a run that answers before it has seen every supporting document",
        "  either guessed or stopped early; distractors make the near-miss visible.",
        "- Small enough for BM25 on a laptop in milliseconds; the MuSiQue and HotpotQA loaders in",
        "  `uncertainty_lab.datasets.multihop` bring real multi-hop data in the same dataclasses.",
        "",
        "## Known limits",
        "",
        "- **Template English.** Sentences come from a few dozen templates; the phrasing is regular and an agent can",
        "  learn it. Real encyclopedic text is far more varied (use MuSiQue or HotpotQA for that).",
        "- **Invented world.** No real-world knowledge helps, which is the point, and also means results say nothing",
        "  about how a model combines memory with retrieval.",
        "- Relations are functional (one founder, one birthplace), years are the only numbers, and there are no",
        "  yes/no, counting or unanswerable questions.",
        "- Multi-hop-ness is checked by surface forms and by the fact-to-document map, not by a model. Guessing",
        "  still pays on comparisons: a 2-hop comparison names both candidates, so a coin flip is right half the",
        "  time (3- and 4-hop comparisons name at most one of them). Score comparisons separately if that matters.",
        "- The question's entity's own document is not always a supporting document: when its first fact was",
        "  placed in the other entity's document, the agent has to search past it (this is deliberate).",
        "- Small: 100 questions give wide confidence intervals; report them.",
        "",
        "Licence: written for this package, under the package's licence (Apache-2.0).",
        "",
    ]
    return "\n".join(lines)


def outputs(built: Built) -> dict[str, bytes]:
    return {
        CORPUS_FILE: render_jsonl(built.documents),
        QUESTIONS_FILE: render_jsonl(built.questions),
        CARD_FILE: built.card.encode("utf-8"),
    }


def write_search_corpus(out: str | Path = DEFAULT_OUT, *, seed: int = SEED) -> dict[str, Path]:
    """Generate the corpus and write the three files into folder ``out``; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, data in outputs(build(seed)).items():
        (out / name).write_bytes(data)
        paths[name] = out / name
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to write the three files into")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the files in --out differ")
    args = parser.parse_args(argv)
    if args.check:
        stale = [name for name, data in outputs(build()).items()
                 if not (args.out / name).exists() or (args.out / name).read_bytes() != data]
        if stale:
            print(f"stale: {', '.join(stale)} in {args.out}; run without --check to rewrite", file=sys.stderr)
            return 1
        print(f"up to date: {args.out}")
        return 0
    for path in write_search_corpus(args.out).values():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
