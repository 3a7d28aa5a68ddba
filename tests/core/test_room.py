"""core/room's rules without a store: codes, names and sentences, rate limits, expiry, board, CSV."""

from __future__ import annotations

import csv
import io
import unicodedata

import pytest

from core import room as rules
from core.room import AnswerRow, Limit, RoomError


def test_codes_are_short_unambiguous_and_typed_loosely():
    codes = {rules.new_code() for _ in range(200)}
    assert len(codes) > 190 and all(len(c) == 6 and set(c) <= set(rules.CODE_ALPHABET) for c in codes)
    assert not set("01ILO") & set(rules.CODE_ALPHABET)
    assert rules.normal_code(" ab-c 23d ") == "ABC23D" and rules.normal_code("ＡＢＣ２３Ｄ") == "ABC23D"
    for bad in ("ABC", "ABC23DE", "ABC10D", "<b>x</b>", ""):
        assert rules.normal_code(bad) is None


def test_secrets_are_kept_as_digests_and_compared_whole():
    token = rules.new_token()
    assert rules.same_secret(token, rules.digest(token))
    assert not rules.same_secret(token[:-1], rules.digest(token))
    assert not rules.same_secret(None, rules.digest(token)) and not rules.same_secret("", rules.digest(""))
    assert len(rules.digest(token)) == 64 and token not in rules.digest(token)


def test_names_are_one_bounded_line():
    assert rules.clean_name("  Ana \n Bo\t") == "Ana Bo"
    assert rules.clean_name("Ana\u202eoB") == "AnaoB"  # a right-to-left override cannot disguise a name
    assert rules.clean_name("猫" * 40) == "猫" * 40
    zalgo = "A" + "\u0336\u0489\u035b" * 12 + "na"  # 36 marks (one enclosing) on one letter would cover the rows around
    kept = rules.clean_name(zalgo)
    assert kept[0] == "A" and kept[-2:] == "na" and len(kept) == 3 + rules.MAX_MARKS, ascii(kept)
    for real in ("ก๊ก", "नमस्ते", "Nguyễn", "שָׁלוֹם"):  # Thai, Hindi, Vietnamese and pointed Hebrew keep their marks
        assert rules.clean_name(real) == unicodedata.normalize("NFC", real)
    for bad, key in (("", "name_empty"), ("\u200b\u200b", "name_empty"), ("x" * 41, "name_long"), (3, "name_empty")):
        with pytest.raises(RoomError, match=key):
            rules.clean_name(bad)
    with pytest.raises(RoomError, match="sentence_long"):
        rules.clean_sentence("x" * 301)


# characters that draw nothing, by class: a name or sentence of them alone is a blank row on the board
BLANKS = {
    "Hangul filler": "\u3164\u3164",
    "Hangul choseong and jungseong fillers": "\u115f\u1160",
    "halfwidth Hangul filler": "\uffa0",
    "Braille pattern blank": "\u2800\u2800\u2800",
    "en quad to hair space": "".join(chr(c) for c in range(0x2000, 0x200B)),
    "ideographic space": "\u3000",
    "zero-width characters": "\u200b\u200c\u200d\u2060\ufeff",
    "variation selectors alone": "\ufe0f\U000e0100",
    "combining marks alone": "\u0301\u20dd",
    "combining marks on a space": " \u0301\u0302",
    "private use and unassigned": "\ue000\U0010fffd\u0378",
    "all of them": "\u3164 \u2800\u3000\u200b\ufe0f\u0301\uffa0",
}


def test_a_name_or_sentence_far_over_its_limit_is_refused_before_its_characters_are_read(monkeypatch):
    """A browser sends a name or a gallery sentence of at most its box's max_chars; a crafted message sends up to the
    server's 1 MB, and _clean's per-character loops took 0.5-0.9 s of CPU on a million characters (holding the
    interpreter lock every visitor's page shares) before saying it was too long, in a learner's fragment that takes
    no page slot, and before the sentence's rate limit. Now the work is bounded by the limit, not by the message."""
    read = [0]

    class Counting:
        def __getattr__(self, name):
            real = getattr(unicodedata, name)

            def counted(*args):
                read[0] += max((len(a) for a in args if isinstance(a, str)), default=0)
                return real(*args)

            return counted

    monkeypatch.setattr(rules, "unicodedata", Counting())
    for clean, limit, key in ((rules.clean_name, rules.MAX_NAME_CHARS, "name_long"),
                              (rules.clean_sentence, rules.MAX_SENTENCE_CHARS, "sentence_long")):  # fmt: skip
        for raw in ("a " * 500_000, "\u0301" * 1_000_000, "猫" * 1_000_000):
            read[0] = 0
            with pytest.raises(RoomError, match=key):
                clean(raw)
            assert read[0] <= 4 * limit, (clean.__name__, ascii(raw[:4]), read[0])


