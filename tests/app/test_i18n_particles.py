"""Korean particles after a format field: the catalog writes the undecided pair ({name}을(를)), and app/i18n.text
picks the form the value's final sound takes, so a reader sees 사과를, 책을, 3이, not 사과을(를)."""

import re

import pytest

from app import i18n
from core import grammar


@pytest.mark.parametrize(
    ("said", "written", "form"),
    [
        ("사과", "을(를)", "를"),  # 과: no final consonant
        ("책", "을(를)", "을"),  # 책: ㄱ
        ("연필", "(으)로", "로"),  # ㄹ takes 로
        ("서울", "(으)로", "로"),
        ("집", "(으)로", "으로"),  # ㅂ
        ("나무", "(으)로", "로"),
        ("3", "이(가)", "이"),  # 삼
        ("2", "이(가)", "가"),  # 이
        ("1", "이(가)", "이"),  # 일
        ("1", "(으)로", "로"),  # 일: ㄹ
        ("6", "은(는)", "은"),  # 육
        ("0", "이(가)", "이"),  # 영
        ("0", "(으)로", "으로"),
        ("9", "와(과)", "와"),  # 구
        ("7", "와(과)", "과"),  # 칠
        ("10", "이(가)", "이"),  # 십
        ("20", "(으)로", "으로"),  # 이십
        ("1,000", "은(는)", "은"),  # 천
        ("50000", "을(를)", "을"),  # 오만
        ("1000000000000", "이(가)", "가"),  # 일조
        ("12", "이(가)", "가"),  # 십이
        ("0.25", "(으)로", "로"),  # 영 점 이오
        ("2.0", "(으)로", "으로"),  # 이 점 영
        ("12.5%", "이(가)", "가"),  # 퍼센트
        ("'사과'", "을(를)", "를"),  # a quote is not read
    ],
)
def test_the_form_follows_the_values_final_sound(said, written, form):
    assert i18n.particle(written, said) == form


@pytest.mark.parametrize("said", ["BERT", "GPT-3", "k2", "x", "→", ""])
def test_a_sound_it_cannot_judge_keeps_the_written_pair(said):
    """Latin letters, and a name's number (GPT-3: 쓰리 or 삼), may be read either way."""
    for written in i18n.PARTICLES:
        assert i18n.particle(written, said) == written


def test_pages_fill_the_form_in():
    assert i18n.text("ko", "models", "missing", name="사과", message="m").startswith("사과를 여기서")
    assert i18n.text("ko", "models", "missing", name="책", message="m").startswith("책을 여기서")
    assert i18n.text("ko", "room", "seated", name="연필", code="AB") == "연필로 룸 AB에 참가했습니다."
    assert i18n.text("ko", "room", "seated", name="집", code="AB") == "집으로 룸 AB에 참가했습니다."
    assert i18n.text("ko", "room", "seated", name="Alice", code="AB") == "Alice(으)로 룸 AB에 참가했습니다."
    assert i18n.text("ko", "masks", "cut", i=3, n=2_000, k=40).startswith("문장 3은 토큰이 2,000개입니다.")
    assert i18n.text("ko", "masks", "cut", i=2, n=2_000, k=40).startswith("문장 2는 토큰이")
    said = i18n.text("ko", "long_maps", "beyond_context", n=10_000, model="서울", limit=2048)
    assert said.startswith("n = 10,000은 서울이 학습한 2,048개 위치를")


def test_the_value_is_read_as_the_format_spec_shows_it():
    """{n:,} shows 1,000 (천: 은); the field's spec is applied before the sound is judged."""
    s = i18n.section("ko", "common")
    s["_probe"] = "{x:.1f}(으)로, '{name}'을(를), {x:.0f}이(가)"
    try:
        assert i18n.text("ko", "common", "_probe", x=2.04, name="사과") == "2.0으로, '사과'를, 2가"
    finally:
        del s["_probe"]


def test_every_korean_pair_follows_a_field():
    """A pair written anywhere else (after a fixed word) is the translator's to settle in the text itself."""
    stray = []
    for key, value in i18n.flat(i18n.catalog("ko")).items():
        for s in i18n.forms(value):
            rest = grammar.PARTICLE_AFTER_FIELD.sub("", s)
            stray += [f"{key}: {p}" for p in i18n.PARTICLES if p in rest]
    assert not stray, stray


def test_only_korean_writes_particle_pairs():
    assert not any(
        re.search("|".join(map(re.escape, i18n.PARTICLES)), s)
        for lang in ("en", "ja")
        for v in i18n.flat(i18n.catalog(lang)).values()
        for s in i18n.forms(v)
    )
