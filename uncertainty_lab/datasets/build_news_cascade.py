"""Write ``data/news_cascade.jsonl`` and its data card ``data/news_cascade.md``: the fictional news cascade the
package ships for the HawkesLLM lab.

Everything here is invented for this package: the *Halyard II* crewed lunar flyby, the Orison Space Agency, the
crew, the spacecraft, the launch site, the contractors and the five outlets. Every headline below was written by
hand for it; none is taken from real coverage. Run::

    python -m uncertainty_lab.datasets.build_news_cascade             # rewrite the shipped files
    python -m uncertainty_lab.datasets.build_news_cascade --check     # exit 1 if the shipped files are stale
    python -m uncertainty_lab.datasets.build_news_cascade --out-dir somewhere/

How it is made (details in the data card):

1. **Times and nodes** come from a seeded five-node Hawkes process (exponential kernel, β = 1 per hour) whose
   background rate depends on the mission phase and jumps at the story's key moments (rollout, launch,
   translunar injection, the coolant-loop fault, its fix, the lunar flyby, splashdown, the homecoming), then
   decays; a per-phase factor thins ``specialist_science_tech`` after the flyby. Sampling is Ogata thinning,
   restarted at every breakpoint so the bound is valid. Times are rounded to whole seconds, strictly
   increasing over the whole cascade. Only ``random.Random.random()`` is used (its stream is
   guaranteed across Python versions), so the same seed gives the same bytes everywhere.
2. **Headlines** are drawn without replacement from hand-written pools per (phase, node). A headline may carry
   a validity window (e.g. after translunar injection, behind the Moon, after the homecoming starts) and slots
   filled from the event time (mission day, hours to closest approach or splashdown, distance from Earth). Each
   event takes the first unused headline valid at its time in the pool's written (narrative) order, jittered by
   a seeded displacement of up to ``JITTER`` places, so every event gets a headline consistent with its time
   and every headline is used once.

The output is deterministic (fixed key order, UTF-8, ``\\n`` line ends); a test regenerates it and compares bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from uncertainty_lab.datasets.news import N_TRAIN, NODES, PHASES, SOURCES

DEFAULT_OUT_DIR = Path(__file__).resolve().parent / "data"
JSONL_NAME = "news_cascade.jsonl"
CARD_NAME = "news_cascade.md"

SEED = 638
JITTER = 2.5  # headlines are taken in written (narrative) order, each displaced by up to this many places
START = datetime(2031, 9, 1, 0, 0, 0, tzinfo=UTC)  # hour 0 (fictional)
T_END = 263.0  # observation window [0, T_END] hours

# --- the story's clock (hours since START) ----------------------------------------------------------------------
ROLLOUT = 6.0
LAUNCH = 40.5
TLI = 43.0  # translunar injection burn
TLI_DONE = 43.2
ANOMALY = 103.2  # loop B coolant pressure drop
FIX = 112.5  # valve cycled, loop B back, go for flyby
SOI = 117.0  # enters the Moon's sphere of influence
LOS = 138.0  # loss of signal behind the Moon (41 minutes)
CLOSEST = 138.35  # closest approach, 7,950 km above the far side
FLYBY = 138.7  # signal reacquired: the flyby is confirmed and the flyby phase (and its news burst) begins
RETURN = 160.0
SPLASHDOWN = 236.4
HOMECOMING = 252.0
MAX_KM = 398_100.0  # distance from Earth at closest approach (km)

PHASE_STARTS = {
    "prelaunch": 0.0,
    "launch": LAUNCH,
    "outbound": 58.0,
    "anomaly": ANOMALY,
    "approach": FIX,
    "flyby": FLYBY,
    "return": RETURN,
    "splashdown": SPLASHDOWN,
}
assert tuple(PHASE_STARTS) == PHASES

# --- the generating process (node order: NODES) -----------------------------------------------------------------
BETA = 1.0  # per hour
#: ALPHA[j][i]: excitation from source node j to target node i (the package's convention)
ALPHA = (
    (0.10, 0.05, 0.00, 0.00, 0.05),  # local_tv ->
    (0.00, 0.15, 0.00, 0.00, 0.00),  # mass_market ->
    (0.00, 0.05, 0.15, 0.25, 0.10),  # specialist_science_tech ->
    (0.00, 0.00, 0.00, 0.20, 0.05),  # business_finance ->
    (0.20, 0.25, 0.05, 0.05, 0.10),  # general_news ->
)
#: background rate per phase (events per hour)
MU = {
    "prelaunch": (0.101, 0.061, 0.050, 0.050, 0.071),
    "launch": (0.145, 0.116, 0.087, 0.072, 0.087),
    "outbound": (0.043, 0.058, 0.072, 0.043, 0.072),
    "anomaly": (0.029, 0.087, 0.116, 0.087, 0.087),
    "approach": (0.029, 0.058, 0.087, 0.043, 0.058),
    "flyby": (0.043, 0.087, 0.087, 0.043, 0.072),
    "return": (0.043, 0.043, 0.043, 0.043, 0.058),
    "splashdown": (0.116, 0.102, 0.014, 0.058, 0.087),
}
#: per-phase factor on a node's whole intensity (specialist coverage thins out after the flyby)
MODULATION = {p: (1.0, 1.0, 1.0, 1.0, 1.0) for p in PHASES}
MODULATION["return"] = (1.0, 1.0, 0.35, 1.0, 1.0)
MODULATION["splashdown"] = (1.2, 1.0, 0.2, 1.0, 1.0)
#: news bursts: (start hour, decay time in hours, added rate per node at the start)
BURSTS = (
    (ROLLOUT, 4.0, (0.362, 0.072, 0.072, 0.0, 0.116)),
    (LAUNCH, 3.0, (2.262, 1.885, 0.943, 0.754, 1.697)),
    (TLI, 4.0, (0.0, 0.145, 0.725, 0.145, 0.29)),
    (ANOMALY, 4.0, (0.145, 1.305, 0.87, 0.87, 1.015)),
    (FIX, 4.0, (0.072, 0.29, 0.58, 0.435, 0.435)),
    (FLYBY, 3.0, (0.58, 1.305, 1.015, 0.145, 1.16)),
    (SPLASHDOWN, 4.0, (1.45, 1.305, 0.29, 0.435, 1.16)),
    (HOMECOMING, 4.0, (0.725, 0.29, 0.0, 0.0, 0.072)),
)

# --------------------------------------------------------------------------------------------------------------
# Headlines, by phase and node. An entry is a headline, or (from_hour, to_hour, headline) when it is only true
# in part of its phase. Slots: {mday} mission day, {h_flyby} / {h_splash} time left ("9 hours"), {km} distance
# from Earth ("312,400").
# --------------------------------------------------------------------------------------------------------------

CONTENT: dict[str, dict[str, list]] = {
    "prelaunch": {
        "local_tv": [
            (0.0, ROLLOUT, "Causeway closures begin as Halyard II rocket gets ready to roll out at Cape Varrow"),
            (ROLLOUT, 20.0, "Watch: Halyard II rocket crawls to Launch Complex 4 as Port Aldwick crowds line the shore"),
            "Port Aldwick motels report no vacancies ahead of Halyard II launch",
            "Kofi Ashgrove's parents arrive at Cape Varrow: 'He's wanted this since he was six'",
            "Varrow County schools plan launch-day watch parties in every gym",
            "Sheriff's office: expect two-hour waits on the Varrow Causeway on launch day",
            "Port Aldwick bakery can't keep rocket-shaped cookies on the shelves",
            "Millbrook Falls, Harlow Bay, Eastfield and Port Aldwick: four hometowns, one rocket",
            (20.0, LAUNCH, "Launch eve in Port Aldwick: beach lots already full for Halyard II"),
            (30.0, LAUNCH, "Boat ramps close as harbour patrol sets launch exclusion zone off Cape Varrow"),
        ],
        "mass_market": [
            (0.0, 24.0, "Countdown fever: the best spots to watch tomorrow's Halyard II launch"),
            "Meet the four people about to fly around the Moon, and the odd good-luck rituals they swear by",
            "Kofi Ashgrove's grandmother knitted the crew lucky socks. Yes, they're flying",
            "Quiz: which Halyard II astronaut are you?",
            (ROLLOUT, LAUNCH, "That glowing rocket all over your feed? It's real, and it's leaving for the Moon"),
            "What do astronauts pack for eight days in a capsule the size of a minivan? We asked",
            "'Terrified and thrilled': pilot Tomas Reyne opens up about the moment he'll leave Earth",
            "Astronaut Priya Vantongeren's playlist for the Moon leaked, and it's mostly 80s ballads",
            "Why a trip around the Moon has the whole country refreshing their feeds",
            (20.0, LAUNCH, "Halyard II commander's teenage daughter posts the sweetest goodbye, and the internet is in pieces"),
        ],
        "specialist_science_tech": [
            "Halyard II flight plan: a free-return trajectory that swings 7,950 km past the lunar far side",
            "Inside Kestrel: Brightwater's crew module, its life support and the limits of an eight-day flight",
            "Tern Heavy stack at a glance: 2,900 t at liftoff, four core engines, two solid boosters",
            (15.0, 32.0, "Rollout complete: crawler delivers Tern Heavy to LC-4 in nine hours"),
            "Why Halyard II won't enter lunar orbit, and what a flyby can still test",
            "Service module redundancy explained: two coolant loops, four radiator panels",
            "NT-7 ablator: Norrland Thermal's heat shield faces its first crewed return at 11 km/s",
            (28.0, LAUNCH, "Propellant loading timeline: what the final 12 hours of the Halyard II countdown involve"),
        ],
        "business_finance": [
            "Brightwater Dynamics shares edge up as Halyard II launch nears",
            "Insurers price Halyard II: Harbourline Re leads $620 million launch and mission cover",
            "Aldmark Heavy Industries: Tern Heavy contract worth $1.3 billion through 2036",
            "Calder Propulsion bets its backlog on a clean service-module debut",
            "Orison Assembly budget hawks eye Halyard II's $4.1 billion price tag",
            "Space-sector ETF hits 52-week high on Halyard II optimism",
            "Analysts: a smooth Halyard II flight could unlock three follow-on orders for Brightwater",
            "Cape Varrow hotels and restaurants expect a $38 million launch-week windfall",
            "Vantage Avionics delays its IPO until after Halyard II splashdown",
            "Supply chain: 1,400 firms built parts of Halyard II, agency says",
            "Norrland Thermal trades flat ahead of a heat-shield test markets can't hedge",
            (20.0, LAUNCH, "Options traders load up on Calder Propulsion volatility before launch"),
            (20.0, LAUNCH, "Launch-day playbook: how contractor stocks moved after Halyard I"),
        ],
        "general_news": [
            "Orison Space Agency targets 16:30 UTC launch for Halyard II crewed lunar flyby",
            (ROLLOUT, 20.0, "Halyard II rocket begins slow journey to launch pad"),
            "Halyard II mission: key facts about the first crewed flight of the Kestrel spacecraft",
            "Four astronauts enter final quarantine before lunar flyby mission",
            "Halyard II to be first crewed flight beyond Earth orbit in Orison program's history",
            "Weather officers give 80 percent chance of acceptable conditions for Halyard II launch",
            (20.0, LAUNCH, "Launch teams begin countdown for crewed lunar flyby"),
            (20.0, LAUNCH, "Agency chief says Halyard II crew 'ready and rested' ahead of launch"),
            (30.0, LAUNCH, "Fuelling of Halyard II rocket under way, agency says"),
        ],
    },
    "launch": {
        "local_tv": [
            "LIFTOFF: Port Aldwick erupts as Kofi Ashgrove and crew roar off Cape Varrow",
            "Tears and cheers at Ashgrove family watch party as Halyard II clears the tower",
            "Cape Varrow shakes: residents report rattled windows as Tern Heavy climbs",
            "Varrow Coast 7 sky cam captures booster separation from 60 km away",
            "Port Aldwick Elementary students count down with hometown astronaut's former teacher",
            "Millbrook Falls and Port Aldwick hold joint video-call watch party",
            "Ashgrove's mother on the launch: 'I stopped breathing for eight minutes'",
            (40.5, 50.0, "Varrow Causeway gridlock: officials urge launch crowds to stagger departures"),
            "Beach crews estimate launch-day crowd on Cape Varrow shores at 210,000",
            (TLI_DONE, 58.0, "Kofi Ashgrove radios home after engine burn sends Halyard II toward the Moon"),
            (42.5, 58.0, "Traffic update: Route 9 reopens after launch closures, delays remain"),
            (42.0, 58.0, "Port Aldwick mayor declares 'Halyard Day' after flawless launch"),
            "Varrow Coast 7 viewers share their launch photos: see the best",
            "Local firefighters who guarded the pad describe the final minutes before launch",
            "Harbour patrol reports one boat towed from launch exclusion zone",
            (46.0, 58.0, "Launch crowds gone, Port Aldwick shops count a record day"),
        ],
        "mass_market": [
            "THEY'RE OFF! Halyard II blasts toward the Moon in jaw-dropping launch",
            "The moment the commander's daughter saw the rocket go up will wreck you",
            "'Go, Mom, go!': the sign that stole the Halyard II launch",
            "10 photos from the Halyard II launch you need to see right now",
            "Astronaut's dog watches launch on TV and the reaction is everything",
            "The internet can't stop talking about the crew's matching launch-day socks",
            "Is that a UFO? No, it's Halyard II's booster, and people are freaking out",
            "Launch video with 40 million views shows the crew's faces at liftoff",
            "Celebrities react to Halyard II launch: 'I have chills'",
            "Why a rocket launch made grown adults cry on live TV",
            (TLI_DONE, 58.0, "They just fired the engine that sends them to the Moon. Here's what happens next"),
            "The kid who yelled 'bye astronauts' at the launch is now a meme, and he's thrilled",
            "Pilot Tomas Reyne's first words from space were not what anyone expected",
            "Priya Vantongeren's 80s playlist shoots up the charts after launch",
            "Wait, how fast are they going right now? The answer is wild",
            "Halyard II launch broke streaming records: see the numbers",
            "From the cheap seats: what the launch was like from a parked car on the causeway",
            (TLI_DONE, 58.0, "Next stop, the Moon: Halyard II crew leaves Earth orbit behind"),
            "Astronaut family bingo: tears, hugs and one very confused toddler",
            "Every emotion you felt watching Halyard II launch, ranked",
            (46.0, 58.0, "The crew's first photo home is here, and it's perfect"),
        ],
        "specialist_science_tech": [
            "Tern Heavy ascent: boosters separate at T+2:08, core stage performs nominally",
            "Halyard II launch telemetry: max-q at 11.9 km altitude, 34.6 kPa",
            "Orbit insertion confirmed: Kestrel in a 185 x 2,200 km parking orbit",
            "Launch abort system jettisoned on schedule; cabin pressure holding at 101 kPa",
            "Solar arrays deployed: service module generating 11.2 kW after orbit insertion",
            (41.5, TLI, "Manual piloting test: Reyne flies Kestrel near the spent upper stage"),
            "CO2 scrubber and water loop checkouts complete in Kestrel's first hours",
            (TLI_DONE, 58.0, "TLI burn complete: Calder CV-40 adds 3.15 km/s delta-v in 5 min 48 s"),
            (TLI_DONE, 58.0, "Free return locked in: post-TLI tracking puts flyby altitude within 40 km of plan"),
            (TLI_DONE, 58.0, "Kestrel {km} km from Earth after translunar injection, tracking stations report"),
            (TLI_DONE, 58.0, "Upper stage disposal: spent stage sent on a heliocentric path after TLI"),
            (43.5, 58.0, "Ground network handover: deep-space antennas take over Kestrel tracking"),
            "First look at Tern Heavy's upper stage: performance 0.3 percent above prediction",
            "Why the Halyard II launch window was only 47 minutes long",
            (46.0, 58.0, "First outbound trajectory correction deemed unnecessary by flight dynamics team"),
        ],
        "business_finance": [
            "Brightwater Dynamics jumps 4.2% as Halyard II launch goes by the book",
            "Aldmark Heavy Industries rallies 6% after Tern Heavy's crewed debut",
            "Calder Propulsion climbs as service module passes first big test",
            "Harbourline Re breathes easier: launch phase of $620 million policy ends without a claim",
            "Space-sector ETF adds $1.1 billion in market value on launch day",
            (TLI_DONE, 58.0, "Calder Propulsion extends gains after CV-40 engine nails translunar burn"),
            "Analysts lift Brightwater price targets after clean launch",
            "Norrland Thermal slips 1% as heat-shield risk moves to the front of traders' minds",
            "Launch-week tourism windfall beats forecasts, Cape Varrow chamber says",
            "Budget committee chair: a successful launch 'changes nothing' about cost review",
            "Vantage Avionics suppliers see orders pick up after Halyard II liftoff",
            "Streaming platform says Halyard II launch drew its largest live audience ever",
            "Bond markets shrug, stock markets cheer: how Halyard II moved trading",
            "Insurers cut rates on next year's Tern Heavy launches after flawless ascent",
            (46.0, 58.0, "Market wrap: aerospace leads gains on Halyard II launch day"),
        ],
        "general_news": [
            "Halyard II lifts off with four astronauts on lunar flyby mission",
            "Orison launches crew toward the Moon for first time in program's history",
            "Halyard II reaches Earth orbit; agency says systems performing well",
            "More than 200,000 watch Halyard II launch from Cape Varrow coast",
            "Agency chief calls launch 'a clean start' to eight-day mission",
            "Heads of government send congratulations after Halyard II launch",
            "Kestrel crew sends first message: 'Beautiful view, smooth ride'",
            "Launch weather held and countdown ran without holds, agency says",
            (TLI_DONE, 58.0, "Halyard II engine burn puts crew on course for the Moon"),
            (TLI_DONE, 58.0, "Halyard II spacecraft separates from upper stage after translunar burn"),
            (42.0, 58.0, "Halyard II crew reports all well after first hours in space"),
            "Halyard II launch: timeline of the first hours of the mission",
            "What comes next for the Halyard II crew after launch",
            "Opposition leaders praise launch, renew call for cost audit",
            (48.0, 58.0, "Halyard II booster recovery ship returns to port; agency to examine hardware"),
            (46.0, 58.0, "Halyard II crew completes systems checks, begins first rest period"),
            (46.0, 58.0, "Halyard II mission control in Greyhaven hands over to overnight team"),
        ],
    },
    "outbound": {
        "local_tv": [
            "Launch debris cleanup wraps up on Cape Varrow beaches",
            "Port Aldwick diner names a breakfast special after hometown astronaut",
            "Kofi Ashgrove answers Port Aldwick students' questions live from Kestrel",
            "Ashgrove family on life during the mission: 'We check the tracker every hour'",
            "Varrow County library hosts Halyard II mission-tracking nights all week",
            "Teacher who inspired Kofi Ashgrove gets a shout-out from space",
            "Cape Varrow visitor center extends hours as mission interest soars",
            "Halyard II day {mday}: what the crew's schedule looks like, and when to tune in",
        ],
        "mass_market": [
            "How do you sleep on the way to the Moon? Astronauts reveal their bizarre routines",
            (58.0, 80.0, "Astronauts' first full day in deep space included a toilet problem. Yes, really"),
            "This photo of Earth from Kestrel's window is going to be everyone's wallpaper",
            "What the Halyard II crew ate on day {mday}, and which snack they regret packing",
            "Watch: Kofi Ashgrove does a zero-g somersault for his old school",
            "The crew named a floating plush toy their 'zero-g indicator'. Meet Biscuit",
            "Commander Okafor-Brandt read a bedtime story from space and we're not okay",
            (75.0, ANOMALY, "They're halfway to the Moon and the view keeps getting more unreal"),
        ],
        "specialist_science_tech": [
            "Radiation dosimeters show crew dose below prediction after the Van Allen belt transit",
            (64.0, ANOMALY, "Outbound correction burn OTC-1 trims velocity by 1.8 m/s"),
            "Kestrel {km} km from Earth on mission day {mday}; all trajectory parameters nominal",
            "Deep-space comms check: Kestrel's optical terminal hits 260 Mb/s downlink",
            "Service module thermal control: both coolant loops holding set points, telemetry shows",
            "Star-tracker calibration and the navigation fix that keeps a free return honest",
            "Life-support report: cabin oxygen partial pressure steady at 21.3 kPa",
            (75.0, ANOMALY, "Past the midpoint: Kestrel crosses halfway between Earth and Moon"),
            "Crew exercise device test: can a flywheel trainer fit in a four-person capsule?",
        ],
        "business_finance": [
            "Brightwater holds launch gains as Halyard II cruises toward the Moon",
            "Harbourline Re says in-flight cover pricing unchanged after quiet first day",
            "Merchandise boom: Halyard II mission patch sales top 2 million",
            "Calder Propulsion analysts see service module contract renewals on track",
            "Budget watchdog publishes line-by-line Halyard II cost estimate",
            "Aldmark signs letter of intent for two more Tern Heavy vehicles",
            "Advertisers scramble for spots during Halyard II flyby broadcast",
            "Space-sector ETF pauses after launch rally as traders await flyby",
        ],
        "general_news": [
            (58.0, 80.0, "Halyard II crew passes first full day in deep space"),
            (64.0, ANOMALY, "Halyard II spacecraft performs planned course correction"),
            "Halyard II astronauts hold first live news conference from space",
            (66.0, ANOMALY, "Halyard II crew reports minor issue with waste system, since fixed"),
            "Agency releases first high-resolution images from Halyard II cameras",
            "Halyard II mission day {mday}: spacecraft on track for lunar flyby",
            (75.0, ANOMALY, "Halyard II past halfway point of outbound journey"),
            "Schools worldwide join Halyard II educational broadcast",
        ],
    },
    "anomaly": {
        "local_tv": [
            "Port Aldwick holds its breath after cooling problem reported on Kestrel",
            "Ashgrove family 'calm and confident' after word of spacecraft fault",
            "Varrow Coast 7 asks a former flight controller about the Kestrel cooling issue",
            "Port Aldwick church opens its doors for families following Halyard II news",
            "Kofi Ashgrove's sister: 'He told us the crew trained for exactly this'",
            "Port Aldwick students write messages of support to the Halyard II crew",
        ],
        "mass_market": [
            "SCARY MOMENTS: alarm sounds on Moon-bound spacecraft",
            "What we know (and don't) about the problem on Halyard II",
            "Is the Halyard II crew in danger? Experts weigh in",
            "Commander Okafor-Brandt's calm voice during the alarm has the internet in awe",
            "Families of Halyard II crew face an agonizing wait",
            "Halyard II problem: the 5 things you need to know right now",
            "Photos: tense faces inside Greyhaven mission control",
            "The cooling glitch explained in plain English (no, the astronauts aren't overheating)",
            "Mission control's live feed went quiet for 12 minutes, and viewers panicked",
            "Could they turn back? Here's what happens if the Moon flyby is called off",
            "Fans flood social media with #BringHalyardHome",
            "Psychologists explain how astronauts stay calm when alarms go off",
            "An astronaut's kid asked the question everyone's thinking, and Mom answered from space",
            "People are lighting candles in their windows for the Halyard II crew",
            "The crew's playlist just got a very on-the-nose new song",
        ],
        "specialist_science_tech": [
            "Kestrel service module: loop B coolant pressure falls from 310 to 190 kPa in 40 minutes",
            "Crew isolates secondary coolant loop; primary loop A carries the full thermal load",
            "Loop B fault: telemetry shows radiator panel 3 outlet temperature spiking to 28 °C",
            "Analysis: one loop can reject Kestrel's 9.5 kW heat load, with little margin near the Moon",
            "Flight controllers power down non-critical avionics to trim Kestrel's heat load by 1.2 kW",
            "What a coolant-loop fault means on a free-return trajectory: the physics of 'no turning back'",
            (105.5, FIX, "Engineers suspect a stuck isolation valve, not a leak, in Kestrel loop B"),
            "Why a free return is the best abort: the Moon is already Kestrel's way home",
            "Cabin temperature rises 1.5 °C as crew runs on the primary coolant loop alone",
            "Flight rules for a one-loop flyby: the thresholds mission control is watching",
            "Kestrel {km} km out as engineers work the loop B problem",
            (107.0, FIX, "Ground test rig at Calder Propulsion recreates the Kestrel valve fault"),
        ],
        "business_finance": [
            "Calder Propulsion slides 6.8% on Kestrel service-module coolant fault",
            "Brightwater Dynamics falls 3% as Halyard II fault rattles investors",
            "Harbourline Re shares dip as analysts weigh exposure under $620 million mission cover",
            "Space-sector ETF gives back a week of gains on Halyard II anomaly",
            "Norrland Thermal steady as traders separate cooling fault from heat-shield risk",
            "Options market prices a wild week for Calder Propulsion after coolant fault",
            (106.5, FIX, "Analyst note: 'A valve, not a design flaw', brokers urge calm on Calder"),
            "Budget hawks seize on Halyard II fault to press for cost audit",
            "Flyby broadcast advertisers seek make-good clauses as mission faces uncertainty",
        ],
        "general_news": [
            "Halyard II crew reports cooling system fault; agency says crew safe",
            "Halyard II crew switches to backup cooling loop as precaution",
            "Agency: Halyard II coolant problem under investigation, mission continues for now",
            "Halyard II: what is known about the spacecraft's cooling fault",
            "Engineers work around the clock on Halyard II cooling issue",
            "Lawmakers ask for briefing on Halyard II fault",
            "Halyard II flyby decision expected within a day, officials say",
        ],
    },
    "approach": {
        "local_tv": [
            "Relief in Port Aldwick as Kestrel cooling fix holds",
            "Ashgrove family: 'Kofi called. He sounded like himself again'",
            "Port Aldwick lights up its lighthouse for the Halyard II crew",
            "Varrow County schools plan flyby viewing as Halyard II nears the Moon",
            "Flyby countdown clock goes up in Port Aldwick town square",
            "Hometown crowd plans all-night vigil for Halyard II far-side pass",
        ],
        "mass_market": [
            "PHEW! Halyard II crew fixes cooling problem, and they're going to the Moon",
            "The astronaut who fixed the spacecraft with a valve trick is everyone's hero now",
            "Commander Okafor-Brandt's message after the fix: 'We're okay. We're going'",
            "The crew's 'we fixed it' high-five video has been watched 30 million times",
            "Engineers everywhere are losing it over the Halyard II fix, and here's why",
            (120.0, LOS, "The Moon is getting HUGE in the crew's window, and the photos prove it"),
            (115.0, LOS, "Just {h_flyby} until Halyard II swings around the Moon: here's how to watch"),
            "Far-side blackout: why nobody will hear from the crew for 41 minutes",
            "What will the astronauts see behind the Moon? Experts tease the view",
            (LOS, FLYBY, "Radio silence: Halyard II is behind the Moon right now"),
        ],
        "specialist_science_tech": [
            "Loop B recovered: valve cycling and a reroute via radiator panel 3 restore 295 kPa",
            "Go for flyby: flight director clears Kestrel to continue with both loops in service",
            "Root cause preview: Calder ground rig reproduces the sticking valve under cold soak",
            "Outbound correction burn OTC-3 waived; trajectory dispersion within 2 km",
            (SOI, FLYBY, "Kestrel enters the Moon's sphere of influence"),
            (SOI, LOS, "Flyby geometry: closest approach 7,950 km above the far side, {h_flyby} out"),
            "Cooling margins for the far-side pass: thermal engineers brief the numbers",
            "Far-side loss of signal: 41 minutes without comms, and what Kestrel does on its own",
        ],
        "business_finance": [
            "Calder Propulsion rebounds 5.1% after Kestrel coolant fix",
            "Brightwater recovers losses as Halyard II is cleared for flyby",
            "Harbourline Re rallies as mission-loss scenario fades",
            "Brokers upgrade Calder to 'buy' after valve fault traced",
            "Analysts: Calder fix shows the value of redundancy and could help future bids",
            "Space-sector ETF back in the green as Halyard II heads for the Moon",
            "Flyby broadcast ad rates climb 40% after Kestrel fix",
            "Budget committee keeps audit on agenda despite fix",
        ],
        "general_news": [
            "Halyard II cooling problem resolved, agency says; flyby to proceed",
            "Halyard II cleared for lunar flyby after fault fixed",
            "Halyard II crew thanks engineers after cooling fix",
            "Agency: cooling fault likely caused by a valve, not a leak",
            "World leaders welcome Halyard II fix",
            (115.0, LOS, "Halyard II nears the Moon; flyby due in about {h_flyby}"),
            "Halyard II mission day {mday}: crew rests before lunar flyby",
            (SOI, FLYBY, "Halyard II spacecraft enters Moon's gravitational sphere"),
            "Halyard II: what happens during the far-side flyby",
            (125.0, LOS, "Halyard II crew photographs the Moon's near side on final approach"),
            (128.0, LOS, "Halyard II to lose contact for 41 minutes behind the Moon"),
            (LOS, FLYBY, "Halyard II passes behind the Moon; contact lost as planned"),
        ],
    },
    "flyby": {
        "local_tv": [
            "Port Aldwick lighthouse vigil ends in cheers as signal returns",
            "Port Aldwick cheers as Kofi Ashgrove rounds the Moon",
            "Ashgrove's parents after the flyby: 'Our son has seen the far side of the Moon'",
            "Varrow Coast 7 was there as the hometown flyby vigil erupted",
            "Cape Varrow visitor center stayed open all night for the flyby",
            "Port Aldwick students get a postcard-style message from behind the Moon",
            (140.0, RETURN, "Local astronomy club projects Kestrel's far-side photos on the harbour wall"),
        ],
        "mass_market": [
            "THEY DID IT! Halyard II swings around the Moon",
            "41 minutes of silence, then this: the moment the crew came back",
            "The crew's first words after the flyby will give you goosebumps",
            "Watch parties around the country erupted at the exact same second",
            "Astronaut Priya Vantongeren cried at the Moon and we completely understand",
            "Kids who stayed up for the flyby share what they saw, and it's adorable",
            (139.5, RETURN, "These far-side photos look fake. They're not"),
            (139.5, RETURN, "The 'Earthset' photo from Halyard II is the picture of the year"),
            (140.0, RETURN, "The Moon up close: 12 jaw-dropping shots from Halyard II"),
            "Commander Okafor-Brandt wants a crater named after her mom. Wait, can she do that?",
            "Biscuit the plush toy floated past the Moon and is now an icon",
            "The farthest-from-home selfie is here and it's perfect",
        ],
        "specialist_science_tech": [
            "Signal reacquired after 41-minute far-side pass; all Kestrel systems nominal",
            "Closest approach: Kestrel passed 7,950 km above the lunar far side at 1.97 km/s",
            "Loop B holds through the flyby: coolant pressure steady at 292 kPa",
            "Post-flyby tracking: return trajectory needs only a 0.9 m/s correction",
            "Gravity does the turning: the free return bends Kestrel's path by 147 degrees",
            "Navigation check: star-tracker fixes agree with ground tracking to 150 m",
            "Far-side science: crew photographs ancient basins under low-angle sunlight",
            "Dosimeters record a modest radiation uptick behind the Moon",
            (139.5, RETURN, "Kestrel at {km} km from Earth as it climbs away from the Moon"),
            (139.5, RETURN, "Kestrel {km} km from Earth and heading home after lunar swing-by"),
        ],
        "business_finance": [
            "Brightwater shares hit record after Halyard II lunar flyby",
            "Space-sector ETF jumps 3% as Halyard II rounds the Moon",
            "Calder Propulsion erases all its anomaly losses after flyby",
            "Flyby broadcast draws record audience; network says ad revenue beat forecasts",
            "Harbourline Re: mission-phase risk 'largely behind us', heat shield remains",
            "Norrland Thermal now the stock to watch as Halyard II turns for home",
            "Merchandise makers race to print 'Earthset' shirts",
        ],
        "general_news": [
            "Halyard II crew regains contact after passing behind the Moon",
            "Halyard II flies around the Moon, heads for home",
            "Halyard II crew sees lunar far side as spacecraft passes 7,950 km above",
            "Leaders congratulate Halyard II crew on lunar flyby",
            (140.0, RETURN, "Agency releases first photos from Halyard II far-side pass"),
            (140.0, RETURN, "Halyard II begins four-day return journey to Earth"),
            "Halyard II: key moments of the lunar flyby",
            "Halyard II flyby watched by millions around the world",
        ],
    },
    "return": {
        "local_tv": [
            "Port Aldwick plans a homecoming for Kofi Ashgrove, parade route and all",
            "Local businesses keep launch decorations up until the crew comes home",
            "Port Aldwick kids design 'welcome home' banners for the Halyard II crew",
            "Halyard II mission day {mday}: Kofi Ashgrove checks in with his old scout troop",
            "Port Aldwick council votes to rename a street 'Halyard Way'",
            "Varrow Coast 7 will carry splashdown live: here's the schedule",
            (215.0, SPLASHDOWN, "Ashgrove family heads to the recovery port to meet the Halyard II crew"),
            (220.0, SPLASHDOWN, "Splashdown in {h_splash}: Port Aldwick readies harbour-front screens"),
        ],
        "mass_market": [
            "The crew is coming home and we're already emotional",
            "Biscuit the plush toy is getting its own museum display",
            "The crew just sent a video message to every kid who stayed up for the flyby",
            "Commander Okafor-Brandt's daughter is counting down the days with a paper chain",
            "What's the first thing the astronauts want to eat back on Earth? Their answers are amazing",
            "Astronauts are growing beards in space and the internet has opinions",
            "The scariest part is still ahead: why re-entry keeps experts up at night",
            (220.0, SPLASHDOWN, "Only {h_splash} to go: where to watch the Halyard II splashdown"),
        ],
        "specialist_science_tech": [
            (170.0, 195.0, "Return correction burn RTC-1 complete: 0.9 m/s puts Kestrel on track for Corran Basin"),
            "Loop B post-mortem: the thermal margins the flyby actually used",
            "Kestrel {km} km from Earth on mission day {mday}, speeding up as it falls home",
            "Heat shield primer: the NT-7 ablator must shed the heat of an 11.0 km/s entry",
            "Skip entry profile: why Kestrel will dip into the atmosphere twice",
            (215.0, SPLASHDOWN, "Service module separation to splashdown: the last 40 minutes of Halyard II"),
            (222.0, SPLASHDOWN, "RTC-2 trims entry flight-path angle to -5.86 degrees"),
        ],
        "business_finance": [
            "Economists: Halyard II spending supported 41,000 jobs, agency-commissioned study says",
            "Halyard II merchandise sales pass $90 million",
            "Recovery operations contract: what the Corran Basin effort costs",
            "Space-sector ETF consolidates near record as crew heads home",
            "Calder Propulsion announces root-cause review of Kestrel valve; shares steady",
            "Harbourline Re: re-entry is the last major exposure under Halyard II cover",
            "Aldmark Heavy Industries raises full-year guidance on Tern Heavy orders",
            "Norrland Thermal shares climb ahead of heat shield's big test",
            "Budget committee schedules Halyard II cost hearing for next month",
            "Tourism board: Cape Varrow visits up 60% on mission publicity",
            "Brightwater Dynamics in early talks for Halyard III capsules, sources say",
            "Analysts model best and worst cases for contractors as splashdown nears",
            "Vantage Avionics sets IPO date for the week after splashdown",
            "Investors price heat-shield risk: Norrland options imply a 9% move on splashdown day",
            (220.0, SPLASHDOWN, "Splashdown trade: contractor stocks volatile in final hours before re-entry"),
        ],
        "general_news": [
            (RETURN, 175.0, "Halyard II crew begins journey home after lunar flyby"),
            "Halyard II crew holds news conference on way home",
            (170.0, 195.0, "Halyard II performs return course correction"),
            "Halyard II now {km} km from Earth, agency says",
            "Calder says review of Halyard II valve fault under way",
            "Halyard II crew talks with students in six countries",
            "Halyard II heat shield to face its first crewed test",
            (195.0, SPLASHDOWN, "Halyard II recovery ship OSV Tidewarden moves into Corran Basin"),
            (200.0, SPLASHDOWN, "Weather looks favourable for Halyard II splashdown, forecasters say"),
            (200.0, SPLASHDOWN, "Agency releases timeline for Halyard II re-entry and splashdown"),
            (205.0, SPLASHDOWN, "Halyard II mission day {mday}: crew tests spacesuits for re-entry"),
            (215.0, SPLASHDOWN, "Halyard II crew stows equipment ahead of re-entry"),
            (220.0, SPLASHDOWN, "Halyard II on final approach to Earth; splashdown in about {h_splash}"),
        ],
    },
    "splashdown": {
        "local_tv": [
            "SPLASHDOWN! Port Aldwick erupts as Kofi Ashgrove returns to Earth",
            "Ashgrove family watch party turns to tears of joy at splashdown",
            "Varrow Coast 7 live: the moment Halyard II's parachutes opened",
            "'He's home': Kofi Ashgrove's mother after splashdown",
            "Port Aldwick harbour horns sound for the Halyard II crew",
            (237.5, 243.0, "Kofi Ashgrove climbs out of Kestrel smiling, gives Port Aldwick a wave"),
            "Port Aldwick Elementary students cheer splashdown in the school gym",
            (237.0, HOMECOMING, "Varrow Coast 7 follows the Ashgrove family to the recovery port"),
            "Hometown astronaut safe: Port Aldwick celebrates long after splashdown",
            "Varrow Coast 7 viewers send 12,000 welcome-home messages",
            (SPLASHDOWN, HOMECOMING, "Mayor: 'Halyard Day' parade set as Kofi Ashgrove heads home"),
            (SPLASHDOWN, HOMECOMING, "Port Aldwick parade route announced for Halyard II homecoming"),
            "Port Aldwick's Halyard II mural gets a final brushstroke: the splashdown date",
            (240.0, HOMECOMING, "Road closures on Harbour Street ahead of Halyard II homecoming parade"),
            (240.0, HOMECOMING, "Local florists sell out as town prepares homecoming"),
            (240.0, HOMECOMING, "Port Aldwick high school band rehearses for the homecoming parade"),
            (HOMECOMING, T_END, "Thousands line Harbour Street as Kofi Ashgrove comes home"),
            (HOMECOMING, T_END, "Kofi Ashgrove to Port Aldwick crowd: 'I took this town with me around the Moon'"),
            (HOMECOMING, T_END, "Watch: the homecoming parade for Halyard II astronaut, in full"),
            (HOMECOMING, T_END, "Ashgrove greets his old teacher at homecoming"),
            (HOMECOMING, T_END, "Halyard Way street sign unveiled at homecoming"),
            (253.0, T_END, "Homecoming photos: Port Aldwick's day with its astronaut"),
            (253.0, T_END, "Varrow County deputies: homecoming crowd calm, no arrests"),
            (HOMECOMING, T_END, "Millbrook Falls, Harlow Bay and Eastfield plan their own welcomes after Port Aldwick parade"),
            (254.0, T_END, "Kofi Ashgrove stops at Cape Varrow to thank the launch crews"),
            (255.0, T_END, "Parade cleanup: crews clear confetti from Harbour Street"),
        ],
        "mass_market": [
            "HOME! Halyard II splashes down and the crew is safe",
            "The parachutes opened and millions exhaled at once",
            "The splashdown video that made the whole country cry",
            "First words after splashdown: 'Can someone open the hatch? It smells like burnt toast'",
            (237.5, 244.0, "Astronauts wobble on the ship's deck and it's the cutest thing you'll see today"),
            "Halyard II splashdown: 15 photos of the most emotional moments",
            (238.0, T_END, "Did the heat shield work? The scorched capsule photos say yes"),
            (238.0, T_END, "The crew's first selfie back on Earth has arrived"),
            "Biscuit the plush toy made it home too, and fans are thrilled",
            "Priya Vantongeren's 80s playlist ends with the perfect song at splashdown",
            (238.0, T_END, "The first meal after the Moon: pizza, obviously"),
            "Internet names Halyard II crew 'best team of the year'",
            "Celebrities welcome Halyard II crew home: 'Legends'",
            "What happens to astronauts' bodies after eight days in space? It's weird",
            (240.0, T_END, "Tomas Reyne says he's ready to go back. His wife has thoughts"),
            (246.0, T_END, "Commander Okafor-Brandt hugs her daughter for the first time in more than a week"),
            (246.0, T_END, "Astronaut families share their first photos together after splashdown"),
            (HOMECOMING, T_END, "Kofi Ashgrove's hometown parade looks like a movie"),
        ],
        "specialist_science_tech": [
            "Kestrel splashes down in Corran Basin 1.6 km from its target point",
            "Entry data: skip entry peaked at 3.9 g before parachute deploy",
            (238.0, T_END, "Heat shield first look: NT-7 ablator char depth within predictions"),
            (240.0, T_END, "Calder to receive loop B valve for teardown after recovery"),
            (240.0, T_END, "Halyard II by the numbers: 196 hours, two loops, one very busy valve"),
        ],
        "business_finance": [
            "Norrland Thermal surges 8% after heat shield brings Halyard II crew home",
            "Contractor stocks rally on clean Halyard II splashdown",
            "Harbourline Re closes Halyard II cover without a claim",
            "Analysts: Halyard II success adds $7 billion to aerospace market value",
            "Brightwater Dynamics: Halyard III contract talks to 'accelerate' after splashdown",
            "Budget hearing on Halyard II costs to go ahead despite success",
            (240.0, T_END, "Vantage Avionics lifts IPO price range after splashdown"),
            (250.0, T_END, "Space-sector ETF ends mission window up 11%"),
        ],
        "general_news": [
            "Halyard II astronauts splash down safely after lunar flyby",
            (237.5, T_END, "Halyard II crew recovered by OSV Tidewarden"),
            (237.5, T_END, "Agency declares Halyard II mission a success"),
            (238.0, T_END, "Halyard II crew in good health after splashdown, doctors say"),
            "Leaders congratulate Halyard II crew on safe return",
            "Halyard II: timeline of the eight-day mission",
            "Agency to begin review of Halyard II cooling fault after return",
            (240.0, T_END, "Halyard II capsule to be shipped back to Cape Varrow for inspection"),
            (240.0, T_END, "Halyard II crew to hold post-flight news conference"),
            (246.0, HOMECOMING, "Halyard II crew arrives at port, greeted by families"),
            (HOMECOMING, T_END, "Port Aldwick holds parade for Halyard II astronaut Kofi Ashgrove"),
        ],
    },
}

# --------------------------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------------------------


def phase_of(t: float) -> str:
    """The mission phase at hour ``t``."""
    name = PHASES[0]
    for p in PHASES:
        if t >= PHASE_STARTS[p]:
            name = p
    return name


def phase_end(phase: str) -> float:
    k = PHASES.index(phase)
    return PHASE_STARTS[PHASES[k + 1]] if k + 1 < len(PHASES) else T_END


def distance_km(t: float) -> float:
    """A smooth stand-in for Kestrel's distance from Earth (km): 0 at translunar injection, MAX_KM at closest
    approach to the Moon, 0 again at splashdown."""
    if t <= TLI:
        return 0.0
    if t <= CLOSEST:
        return MAX_KM * math.sin(0.5 * math.pi * (t - TLI) / (CLOSEST - TLI))
    if t <= SPLASHDOWN:
        return MAX_KM * math.sin(0.5 * math.pi * (SPLASHDOWN - t) / (SPLASHDOWN - CLOSEST))
    return 0.0


def _hours_left(x: float) -> str:
    n = max(1, int(round(x)))
    return "1 hour" if n == 1 else f"{n} hours"


def _slots(t: float) -> dict[str, str]:
    return {
        "mday": str(int((t - LAUNCH) // 24) + 1) if t >= LAUNCH else "0",
        "h_flyby": _hours_left(CLOSEST - t),
        "h_splash": _hours_left(SPLASHDOWN - t),
        "km": f"{round(distance_km(t), -2):,.0f}",
    }


def _intensities(t: float, last_t: float, state: list[float]) -> list[float]:
    p = phase_of(t)
    decay = math.exp(-BETA * (t - last_t))
    out = []
    for i in range(len(NODES)):
        v = MU[p][i]
        for start, tau, amp in BURSTS:
            if t >= start:
                v += amp[i] * math.exp(-(t - start) / tau)
        v += sum(ALPHA[j][i] * state[j] * decay for j in range(len(NODES)))
        out.append(MODULATION[p][i] * v)
    return out


def simulate_times(seed: int = SEED) -> list[tuple[float, int]]:
    """(hour, node id) events on [0, T_END] from the phase-modulated Hawkes process, by Ogata thinning.

    Between breakpoints (phase starts, burst starts) every term of the intensity only decays, so the total
    intensity at the current time bounds it until the next breakpoint; a proposal past a breakpoint restarts
    the step there.
    """
    rng = random.Random(seed)
    breakpoints = sorted({*PHASE_STARTS.values(), *(b[0] for b in BURSTS), T_END})
    t, last_t = 0.0, 0.0
    state = [0.0] * len(NODES)  # Σ exp(-β (last_t - τ)) over each node's past events
    events: list[tuple[float, int]] = []
    while t < T_END:
        nxt = min(b for b in breakpoints if b > t)
        bound = sum(_intensities(t, last_t, state))
        w = t - math.log(1.0 - rng.random()) / bound
        if w >= nxt:
            t = nxt
            continue
        lam = _intensities(w, last_t, state)
        u = rng.random() * bound
        if u <= sum(lam):
            k = 0
            while k < len(NODES) - 1 and u > lam[k]:
                u -= lam[k]
                k += 1
            decay = math.exp(-BETA * (w - last_t))
            state = [s * decay for s in state]
            state[k] += 1.0
            last_t = w
            events.append((w, k))
        t = w
    return events


def build_records(seed: int = SEED) -> list[dict]:
    """The cascade as JSON-ready records in time order (see the module docstring for how)."""
    raw = simulate_times(seed)
    # whole seconds, strictly increasing over the whole cascade (so no ties at any node)
    timed: list[tuple[int, int]] = []
    for h, k in raw:
        sec = int(round(h * 3600))
        if timed and sec <= timed[-1][0]:
            sec = timed[-1][0] + 1
        timed.append((sec, k))
    rng = random.Random(seed + 1)
    pools: dict[tuple[str, str], list[tuple[float, float, float, str]]] = {}
    for phase in PHASES:
        for node in NODES:
            entries = []
            for pos, e in enumerate(CONTENT[phase][node]):
                lo, hi, text = e if isinstance(e, tuple) else (PHASE_STARTS[phase], phase_end(phase), e)
                entries.append((pos + JITTER * rng.random(), lo, hi, text))
            pools[(phase, node)] = sorted(entries)
    used: set[str] = set()
    records = []
    for n, (sec, k) in enumerate(timed, start=1):
        t = sec / 3600.0
        phase, node = phase_of(t), NODES[k]
        pool = pools[(phase, node)]
        pos = next((i for i, (_, lo, hi, _) in enumerate(pool) if lo <= t < hi), None)
        if pos is None:
            raise RuntimeError(f"no headline left for {node} in phase {phase} at hour {t:.2f}; add to CONTENT")
        _, _, _, template = pool.pop(pos)
        headline = template.format(**_slots(t))
        if headline in used:
            raise RuntimeError(f"headline used twice: {headline!r}")
        used.add(headline)
        records.append({
            "id": f"halyard-{n:03d}",
            "time_h": round(t, 6),
            "timestamp": (START + timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "node": node,
            "source": SOURCES[node],
            "headline": headline,
            "phase": phase,
        })
    return records


def render_jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


# --------------------------------------------------------------------------------------------------------------
# Data card
# --------------------------------------------------------------------------------------------------------------


def _is_number(cell) -> bool:
    try:
        float(str(cell).replace("–", "").replace(",", "") or "x")
    except ValueError:
        return False
    return True


def _table(header: list[str], rows: list[list]) -> str:
    """A Markdown table; columns whose cells are all numbers are right-aligned."""
    numeric = [i > 0 and all(_is_number(row[i]) for row in rows if str(row[i])) for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_card(records: list[dict], jsonl: bytes) -> bytes:
    n = len(records)
    by = Counter((r["phase"], r["node"]) for r in records)
    node_tot = Counter(r["node"] for r in records)
    train, test = records[:N_TRAIN], records[N_TRAIN:]
    tr, te = Counter(r["node"] for r in train), Counter(r["node"] for r in test)
    phase_rows = []
    for p in PHASES:
        cnt = [by[(p, node)] for node in NODES]
        phase_rows.append([f"`{p}`", f"{PHASE_STARTS[p]:g}–{phase_end(p):g}", *cnt, sum(cnt)])
    phase_rows.append(["**all**", f"0–{T_END:g}", *[node_tot[x] for x in NODES], n])
    split_rows = [[f"`{x}`", SOURCES[x], node_tot[x], tr[x], te[x]] for x in NODES]
    split_rows.append(["**all**", "", n, len(train), len(test)])
    test_phases = Counter(r["phase"] for r in test)
    mu_rows = [[f"`{p}`", *[f"{v:g}" for v in MU[p]], *[f"{v:g}" for v in MODULATION[p]]] for p in PHASES]
    alpha_rows = [[f"`{NODES[j]}`", *[f"{v:g}" for v in ALPHA[j]]] for j in range(len(NODES))]
    burst_rows = [[f"{s:g}", phase_of(s), f"{tau:g}", *[f"{v:g}" for v in amp]] for s, tau, amp in BURSTS]
    short = ["local", "mass", "spec", "bus", "gen"]
    sha = hashlib.sha256(jsonl).hexdigest()
    first, last = records[0], records[-1]
    text = f"""# Data card: `news_cascade.jsonl` — the Halyard II news cascade (fictional)

