"""The fork-point line of a sidebar row, told apart from its sibling forks'
(``parley.gui.sidebar.fork_labels``)."""

from __future__ import annotations

from parley.gui.sidebar.fork_labels import distinct_fork_labels


def test_points_that_start_alike_lose_the_words_they_share() -> None:
    points = ["from “You said: Message number 1 topic1 alpha”",
              "from “You said: Message number 3 topic3 gamma”",
              "from “Where to go in May?”"]
    assert distinct_fork_labels(points) == ["from “…1 topic1 alpha”",
                                            "from “…3 topic3 gamma”",
                                            "from “Where to go in May?”"]


def test_a_short_shared_start_a_lone_point_and_the_summary_are_kept() -> None:
    assert distinct_fork_labels(["from “Yes please”", "from “Yes thanks”"]) == \
        ["from “Yes please”", "from “Yes thanks”"]  # "Yes " too little to drop
    assert distinct_fork_labels(["from “You said: hello there”"]) == \
        ["from “You said: hello there”"]
    assert distinct_fork_labels(["from the summary", "from “You said: hello”"]) == \
        ["from the summary", "from “You said: hello”"]


def test_the_same_point_twice_is_kept_a_point_inside_another_cut_at_a_word() -> None:
    same = "from “You said: Message number 1”"
    assert distinct_fork_labels([same, same]) == [same, same]  # one message: nothing apart
    longer = "from “You said: Message number 1 and more”"
    assert distinct_fork_labels([same, longer]) == ["from “…1”", "from “…1 and more”"]
