"""Golden tests: hand-checked claims with their exact nodes and typed edges."""

from __future__ import annotations

SNOWTHROWER = (
    "1. A snowthrower comprising: an auger housing; a frame for connecting a handle device and the auger "
    "housing, wherein the frame is connected to a motor; and a chute mounted on the auger housing, the chute "
    "configured to discharge snow."
)

BATTERY_MODULE = (
    "A battery module comprising: a housing having a cooling channel; a plurality of battery cells arranged in "
    "the housing; and a busbar electrically connected to the battery cells, wherein the cooling channel is "
    "filled with a coolant such as glycol or water."
)

HIGH_VOLTAGE = (
    "A high voltage assembly (2) comprising: a sealed compartment (4) containing an active component (6) at "
    "least partly surrounded by an insulation liquid (8); a free breathing conservator (10) that breathes air "
    "from ambient air; and a Buchholz relay (12) arranged above a level (L14) of a cover (14) of the sealed "
    "compartment (4)."
)


def test_snowthrower_claim(builder):
    g = builder.build_text(SNOWTHROWER)
    features = {t for t, k in zip(g.node_text, g.node_type) if k == "feature"}
    assert features == {"snowthrower", "auger housing", "frame", "handle device", "motor", "chute", "snow"}
    frame_rel = "frame for connecting handle device and auger housing"
    assert g.edge_texts() == {
        ("auger housing", "part_of", "snowthrower"),
        ("frame", "part_of", "snowthrower"),
        ("chute", "part_of", "snowthrower"),
        ("frame", "functional", frame_rel),
        (frame_rel, "functional", "handle device"),
        (frame_rel, "functional", "auger housing"),
        ("frame", "functional", "frame is connected to motor"),
        ("frame is connected to motor", "functional", "motor"),
        ("chute", "functional", "chute mounted on auger housing"),
        ("chute mounted on auger housing", "functional", "auger housing"),
        ("chute", "functional", "chute configured to discharge snow"),
        ("chute configured to discharge snow", "functional", "snow"),
    }
    assert g.isolated_features() == []


def test_battery_module_claim_with_examples(builder):
    g = builder.build_text(BATTERY_MODULE)
    assert g.edge_texts() == {
        ("housing", "part_of", "battery module"),
        ("battery cell", "part_of", "battery module"),  # "a plurality of battery cells" -> one normalised node
        ("busbar", "part_of", "battery module"),
        ("cooling channel", "part_of", "housing"),
        ("battery cell", "functional", "battery cells arranged in housing"),
        ("battery cells arranged in housing", "functional", "housing"),
        ("busbar", "functional", "busbar electrically connected to battery cells"),
        ("busbar electrically connected to battery cells", "functional", "battery cell"),
        ("cooling channel", "functional", "cooling channel is filled with coolant"),
        ("cooling channel is filled with coolant", "functional", "coolant"),
        ("glycol", "example_of", "coolant"),
        ("water", "example_of", "coolant"),
    }


def test_reference_numerals_and_said_are_normalised_away(builder):
    g = builder.build_text(HIGH_VOLTAGE)
    assert not any(ch.isdigit() for text in g.node_text for ch in text)
    parts = {s for s, t, d in g.edge_texts() if t == "part_of" and d == "high voltage assembly"}
    assert parts == {"sealed compartment", "free breathing conservator", "buchholz relay"}
    assert ("active component", "part_of", "sealed compartment") in g.edge_texts()
    relay = "buchholz relay arranged above level of cover of sealed compartment"
    assert {("buchholz relay", "functional", relay), (relay, "functional", "sealed compartment")} <= g.edge_texts()
    assert g.isolated_features() == []


def test_said_and_the_refer_to_one_node(builder):
    g = builder.build_text("A drill comprising a motor and a chuck, wherein said motor drives the chuck.")
    assert g.node_text.count("motor") == 1 and g.node_text.count("chuck") == 1


def test_dependent_claim_reference_is_removed(builder):
    g = builder.build_text("2. The snowthrower of claim 1, wherein the chute is mounted on the auger housing.")
    assert "claim" not in " ".join(g.node_text)
    assert g.edge_texts() == {
        ("chute", "functional", "chute is mounted on auger housing"),
        ("chute is mounted on auger housing", "functional", "auger housing"),
    }


def test_numbered_copies_share_a_node_and_claim_ranges_are_removed(builder):
    g = builder.build_text(
        "The method according to any one of claims 1 to 3, wherein the first pipe section (18) connects the cover (14) to the relay."
    )
    assert g.edge_texts() == {
        ("pipe section", "functional", "pipe section connects cover to relay"),
        ("pipe section connects cover to relay", "functional", "cover"),
        ("pipe section connects cover to relay", "functional", "relay"),
    }


def test_whole_of_a_preamble_is_the_claimed_thing_not_its_purpose(builder):
    g = builder.build_text(
        "An air pressure detection device for a wheel comprising: an air pressure sensor for detecting the air "
        "pressure of a tire tube; and a transmission unit."
    )
    parts = {s for s, t, d in g.edge_texts() if t == "part_of"}
    assert parts == {"air pressure sensor", "transmission unit"}
    assert {d for s, t, d in g.edge_texts() if t == "part_of"} == {"air pressure detection device"}