**What it is.** {n} English headlines about *Halyard II*, an invented crewed lunar-flyby mission, each stamped
with a time and one of five media-category nodes, over an 11-day window. It is the package's stand-in for the
GDELT news cascade of the HawkesLLM case study (5 outlet-category nodes, about 248 headline-level events over
about 263 h, a chronological 198 / 50 split, a specialist node that is sparse in the held-out window).
Load it with `uncertainty_lab.datasets.news.load_news_cascade()`.

**Everything in it is fiction, written for this package.** The mission, the Orison Space Agency, the crew
(Commander Dalia Okafor-Brandt, pilot Tomas Reyne, mission specialists Priya Vantongeren and Kofi Ashgrove), the
Kestrel spacecraft, the Tern Heavy rocket, Cape Varrow and the town of Port Aldwick, the contractors (Brightwater
Dynamics, Calder Propulsion, Norrland Thermal, Aldmark Heavy Industries, Vantage Avionics, Harbourline Re), the
outlets and every headline are invented; no text comes from real news coverage. Any resemblance to real people,
companies or outlets is accidental. Numbers in headlines (delta-v, distances, share moves) are plausible, not
real.

## Files and schema

- `news_cascade.jsonl` — one JSON object per line, in time order (SHA-256 `{sha}`):
  `id` (`halyard-001` …), `time_h` (hours since the window start, strictly increasing, whole seconds),
  `timestamp` (ISO-8601 UTC; hour 0 = {START.strftime("%Y-%m-%dT%H:%M:%SZ")}, a fictional date),
  `node` (one of the five categories), `source` (the invented outlet of that node), `headline`, `phase`
  (mission phase, below).
