"""The room service: every action a facilitator or a learner takes in a study room, each one transaction of a store
(core/room/store.py; core/room/sql.py for SQLite and PostgreSQL), and every rule of a room applied here and only
here: the control token, the phase of the question, the step against the room's lesson, the rate limits, expiry and
the sizes (names, sentences, learners, open rooms), with the values and words of core/room/__init__.py.

An action opens one transaction, reads what its rules need through the store's primitives, decides, and writes
through the primitives; no other process or replica comes between the check and the write (a writer holds the
room's row; joins and openings hold the admission lock). A refusal is RoomError, whose key names its sentence in
the [room] words; a refusal that must keep what was written (a code tried in vain is counted) commits first.

Pages get this service from app/room/store.py and call nothing of a store directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from core import room as rules
from core.lessons import Answer, Lesson, Question, load_lessons
from core.room import FacilitatorView, Following, ProjectorView, RoomError
from core.room.store import Learner, Room, Store, Tx


def action(write: bool):
    """A service action: one transaction of the store (tried again briefly while the database is busy or away).
    A body that returns a RoomError commits what it wrote, then raises it."""

    def wrap(body):
        @functools.wraps(body)
        def run(self: Rooms, *args, **kwargs):
            def once():
                with self.store.atomic(write) as tx:
                    return body(self, tx, *args, **kwargs)

            result = self.store.attempt(once)
            if isinstance(result, RoomError):
                raise result
            return result

        return run

    return wrap


class Rooms:
    """The rooms of one store. `lessons`: this server's lessons by id (or a function that returns them), which a
    room's steps are checked against. `passcode`: the operator's passcode a browser must give to open a room
    (rules.room_passcode(), the server's; '' for none: an operator's own scripts, a laptop); only its digest is kept.
    `agreed_passcode`: where the operator gave none, opening a room still asks for one: the one kept in the store,
    which every process sharing it asks for (agree_passcode), so a passcode that opens rooms on one replica opens
    them on all."""

    def __init__(self, store: Store, lessons: Mapping[str, Lesson] | Callable[[], Mapping[str, Lesson]],
                 clock: Callable[[], float] | None = None, passcode: str = "",
                 agreed_passcode: bool = False):  # fmt: skip
        self.store = store
        self._lessons = lessons
        self.clock = clock or store.clock
        self._passcode = rules.digest(passcode) if passcode else None
        self._agreed = agreed_passcode and not passcode  # the operator's passcode wins

    @property
    def asks_passcode(self) -> bool:
        """Whether opening a room asks for a passcode (the operator's, or the one the store keeps)."""
        return self._passcode is not None or self._agreed

    @property
    def agrees_passcode(self) -> bool:
        """Whether the passcode opening a room asks for is the one the processes sharing the store agree on."""
        return self._agreed

    def agree_passcode(self, made: str, made_by: str) -> rules.AgreedPasscode:
        """Agree with every process sharing the store on the passcode for opening rooms, where the operator set
        none: the one kept there, else `made` (this process's new one, rules.new_passcode), kept now (its digest)
        with `made_by` (which process's log is to print it). Two processes starting at once keep one: the first
        insert wins, the other finds it. Whether `made` is the one, and who made it when."""
        kept_digest, made_by, made_at = self._agree(rules.digest(made), str(made_by)[: rules.MAX_MADE_BY_CHARS])
        return rules.AgreedPasscode(rules.same_secret(made, kept_digest), made_by, made_at)

    @action(write=True)
    def _agree(self, tx: Tx, made_digest: str, made_by: str) -> tuple[str, str, float]:
        tx.keep_opening_passcode(made_digest, made_by, self.clock())
        return tx.opening_passcode()

    def _required_passcode(self, tx: Tx) -> str | None:
        """The digest of the passcode opening a room asks for: the operator's, else the one the store keeps (None
        while no process has kept one: then no passcode opens a room)."""
        if self._passcode is not None:
            return self._passcode
        kept = tx.opening_passcode()
        return None if kept is None else kept[0]

    def opens_for(self, from_afar: bool) -> bool:
        """Whether a browser may open a room here (rules.check_opener): any, where a passcode guards opening; else
        only the computer's own (from_afar False)."""
        try:
            rules.check_opener(from_afar, self.asks_passcode)
        except RoomError:
            return False
        return True

    def lessons(self) -> Mapping[str, Lesson]:
        return self._lessons() if callable(self._lessons) else self._lessons

    def close(self) -> None:
        self.store.close()

    # -- the rules as this service applies them ------------------------------------------------------------

    def _live(self, tx: Tx, code: str) -> tuple[Room, str]:
        """The open room (expiry) and its control digest, or RoomError('unknown_room')."""
        found = tx.room(code)
        if found is None or found[0].expires <= self.clock():
            raise RoomError("unknown_room", code)
        return found

    def _control(self, tx: Tx, code: str, control: str | None) -> Room:
        """The open room, when `control` is its control token or a browser's control given from it and not given
        up (rules.check_control)."""
        room, stored = self._live(tx, code)
        held = rules.same_secret(control, stored) or (
            isinstance(control, str) and bool(control) and tx.holds_control(code, rules.digest(control))
        )
        rules.check_control(control, stored, browser_holds=held)
        return room

    def _lesson(self, room: Room) -> Lesson:
        lesson = self.lessons().get(room.lesson)
        if lesson is None:
            raise RoomError("unknown_lesson", room.lesson)
        return lesson

    def _seat(self, tx: Tx, code: str, token: str | None) -> str:
        """The digest of a learner's token that holds a seat in the room, or RoomError('not_learner')."""
        if not token or not isinstance(token, str):
            raise RoomError("not_learner")
        digest = rules.digest(token)
        if tx.learner(code, digest) is None:
            raise RoomError("not_learner")
        return digest

    def _rate(self, tx: Tx, code: str, who: str, kind: str) -> None:
        """One more action of `kind` by `who` in room `code` ('' for any room): allowed by rules.LIMITS, counted."""
        now = self.clock()
        rules.check_rate(kind, tx.times(code, who, kind, now - rules.LIMITS[kind].window_s), now)
        tx.record(code, who, kind, now)

    def _look(self, tx: Tx, code: str, client: str) -> Room | None:
        """The open room behind a typed or linked code, or None; a client past its tries of codes that opened
        nothing learns nothing more (not even whether this code exists)."""
        now = self.clock()
        if client:
            window = rules.LIMITS["join_miss"].window_s
            rules.check_rate("join_miss", tx.times("", client, "join_miss", now - window), now)
        found = tx.room(code)
        return found[0] if found is not None and found[0].expires > now else None

    def _find(self, tx: Tx, code: str, client: str) -> Room | None:
        """_look, and a code that opens no room is counted against `client` (in this writing transaction)."""
        room = self._look(tx, code, client)
        if room is None and client:
            tx.record("", client, "join_miss", self.clock())
        return room

    def _passcode_refused(self, tx: Tx, passcode, client: str) -> RoomError | None:
        """Opening a room on a server with a passcode: None when `passcode` is the operator's, else the refusal; a
        wrong one is counted against `client` (rules.LIMITS['passcode_miss']), and a client past its tries is
        refused whatever it typed (it learns nothing more). Neither the passcode nor its digest is in a refusal."""
        now = self.clock()
        if client:
            window = rules.LIMITS["passcode_miss"].window_s
            rules.check_rate("passcode_miss", tx.times("", client, "passcode_miss", now - window), now)
        required = self._required_passcode(tx)
        if required is None:  # no process of this store has made one yet (its database was away at its start)
            return RoomError("unavailable", "no passcode kept yet")
        try:
            rules.check_passcode(passcode, required)
        except RoomError as e:
            if client and e.key == "passcode_wrong":
                tx.record("", client, "passcode_miss", now)
            return e
        return None

    def _purge(self, tx: Tx) -> None:
        """The retention rule (rules.KEEP_AFTER_CLOSE_S): closed rooms go with everything in them."""
        now = self.clock()
        for old in tx.rooms_expired_before(rules.forget_before(now)):
            tx.delete_room(old)
        tx.delete_events_before(rules.events_before(now))

    @action(write=True)
    def purge(self, tx: Tx) -> None:
        """The retention rule now: rooms closed (or expired) rules.KEEP_AFTER_CLOSE_S ago go with their names,
        answers and sentences, and counted actions past every window. create() applies it too; a server process
        calls this on a timer (app/room/store.py), so that a day's last room goes as well."""
        tx.hold_admissions()  # as create() purges: no join or opening comes between
        self._purge(tx)

    # -- anyone --------------------------------------------------------------------------------------------

    @action(write=False)
    def poll(self, tx: Tx, code: str) -> tuple[int, int] | None:
        """(version, activity): what a follower reads every few seconds (one indexed read); None: unknown or
        expired. `version` moves with what a learner must follow (step, question, reveal, shown sentence, door,
        end), `activity` with every learner's action."""
        row = tx.counters(code)
        return None if row is None or row[2] <= self.clock() else (row[0], row[1])

    @action(write=False)
    def room(self, tx: Tx, code: str) -> Room | None:
        """The open room, or None when the code is unknown or the room expired."""
        found = tx.room(code)
        return found[0] if found is not None and found[0].expires > self.clock() else None

    def find(self, code: str, client: str = "") -> Room | None:
        """The room a visitor's link or typed code names, or None (a miss is counted: rules.LIMITS['join_miss']).
        A hit only reads (every load of /room asks, and reads go on while another process holds the write lock);
        a miss is looked up again and counted in a transaction that writes."""
        room = self._hit(code, client)
        return room if room is not None or not client else self._miss(code, client)

    @action(write=False)
    def _hit(self, tx: Tx, code: str, client: str) -> Room | None:
        return self._look(tx, code, client)

    @action(write=True)
    def _miss(self, tx: Tx, code: str, client: str) -> Room | None:
        tx.hold_admissions()
        return self._find(tx, code, client)

    @action(write=False)
    def histogram(self, tx: Tx, room: Room, mine: str | None = None):
        """The room's responses to its open question counted as /lessons counts a learner's own (None while no
        question is open); `mine`: the viewer's own response, outlined."""
        right = rules.right_answer(room)
        return rules.counted(room, tx.responses(room.code, room.question) if right else [], mine)

    @action(write=False)
    def responses(self, tx: Tx, code: str, question: str) -> list[str]:
        """Every response to a question, without names."""
        return tx.responses(code, question)

    @action(write=False)
    def steps_of_learners(self, tx: Tx, code: str) -> list[int]:
        """The step each learner is on (-1: exploring), without names."""
        return tx.steps_of_learners(code)

    @action(write=False)
    def lost_count(self, tx: Tx, code: str) -> int:
        return tx.lost(code)

    # -- the facilitator -----------------------------------------------------------------------------------

    @action(write=True)
    def create(self, tx: Tx, lesson_id, ttl_s: float | None = None, client: str = "", passcode=None,
               from_afar: bool = False) -> tuple[str, str]:  # fmt: skip
        """A new room on one of this server's lessons: (code, control token). `client`: the browser that asks
        (per-client limits), '' for the operator's own scripts. `passcode`: what the browser typed, checked when
        this server asks for one (a wrong one stays counted). `from_afar`: the browser is not the computer's own
        (app.serving.hosted): refused where no passcode guards opening. Rooms closed long enough are purged here."""
        if not isinstance(lesson_id, str) or lesson_id not in self.lessons():
            raise RoomError("unknown_lesson", repr(lesson_id)[:40])
        rules.check_opener(from_afar, self.asks_passcode)
        now = self.clock()
        tx.hold_admissions()
        self._purge(tx)
        if self.asks_passcode and (refused := self._passcode_refused(tx, passcode, client)):
            return refused  # said after the commit: a wrong passcode stays counted
        if client:
            self._rate(tx, "", client, "create")
        rules.check_open(tx.rooms_open_at(now))
        code = rules.new_code()
        for _ in range(20):
            if not tx.code_taken(code):
                break
            code = rules.new_code()
        control = rules.new_token()
        ttl = rules.ttl_seconds() if ttl_s is None else float(ttl_s)
        tx.insert_room(code, rules.digest(control), lesson_id, now, now + ttl)
        return code, control

    @action(write=True)
    def give_control(self, tx: Tx, code: str, control: str | None) -> str:
        """A browser's own control of the room, given for its room's control token (the room opened there, or its
        recovery link opened there): that browser's tabs act with it, and giving it up (give_up) reaches every one
        of them, while the control token, kept aside, gives a new one. Only the control token gives one."""
        _, stored = self._live(tx, code)
        rules.check_control(control, stored)
        for old in rules.controls_to_drop(tx.controls(code)):
            tx.delete_control(code, old)
        token = rules.new_token()
        tx.insert_control(code, rules.digest(token), self.clock())
        return token

    @action(write=True)
    def give_up(self, tx: Tx, code: str, control: str | None) -> None:
        """A browser gives up its control of the room (`control`: what give_control gave it): every tab acting with
        it is refused from now on, and the room's activity moves so that their live panels run at once and say so.
        The room stays open, and its control token still gives a browser a new control."""
        if not isinstance(control, str) or not control or tx.room(code) is None:
            return
        if tx.delete_control(code, rules.digest(control)):
            tx.update_room(code, ("activity",))

    @action(write=False)
    def is_control(self, tx: Tx, code: str, control: str | None) -> bool:
        try:
            self._control(tx, code, control)
        except RoomError:
            return False
        return True

    @action(write=True)
    def move(self, tx: Tx, code: str, control: str, step) -> None:
        """The room goes to `step` of its lesson (rules.check_step); its question, if any, waits closed. Every
        learner who follows the room goes there with it, in this one write: their pages then report a position
        the board already has (where()), instead of each taking the write lock on every step."""
        room = self._control(tx, code, control)
        step = rules.check_step(step, len(self._lesson(room).steps))
        tx.update_room(code, ("version",), step=step, question="", phase="", answer=None, shown="")
        tx.move_following(code, step)

    def open_question(self, code: str, control: str, lesson_id: str, step, state: dict[str, str] | None = None,
                      compute: Callable[[Question, dict[str, str]], Answer] | None = None) -> Answer:  # fmt: skip
        """Open the question of `step` of lesson `lesson_id`: the room's lesson and step as the facilitator's page
        shows them (refused with 'question_closed' when the room is elsewhere by now). Its right answer is computed
        by the engine from the step's state (or the facilitator's live `state`) before the transaction (an answer
        may take a model's pass: no lock is held meanwhile) and kept with the room: learners never recompute it.
        `compute`: how the caller computes an answer (the app's: on its heavy-work queue), else core's answer."""
        from core.lessons import answer

        compute = compute or answer
        lesson = self.lessons().get(lesson_id) if isinstance(lesson_id, str) else None
        if lesson is None:
            raise RoomError("unknown_lesson", repr(lesson_id)[:40])
        step = rules.check_step(step, len(lesson.steps))
        question = lesson.steps[step].question
        if question is None:
            raise RoomError("no_question")
        right = compute(question, dict(lesson.steps[step].state if state is None else state))
        self._open(code, control, lesson_id, step, question.id, right)
        return right

    @action(write=True)
    def _open(self, tx: Tx, code: str, control: str, lesson_id: str, step: int, question: str, right: Answer
              ) -> None:  # fmt: skip
        room = self._control(tx, code, control)
        if room.lesson != lesson_id or rules.step_of(room, self._lesson(room)) != step:
            raise RoomError("question_closed", f"the room is on step {room.step}, not {step}")
        tx.update_room(code, ("version",), question=question, phase="open", answer=right)

    @action(write=True)
    def reveal(self, tx: Tx, code: str, control: str) -> None:
        rules.check_open_question(self._control(tx, code, control))
        tx.update_room(code, ("version",), phase="revealed")

    @action(write=True)
    def show(self, tx: Tx, code: str, control: str, sentence) -> None:
        """Show one gallery sentence of the room to everyone ('' hides it)."""
        self._control(tx, code, control)
        if sentence != "" and not (isinstance(sentence, str) and tx.has_sentence(code, sentence)):
            raise RoomError("bad_value", repr(sentence)[:40])
        tx.update_room(code, ("version",), shown=sentence)

    @action(write=True)
    def lock_joining(self, tx: Tx, code: str, control: str, locked) -> None:
        """The facilitator closes the door (nobody new joins; seated learners stay) or opens it again."""
        self._control(tx, code, control)
        tx.update_room(code, ("version",), locked=rules.check_flag(locked))

    @action(write=True)
    def remove(self, tx: Tx, code: str, control: str, seat) -> None:
        """A learner leaves the room for good, with their answers and sentences (their link is no seat any more);
        a sentence of theirs shown to everyone is hidden."""
        room = self._control(tx, code, control)
        digest = rules.seat_named(seat, [d for d, _ in tx.seats(code)])
        tx.delete_learner(code, digest)
        shown_gone = room.shown != "" and not tx.has_sentence(code, room.shown)
        tx.update_room(code, ("version", "activity"), **({"shown": ""} if shown_gone else {}))

    @action(write=True)
    def end(self, tx: Tx, code: str, control: str) -> None:
        """The facilitator closes the room now: every page says so, and its data goes with the retention rule."""
        self._control(tx, code, control)
        tx.update_room(code, ("version",), expires=self.clock())

    @action(write=False)
    def learners(self, tx: Tx, code: str, control: str) -> list[tuple[str, int, bool]]:
        """(name, step, following) of every learner, in joining order: names for the facilitator only."""
        self._control(tx, code, control)
        return tx.learners(code)

    @action(write=False)
    def answers(self, tx: Tx, code: str, control: str) -> list[rules.AnswerRow]:
        self._control(tx, code, control)
        return tx.answers(code)

    @action(write=False)
    def answers_csv(self, tx: Tx, code: str, control: str) -> str:
        """The CSV of every answer, with each question's step number in the room's lesson."""
        room = self._control(tx, code, control)
        lesson = self.lessons().get(room.lesson)
        steps = {} if lesson is None else {q.id: i for i, s in enumerate(lesson.steps) if (q := s.question)}
        return rules.answers_csv(tx.answers(code), steps)

    @action(write=False)
    def gallery(self, tx: Tx, code: str, control: str, step: int) -> list[tuple[str, str]]:
        """(name, sentence) submitted for `step`, oldest first."""
        self._control(tx, code, control)
        return tx.gallery(code, step)

    @action(write=False)
    def seats(self, tx: Tx, code: str, control: str) -> list[tuple[str, str]]:
        """(seat id, name) of every learner in joining order: the id names a seat to remove without its token."""
        self._control(tx, code, control)
        return [(rules.seat_id(d), name) for d, name in tx.seats(code)]

    @action(write=False)
    def facilitator_view(self, tx: Tx, code: str, control: str) -> FacilitatorView:
        """What the facilitator's page draws, in one read: the room (its row read once, the control compared
        once), learners, answers, the responses to the open question, "I'm lost", the gallery of the room's step
        and the seats."""
        room = self._control(tx, code, control)
        lesson = self.lessons().get(room.lesson)  # None: its file went away (the page says so)
        responses = tx.responses(code, room.question) if room.question else []
        learners = tx.learners(code)
        n_steps = len(lesson.steps) if lesson is not None else 0
        return FacilitatorView(room, len(learners), rules.counted(room, responses),
                               rules.board(n_steps, learners, tx.answers(code)), tx.lost(code),
                               tuple(tx.gallery(code, room.step)),
                               tuple((rules.seat_id(d), n) for d, n in tx.seats(code)),
                               tuple(tx.languages(code)))  # fmt: skip

    @action(write=False)
    def projector_view(self, tx: Tx, code: str) -> ProjectorView | None:
        """What the projector draws, in one read (the room, its histogram, its learners' languages), or None when
        the room closed."""
        found = tx.room(code)
        if found is None or found[0].expires <= self.clock():
            return None
        room = found[0]
        responses = tx.responses(code, room.question) if room.question else []
        return ProjectorView(room, rules.counted(room, responses), tuple(tx.languages(code)))

    # -- learners ------------------------------------------------------------------------------------------

    @action(write=True)
    def join(self, tx: Tx, code: str, name, lang: str, client: str = ""):
        """A learner joins with a display name and the language they read in (rules.clean_lang): their token (keep
        it; it is their identity in the room). `client`: the browser that asks (per-client limits); '' for the
        operator's own scripts."""
        name, lang = rules.clean_name(name), rules.clean_lang(lang)
        tx.hold_admissions()  # count and insert as one step, whichever replica
        room = self._find(tx, code, client)
        if room is None:
            return RoomError("unknown_room", code)  # said after the commit: the miss stays counted
        rules.check_join(room.locked, tx.learners_in(code), tx.learners_seated_at(self.clock()))
        rules.check_name_free(name, (taken for taken, _, _ in tx.learners(code)))
        self._rate(tx, code, "", "join")
        if client:
            self._rate(tx, "", client, "join_client")
        token = rules.new_token()
        tx.insert_learner(code, rules.digest(token), name, lang, room.step, self.clock())
        tx.update_room(code, ("activity",))
        return token

    @action(write=False)
    def learner(self, tx: Tx, code: str, token: str | None) -> Learner | None:
        """The learner a token seats in the room, or None."""
        return tx.learner(code, rules.digest(token)) if token and isinstance(token, str) else None

    @action(write=False)
    def follow(self, tx: Tx, code: str, token: str | None, version: int | None) -> Following | None:
        """What a learner's panel reads at each run, in one read: the room's (version, activity), and where the
        version is not `version` (the panel's last), the room and this learner's seat (where() then needs no read
        of its own). None: the room is unknown or expired."""
        row = tx.counters(code)
        if row is None or row[2] <= self.clock():
            return None
        if row[0] == version:
            return Following((row[0], row[1]), None, None)
        found = tx.room(code)
        seat = tx.learner(code, rules.digest(token)) if token and isinstance(token, str) else None
        return Following((row[0], row[1]), found[0] if found else None, seat)

    def where(self, code: str, token: str, step, following, seat: Learner | None = None) -> None:
        """Where a learner is: a step of the room's lesson, or EXPLORING while on a page of their own. Written
        only when it changes: a read first (readers do not queue on SQLite's write lock across processes), the
        write only if the board does not show this already (following learners are moved by move()). `seat`: the
        learner's seat as read in this run (follow()), which spares that read when it shows the position already."""
        if seat is not None and (seat.step, seat.following) == (step, following):
            return
        if not self._is_at(code, token, step, following):
            self._where(code, token, step, following)

    @action(write=False)
    def _is_at(self, tx: Tx, code: str, token: str, step, following) -> bool:
        digest, step, following = self._position(tx, code, token, step, following)
        seat = tx.learner(code, digest)
        return seat is not None and (seat.step, seat.following) == (step, following)

    @action(write=True)
    def _where(self, tx: Tx, code: str, token: str, step, following) -> None:
        digest, step, following = self._position(tx, code, token, step, following)
        self._rate(tx, code, digest, "where")
        tx.update_learner(code, digest, step=step, following=following)
        tx.update_room(code, ("activity",))

    def _position(self, tx: Tx, code: str, token: str, step, following) -> tuple[str, int, bool]:
        """(seat's digest, step, following) checked against the room's lesson and the seat."""
        room, _ = self._live(tx, code)
        step = rules.check_step(step, len(self._lesson(room).steps), exploring=True)
        return self._seat(tx, code, token), step, rules.check_flag(following)

    def _set_seat(self, tx: Tx, code: str, token: str, kind: str, **fields) -> None:
        """A learner's own setting of their seat (`kind`: its rate limit), in the open room: an activity."""
        self._live(tx, code)
        digest = self._seat(tx, code, token)
        self._rate(tx, code, digest, kind)
        tx.update_learner(code, digest, **fields)
        tx.update_room(code, ("activity",))

    @action(write=True)
    def set_lang(self, tx: Tx, code: str, token: str, lang) -> None:
        """A learner now reads in `lang` (they switched the app's language): the facilitator's count of languages
        and the projector's texts follow."""
        self._set_seat(tx, code, token, "lang", lang=rules.clean_lang(lang))

    def read_in(self, code: str, token: str, stored: str | None, reading: str) -> str:
        """A learner's seat brought to the language they read in now (`reading`, their page's): `stored` is the
        language their session last wrote to the seat or found there. While the two agree nothing is read or
        written; a switch is one write. A refusal that passes (the rate limit, the database busy or away) leaves
        the seat's language as it was and returns `stored`, so the session's next call writes again, until the
        facilitator's count and the projector have it. Returns the language to keep as stored; other refusals
        (the seat is gone) are raised."""
        if stored == reading:
            return reading
        try:
            self.set_lang(code, token, reading)
        except RoomError as e:
            if e.passing:
                return stored
            raise
        return reading

    @action(write=True)
    def set_lost(self, tx: Tx, code: str, token: str, lost) -> None:
        self._set_seat(tx, code, token, "lost", lost=rules.check_flag(lost))

    @action(write=True)
    def answer(self, tx: Tx, code: str, token: str, raw) -> bool:
        """A learner's response to the open question, validated against its kind (core.lessons.parse_response):
        True when kept, False when this learner had already answered (a second tab answers nothing).
        RoomError('bad_answer') for invalid input (not counted against the limit), 'question_closed' when no
        question is open."""
        from core.lessons import format_response, is_correct, parse_response

        room, _ = self._live(tx, code)
        digest = self._seat(tx, code, token)
        rules.check_open_question(room)
        right = room.answer
        try:
            value = parse_response(right, raw)
        except ValueError as e:
            raise RoomError("bad_answer", str(e)) from None
        self._rate(tx, code, digest, "answer")
        kept = tx.insert_answer(code, room.question, digest, format_response(right, value), is_correct(right, value),
                                self.clock())  # fmt: skip
        if kept:
            tx.update_room(code, ("activity",))
        return kept

    @action(write=False)
    def my_answer(self, tx: Tx, code: str, token: str, question: str) -> tuple[str, bool] | None:
        return tx.my_answer(code, question, rules.digest(token)) if token and isinstance(token, str) else None

    @action(write=True)
    def submit(self, tx: Tx, code: str, token: str, step, sentence) -> None:
        """A learner's gallery sentence for a step of the room's lesson."""
        sentence = rules.clean_sentence(sentence)
        room, _ = self._live(tx, code)
        step = rules.check_step(step, len(self._lesson(room).steps))
        digest = self._seat(tx, code, token)
        self._rate(tx, code, digest, "gallery")
        self._rate(tx, code, "", "gallery_room")
        tx.insert_sentence(code, digest, step, sentence, self.clock())
        tx.update_room(code, ("activity",))


@functools.cache
def shipped_lessons() -> dict[str, Lesson]:
    """lessons/*.toml, read once per process (an operator's script: no page checks)."""
    return load_lessons()


def rooms_on(store: Store) -> Rooms:
    """The room service on `store` and the shipped lessons: what an operator's script (load tests, fault drills)
    opens rooms with."""
    return Rooms(store, shipped_lessons)
