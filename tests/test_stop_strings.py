"""Stop strings: held back while partially matched, cut from the output."""

from __future__ import annotations

import random

from vexel_core.engine.request import StopStrings


def run(stops: list[str], deltas: list[str]) -> tuple[str, bool]:
    s = StopStrings(stops)
    out = ""
    for d in deltas:
        text, hit = s.feed(d)
        out += text
        if hit:
            return out, True
    return out + s.flush(), False


def test_stop_split_across_deltas_is_removed() -> None:
    assert run(["###"], ["ab#", "#", "#cd"]) == ("ab", True)


def test_partial_match_is_held_back_then_released() -> None:
    s = StopStrings(["STOP"])
    assert s.feed("xxST") == ("xx", False)
    assert s.feed("x") == ("STx", False)


def test_earliest_of_several_stops_wins() -> None:
    assert run(["cd", "b"], ["abcd"]) == ("a", True)


def test_random_streams_cut_exactly_before_a_stop() -> None:
    """Whatever the chunking: the output is a prefix of the text with no stop string in it;
    when stopped, a stop string follows it in the text; otherwise the text had none."""
    rng = random.Random(1)
    for _ in range(2000):
        text = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 30)))
        stops = ["".join(rng.choice("ab\n") for _ in range(rng.randrange(1, 4)))
                 for _ in range(rng.randrange(1, 3))]
        cuts = sorted(rng.sample(range(len(text) + 1), k=min(len(text) + 1, 4)))
        deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        out, hit = run(stops, deltas)
        assert text.startswith(out)
        assert not any(st in out for st in stops)
        if hit:
            assert any(text[len(out):].startswith(st) for st in stops)
        else:
            assert out == text and not any(st in text for st in stops)
