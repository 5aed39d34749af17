"""Hit links from a template: placeholders, URL quoting, unknown placeholders refused, missing values give no link."""

from __future__ import annotations

import pytest

from graphtx.config import SearchConfig
from graphtx.links import check_template, hit_link, id_parts


def test_google_and_register_templates():
    assert (
        hit_link("https://patents.google.com/patent/{id_compact}", "US-7315346-B2")
        == "https://patents.google.com/patent/US7315346B2"
    )
    assert (
        hit_link("https://register.epo.org/application?number={country}{number}", "EP-1000000-B1")
        == "https://register.epo.org/application?number=EP1000000"
    )
    assert id_parts("US-7315346-B2") == {
        "id": "US-7315346-B2",
        "id_compact": "US7315346B2",
        "country": "US",
        "number": "7315346",
        "kind": "B2",
        "family_id": "",
    }
    assert hit_link("https://x/{id}", "US-7315346-B2") == "https://x/US-7315346-B2"


def test_empty_template_and_missing_values_give_no_link():
    assert hit_link("", "US-7315346-B2") == ""
    assert hit_link("https://x/family/{family_id}", "US-7315346-B2") == ""  # the corpus has no family id for it
    assert hit_link("https://x/family/{family_id}", "US-7315346-B2", family_id="123") == "https://x/family/123"
    assert hit_link("https://x/{number}", "2004281796") == ""  # not a CC-NUMBER-KIND id: no number
    assert hit_link("https://x/{country}/{id}", "2004281796", country="US") == "https://x/US/2004281796"


def test_values_are_url_quoted():
    assert hit_link("https://x/{id}?q=1", "../a b/c") == "https://x/..%2Fa%20b%2Fc?q=1"


def test_unknown_placeholder_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown placeholder \{ucid\}.*\{id_compact\}"):
        check_template("https://x/{ucid}")
    with pytest.raises(ValueError, match="search.link_template"):
        SearchConfig(link_template="https://x/{id:>10}")
    with pytest.raises(ValueError, match="not a link template"):
        SearchConfig(link_template="https://x/{id")
    assert SearchConfig(link_template="https://x/{{literal}}/{id}").link_template
