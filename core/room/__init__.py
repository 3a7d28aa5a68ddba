"""A study room's rules, without a browser or a database: codes and secrets, what a learner may write (display
name, gallery sentence), rate limits, expiry, sizes, steps, the room's histogram of answers (counted as /lessons
counts: core.lessons.distribution), the board and the CSV of answers.

A room is run by one facilitator who holds a secret control token; learners join with a display name only and get
a learner token (their identity in the room, carried in the room link, never a cookie). The room service
(core/room/service.py) applies these rules, each action in one transaction of a store that only stores
(core/room/store.py, core/room/sql.py).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import numbers
import os
import secrets
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.lessons import Answer
from core.spreadsheet import safe_cell as _cell

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read aloud and typed from a projector
CODE_LENGTH = 6
MAX_NAME_CHARS = 40
MAX_SENTENCE_CHARS = 300
MAX_LEARNERS = 200  # per room
MAX_LEARNERS_ALL = 3000  # seated in all open rooms of one database (every replica together)
MAX_OPEN_ROOMS = 200  # open at once in one database
DEFAULT_TTL_H = 24.0
TTL_ENV = "ATTENTION_LAB_ROOM_TTL_H"
# The operator's passcode for opening a room: set, /room asks for it before a room opens (every hosted class server:
# scripts/serve_class.py makes one when none is set); unset, anyone who reaches the server may open one (a laptop).
PASSCODE_ENV = "ATTENTION_LAB_ROOM_PASSCODE"
MAX_PASSCODE_CHARS = 200  # a passcode is a line a facilitator types: /room's box takes this many characters
KEEP_AFTER_CLOSE_S = 3600.0  # a closed or expired room, its names, answers and sentences are deleted after this


@dataclass(frozen=True)
class Limit:
    """At most `count` actions of one kind per learner within `window_s` seconds."""

    count: int
    window_s: float


LIMITS = {
    # per learner (their seat)
    "answer": Limit(10, 10.0),  # answers are one per question anyway; this bounds attempts with bad input
    "lost": Limit(6, 30.0),
    "gallery": Limit(3, 60.0),
    "where": Limit(30, 10.0),  # a learner's page reports (following moves them)
    "lang": Limit(10, 60.0),  # a learner's switches of language
    # per room
    "join": Limit(120, 60.0),  # joins within a minute (a class arriving together)
    "gallery_room": Limit(60, 60.0),  # sentences a facilitator can read in a minute
    # per client (one browser: app.serving.visitor), whatever room
    "join_client": Limit(4, 600.0),  # a learner who left, reloaded or was removed may join again, not fill a room
    "join_miss": Limit(10, 600.0),  # codes tried that open no room: 31^6 codes stay out of reach of guessing
    "create": Limit(3, 600.0),  # rooms one facilitator opens
    "passcode_miss": Limit(10, 600.0),  # operator's passcodes tried in vain: a long random one stays out of reach
}


class RoomError(ValueError):
    """A learner's or facilitator's request that is refused; `key` names the message in the [room] words."""

    def __init__(self, key: str, detail: str = ""):
        self.key = key
        super().__init__(f"{key}: {detail}" if detail else key)

    @property
    def passing(self) -> bool:
        """Refused for now only (a rate limit, the database busy or away): the same request may pass later."""
        return self.key in ("rate", "busy", "unavailable")


# ---- codes and secrets -------------------------------------------------------------------------------------


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(raw: str) -> str | None:
    """A typed code as stored (upper case, spaces and dashes dropped), or None when it cannot be a code."""
    code = "".join(ch for ch in unicodedata.normalize("NFKC", str(raw)).upper() if ch not in " -")
    return code if len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code) else None


def new_token() -> str:
    return secrets.token_urlsafe(18)


def digest(token: str) -> str:
    """What a store keeps of a token: its SHA-256 (a leaked database does not hand out control of rooms)."""
    return hashlib.sha256(str(token).encode("utf-8")).hexdigest()


def same_secret(token: str | None, stored_digest: str) -> bool:
    return bool(token) and hmac.compare_digest(digest(token), stored_digest)


def check_control(token: str | None, stored_digest: str, browser_holds: bool = False) -> None:
    """Only the room's control token, or a browser's control given from it (`browser_holds`: `token` is one that
    browser has not given up), moves it, reveals, sees names, locks, removes or closes."""
    if not (same_secret(token, stored_digest) or browser_holds):
        raise RoomError("not_control")


# Browsers holding a room's control at once, each given its own from the control token (the room opened there, its
# recovery link opened there): a browser given one more drops the oldest given, which then has to open the link again.
MAX_BROWSER_CONTROLS = 20


def controls_to_drop(held: Sequence[str]) -> list[str]:
    """Of a room's browsers' controls, oldest given first, those that go so that one more fits."""
    return list(held[: max(0, len(held) - MAX_BROWSER_CONTROLS + 1)])


SEAT_ID_CHARS = 16  # a seat as the facilitator's page names it: the start of its token's digest (never the token)


def seat_id(stored_digest: str) -> str:
    return stored_digest[:SEAT_ID_CHARS]


def seat_named(seat, stored_digests: Sequence[str]) -> str:
    """The stored digest of the seat a facilitator's page names, or RoomError('no_seat') (gone, or not a seat id)."""
    for d in stored_digests:
        if isinstance(seat, str) and len(seat) == SEAT_ID_CHARS and seat_id(d) == seat:
            return d
    raise RoomError("no_seat")


