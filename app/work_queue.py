"""Heavy work for a whole class: identical requests computed once, the rest waiting their turn in sight.

A room follows its facilitator: 30 sessions ask for the same logit lens, the same generation, the same live
ablation within seconds. `WorkQueue.submit(key, fn)` gives each of them a `Ticket`:

- single flight: a request whose key is already waiting or running joins that job (one computation, every
  waiter gets its result or its exception); a finished result is kept in a small per-kind LRU, so a request
  that comes later is answered at once;
- a bounded FIFO queue run by a fixed number of worker threads (one per process by default: SmolLM2 work is too
  heavy to share a core fairly), so the other pages of the same process stay responsive;
- a ticket knows its place (0: running, k: k-th job still waiting) and an estimated wait, from the recent run
  time of each kind of work;
- a visitor who leaves (their script is stopped or rerun) calls `Ticket.leave()`: a job nobody waits for any
  more loses its place before it starts; once started it runs to the end and its result is kept, so it is
  neither computed twice nor lost;
- more than `max_waiting` distinct waiting jobs: `submit` raises QueueFull (the page says so), joining an
  existing job or a kept result always works;
- fair between visitors: a visitor (a browser, whatever number of tabs it opens) holds at most one waiting job of
  each kind. A new request of the same kind replaces their waiting one and takes its place in line; the replaced
  ticket is told so (`Replaced`), and a job that nobody else waits for leaves the queue. Six tabs therefore put a
  classmate at most one place further back per kind, never six;
- a job submitted with `reports=True` is called with a `report(fraction, label=None)` callable, and every
  waiting ticket reads the latest report (`Ticket.progress()`): a live run's progress bar without Streamlit
  calls from the worker thread.

Pure Python (threads only, no Streamlit): tests/app/test_work_queue.py drives it with threads; app/models.py puts the
heavy model calls through one process-wide queue and shows the place and wait (app/serving.py's `wait_for`).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ESTIMATE_S = 5.0  # a kind never run yet
SMOOTHING = 0.3  # weight of the newest run time in the per-kind estimate


class Replaced(RuntimeError):
    """The same visitor asked for another job of this kind before this one started: theirs is the new one."""

    def __init__(self, kind: str):
        super().__init__(f"a newer {kind} request replaced this one")
        self.kind = kind


class QueueFull(RuntimeError):
    """Too many distinct jobs are waiting already."""

    def __init__(self, waiting: int):
        super().__init__(f"{waiting} jobs are waiting")
        self.waiting = waiting


@dataclass(eq=False)
class _Job:
    key: Hashable
    kind: str
    fn: Callable[..., Any]
    submitted: float
    reports: bool = False  # fn takes report(fraction, label=None)
    waiters: int = 0
    tickets: list = field(default_factory=list)  # the Tickets still waiting on it
    claims: set = field(default_factory=set)  # (visitor, kind) pairs whose one waiting job this is
    progress: tuple[float, str | None] | None = None
    started: float | None = None
    result: Any = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class Ticket:
    """One visitor's claim on a job (or on a kept result, then already done)."""

    def __init__(self, queue: WorkQueue, job: _Job, joined: bool, visitor: Hashable | None = None):
        self._queue = queue
        self._job = job
        self._left = False
        self._settled = threading.Event()  # the job is done, or this ticket was replaced
        self.replaced = False
        self.visitor = visitor
        self.joined = joined  # True: someone else's identical request (or a kept result) serves this one

    @property
    def done(self) -> bool:
        return self._settled.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job is done (or this ticket replaced) or `timeout` seconds passed; True when done."""
        return self._settled.wait(timeout)

    def progress(self) -> tuple[float, str | None] | None:
        """The running job's latest (fraction, label) report, or None (not started, or it does not report)."""
        return self._job.progress

    def position(self) -> int:
        """0 when running or done, k >= 1 when k-1 jobs wait ahead of this one."""
        return self._queue._position(self._job)

    def eta_s(self) -> float:
        """Estimated seconds until the result is ready (0 when done)."""
        return self._queue._eta(self._job)

    def result(self) -> Any:
        """The job's result, or its exception raised again (Replaced when a newer request took its place); only
        once done."""
        if not self.done:
            raise RuntimeError("the job is not done")
        if self.replaced:
            raise Replaced(self._job.kind)
        if self._job.error is not None:
            raise self._job.error
        return self._job.result

    def leave(self) -> None:
        """This visitor no longer waits (idempotent). A job nobody waits for leaves the queue if not started."""
        if self._left:
            return
        self._left = True
        self._queue._leave(self)