- `news_cascade.md` — this card. Both files are written by `uncertainty_lab/datasets/build_news_cascade.py`
  (`python -m uncertainty_lab.datasets.build_news_cascade`; `--check` verifies the shipped bytes). A test
  regenerates them and compares bytes.

Window: [0, {T_END:g}] h; first event at {first["time_h"]:.3f} h ({first["timestamp"]}), last at
{last["time_h"]:.3f} h ({last["timestamp"]}). Pass `end_time={T_END:g}` for the whole window.

## Nodes and their voices

| node | outlet | voice |
|---|---|---|
| `local_tv` | {SOURCES["local_tv"]} | hometown angle: Port Aldwick's own astronaut, crew families, launch crowds, causeway traffic, the parade |
| `mass_market` | {SOURCES["mass_market"]} | emotional and clicky: viral moments, families, "you need to see this" |
| `specialist_science_tech` | {SOURCES["specialist_science_tech"]} | technical: trajectories, delta-v, coolant loops, heat shield, telemetry numbers |
| `business_finance` | {SOURCES["business_finance"]} | contractors' share moves, insurance cover, budget hearings, tourism money |
| `general_news` | {SOURCES["general_news"]} | neutral wire style: who, what, when, what the agency says |

## Story and phases

Launch at {LAUNCH:g} h, translunar injection at {TLI:g} h. At {ANOMALY:g} h (mission day 3) the service module's
secondary coolant loop (loop B) loses pressure; the crew runs on loop A while engineers suspect a stuck valve. At
{FIX:g} h valve cycling restores loop B and the flight is cleared for the flyby. Kestrel passes behind the Moon at
{LOS:g} h, makes its closest approach (7,950 km above the far side) at {CLOSEST:g} h and is heard again at
{FLYBY:g} h, when the flyby phase and its news burst begin. Splashdown in the Corran Basin at {SPLASHDOWN:g} h
(mission day 9, about 196 h after launch); the hometown parade in Port Aldwick from {HOMECOMING:g} h. A phase
starts at the event that names it, and headlines are only drawn where they are true, so there is no flyby
headline before the flyby and no splashdown headline before splashdown.