PASSCODE_GROUPS, PASSCODE_GROUP = 4, 5  # a made-up passcode: 20 characters of CODE_ALPHABET, 31^20 (about 2^99)


def room_passcode(environ: dict | None = None) -> str:
    """The operator's passcode for opening rooms ($ATTENTION_LAB_ROOM_PASSCODE without its outer spaces), '' when
    unset: then anyone may open a room."""
    return (environ if environ is not None else os.environ).get(PASSCODE_ENV, "").strip()


def new_passcode() -> str:
    """A passcode for a class server whose operator set none: read off a terminal and typed by facilitators (no
    0/O, 1/I/L), in groups of five, too many to guess (PASSCODE_GROUPS x PASSCODE_GROUP characters)."""
    return "-".join(
        "".join(secrets.choice(CODE_ALPHABET) for _ in range(PASSCODE_GROUP)) for _ in range(PASSCODE_GROUPS)
    )


def check_opener(from_afar: bool, asks_passcode: bool) -> None:
    """Who may open a room where no passcode guards opening (a laptop run): the browser of the computer that runs the
    app, not a visitor who reached it from elsewhere (through a proxy or a tunnel its owner put in front of it), who
    could otherwise fill it with rooms. RoomError 'open_here_only'."""
    if from_afar and not asks_passcode:
        raise RoomError("open_here_only")


def check_passcode(typed, required_digest: str) -> None:
    """Opening a room on a server with a passcode: the one typed (outer spaces dropped), compared with the
    operator's by digest in constant time. RoomError 'passcode_empty' when none was typed, else 'passcode_wrong'."""
    typed = typed.strip() if isinstance(typed, str) else ""
    if not typed:
        raise RoomError("passcode_empty")
    if len(typed) > MAX_PASSCODE_CHARS or not same_secret(typed, required_digest):  # a megabyte is not hashed
        raise RoomError("passcode_wrong")


@dataclass(frozen=True)
class AgreedPasscode:
    """The passcode the server processes sharing one room database ask for where the operator set none
    (core.room.service.Rooms.agree_passcode): the one this process made (then its log is to print it), or the one
    `made_by` made at `made` (a moment of the store's clock), whose log printed it."""

    made_here: bool
    made_by: str
    made: float


MAX_MADE_BY_CHARS = 200  # a server's name as kept beside its passcode (host and process)


def ttl_seconds(environ: dict | None = None) -> float:
    """Rooms expire this many seconds after they open: $ATTENTION_LAB_ROOM_TTL_H hours (default 24)."""
    raw = (environ if environ is not None else os.environ).get(TTL_ENV, "")
    try:
        hours = float(raw) if raw.strip() else DEFAULT_TTL_H
    except ValueError:
        hours = DEFAULT_TTL_H
    return max(hours, 0.01) * 3600.0 if hours == hours else DEFAULT_TTL_H * 3600.0


def seconds_left(expires: float, now: float) -> int:
    """Whole seconds until a room expires, never below 0 (a cookie that lasts as long as the room)."""
    return max(0, int(expires - now))


# ---- what a learner writes ---------------------------------------------------------------------------------