class WorkQueue:
    def __init__(
        self,
        workers: int = 1,
        max_waiting: int = 64,
        keep: dict[str, int] | None = None,
        keep_default: int = 4,
        estimates_s: dict[str, float] | None = None,
        name: str = "work",
    ):
        self.workers = max(1, workers)
        self.max_waiting = max_waiting
        self._keep = dict(keep or {})
        self._keep_default = keep_default
        self._estimate = dict(estimates_s or {})
        self._name = name
        self._cond = threading.Condition()
        self._waiting: collections.deque[_Job] = collections.deque()
        self._running: list[_Job] = []
        self._jobs: dict[Hashable, _Job] = {}  # waiting or running, by key
        self._results: dict[str, collections.OrderedDict] = {}  # kind -> key -> _Job (done, no error)
        self._threads: list[threading.Thread] = []
        self.computed = 0  # how many times a job's fn ran (tests: N identical requests -> 1)
        self.abandoned = 0  # jobs dropped from the queue before they started: nobody waited any more
        self.replaced = 0  # jobs dropped because their only visitor asked for another job of the same kind
        self._claims: dict[tuple[Hashable, str], _Job] = {}  # (visitor, kind) -> their one waiting job

    # --- the visitor's side ----------------------------------------------------------------------------------

    def submit(
        self,
        key: Hashable,
        fn: Callable[..., Any],
        kind: str = "work",
        visitor: Hashable | None = None,
        reports: bool = False,
    ) -> Ticket:
        """A ticket for `fn()` (`fn(report)` with reports=True), computed once for every request with the same
        `key` (which must name everything the result depends on: the kind of work, model, text, settings).
        `visitor` (a browser's key; None: no fairness rule) holds at most one waiting job per kind: this request
        replaces their earlier waiting one of the same kind."""
        with self._cond:
            kept = self._results.get(kind, {})
            if key in kept:
                self._replace_claim(visitor, kind, None)
                kept.move_to_end(key)
                ticket = Ticket(self, kept[key], joined=True, visitor=visitor)
                ticket._settled.set()
                return ticket
            job = self._jobs.get(key)
            joined = job is not None
            if job is None and len(self._waiting) - self._frees_a_place(visitor, kind) >= self.max_waiting:
                raise QueueFull(len(self._waiting))
            place = self._replace_claim(visitor, kind, job)
            if job is None:
                job = _Job(key, kind, fn, time.monotonic(), reports)
                self._jobs[key] = job
                if place is None:
                    self._waiting.append(job)
                else:  # the replaced job's place in line
                    self._waiting.insert(place, job)
                self._start_workers()
                self._cond.notify()
            job.waiters += 1
            ticket = Ticket(self, job, joined, visitor)
            job.tickets.append(ticket)
            if visitor is not None and job.started is None:
                self._claims[(visitor, kind)] = job
                job.claims.add((visitor, kind))
            return ticket

    def run(
        self,
        key: Hashable,
        fn: Callable[..., Any],
        kind: str = "work",
        on_wait=None,
        poll_s: float = 0.5,
        visitor: Hashable | None = None,
        reports: bool = False,
    ):
        """submit, then wait; `on_wait(ticket)` is called every `poll_s` while not done (it may raise: a stopped
        script leaves the queue). Returns the result or raises the job's exception (Replaced: this visitor's newer
        request of the same kind took its place)."""
        ticket = self.submit(key, fn, kind, visitor, reports)
        try:
            if on_wait is None:
                ticket.wait()
            while not ticket.wait(poll_s):
                on_wait(ticket)
        finally:
            ticket.leave()
        return ticket.result()

    def stats(self) -> dict:
        with self._cond:
            return {
                "waiting": len(self._waiting),
                "running": len(self._running),
                "computed": self.computed,
                "abandoned": self.abandoned,
                "replaced": self.replaced,
                "kept": {k: len(v) for k, v in self._results.items()},
                "estimates_s": {k: round(v, 2) for k, v in self._estimate.items()},
            }

    # --- inside -------------------------------------------------------------------------------------------------

    def _replace_claim(self, visitor: Hashable | None, kind: str, new: _Job | None) -> int | None:
        """Drop `visitor`'s waiting job of `kind` (unless it is `new`, the job they now ask for): their tickets on
        it are told they were replaced; a job nobody else waits for leaves the queue. Returns the place it left
        (for the new job to take), else None. Called with the lock held."""
        old = self._claims.get((visitor, kind)) if visitor is not None else None
        if old is None or old is new:
            return None
        self._unclaim(old, visitor, kind)
        if old.started is not None or old.done.is_set():
            return None  # running: no longer a waiting job, it ends and is kept as usual
        for ticket in [t for t in old.tickets if t.visitor == visitor]:
            ticket.replaced = ticket._left = True
            old.tickets.remove(ticket)
            old.waiters -= 1
            ticket._settled.set()
        if old.waiters > 0:
            return None
        place = self._waiting.index(old)
        del self._waiting[place]
        del self._jobs[old.key]
        self.replaced += 1
        return place

    def _frees_a_place(self, visitor: Hashable | None, kind: str) -> bool:
        """Would this visitor's new request of `kind` take their waiting job's place (nobody else waits on it)?"""
        old = self._claims.get((visitor, kind)) if visitor is not None else None
        return old is not None and old.started is None and all(t.visitor == visitor for t in old.tickets)

    def _unclaim(self, job: _Job, visitor: Hashable, kind: str) -> None:
        if self._claims.get((visitor, kind)) is job:
            del self._claims[(visitor, kind)]
        job.claims.discard((visitor, kind))

    def _leave(self, ticket: Ticket) -> None:
        job = ticket._job
        with self._cond:
            if ticket in job.tickets:
                job.tickets.remove(ticket)
            if ticket.visitor is not None and not any(t.visitor == ticket.visitor for t in job.tickets):
                self._unclaim(job, ticket.visitor, job.kind)
            job.waiters -= 1
            if job.waiters <= 0 and job.started is None and not job.done.is_set():
                try:
                    self._waiting.remove(job)
                except ValueError:
                    return
                del self._jobs[job.key]
                self.abandoned += 1

    def _position(self, job: _Job) -> int:
        with self._cond:
            if job.started is not None or job.done.is_set():
                return 0
            try:
                return self._waiting.index(job) + 1
            except ValueError:  # abandoned
                return 0

    def _estimate_of(self, kind: str) -> float:
        return self._estimate.get(kind, DEFAULT_ESTIMATE_S)

    def _eta(self, job: _Job) -> float:
        """When this job's result should be ready: the running jobs' remaining estimates, then the waiting jobs up
        to this one handed to whichever worker frees first."""
        with self._cond:
            if job.done.is_set():
                return 0.0
            now = time.monotonic()
            free = sorted(max(0.0, r.started + self._estimate_of(r.kind) - now) for r in self._running)
            if job.started is not None:
                return max(0.0, job.started + self._estimate_of(job.kind) - now)
            free += [0.0] * (self.workers - len(free))
            free.sort()
            for ahead in self._waiting:
                at = free.pop(0) + self._estimate_of(ahead.kind)
                if ahead is job:
                    return at
                free.append(at)
                free.sort()
            return 0.0

    def _start_workers(self) -> None:
        self._threads = [t for t in self._threads if t.is_alive()]
        for i in range(len(self._threads), self.workers):
            t = threading.Thread(target=self._work, name=f"{self._name}-queue-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._waiting:
                    self._cond.wait()
                job = self._waiting.popleft()
                job.started = time.monotonic()
                self._running.append(job)
                self.computed += 1
                for visitor, kind in list(job.claims):  # running: no longer anyone's waiting job
                    self._unclaim(job, visitor, kind)
            try:
                job.result = job.fn(self._reporter(job)) if job.reports else job.fn()
            except BaseException as err:  # noqa: BLE001 - handed to every waiter, the worker lives on
                job.error = err
            elapsed = time.monotonic() - job.started
            with self._cond:
                self._running.remove(job)
                del self._jobs[job.key]
                old = self._estimate.get(job.kind)
                self._estimate[job.kind] = elapsed if old is None else (1 - SMOOTHING) * old + SMOOTHING * elapsed
                if job.error is None:
                    kept = self._results.setdefault(job.kind, collections.OrderedDict())
                    kept[job.key] = job
                    while len(kept) > self._keep.get(job.kind, self._keep_default):
                        kept.popitem(last=False)
                job.fn = None  # what it closed over (a model, a text) is not kept by the result
                job.done.set()
                for ticket in job.tickets:
                    ticket._settled.set()
                job.tickets = []

    @staticmethod
    def _reporter(job: _Job) -> Callable[..., None]:
        def report(fraction: float, label: str | None = None) -> None:
            job.progress = (min(1.0, max(0.0, float(fraction))), label)

        return report


def workers_from_env(default: int = 1) -> int:
    """ATTENTION_LAB_HEAVY_WORKERS: how many heavy jobs one process runs at a time."""
    try:
        return max(1, int(os.environ.get("ATTENTION_LAB_HEAVY_WORKERS", default)))
    except ValueError:
        return default


@dataclass(eq=False)
class _Waiter:
    visitor: Hashable
    own_limit: bool
    since: float = 0.0  # when the server first saw this visitor: the earliest goes first
    order: int = 0  # arrival in line, among visitors seen at the same time


class FairSlots:
    """At most `n` page runs at once, and at most one of them per visitor: one client's many sessions (a browser's
    tabs, or a script that keeps one cookie jar) run one after another on one slot while everyone else gets the
    others. A free slot goes to the waiting visitor who has been here longest (`since`: when the server first saw
    them), in arrival order among equals: a crowd of new sessions, a class arriving or one client opening fifty,
    waits among itself while the visitors already at work keep their turns. A slot taken back after waiting for
    something else (`own_limit=False`) skips the one-per-visitor rule, so a run that gave its slot away while
    holding a lock another of its tabs waits for can always finish."""

    def __init__(self, n: int):
        self.n = n
        self._cond = threading.Condition()
        self._held: collections.Counter = collections.Counter()
        self._in_use = 0
        self._waiting: list[_Waiter] = []
        self._arrivals = 0

    def acquire(
        self,
        visitor: Hashable,
        timeout: float | None = None,
        check: Callable[[], None] | None = None,
        poll_s: float = 0.1,
        own_limit: bool = True,
        since: float = 0.0,
    ) -> bool:
        """Wait for a slot; False when `timeout` passed first. `check()` runs at every poll and may raise (the
        visitor left): the waiter then leaves the line. `since`: when this visitor was first seen."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._arrivals += 1
            entry = _Waiter(visitor, own_limit, since, self._arrivals)
            self._waiting.append(entry)
            try:
                while not self._may_take(entry):
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(poll_s if left is None else min(poll_s, left))
                    if check is not None:
                        check()
                self._held[visitor] += 1
                self._in_use += 1
                return True
            finally:
                self._waiting = [w for w in self._waiting if w is not entry]
                self._cond.notify_all()  # whoever was behind this entry may go now

    def release(self, visitor: Hashable) -> None:
        with self._cond:
            self._held[visitor] -= 1
            if self._held[visitor] <= 0:
                del self._held[visitor]
            self._in_use -= 1
            self._cond.notify_all()

    def in_use(self) -> int:
        with self._cond:
            return self._in_use

    def _eligible(self, entry: _Waiter) -> bool:
        return not entry.own_limit or self._held[entry.visitor] == 0

    def _may_take(self, entry: _Waiter) -> bool:
        if self._in_use >= self.n or not self._eligible(entry):
            return False
        first = min((w for w in self._waiting if self._eligible(w)), key=lambda w: (w.since, w.order))
        return first is entry
