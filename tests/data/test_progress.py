"""Tests for `hierattn.data.progress`: bars on a terminal, whole lines in a file."""

import io
import time

from hierattn.data.progress import busy, ticking, tqdm


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_written_to_a_file_is_whole_lines_at_each_tenth_and_the_last():
    log = io.StringIO()
    with tqdm(total=100, desc="tokenizing", unit="doc", file=log, mininterval=0) as bar:
        for _ in range(100):
            bar.update(1)
    text = log.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].startswith("tokenizing:   0%") and lines[-1].startswith("tokenizing: 100%")
    assert [line.split(":")[1].split("%")[0].strip() for line in lines] == [str(10 * i) for i in range(11)]
    assert all("100/100" in line for line in lines[-1:])


def test_a_bar_without_a_total_writes_its_first_and_last_counts():
    log = io.StringIO()
    for _ in tqdm(iter(range(5)), desc="scoring", unit="doc", file=log):
        pass
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("scoring: 0doc") and lines[-1].startswith("scoring: 5doc") and len(lines) == 2


def test_a_bar_on_a_terminal_redraws_itself():
    screen = Terminal()
    with tqdm(total=10, desc="tokenizing", file=screen, mininterval=0) as bar:
        bar.update(10)
    assert "\r" in screen.getvalue()


def test_a_disabled_bar_writes_nothing():
    log = io.StringIO()
    with tqdm(total=10, file=log, disable=True) as bar:
        bar.update(10)
    assert log.getvalue() == ""


def test_a_busy_step_is_redrawn_each_second_on_a_terminal_and_a_line_at_its_ends_in_a_file(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    with busy("fitting the baseline"):
        time.sleep(2.3)
    assert screen.getvalue().count("fitting the baseline: 00:0") >= 3  # shown at 0, 1 and 2 s (and at the end)
    log = io.StringIO()
    monkeypatch.setattr("sys.stderr", log)
    with busy("fitting the baseline"):
        time.sleep(1.2)
    assert log.getvalue().splitlines() == ["fitting the baseline: 00:00", "fitting the baseline: 00:01"]


def test_a_ticking_bar_moves_between_its_updates_on_a_terminal():
    screen = Terminal()
    with ticking(tqdm(total=2, desc="word2vec", unit="epoch", file=screen)) as bar:
        time.sleep(2.3)  # one long epoch: the time still moves
        bar.update(2)
    assert screen.getvalue().count("0/2 [00:0") >= 3
