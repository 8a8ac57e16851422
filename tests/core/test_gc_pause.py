"""parley.core.gc_pause: the collector is paused while start-up imports run, then what they
made is frozen so later collections do not walk it."""

from __future__ import annotations

import gc
import sys
import threading

from parley.core.gc_pause import SWITCH_INTERVAL_S, gc_paused, pausing_gc


def test_paused_inside_frozen_and_enabled_after() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    with gc_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(5000)]  # objects made by the "import"
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen_before + len(kept)
    gc.unfreeze()


def test_overlapping_blocks_in_two_threads_enable_only_after_the_last() -> None:
    started, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    @pausing_gc
    def slow_import() -> None:
        started.set()
        release.wait(5)

    worker = threading.Thread(target=slow_import)
    worker.start()
    assert started.wait(5)
    with gc_paused():
        pass
    seen.append(gc.isenabled())  # the worker's block still runs
    release.set()
    worker.join(5)
    assert seen == [False]
    assert gc.isenabled()
    gc.unfreeze()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_an_exception_in_the_block_still_enables_the_collector() -> None:
    try:
        with gc_paused():
            raise ValueError("import failed")
    except ValueError:
        pass
    assert gc.isenabled()
    gc.unfreeze()



def test_threads_take_turns_at_the_gil_more_often_while_an_import_runs() -> None:
    before = sys.getswitchinterval()
    started, release = threading.Event(), threading.Event()

    @pausing_gc
    def slow_import() -> None:
        started.set()
        release.wait(5)

    worker = threading.Thread(target=slow_import)
    worker.start()
    assert started.wait(5)
    during = sys.getswitchinterval()
    with gc_paused():  # overlapping: the interval stays until the last block ends
        pass
    still = sys.getswitchinterval()
    release.set()
    worker.join(5)
    assert during == still == min(before, SWITCH_INTERVAL_S) < 0.005
    assert sys.getswitchinterval() == before
    gc.unfreeze()
