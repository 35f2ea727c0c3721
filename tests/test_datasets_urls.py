"""Headlines read from URLs: never an id, a UUID, a code or a listing page's name, and the numbers between words
kept (issue 21, item 5: "Article 5c5d 8bb9 11e9", "R rtr102319", "Index id news sc africa byo", tag pages,
"sell for million")."""

import pytest

from uncertainty_lab.datasets.gdelt import GKG_COLUMNS, load_gdelt
from uncertainty_lab.datasets.urls import is_listing_url, title_from_url

NO_TITLE = [
    # a BLOX-style article id: "article_" + a UUID (gave "Article 5c5d 8bb9 11e9")
    "https://www.example-herald.com/news/local/article_a1b2c3d4-5c5d-11e9-8bb9-0242ac130002.html",
    "https://www.example-herald.com/article_5c5d8bb9-11e9-4a2b-8bb9-0242ac130002.html",
    "https://www.example-herald.com/news/5c5d-8bb9-11e9",
    "https://www.example-herald.com/5c5d/8bb9/11e9/",
    # a wire code (gave "R rtr102319")
    "https://www.reuters.com/article/r-rtr102319",
    "https://www.reuters.com/article/idUSKBN1X02AB/r-rtr102319",
    # an index page (gave "Index id news sc africa byo")
    "https://www.chronicle.example.zw/index-id-news-sc-africa-byo-143547.html",
    # tag, category and topic pages: lists of articles, not one
    "https://www.example.com/tag/artemis-ii/",
    "https://www.example.com/tags/lunar-flyby-mission",
    "https://www.example.com/category/world-news/",
    "https://www.example.com/topics/climate-change",
    "https://www.example.com/section/science/moon-landing-coverage",
    "https://www.example.com/author/jane-doe-reporter",
    # ids and nothing else
    "https://www.example.com/2031/09/02/1234567.html",
    "https://www.example.com/science/archive/2031/09/675000/",
    "https://www.example.com/s/abcdefab12",
    "https://www.example.com/news/a1b2c3d4e5f6a7b8",
]

TITLED = [
    ("https://www.example.com/2031/09/02/mansion-and-estate-sell-for-5-million-4412345.html",
     "Mansion and estate sell for 5 million"),
    ("https://www.example.com/business/top-10-stocks-to-watch", "Top 10 stocks to watch"),
    ("https://www.example.com/apollo-11-anniversary-events-planned", "Apollo 11 anniversary events planned"),
    ("https://www.example.com/world/covid19-cases-rise-in-g7-nations", "Covid19 cases rise in g7 nations"),
    ("https://www.example.com/2031-09-02-crew-returns-home", "Crew returns home"),  # a leading date is no word
    ("https://www.example.com/markets/stock-index-rises-2-percent", "Stock index rises 2 percent"),
    ("https://www.example.com/tech/5g-towers-reach-rural-towns", "5g towers reach rural towns"),
    ("https://www.example.com/science/archive/2031/09/crew-lifts-off-toward-moon/675000/",
     "Crew lifts off toward moon"),  # an archive path is an article's, not a listing
    # the slug before an article id segment still gives the headline
    ("https://www.example-herald.com/news/crew-lands-safely-off-coast/article_a1b2c3d4-5c5d-11e9-8bb9-0242ac130002.html",
     "Crew lands safely off coast"),
]


@pytest.mark.parametrize("url", NO_TITLE)
def test_a_url_without_a_slug_of_words_gives_no_title(url):
    assert title_from_url(url) == ""


@pytest.mark.parametrize(("url", "title"), TITLED)
def test_a_slug_of_words_keeps_its_numbers(url, title):
    assert title_from_url(url) == title
    assert not is_listing_url(url)


def test_listing_pages_are_recognised_and_articles_are_not():
    assert all(is_listing_url(u) for u in NO_TITLE[7:13])
    assert not is_listing_url("https://www.example.com/news/2031/09/02/crew-lifts-off")


def test_the_loader_gives_a_listing_page_no_headline_even_with_a_page_title(tmp_path):
    """A GKG row of a tag page keeps its time (an event) but no headline; an id URL without a page title neither."""
    def row(n: int, url: str, title: str) -> str:
        fields = [""] * len(GKG_COLUMNS)
        fields[0], fields[1], fields[3], fields[4] = f"2031090216300{n}-{n}", "20310902163000", "wire.example", url
        fields[26] = f"<PAGE_TITLE>{title}</PAGE_TITLE>" if title else ""
        return "\t".join(fields)

    path = tmp_path / "x.gkg.csv"
    path.write_text("\n".join([
        row(0, "https://wire.example/tag/artemis-ii/", "Artemis II Archives - Wire"),
        row(1, "https://wire.example/article_a1b2c3d4-5c5d-11e9-8bb9-0242ac130002.html", ""),
        row(2, "https://wire.example/2031/09/02/homes-sell-for-5-million", ""),
    ]) + "\n", encoding="utf-8")
    out = load_gdelt(path, {"wire.example": "general_news"}, warn=False)
    heads = {e.url.rsplit("/", 2)[-2] if e.url.endswith("/") else e.url.rsplit("/", 1)[-1]: e.headline for e in out}
    assert heads == {"artemis-ii": "", "article_a1b2c3d4-5c5d-11e9-8bb9-0242ac130002.html": "",
                     "homes-sell-for-5-million": "Homes sell for 5 million"}
    assert out.report.n_listing == 1 and out.report.n_untitled == 2
    assert "tag / category / topic / index pages, no headline: 1 rows" in out.report.summary()