Events per phase and node:

{_table(["phase", "hours", *short, "all"], phase_rows)}

## Recommended split

Chronological, as in the paper: the first {N_TRAIN} events train the Hawkes model, the last {len(test)} are
held-out references (`chronological_split(events)`; fit on the training events only). The training window ends at
{train[-1]["time_h"]:.3f} h; the test window runs from {test[0]["time_h"]:.3f} h to {test[-1]["time_h"]:.3f} h
and covers the phases {", ".join(f"`{p}` ({c})" for p, c in sorted(test_phases.items(), key=lambda kv: PHASES.index(kv[0])))}.
`specialist_science_tech` has {te["specialist_science_tech"]} of the {len(test)} test events — sparse, as the
paper reports for its test segment.

{_table(["node", "outlet", "all", "train", "test"], split_rows)}

## How it was generated

1. **Times and nodes**: a five-node Hawkes process with exponential kernel φ_(j,i)(u) = α_(j,i) e^(−βu),
   β = {BETA:g} per hour, simulated by Ogata thinning with `random.Random({SEED})` on [0, {T_END:g}] h. The
   background rate of node i is μ_i(phase) plus news bursts that jump at the story's key moments and decay
   exponentially; a per-phase factor multiplies node i's whole intensity. The true excitation `α[source, target]`
   (the package's convention):

{_table(["source → target", *short], alpha_rows)}

   Background rates (events per hour) and per-phase factors:

{_table(["phase", *[f"μ {s}" for s in short], *[f"× {s}" for s in short]], mu_rows)}

   Bursts (added rate at the start, decaying with the given time constant):

{_table(["start h", "phase", "decay h", *short], burst_rows)}

   Times are rounded to whole seconds and kept strictly increasing over the whole cascade, so no node (and no
   pair of nodes) has ties. The seed was chosen, among seeds giving exactly 248 events, for a launch-led
   burst profile, a training window that ends during the return leg, and a sparse specialist node in the test
   window.
2. **Headlines**: hand-written pools per (phase, node), {sum(len(v) for ph in CONTENT.values() for v in ph.values())}
   headlines in all, some valid only in part of a phase (e.g. after translunar injection, while Kestrel is behind
   the Moon, after the parade starts) and some with slots filled from the event time (mission day, hours to
   closest approach or to splashdown, distance from Earth on a smooth outbound/return profile). Each event takes the
   unused headline that is valid at its time, in the written (narrative) order of its pool with each headline
   displaced by up to {JITTER:g} places at random (seed {SEED + 1}), so headlines are unique, consistent with
   their time, and follow the story within a phase.

## Intended use

- The HawkesLLM lab: fit a Hawkes model to the training events, simulate a cascade whose texts an LLM writes from
  Hawkes-weighted memory, and score generated headlines against the held-out headlines of the same node within
  ±12 h (±24 h when empty).
- Teaching what a news cascade looks like as a point process: bursts, cross-category excitation, a node that
  goes quiet, and what a constant-background Hawkes fit makes of time-varying news interest.

## Limits

- **Synthetic.** The times come from a known model, not from newsrooms; the text is ours, short and in a small
  number of hand-written styles. Results on it say nothing about real media.
- The generating process has a phase-dependent background, which a constant-μ Hawkes fit cannot represent: a
  fitted α absorbs part of the bursts, so do not expect it to recover the α above.
- {n} events is small: standard errors on a 5×5 excitation matrix are wide, and results can depend on the split.
- Headlines in one pool share vocabulary, which makes same-node alignment easier than on real news.
- English only, one story, one window. For real data, bring GDELT files and use `load_gdelt` (see
  `uncertainty_lab/datasets/gdelt.py`).
"""
    return text.encode("utf-8")


def write_news_cascade(out_dir: str | Path = DEFAULT_OUT_DIR, seed: int = SEED) -> tuple[Path, Path]:
    """Write ``news_cascade.jsonl`` and ``news_cascade.md`` into ``out_dir``; returns both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    records = build_records(seed)
    jsonl = render_jsonl(records)
    card = render_card(records, jsonl)
    (out_dir / JSONL_NAME).write_bytes(jsonl)
    (out_dir / CARD_NAME).write_bytes(card)
    return out_dir / JSONL_NAME, out_dir / CARD_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR, help="where to write (default: the shipped data)")
    parser.add_argument("--check", action="store_true", help="only compare with the files in --out-dir; exit 1 if stale")
    args = parser.parse_args(argv)
    records = build_records()
    jsonl = render_jsonl(records)
    card = render_card(records, jsonl)
    if args.check:
        stale = [name for name, data in ((JSONL_NAME, jsonl), (CARD_NAME, card))
                 if not (args.out_dir / name).exists() or (args.out_dir / name).read_bytes() != data]
        print("up to date" if not stale else f"STALE: {', '.join(stale)} - rerun without --check")
        return 1 if stale else 0
    jp, cp = write_news_cascade(args.out_dir)
    counts = Counter(r["node"] for r in records)
    print(f"wrote {jp} and {cp} ({len(records)} events: " + ", ".join(f"{k} {counts[k]}" for k in NODES) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
