"""The build's projections: graph sizes from each document's own text, a step's cost from its graphs' nodes, the
teacher's time from the words it reads."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.build.plan import (
    TEACHER_LOAD_S,
    choose_teacher,
    document_graph_nodes,
    graph_nodes,
    index_seconds,
    step_factor,
    teacher_seconds,
)
from graphtx.build.run import corpus_counts
from graphtx.config import GraphtxConfig
from graphtx.graphs.config import ParseConfig

SMALL_CAP = 192.0  # configs/small.yaml: 96 feature + 96 relation nodes a graph

pytestmark = pytest.mark.timeout(60)


def _corpus(tmp_path, rows):
    claim = pa.struct(
        [("num", pa.int32()), ("text", pa.string()), ("independent", pa.bool_()), ("depends_on", pa.list_(pa.int32()))]
    )
    schema = pa.schema(
        [
            ("title", pa.string()),
            ("abstract", pa.string()),
            ("claims", pa.list_(claim)),
            ("first_claim_index", pa.int32()),
            ("description", pa.string()),
        ]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "documents.parquet")
    return tmp_path


def _claims(*texts):
    return [{"num": i + 1, "text": t, "independent": i == 0, "depends_on": []} for i, t in enumerate(texts)]


def test_an_ev_abstract_step_is_the_reference_and_a_full_text_step_costs_about_three():
    ev = graph_nodes(120, "abstract", SMALL_CAP)
    assert ev == pytest.approx(35, abs=1)
    assert step_factor(ev, ev) == pytest.approx(1.0, abs=0.03)
    full_text = step_factor(35, 161)  # the 42,356 full texts ran at 2.95-3.05 s a step against EV's 1.0
    assert 2.7 < full_text < 3.3
    # the software abstracts' graphs (22 + 22 nodes) ran at 0.74-0.75 s a step, not the 0.59 s of the line above EV
    assert step_factor(22, 22) == pytest.approx(0.745, abs=0.01)
    assert 0.3 <= step_factor(0, 0) < 0.35  # tiny graphs: a step's fixed cost remains
    # a corpus smaller than a batch (32 anchors + 3 neighbours each): every step encodes all of it, no more
    assert step_factor(22, 158, batch_documents=50) < 0.4 * step_factor(22, 158)
    assert 170 < graph_nodes(1_000_000, "description", SMALL_CAP) < 180  # full texts level off at 175-179
    assert graph_nodes(1_000_000, "description", 512.0) > 2 * graph_nodes(1_000_000, "description", SMALL_CAP)


def test_graph_sizes_are_a_mean_over_documents_not_of_the_mean_words(tmp_path):
    """Nine design-patent-like grants (a one-line claim, a short description) and one of 60,000 words: the mean words
    (over 1,000 a document, the description cut as the parse cuts it) would project full-text graphs for all ten; the per-document estimate does not."""
    short = {
        "title": "Chair",
        "abstract": None,
        "claims": _claims("The ornamental design for a chair, as shown."),
        "first_claim_index": 0,
        "description": "FIG. 1 is a front view of the chair. " * 3,
    }
    long = {
        "title": "Battery",
        "abstract": "A battery pack. " * 30,
        "claims": _claims("A battery comprising a cell. " * 20),
        "first_claim_index": 0,
        "description": "The cell is cooled by a plate. " * 9000,
    }
    size = corpus_counts(_corpus(tmp_path, [short] * 9 + [long]), GraphtxConfig())
    assert size.documents == 10 and size.words > 10_000  # the description cut as the parse cuts it
    assert size.nodes["first_claim"] < 5  # 8-word claims: a few nodes each, one 100-word claim
    assert size.nodes["description"] < 30  # nine of about 5 nodes, one capped at 180
    assert size.teacher_words["mpnet"] == pytest.approx((9 * 8 + 91) / 10)  # title + abstract; an 8-word floor


def test_without_claims_the_query_graphs_are_the_abstracts(tmp_path):
    row = {"title": "T", "abstract": "word " * 120, "claims": [], "first_claim_index": None, "description": None}
    size = corpus_counts(_corpus(tmp_path, [row]), GraphtxConfig())
    cap = float(ParseConfig().max_feature_nodes + ParseConfig().max_relation_nodes)
    assert size.nodes["first_claim"] == pytest.approx(graph_nodes(120, "abstract", cap))
    assert size.nodes["description"] == pytest.approx(
        graph_nodes(120, "abstract", cap)
    )  # no description: the abstract's


def test_the_teachers_time_scales_with_the_words_it_reads():
    reference = teacher_seconds(1000, "mpnet", gpu=False) - TEACHER_LOAD_S
    assert teacher_seconds(1000, "mpnet", gpu=False, words_per_document=65) - TEACHER_LOAD_S == pytest.approx(
        reference / 2
    )
    assert teacher_seconds(1000, "minilm", gpu=False) < teacher_seconds(1000, "mpnet", gpu=False)
    assert teacher_seconds(1000, "runs/x/teacher", gpu=False) == 0.0  # a directory of vectors: nothing to encode


def test_the_index_projection_follows_the_description_graphs_size():
    full_texts = index_seconds(42_356, 161, 1.0)  # measured: 375 s at load 1-2
    assert 300 < full_texts < 450
    assert index_seconds(42_356, 80, 1.0) < 0.55 * full_texts  # half the nodes, about half the time


def _row(claims=(), first=0, abstract="", description="", title="T"):
    return {
        "title": title,
        "abstract": abstract,
        "claims": _claims(*claims),
        "first_claim_index": first,
        "description": description,
    }


def test_each_graph_kind_is_guessed_from_the_text_the_parse_feeds_it():
    cfg = ParseConfig()
    cap = float(cfg.max_feature_nodes + cfg.max_relation_nodes)
    claims_only = document_graph_nodes(_row(claims=["word " * 100, "word " * 50], abstract="word " * 120), cfg)
    assert claims_only["description"] == pytest.approx(
        graph_nodes(150, "description", cap)
    )  # the claims, not the abstract
    assert claims_only["first_claim"] == pytest.approx(graph_nodes(100, "claims", cap))
    # a first_claim_index out of range or at a blank claim: the first claim with text, as the parse takes it
    for first in (7, -1, 0):
        blank_first = ["   ", "word " * 60] if first == 0 else ["word " * 60, "word " * 10]
        got = document_graph_nodes(_row(claims=blank_first, first=first), cfg)["first_claim"]
        assert got == pytest.approx(graph_nodes(60, "claims", cap)), first
    # neither claims nor abstract: the description's first paragraph leads, then the title
    lead = document_graph_nodes(_row(description="word " * 40 + "\n" + "word " * 400), cfg)
    assert lead["first_claim"] == pytest.approx(graph_nodes(40, "abstract", cap))
    assert document_graph_nodes(_row(title="a battery pack"), cfg)["first_claim"] == pytest.approx(
        graph_nodes(3, "abstract", cap)
    )


def test_the_teacher_reads_its_fields_cut_at_its_tokens(tmp_path):
    from graphtx.build.plan import teacher_document_words

    row = _row(claims=["word " * 500], abstract="word " * 100, title="a b c")
    assert teacher_document_words(row, ("title", "abstract"), 384, 1) == 103
    assert teacher_document_words(row, ("claims",), 384, 1) == 288  # 384 tokens of about 0.75 words
    assert teacher_document_words(row, ("claims",), 384, 4) == 500  # four windows read it all


def test_short_documents_keep_mpnet_where_long_ones_get_minilm():
    from graphtx.build.plan import MPNET_CPU_HOUR_DOCUMENTS, core_scale

    large = int(MPNET_CPU_HOUR_DOCUMENTS / core_scale()) + 1  # at the reference length: over an hour of mpnet
    assert choose_teacher("mpnet", large, gpu=False, asked=False)[0] == "minilm"
    assert choose_teacher("mpnet", large, gpu=False, asked=False, words={"mpnet": 40.0, "minilm": 40.0})[0] == "mpnet"


def test_mpnet_vectors_already_in_the_peer_cache_do_not_count_towards_its_cpu_cost():
    from graphtx.build.plan import MPNET_CPU_HOUR_DOCUMENTS, core_scale

    hour = int(MPNET_CPU_HOUR_DOCUMENTS / core_scale())
    large = 10 * hour  # ten hours of mpnet at the reference length
    assert choose_teacher("mpnet", large, gpu=False, asked=False, mpnet_cached=large - hour) == ("mpnet", "")
    teacher, note = choose_teacher("mpnet", large, gpu=False, asked=False, mpnet_cached=large - hour - 10)
    assert teacher == "minilm"
    assert f"for {hour + 10:,} documents ({large - hour - 10:,} more are in the peer vector cache)" in note
    assert choose_teacher("minilm", large, gpu=False, asked=False, mpnet_cached=large)[0] == "minilm"


def test_a_teacher_in_bf16_on_the_cpu_is_projected_faster_and_an_hour_of_it_holds_more_documents():
    from graphtx.build.plan import MPNET_CPU_HOUR_DOCUMENTS, TEACHER_CPU_BF16_SHARE, core_scale
    from graphtx.hardware import TEACHER_BF16

    fp32 = teacher_seconds(1000, "mpnet", gpu=False) - TEACHER_LOAD_S
    bf16 = teacher_seconds(1000, "mpnet", gpu=False, precision=TEACHER_BF16) - TEACHER_LOAD_S
    assert bf16 == pytest.approx(fp32 * TEACHER_CPU_BF16_SHARE["mpnet"]) and bf16 < fp32
    assert teacher_seconds(1000, "minilm", gpu=False, precision=TEACHER_BF16) < teacher_seconds(
        1000, "minilm", gpu=False
    )
    assert teacher_seconds(1000, "mpnet", gpu=True, precision=TEACHER_BF16) == teacher_seconds(1000, "mpnet", gpu=True)
    over_an_hour = int(MPNET_CPU_HOUR_DOCUMENTS / core_scale()) + 1  # of fp32 mpnet
    assert choose_teacher("mpnet", over_an_hour, gpu=False, asked=False)[0] == "minilm"
    assert choose_teacher("mpnet", over_an_hour, gpu=False, asked=False, precision=TEACHER_BF16) == ("mpnet", "")
    thrice = 3 * over_an_hour  # over an hour in bf16 too: MiniLM, and the note's cost is bf16's
    teacher, note = choose_teacher("mpnet", thrice, gpu=False, asked=False, precision=TEACHER_BF16)
    assert teacher == "minilm" and "mpnet would take about" in note


def test_a_setting_added_later_leaves_the_fingerprints_of_earlier_builds_at_the_value_that_changes_nothing():
    """parse.title_text came after builds were made: off, the parse's fingerprint is the one those builds recorded
    (a build made before it stays up to date); on, it is another, and the parse and what follows run again."""
    import dataclasses

    from graphtx.build.run import UNCHANGED_AT, fingerprint, settings
    from graphtx.config import ParseConfig

    off, on = ParseConfig(), ParseConfig(title_text=True)
    assert "title_text" not in settings(off, "parse") and settings(on, "parse")["title_text"] is True
    before = {k: v for k, v in dataclasses.asdict(off).items() if k != "title_text"}  # the settings before the field
    assert settings(off, "parse") == {
        k: v for k, v in before.items() if k not in ("workers", "cache_dir", "shard_size")
    }
    assert fingerprint("parse", "x", settings(off, "parse")) != fingerprint("parse", "x", settings(on, "parse"))
    assert all(getattr(ParseConfig(), k) == v for k, v in UNCHANGED_AT["parse"].items())  # the default changes nothing


def test_the_adaptation_cap_at_its_default_leaves_the_model_fingerprint_as_before_and_changed_it_redoes_the_model():
    """train.adapt_max_passes came after builds were made: at 15 the train settings are those builds recorded."""
    from graphtx.build.run import UNCHANGED_AT, fingerprint, settings
    from graphtx.train.config import TrainConfig

    shipped, doubled = TrainConfig(), TrainConfig(adapt_max_passes=30)
    assert "adapt_max_passes" not in settings(shipped, "train") and settings(doubled, "train")["adapt_max_passes"] == 30
    assert fingerprint("model", "x", settings(shipped, "train")) != fingerprint(
        "model", "x", settings(doubled, "train")
    )
    assert all(getattr(TrainConfig(), k) == v for k, v in UNCHANGED_AT["train"].items())