@pytest.mark.parametrize("blank", list(BLANKS.values()), ids=list(BLANKS))
def test_a_name_or_sentence_with_nothing_visible_is_empty(blank):
    with pytest.raises(RoomError, match="^name_empty$"):
        rules.clean_name(blank)
    with pytest.raises(RoomError, match="^sentence_empty$"):
        rules.clean_sentence(blank)
    with pytest.raises(RoomError, match="^sentence_empty$"):
        rules.clean_sentence(blank * 3)


@pytest.mark.parametrize(
    "real",
    [
        "김민지",  # Korean
        "\u1100\u1161",  # conjoining jamo (NFC makes them one syllable)
        "\u115f\u1161",  # a choseong filler before a real vowel still draws the vowel
        "さくら",
        "ㄱ",  # a Hangul compatibility letter that draws
        "สมชาย",  # Thai
        "नमस्ते",  # Hindi
        "😀",
        "👩\u200d💻",  # a ZWJ sequence
        "🇯🇵",  # a flag (two regional indicators)
        "1\ufe0f\u20e3",  # a keycap
        "محمد",  # Arabic
        "שָׁלוֹם",  # pointed Hebrew
        "?",
        "\u3164A",  # a filler beside a letter: the letter draws
    ],
)
def test_names_in_any_script_or_of_emoji_stay_valid(real):
    assert rules.clean_name(real)
    assert rules.clean_sentence(f"{real} {real}")


JOINED = {
    "Persian ZWNJ inside a word": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "Hindi ZWNJ in a half form": "\u0915\u094d\u200c\u0937",
    "Malayalam ZWJ chillu": "\u0d28\u0d4d\u200d",  # at the end: the joiner goes (nothing after it to join)
    "an emoji family": "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "a rainbow flag (after a variation selector)": "\U0001f3f3\ufe0f\u200d\U0001f308",
}


@pytest.mark.parametrize("word", list(JOINED.values()), ids=list(JOINED))
def test_a_joiner_inside_a_word_or_emoji_sequence_is_kept(word):
    kept = word.rstrip("\u200c\u200d")
    assert rules.clean_name(word) == kept
    assert rules.clean_sentence(f"{word} {word}") == f"{kept} {kept}"


def test_joiners_that_join_nothing_are_dropped():
    # beside ASCII letters a joiner draws nothing: two names that look the same would differ
    assert rules.clean_name("A\u200dnn\u200c") == "Ann"
    assert rules.clean_name("\u200d\U0001f600") == "\U0001f600"  # nothing before it
    assert rules.clean_name("\u0645\u200c\u200c\u200c\u062e") == "\u0645\u200c\u062e"  # one in a row
    assert rules.clean_name("\u0645 \u200c\u062e") == "\u0645 \u062e"  # after a space
    assert rules.clean_name("\u0645\u200c\u202e\u062e") == "\u0645\u062e"  # a bidi override beside it goes too
    assert rules.clean_name("\u3164\u200d\u3164x") == "\u3164\u3164x"  # fillers join nothing


def test_visible_counts_letters_numbers_punctuation_and_symbols_not_fillers():
    assert all(rules.visible(ch) for ch in "aЖ가あ中ก1٣.,؟€😀\U0001f1ef")
    assert not any(rules.visible(ch) for ch in "\u3164\u115f\u1160\uffa0\u2800 \u3000\u200b\ufe0f\u0301\x00\ue000")


def test_rate_limit_counts_the_window_only():
    limit = Limit(3, 10.0)
    assert rules.allowed([], 100.0, limit)
    assert rules.allowed([91.0, 95.0], 100.0, limit)
    assert not rules.allowed([91.0, 95.0, 99.0], 100.0, limit)
    assert rules.allowed([89.0, 90.0, 95.0, 99.0], 100.0, limit)  # 89 and 90 fell out of (90, 100]


