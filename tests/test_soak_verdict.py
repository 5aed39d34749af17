"""benchmarks/soak_serve.py: the soak verdict (memory, answers, latency) and its windows, as pure functions (no server)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import soak_serve  # noqa: E402  (our own script: it imports or the test fails, never skips)

pytestmark = pytest.mark.timeout(30)


def rows(rss, p95, unexpected=None) -> list[dict]:
    unexpected = unexpected or [0] * len(rss)
    return [
        {
            "window": i + 1,
            "rss_mib": r,
            "p95_ms": p,
            "unexpected": u,
            "unexpected_details": {"search:500": u} if u else {},
        }
        for i, (r, p, u) in enumerate(zip(rss, p95, unexpected))
    ]


def failed(v: dict) -> set[str]:
    return {name for name, check in v["checks"].items() if not check["pass"]}


def test_a_steady_run_passes():
    v = soak_serve.verdict(rows([400, 410, 415, 420], [90, 100, 105, 115]), warmup=1)
    assert v["pass"] and not failed(v)
    assert v["checks"]["memory"]["value"] == pytest.approx(
        0.05
    )  # a row's RSS is sampled as its window ends: 400 ends the warm-up
    assert v["checks"]["latency"]["value"] == pytest.approx(0.15)


def test_memory_growing_10_percent_after_warm_up_fails():
    assert failed(soak_serve.verdict(rows([400, 410, 420, 440], [100] * 4), warmup=1)) == {"memory"}
    assert not failed(soak_serve.verdict(rows([400, 410, 420, 439], [100] * 4), warmup=1))
    assert not failed(soak_serve.verdict(rows([400, 400, 380, 350], [100] * 4), warmup=1))  # shrinking is fine


def test_warm_up_growth_does_not_count():
    assert not failed(soak_serve.verdict(rows([100, 150, 200, 200, 205], [100] * 5), warmup=3))
    assert failed(soak_serve.verdict(rows([100, 150, 200, 200, 205], [100] * 5), warmup=1)) == {"memory"}


def test_any_unexpected_answer_fails_warm_up_included():
    v = soak_serve.verdict(rows([400] * 4, [100] * 4, unexpected=[2, 0, 0, 0]), warmup=1)
    assert failed(v) == {"answers"}
    assert v["checks"]["answers"]["value"] == 2 and "search:500 x2" in v["checks"]["answers"]["line"]


def test_p95_drift_is_measured_from_the_first_window_after_warm_up():
    assert failed(soak_serve.verdict(rows([400] * 4, [500, 100, 110, 121]), warmup=1)) == {"latency"}
    assert not failed(soak_serve.verdict(rows([400] * 4, [500, 100, 110, 120]), warmup=1))
    assert not failed(soak_serve.verdict(rows([400] * 4, [50, 200, 150, 100]), warmup=1))  # faster at the end passes


def test_missing_samples_fail_rather_than_pass():
    v = soak_serve.verdict(rows([400, 400, None], [100, 100, None]), warmup=1)  # the server was gone in the last window
    assert failed(v) == {"memory", "latency"}


def test_nothing_after_warm_up_fails_every_condition():
    for rs, warm in ((rows([400], [100]), 1), ([], 0)):
        v = soak_serve.verdict(rs, warmup=warm)
        assert not v["pass"] and failed(v) == {"memory", "answers", "latency"}


def test_windows_and_warm_up():
    assert soak_serve.window_seconds(60, None) == 60 and soak_serve.window_seconds(2, None) == 10
    assert soak_serve.window_seconds(1, 5) == 5
    assert soak_serve.warmup_rows(60, 60, 3600) == 1  # the first minute
    assert soak_serve.warmup_rows(360, 10, 3600) == 6
    assert soak_serve.warmup_rows(6, 10, 60) == 1  # 20 % of a 1-minute run: 12 s, one 10-s window
    assert soak_serve.warmup_rows(12, 10, 120) == 2
    assert (
        soak_serve.warmup_rows(2, 60, 120) == 1
        and soak_serve.warmup_rows(1, 60, 60) == 1
        and soak_serve.warmup_rows(0, 10, 60) == 0
    )


def test_outcomes_and_rows():
    assert [soak_serve.outcome(s, 200) for s in (200, 204, 503, 500, 404, None)] == [
        "ok",
        "ok",
        "busy",
        "unexpected",
        "unexpected",
        "unexpected",
    ]
    assert [soak_serve.outcome(s, 404) for s in (404, 503, 200, 400)] == ["ok", "busy", "unexpected", "unexpected"]
    results = [
        (200, 10.0, "ok", "search:200"),
        (503, 1.0, "busy", "id:503"),
        (None, 60000.0, "unexpected", "doc:ReadTimeout"),
        (404, 5.0, "ok", "bad:404"),
    ]
    row = soak_serve.make_row(2, 20.0, 10.0, results, {"rss_mib": 400.0, "threads": 12, "fds": 30})
    assert row["requests"] == 4 and row["answered"] == 2 and row["rps"] == 0.4
    assert row["share_503"] == 0.25 and row["unexpected"] == 1 and row["unexpected_details"] == {"doc:ReadTimeout": 1}
    assert row["p50_ms"] == 7.5  # answered: the 200 and the 404, neither the 503 nor the time-out
    assert (
        soak_serve.retry_after("2") == 2 and soak_serve.retry_after(None) == 1 and soak_serve.retry_after("soon") == 1
    )
