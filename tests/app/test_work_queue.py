"""app/work_queue.py with threads, no Streamlit: identical requests computed once, places and waits in a bounded
FIFO, a visitor who leaves frees their place, nothing computed twice or lost, one waiting job per visitor and kind
(a newer one replaces the older), live runs report their progress to every waiter."""

from __future__ import annotations

import threading
import time

import pytest

from app.work_queue import FairSlots, QueueFull, Replaced, WorkQueue

BIG = 100.0  # an estimate so large that the seconds a test takes do not move the hand-worked waits


def about(waits: list[float], expected: list[float], slack_s: float = 5.0) -> bool:
    """The hand-worked waits, less the seconds that passed since the running job started (a busy machine)."""
    return len(waits) == len(expected) and all(e - slack_s <= w <= e + 0.5 for w, e in zip(waits, expected))


class Gate:
    """A job body that blocks until released, counting its calls."""

    def __init__(self, value="done"):
        self.value = value
        self.calls = 0
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self):
        self.calls += 1
        self.started.set()
        assert self.release.wait(30)
        return self.value


def test_thirty_identical_requests_are_computed_once():
    q = WorkQueue(workers=1)
    gate = Gate(value=object())
    results, tickets = [], []
    lock = threading.Lock()

    def visitor():
        t = q.submit(("lens", "smollm2", "Paris"), gate, kind="lens")
        with lock:
            tickets.append(t)
        assert t.wait(30)
        with lock:
            results.append(t.result())
        t.leave()

    threads = [threading.Thread(target=visitor) for _ in range(30)]
    for th in threads:
        th.start()
    assert gate.started.wait(30)
    while len(tickets) < 30:  # every visitor holds a ticket before the one computation ends
        threading.Event().wait(0.01)
    gate.release.set()
    for th in threads:
        th.join(30)
    assert gate.calls == 1 and q.computed == 1
    assert len(results) == 30 and all(r is gate.value for r in results)
    assert sum(not t.joined for t in tickets) == 1  # one submitted, 29 joined
    # a later identical request is answered from the kept result, at once
    late = q.submit(("lens", "smollm2", "Paris"), gate, kind="lens")
    assert late.done and late.joined and late.result() is gate.value and q.computed == 1


def test_places_and_estimated_waits_in_order():
    q = WorkQueue(workers=1, estimates_s={"lens": BIG, "gen": 2 * BIG})
    a = Gate()
    ta = q.submit("a", a, kind="lens")
    assert a.started.wait(30)
    tb = q.submit("b", Gate(), kind="gen")
    tc = q.submit("c", Gate(), kind="lens")
    assert [t.position() for t in (ta, tb, tc)] == [0, 1, 2]
    # a runs (100 s left), then b (200 s), then c (100 s): ready after about 100, 300 and 400 s
    assert about([t.eta_s() for t in (ta, tb, tc)], [100, 300, 400])
    for t in (tb, tc):
        t.leave()
    a.release.set()
    assert ta.wait(30) and ta.result() == "done" and ta.eta_s() == 0


def test_two_workers_share_the_waiting_jobs():
    q = WorkQueue(workers=2, estimates_s={"x": BIG})
    a, b = Gate(), Gate()
    ta, tb = q.submit("a", a, kind="x"), q.submit("b", b, kind="x")
    assert a.started.wait(30) and b.started.wait(30)  # both run at once
    tc, td = q.submit("c", Gate(), kind="x"), q.submit("d", Gate(), kind="x")
    assert [t.position() for t in (ta, tb, tc, td)] == [0, 0, 1, 2]
    assert about([t.eta_s() for t in (tc, td)], [200, 200])  # each takes the next free worker
    for t in (tc, td):
        t.leave()
    a.release.set()
    b.release.set()
    assert ta.wait(30) and tb.wait(30)


def test_a_visitor_who_leaves_frees_their_place():
    q = WorkQueue(workers=1, estimates_s={"x": BIG})
    a, b, c = Gate(), Gate(), Gate()
    q.submit("a", a, kind="x")
    assert a.started.wait(30)
    tb, tc = q.submit("b", b, kind="x"), q.submit("c", c, kind="x")
    tb2 = q.submit("b", b, kind="x")  # a second visitor on b
    tb.leave()
    assert tc.position() == 2 and q.stats()["waiting"] == 2  # b still has a visitor
    tb2.leave()
    assert tc.position() == 1 and q.stats()["waiting"] == 1 and q.abandoned == 1
    a.release.set()
    c.release.set()
    assert tc.wait(30) and tc.result() == "done"
    assert b.calls == 0  # nobody waited for it: never computed
    assert q.computed == 2