MAX_MARKS = 4  # combining marks in a row: Thai, Hindi, Hebrew, Vietnamese need no more


def _few_marks(text: str) -> str:
    """At most MAX_MARKS combining marks on one letter: a pile of them ("Zalgo" text) draws a name over the board's
    rows above and below it."""
    out, run = [], 0
    for ch in text:
        run = run + 1 if unicodedata.category(ch) in ("Mn", "Me") else 0
        if run <= MAX_MARKS:
            out.append(ch)
    return "".join(out)


# Unicode calls these letters (Lo) or a symbol (So), yet they draw nothing: a name of them alone is a blank row on the
# facilitator's board and the projector
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers (choseong, jungseong, compatibility,
# halfwidth), Braille pattern blank


def visible(ch: str) -> bool:
    """Whether a character draws something on its own: a letter, number, punctuation mark or symbol (emoji included),
    not one of the BLANK_LETTERS. Spaces (Zs), format characters (Cf: zero-width ones), combining marks and variation
    selectors (Mn, Me), controls, private-use and unassigned code points (Cc, Co, Cn) do not."""
    return unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_LETTERS


JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner


def _joins(ch: str) -> bool:
    """Whether a joiner beside this character can change how the text draws: a non-ASCII letter, mark or symbol
    (Persian and Indic words, emoji sequences after a variation selector), not an ASCII letter, where it draws nothing."""
    return ord(ch) > 0x7F and unicodedata.category(ch)[0] in "LMS" and ch not in BLANK_LETTERS


def _drop_format(text: str) -> str:
    """Format characters go (bidi overrides, zero-width spaces), except one joiner between two characters it joins:
    Persian writes a ZWNJ inside words and Hindi one or a ZWJ inside conjuncts; an emoji family or a rainbow flag is
    emoji joined by ZWJ. Dropped, the word draws with the wrong letter forms and the family as three faces."""
    out: list[str] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) != "Cf":
            out.append(ch)
        elif ch in JOINERS and out and _joins(out[-1]) and i + 1 < len(text) and _joins(text[i + 1]):
            out.append(ch)
    return "".join(out)


RAW_CHARS = 4  # a name or sentence sent with more than this many times its limit is too long before it is read


def _clean(raw, limit: int, empty_key: str, long_key: str) -> str:
    if not isinstance(raw, str):
        raise RoomError(empty_key)
    # a browser's box sends at most `limit` characters; a crafted message up to a megabyte, which the loops below
    # would read for most of a second while every visitor's page waits for the interpreter lock
    if len(raw) > RAW_CHARS * limit:
        raise RoomError(long_key, f"{len(raw)} characters sent > {RAW_CHARS} * {limit}")
    text = unicodedata.normalize("NFC", raw)
    # control and format characters (newlines, bidi overrides, zero-width joiners on their own) would let a name
    # pose as another or break the board's lines
    text = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text)
    text = _drop_format(text)
    text = _few_marks(text)
    text = " ".join(text.split())
    if not any(visible(ch) for ch in text):
        raise RoomError(empty_key)
    if len(text) > limit:
        raise RoomError(long_key, f"{len(text)} > {limit}")
    return text


def clean_name(raw) -> str:
    """A display name: one line, 1..40 characters after trimming, at least one of them visible."""
    return _clean(raw, MAX_NAME_CHARS, "name_empty", "name_long")