def test_the_operators_passcode_is_read_from_the_environment_and_a_made_up_one_is_long():
    assert rules.room_passcode({}) == "" and rules.room_passcode({rules.PASSCODE_ENV: "   "}) == ""
    assert rules.room_passcode({rules.PASSCODE_ENV: " open sesame\n"}) == "open sesame"
    made = {rules.new_passcode() for _ in range(50)}
    assert len(made) == 50
    for passcode in made:
        groups = passcode.split("-")
        assert len(groups) == rules.PASSCODE_GROUPS and all(len(g) == rules.PASSCODE_GROUP for g in groups)
        assert set("".join(groups)) <= set(rules.CODE_ALPHABET)
    assert len(rules.CODE_ALPHABET) ** (rules.PASSCODE_GROUPS * rules.PASSCODE_GROUP) > 2**96  # beyond guessing


def test_ttl_from_the_environment():
    assert rules.ttl_seconds({}) == 24 * 3600
    assert rules.ttl_seconds({rules.TTL_ENV: "1.5"}) == 5400
    assert rules.ttl_seconds({rules.TTL_ENV: "soon"}) == 24 * 3600
    assert rules.ttl_seconds({rules.TTL_ENV: "nan"}) == 24 * 3600


def test_the_control_cookie_lasts_the_seconds_left_in_the_room():
    assert rules.seconds_left(1000.0, 400.5) == 599  # whole seconds, rounded down
    assert rules.seconds_left(1000.0, 1200.0) == 0  # an expired room: the cookie ends now


def test_csv_neutralises_formulas_and_round_trips():
    rows = [AnswerRow("q1", '=HYPERLINK("x")', "+1", True, 0.0), AnswerRow("q1", 'Ana, "A"', "@x", False, 60.0)]
    parsed = list(csv.reader(io.StringIO(rules.answers_csv(rows, {"q1": 2}))))
    assert parsed[0] == ["question", "step", "name", "response", "correct", "answered_at"]
    assert parsed[1] == ["q1", "3", '\'=HYPERLINK("x")', "'+1", "1", "1970-01-01T00:00:00+00:00"]
    assert parsed[2] == ["q1", "3", 'Ana, "A"', "'@x", "0", "1970-01-01T00:01:00+00:00"]


def test_board_counts_steps_and_questions():
    answers = [AnswerRow("q1", "Ana", "1", True, 0), AnswerRow("q1", "Bo", "2", False, 1),
               AnswerRow("q2", "Ana", "x", True, 2)]  # fmt: skip
    board = rules.board(3, [("Ana", 1, True), ("Bo", -1, False), ("Cy", 1, True)], answers)
    assert board.steps == (0, 2, 0) and board.elsewhere == 1
    assert board.rows == (("Ana", 1, True, 2, 2), ("Bo", -1, False, 1, 0), ("Cy", 1, True, 0, 0))
    assert board.questions == (("q1", 2, 1), ("q2", 1, 1))


def test_csv_keeps_negative_numbers_and_neutralises_full_width_formulas():
    rows = [AnswerRow("q1", name, response, True, 0.0) for name, response in
            [("Ana", "-0.25"), ("Bo", "-3"), ("Cy", "-1e-3"), ("Di", "-1+2"), ("Eve", "＝HYPERLINK(\"x\")"),
             ("Fay", "＋1"), ("＠Gus", "－2"), ("Hal", "-"), ("Ida", "-.5")]]  # fmt: skip
    parsed = list(csv.reader(io.StringIO(rules.answers_csv(rows))))[1:]
    assert [(r[2], r[3]) for r in parsed] == [
        ("Ana", "-0.25"), ("Bo", "-3"), ("Cy", "-1e-3"), ("Di", "'-1+2"), ("Eve", "'＝HYPERLINK(\"x\")"),
        ("Fay", "'＋1"), ("'＠Gus", "'－2"), ("Hal", "'-"), ("Ida", "-.5")]  # fmt: skip


def test_learners_are_counted_by_language_in_the_servers_order_and_the_rest_together():
    read_in, others = rules.by_language([("ko", 3), ("xx", 2), ("en", 1), ("yy", 4)], ("en", "ja", "ko"))
    assert (read_in, others) == ([("en", 1), ("ko", 3)], 6)  # xx 2 + yy 4 read in languages without words here
    assert rules.by_language([], ("en",)) == ([], 0)