def test_a_started_job_is_finished_and_kept_when_its_visitor_leaves():
    q = WorkQueue(workers=1)
    a = Gate(value=[1, 2, 3])
    ta = q.submit("a", a, kind="x")
    assert a.started.wait(30)
    ta.leave()
    a.release.set()
    again = q.submit("a", a, kind="x")  # the visitor comes back, or another one asks: nothing computed twice
    assert again.wait(30) and again.result() == [1, 2, 3] and a.calls == 1


def test_an_error_reaches_every_waiter_and_is_not_kept():
    q = WorkQueue(workers=1)
    started, release = threading.Event(), threading.Event()
    calls = []

    def fails():
        calls.append(1)
        started.set()
        release.wait(30)
        raise ValueError("text too short")

    t1 = q.submit("k", fails, kind="x")
    assert started.wait(30)
    t2 = q.submit("k", fails, kind="x")
    release.set()
    for t in (t1, t2):
        assert t.wait(30)
        with pytest.raises(ValueError, match="too short"):
            t.result()
    t3 = q.submit("k", fails, kind="x")  # tried again, not answered from a kept failure
    assert t3.wait(30) and len(calls) == 2


def test_the_queue_is_bounded_but_joining_always_works():
    q = WorkQueue(workers=1, max_waiting=2)
    a = Gate()
    q.submit("a", a, kind="x")
    assert a.started.wait(30)  # running: not counted as waiting
    q.submit("b", Gate(), kind="x")
    q.submit("c", Gate(), kind="x")
    with pytest.raises(QueueFull) as err:
        q.submit("d", Gate(), kind="x")
    assert err.value.waiting == 2
    assert q.submit("b", Gate(), kind="x").joined  # an identical request joins the waiting job
    a.release.set()


def test_kept_results_are_bounded_per_kind():
    q = WorkQueue(workers=1, keep={"big": 2}, keep_default=3)
    for i in range(4):
        assert q.submit(("big", i), lambda i=i: i, kind="big").wait(30)
        assert q.submit(("small", i), lambda i=i: i, kind="small").wait(30)
    assert q.stats()["kept"] == {"big": 2, "small": 3}
    assert q.submit(("big", 3), lambda: "again", kind="big").result() == 3  # newest kept
    assert q.submit(("big", 0), lambda: "again", kind="big").wait(30)
    assert q.submit(("big", 0), lambda: "again", kind="big").result() == "again"  # oldest was dropped


class Stopped(BaseException):
    """What Streamlit raises in a script whose visitor left (StopException is a BaseException)."""


def test_run_leaves_the_queue_when_the_waiting_script_is_stopped():
    q = WorkQueue(workers=1, estimates_s={"x": BIG})
    a, b = Gate(), Gate()
    q.submit("a", a, kind="x")
    assert a.started.wait(30)
    seen = []

    def on_wait(ticket):
        seen.append((ticket.position(), round(ticket.eta_s())))
        raise Stopped

    with pytest.raises(Stopped):
        q.run("b", b, kind="x", on_wait=on_wait, poll_s=0.01)
    assert len(seen) == 1 and seen[0][0] == 1 and about([seen[0][1]], [200])
    assert q.stats()["waiting"] == 0 and q.abandoned == 1
    a.release.set()
    assert q.run("c", lambda: 7, kind="x", on_wait=lambda t: None, poll_s=0.01) == 7
    assert b.calls == 0


def occupied(**options) -> tuple[WorkQueue, Gate]:
    """A one-worker queue whose worker is busy with a job that runs until the Gate is released."""
    q = WorkQueue(workers=1, **options)
    running = Gate()
    q.submit("running", running, kind="x")
    assert running.started.wait(30)
    return q, running


def test_six_tabs_of_one_browser_put_a_classmate_one_place_back_not_six():
    q = WorkQueue(workers=1, estimates_s={"lens": BIG})
    running = Gate()
    q.submit("running", running, kind="lens", visitor="teacher")
    assert running.started.wait(30)
    tabs = [Gate() for _ in range(6)]
    tickets = [q.submit(("lens", i), gate, kind="lens", visitor="prankster") for i, gate in enumerate(tabs)]
    classmate = q.submit("classmate", Gate(), kind="lens", visitor="classmate")
    assert classmate.position() == 2  # behind the prankster's one waiting job, not behind six
    assert q.stats()["waiting"] == 2 and q.replaced == 5
    for old in tickets[:-1]:  # each older tab is told, at once, that a newer request took its place
        assert old.done and old.replaced and old.position() == 0
        with pytest.raises(Replaced):
            old.result()
        old.leave()  # what run() does afterwards: harmless
    assert tickets[-1].position() == 1 and not tickets[-1].done
    for t in (tickets[-1], classmate):
        t.leave()
    running.release.set()
    assert all(g.calls == 0 for g in tabs)  # the replaced requests were never computed