def name_key(name: str) -> str:
    """A display name as two learners' names are compared: compatibility forms folded (full-width letters), case
    folded, only what draws kept (spaces, joiners and marks' order do not tell two people apart)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", name).casefold() if visible(ch))


def check_name_free(name: str, taken: Iterable[str]) -> None:
    """A learner joins under a name no learner of the room has (name_key): the facilitator's board, gallery, CSV and
    remove list name learners only so, and a second "Ana" (a classmate's name taken by a prankster, or "ＡＮＡ") could
    not be told from the first, nor removed without guessing which. RoomError('name_taken')."""
    key = name_key(name)
    if any(name_key(other) == key for other in taken):
        raise RoomError("name_taken")


def clean_sentence(raw) -> str:
    """A gallery sentence: one line, 1..300 characters, at least one visible (shown to others as plain text only)."""
    return _clean(raw, MAX_SENTENCE_CHARS, "sentence_empty", "sentence_long")


def allowed(times: Iterable[float], now: float, limit: Limit) -> bool:
    """Whether one more action fits: fewer than limit.count earlier actions within the window."""
    return sum(1 for t in times if now - limit.window_s < t <= now) < limit.count


ATTEMPTS = {"join_miss": "join_attempts", "passcode_miss": "passcode_attempts"}  # guesses' limits, in their words


def check_rate(kind: str, times: Iterable[float], now: float) -> None:
    """One more action of `kind` (a key of LIMITS), or RoomError: 'join_attempts' for codes tried in vain,
    'passcode_attempts' for passcodes tried in vain, else 'rate'. The store counts the times and records the action in the same transaction, under a lock."""
    if not allowed(times, now, LIMITS[kind]):
        raise RoomError(ATTEMPTS.get(kind, "rate"), kind)


def check_open_question(room, question: str | None = None) -> None:
    """A reveal, or an answer to `question`, needs that question open in the room (a page drawn before the room
    moved on may still offer it)."""
    if room.phase != "open" or (question is not None and room.question != question):
        raise RoomError("question_closed")


def check_join(locked: bool, in_room: int, seated_all: int) -> None:
    """Whether one more learner may sit: the facilitator has not locked joining, and the room and the database
    have seats left."""
    if locked:
        raise RoomError("room_locked")
    if in_room >= MAX_LEARNERS:
        raise RoomError("room_full")
    if seated_all >= MAX_LEARNERS_ALL:
        raise RoomError("server_full_rooms")


def check_open(open_rooms: int) -> None:
    if open_rooms >= MAX_OPEN_ROOMS:
        raise RoomError("server_full_rooms")


def forget_before(now: float) -> float:
    """Rooms that closed (or expired) before this moment are deleted with everything in them."""
    return now - KEEP_AFTER_CLOSE_S


def events_before(now: float) -> float:
    """Counted actions older than every limit's window are deleted."""
    return now - max(limit.window_s for limit in LIMITS.values())


# ---- answers -----------------------------------------------------------------------------------------------


def right_answer(room) -> Answer | None:
    """The right answer of the question open (or revealed) in `room`, typed; None while no question is open."""
    return room.answer if room.question else None


def counted(room, responses: Sequence[str], mine: str | None = None):
    """The room's responses to its open question counted as /lessons counts a learner's own
    (core.lessons.distribution: numbers binned), right bars marked once revealed; None while no question is open.
    `mine`: the viewer's own response, outlined."""
    from core.lessons import distribution

    right = right_answer(room)
    if right is None:
        return None
    return distribution(right, responses, reveal=room.phase == "revealed", mine=mine)


def answer_to_text(answer: Answer) -> str:
    """The right answer as a learner reads it (an order as 'a > b > c', a number to 6 significant digits)."""
    from core.lessons import format_response

    return format_response(answer, answer.correct)


# ---- the board and the CSV ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerRow:
    question: str
    learner: str  # display name
    response: str
    correct: bool
    at: float  # seconds since the epoch


@dataclass(frozen=True)
class Board:
    steps: tuple[int, ...]  # how many learners are on each step (index = step)
    elsewhere: int  # learners exploring a page that is not the room's step
    rows: tuple[tuple[str, int, bool, int, int], ...]  # facilitator only: name, step, following, answered, right
    questions: tuple[tuple[str, int, int], ...]  # question id, answers, right


def board(n_steps: int, learners: Sequence[tuple[str, int, bool]], answers: Sequence[AnswerRow]) -> Board:
    """learners: (name, step, following) each; a step outside 0..n_steps-1 counts as elsewhere."""
    on = [0] * n_steps
    elsewhere = 0
    for _, step, _ in learners:
        if 0 <= step < n_steps:
            on[step] += 1
        else:
            elsewhere += 1
    per_name = Counter(a.learner for a in answers)
    right_name = Counter(a.learner for a in answers if a.correct)
    rows = tuple((name, step, following, per_name[name], right_name[name]) for name, step, following in learners)
    qs: dict[str, list[int]] = {}
    for a in answers:
        qs.setdefault(a.question, [0, 0])
        qs[a.question][0] += 1
        qs[a.question][1] += int(a.correct)
    return Board(tuple(on), elsewhere, rows, tuple((q, n, r) for q, (n, r) in qs.items()))


def answers_csv(answers: Sequence[AnswerRow], steps: dict[str, int] | None = None) -> str:
    """question, step, name, response, correct, answered_at (UTC ISO 8601), one row per answer."""
    import datetime as dt

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["question", "step", "name", "response", "correct", "answered_at"])
    for a in answers:
        at = dt.datetime.fromtimestamp(a.at, dt.UTC).isoformat(timespec="seconds")
        step = "" if steps is None or a.question not in steps else steps[a.question] + 1
        w.writerow([_cell(a.question), step, _cell(a.learner), _cell(a.response), int(a.correct), at])
    return out.getvalue()


