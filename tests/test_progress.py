"""graphtx.progress: a bar on a terminal, one line a minute in a log file, nothing with --quiet."""

from __future__ import annotations

import io

import pytest
from tqdm import std as tqdm_std
from tqdm import tqdm

from graphtx.progress import LOG_MODE, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """tqdm's clock, moved by hand."""

    def __init__(self):
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(tqdm_std, "time", clock)  # tqdm reads its time through std.time
    monkeypatch.setattr(tqdm, "monitor_interval", 0)  # no monitor thread redrawing on the real clock
    return clock


def test_log_mode_writes_whole_lines():
    log = io.StringIO()  # not a TTY: a log file
    for _ in progress_bar(range(50), enabled=None, file=log, desc="teacher minilm", unit="doc", mininterval=0, delay=0):
        pass
    text = log.getvalue()
    assert text and "\r" not in text and "\x1b" not in text
    assert text.endswith("\n")
    lines = text.splitlines()
    assert all(line.strip() and line == line.rstrip() for line in lines)
    assert lines[-1].startswith("teacher minilm: 100%|####") and "| 50/50 [" in lines[-1]
    assert all(len(line) == LOG_MODE["ncols"] for line in lines)  # plain ASCII, one fixed width


def test_log_mode_one_line_a_minute(clock):
    log = io.StringIO()
    with progress_bar(total=300, enabled=None, file=log, desc="train", unit="step") as bar:
        for _ in range(300):  # 1 s a step: a line at 60 s, 120 s, ..., 300 s (the close redraws the last: once)
            clock.now += 1.0
            bar.update(1)
            bar.set_postfix(loss="0.5")  # redraws at once in tqdm; here it waits for the minute too
    lines = log.getvalue().splitlines()
    assert [line.split("|")[0] for line in lines] == [
        "train:  20%",
        "train:  40%",
        "train:  60%",
        "train:  80%",
        "train: 100%",
    ]
    assert all("loss=0.5" in line for line in lines)


def test_quiet_writes_nothing():
    for stream in (io.StringIO(), Terminal()):
        for _ in progress_bar(range(50), enabled=False, file=stream, mininterval=0, delay=0):
            pass
        assert stream.getvalue() == ""


def test_log_mode_job_within_the_delay_writes_nothing(clock):
    log = io.StringIO()
    with progress_bar(total=100, enabled=None, file=log, desc="parse") as bar:
        for _ in range(100):
            clock.now += 0.5  # 50 s in all: under the minute's delay
            bar.update(1)
            bar.set_postfix(skipped=0)
    assert log.getvalue() == ""


def test_terminal_and_forced_bars_are_tqdm_as_usual():
    for stream, enabled in ((Terminal(), None), (io.StringIO(), True)):
        for _ in progress_bar(range(5), enabled=enabled, file=stream, desc="index"):
            pass
        assert "\r" in stream.getvalue() and "index: 100%" in stream.getvalue()


def test_default_stream_is_stderr_now(capsys):
    for _ in progress_bar(range(5), enabled=True, desc="shards"):
        pass
    assert "shards: 100%" in capsys.readouterr().err