def test_a_newer_request_takes_the_replaced_ones_place_in_line():
    q, running = occupied(estimates_s={"x": BIG})
    first = q.submit("a1", Gate(), kind="x", visitor="a")
    other = q.submit("b1", Gate(), kind="x", visitor="b")
    second = q.submit("a2", Gate(), kind="x", visitor="a")  # a changed a setting: a1 is replaced by a2
    assert first.replaced and [second.position(), other.position()] == [1, 2]
    for t in (second, other):
        t.leave()
    running.release.set()


def test_a_replaced_job_stays_for_the_others_who_wait_on_it():
    q = WorkQueue(workers=1, estimates_s={"x": BIG})
    running, shared = Gate(), Gate(value="shared")
    q.submit("running", running, kind="x")
    assert running.started.wait(30)
    mine = q.submit("shared", shared, kind="x", visitor="a")
    theirs = q.submit("shared", shared, kind="x", visitor="b")  # the same request: b joins a's job
    newer = q.submit("mine", Gate(), kind="x", visitor="a")
    assert mine.replaced and not theirs.replaced and q.replaced == 0
    assert theirs.position() == 1 and newer.position() == 2  # b keeps the place; a's new job waits behind it
    newer.leave()
    running.release.set()
    shared.release.set()
    assert theirs.wait(30) and theirs.result() == "shared" and shared.calls == 1


def test_one_waiting_job_per_kind_so_a_visitor_may_wait_for_two_kinds():
    q = WorkQueue(workers=1, estimates_s={"lens": BIG, "gen": BIG})
    running = Gate()
    q.submit("running", running, kind="lens", visitor="a")
    assert running.started.wait(30)
    lens = q.submit("lens", Gate(), kind="lens", visitor="a")  # a's running job is not a waiting one
    gen = q.submit("gen", Gate(), kind="gen", visitor="a")
    assert [lens.position(), gen.position()] == [1, 2] and not lens.replaced and q.replaced == 0
    for t in (lens, gen):
        t.leave()
    running.release.set()


def test_a_started_job_is_not_replaced_and_ends_for_its_visitor():
    q = WorkQueue(workers=1, estimates_s={"x": BIG})
    first = Gate(value="first")
    t1 = q.submit("first", first, kind="x", visitor="a")
    assert first.started.wait(30)
    t2 = q.submit("second", lambda: "second", kind="x", visitor="a")
    assert not t1.replaced and t2.position() == 1
    first.release.set()
    assert t1.wait(30) and t1.result() == "first" and t2.wait(30) and t2.result() == "second"


def test_a_full_queue_still_takes_a_request_that_replaces_the_visitors_own():
    q, running = occupied(max_waiting=2)
    q.submit("a1", Gate(), kind="x", visitor="a")
    b1 = q.submit("b1", Gate(), kind="x", visitor="b")
    with pytest.raises(QueueFull):
        q.submit("c1", Gate(), kind="x", visitor="c")
    assert q.submit("a2", Gate(), kind="x", visitor="a").position() == 1  # a's own place, reused
    assert q.submit("b1", Gate(), kind="x", visitor="c").joined  # c waits on b's job too
    with pytest.raises(QueueFull):  # b's new request frees nothing (c still waits on b1): refused, b1 kept
        q.submit("b2", Gate(), kind="x", visitor="b")
    assert not b1.replaced and b1.position() == 2
    running.release.set()


def test_a_visitor_whose_tab_leaves_can_queue_again():
    q, running = occupied(estimates_s={"x": BIG})
    t = q.submit("a1", Gate(), kind="x", visitor="a")
    t.leave()
    again = q.submit("a2", Gate(), kind="x", visitor="a")
    assert again.position() == 1 and not again.replaced and q.abandoned == 1 and q.replaced == 0
    again.leave()
    running.release.set()


def test_a_live_run_reports_its_progress_to_every_waiter():
    q = WorkQueue(workers=1)
    halfway, finish = threading.Event(), threading.Event()

    def live(report):
        report(0.5, "n=512")
        halfway.set()
        assert finish.wait(30)
        report(1.0)
        return "rows"

    t1 = q.submit("live", live, kind="timing", visitor="a", reports=True)
    t2 = q.submit("live", live, kind="timing", visitor="b", reports=True)
    assert halfway.wait(30)
    assert t1.progress() == t2.progress() == (0.5, "n=512")
    finish.set()
    assert t1.wait(30) and t1.result() == "rows" and t2.result() == "rows" and t1.progress() == (1.0, None)
    assert q.submit("plain", lambda: 1, kind="x").wait(30)  # a job that does not report is called without one