# ---- what a request may set ---------------------------------------------------------------------------------
# A value a widget or a crafted message can send (a selectbox's free text, None from a half-finished toggle, 999) is
# checked against the room's lesson by the room service before a store keeps it.

EXPLORING = -1  # a learner's position while on a page that is not the room's step


def check_step(step, n_steps: int, *, exploring: bool = False) -> int:
    """A step number a request may set: an integer in 0..n_steps-1 (or EXPLORING for a learner's own position
    when `exploring`). Anything else (None, text, a bool, a float, 999) is RoomError('bad_step')."""
    if isinstance(step, bool) or not isinstance(step, numbers.Integral):
        raise RoomError("bad_step", repr(step)[:40])
    step = int(step)
    if not (0 <= step < n_steps or (exploring and step == EXPLORING)):
        raise RoomError("bad_step", f"{step} not in 0..{n_steps - 1}")
    return step


def check_flag(value) -> bool:
    """A toggle's value: True or False only (a crafted message may send anything)."""
    if not isinstance(value, bool):
        raise RoomError("bad_value", repr(value)[:40])
    return value


def step_of(room, lesson) -> int:
    """The room's step as a page may index the lesson with: a room whose lesson file lost steps since it moved
    there shows the lesson's last step instead of failing."""
    return min(max(int(room.step), 0), len(lesson.steps) - 1)


MAX_LANG_CHARS = 8


def clean_lang(raw) -> str:
    """The language a learner reads in, as a store keeps it: a short code as the app names it ('en', 'ja')."""
    if not isinstance(raw, str) or not raw.isascii() or not raw.isalnum() or len(raw) > MAX_LANG_CHARS:
        raise RoomError("bad_value", repr(raw)[:40])
    return raw.lower()


@dataclass(frozen=True)
class FacilitatorView:
    """A facilitator's live panel: the room, how many learners, the histogram of the open question (None when
    none), the board, "I'm lost", the gallery of the room's step and the seats."""

    room: object  # core.room.store.Room
    learners: int
    hist: object  # core.lessons.Distribution | None
    board: Board
    lost: int
    gallery: tuple[tuple[str, str], ...]
    seats: tuple[tuple[str, str], ...]
    languages: tuple[tuple[str, int], ...]  # (language, learners reading in it), every language present

    @property
    def polled(self) -> tuple[int, int]:
        """The room's (version, activity) when this was read: what a poll compares against."""
        return self.room.version, self.room.activity


@dataclass(frozen=True)
class Following:
    """What a learner's panel reads at each run (Rooms.follow): the room's (version, activity), and where the version
    moved since the panel's last read, the room and the learner's seat as stored (None: not a seat of the room)."""

    polled: tuple[int, int]
    room: object | None  # core.room.store.Room; None: the version the panel knows, nothing new to draw
    seat: object | None  # core.room.store.Learner


def by_language(languages: Iterable[tuple[str, int]], known: Iterable[str]) -> tuple[list[tuple[str, int]], int]:
    """(language, learners) for each of the `known` languages the room reads in, in known's order, and how many
    learners read in any other (a language the server has no words for: all counted together)."""
    counts = dict(languages)
    return [(code, counts.pop(code)) for code in known if code in counts], sum(counts.values())


@dataclass(frozen=True)
class ProjectorView:
    """What the class sees: the room, the histogram of the open question (None when none), and how many learners
    read in each language present (no names)."""

    room: object  # core.room.store.Room
    hist: object  # core.lessons.Distribution | None
    languages: tuple[tuple[str, int], ...]

    @property
    def learners(self) -> int:
        return sum(n for _, n in self.languages)
