"""Patent numbers and classification codes: IPC and CPC share one normaliser and keep their outputs."""

from graphtx.corpus.codes import (
    country_of,
    id_key,
    kind_of,
    make_id,
    normalise_cpc,
    normalise_ipc,
    publication_id,
    unique_codes,
)

CODES = [
    "H01F  27/14  20060101AFI20051220RHJP",
    "h01f27/14",
    "Y02T10/70",
    "Y02T 10/70",
    "A61K 31/00",
    "G06F 0017/30",
    "B60L53/80 ",
    "  E01H 5/04",
    "H01M",
    "X01A 1/00",
    "H01M 10/0525",
    " b 60 l 3 /0046",
    "",
]


def test_ipc_and_cpc_normalise_alike_except_section_y():
    common = [
        "H01F 27/14",
        "H01F 27/14",
        None,
        None,
        "A61K 31/00",
        "G06F 17/30",
        "B60L 53/80",
        "E01H 5/04",
        None,
        None,
        "H01M 10/0525",
        "B60L 3/0046",
        None,
    ]
    assert [normalise_ipc(c) for c in CODES] == common
    assert [normalise_cpc(c) for c in CODES] == common[:2] + ["Y02T 10/70", "Y02T 10/70"] + common[4:]
    assert unique_codes(normalise_cpc(c) for c in CODES) == (
        "H01F 27/14",
        "Y02T 10/70",
        "A61K 31/00",
        "G06F 17/30",
        "B60L 53/80",
        "E01H 5/04",
        "H01M 10/0525",
        "B60L 3/0046",
    )


def test_publication_ids_and_their_parts():
    cases = [
        ("WO", "03/008444"),
        ("US", "2008 197 955", "A1"),
        ("US", "D0607542", "S1"),
        ("WO", "WO 98/51827"),
        ("ep", "1 000 000", "b1"),
        ("WO", "9106571"),
        ("US", "RE012345", "E"),
    ]
    assert [publication_id(*c) for c in cases] == [
        "WO-2003008444",
        "US-20080197955-A1",
        "US-D607542-S1",
        "WO-1998051827",
        "EP-1000000-B1",
        "WO-1991006571",
        "US-RE12345-E",
    ]
    assert [make_id("US", "07315346", "B2"), make_id("ep", " 1000000 ", "b1"), make_id("JP", "2001-123456", "A")] == [
        "US-7315346-B2",
        "EP-1000000-B1",
        "JP-2001123456-A",
    ]
    ids = ["US-7315346-B2", "EP-1000000", "2004281796", "US-D607542-S1"]
    assert [(id_key(d), country_of(d), kind_of(d)) for d in ids] == [
        ("US-7315346", "US", "B2"),
        ("EP-1000000", "EP", ""),
        ("2004281796", "", ""),
        ("US-D607542", "US", "S1"),
    ]