def test_run_raises_replaced_for_the_older_tab():
    q, running = occupied(estimates_s={"x": BIG})
    errors = []

    def older_tab():
        try:
            q.run("old", Gate(), kind="x", visitor="a", on_wait=lambda t: None, poll_s=0.01)
        except Replaced as err:
            errors.append(err)

    tab = threading.Thread(target=older_tab)
    tab.start()
    while q.stats()["waiting"] < 1:
        threading.Event().wait(0.01)
    newer = q.submit("new", Gate(), kind="x", visitor="a")
    tab.join(30)
    assert len(errors) == 1 and errors[0].kind == "x" and newer.position() == 1
    newer.leave()
    running.release.set()


# --- page slots: at most n at once, one per visitor -----------------------------------------------------------


def _waiting_for(slots: FairSlots, visitor: str, got: list, since: float = 0.0) -> threading.Thread:
    """A thread that waits for a slot for `visitor`, appends the name when it has one; returns once it is in line."""
    before = len(slots._waiting)
    thread = threading.Thread(
        target=lambda: got.append(visitor) if slots.acquire(visitor, timeout=10, since=since) else None
    )
    thread.start()
    deadline = time.monotonic() + 5
    while len(slots._waiting) == before and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread


def _until(condition) -> None:
    deadline = time.monotonic() + 5
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_one_visitor_holds_one_slot_while_another_visitor_gets_a_free_one_at_once():
    slots = FairSlots(4)
    assert slots.acquire("many-tabs", timeout=1)
    assert not slots.acquire("many-tabs", timeout=0.2)  # three slots free, but this visitor already runs one
    assert slots.acquire("classmate", timeout=0.2)
    assert slots.in_use() == 2


def test_waiters_go_in_arrival_order_and_a_visitor_with_a_run_does_not_hold_up_those_behind():
    slots = FairSlots(2)
    assert slots.acquire("x", timeout=1) and slots.acquire("y", timeout=1)
    got: list = []
    threads = [_waiting_for(slots, "a", got), _waiting_for(slots, "a", got), _waiting_for(slots, "b", got)]
    slots.release("x")
    _until(lambda: len(got) == 1)
    assert got == ["a"]  # the first in line
    slots.release("y")
    _until(lambda: len(got) == 2)
    assert got == ["a", "b"]  # a's second run waits for a's first; b, behind it, goes
    slots.release("a")
    _until(lambda: len(got) == 3)
    assert got == ["a", "b", "a"]
    for t in threads:
        t.join(5)
    assert slots.in_use() == 2


def test_a_slot_taken_back_skips_the_one_per_visitor_rule_and_a_waiter_that_leaves_leaves_the_line():
    slots = FairSlots(2)
    assert slots.acquire("a", timeout=1)
    assert slots.acquire("a", timeout=1, own_limit=False)  # its other tab gave a slot away and takes it back

    class Left(Exception):
        pass

    def leave():
        raise Left

    with pytest.raises(Left):
        slots.acquire("b", check=leave, poll_s=0.01)  # both slots held: b waits, then its visitor leaves
    assert slots._waiting == []
    slots.release("a")
    assert slots.acquire("b", timeout=1)


def test_a_free_slot_goes_to_the_first_waiter_that_may_run():
    """The rule itself, with no thread racing another to wake first: a later waiter passes an earlier one only
    when the earlier one's visitor already runs."""
    from app.work_queue import _Waiter

    slots = FairSlots(2)
    first, second = _Waiter("a", True), _Waiter("b", True)
    slots._waiting = [first, second]
    assert slots._may_take(first) and not slots._may_take(second)
    slots._waiting = []
    assert slots.acquire("a", timeout=1, own_limit=False)  # a runs now: its waiting run may not, b's may
    slots._waiting = [first, second]
    assert not slots._may_take(first) and slots._may_take(second)


def test_a_free_slot_goes_to_the_visitor_here_longest_before_a_crowd_of_new_ones():
    """Fifty new sessions queued first do not take the turns of a visitor who was already at work."""
    slots = FairSlots(1)
    assert slots.acquire("x", timeout=1)
    got: list = []
    threads = [_waiting_for(slots, f"new{i}", got, since=100.0 + i) for i in range(3)]
    threads.append(_waiting_for(slots, "at-work", got, since=5.0))  # in line last, here first
    slots.release("x")
    _until(lambda: len(got) == 1)
    assert got == ["at-work"]
    for expected in ("new0", "new1", "new2"):  # the newcomers among themselves: in the order they came
        slots.release(got[-1])
        _until(lambda: got[-1] == expected)
    assert got == ["at-work", "new0", "new1", "new2"]
    for t in threads:
        t.join(5)
