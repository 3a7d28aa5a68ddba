"""Generated English sentences with their Japanese and Korean translations and the word alignments between them.

Why generate: no small trained encoder-decoder ships in a package, so the repo trains one, and with generated pairs
the alignment of every target word to its source word is KNOWN, so a cross-attention head's alignment can be
measured instead of eyeballed (core/encoder_decoder/alignment.py).

English is subject-verb-object; Japanese and Korean are subject-object-verb with particles (は/が, を, で; 는/은,
를/을, 에서), so alignments cross: the English verb (second) is the last Japanese word, a place at the end of the
English sentence comes before the object in Japanese. Tokens are words separated by spaces on both sides (the
particles are tokens of their own), so one token is one word and alignments are between token positions.

    English:  the big cat sees the ball in the park .
    Japanese: 大きい 猫 は 公園 で ボール を 見る 。          alignment: big-大きい cat-猫 sees-見る ball-ボール
    Korean:   큰 고양이 는 공원 에서 공 을 본다 .                        in-で park-公園 .-。

Every generator call is deterministic in its seed.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

LANGUAGES = ("ja", "ko")
LANGUAGE_TAGS = {"ja": "<2ja>", "ko": "<2ko>"}  # the first source token says which language to write

# English singular, plural; Japanese; Korean (with its final consonant deciding 는/은, 를/을).
ANIMATE = [
    ("cat", "cats", "猫", "고양이"), ("dog", "dogs", "犬", "개"), ("bird", "birds", "鳥", "새"),
    ("child", "children", "子供", "아이"), ("teacher", "teachers", "先生", "선생님"), ("farmer", "farmers", "農夫", "농부"),
    ("king", "kings", "王", "왕"), ("queen", "queens", "女王", "여왕"), ("girl", "girls", "少女", "소녀"),
    ("boy", "boys", "少年", "소년"), ("fox", "foxes", "狐", "여우"), ("horse", "horses", "馬", "말"),
    ("doctor", "doctors", "医者", "의사"), ("friend", "friends", "友達", "친구"), ("student", "students", "学生", "학생"),
    ("owl", "owls", "ふくろう", "부엉이"),
]  # fmt: skip
THINGS = [
    ("ball", "balls", "ボール", "공"), ("book", "books", "本", "책"), ("apple", "apples", "りんご", "사과"),
    ("box", "boxes", "箱", "상자"), ("cake", "cakes", "ケーキ", "케이크"), ("letter", "letters", "手紙", "편지"),
    ("hat", "hats", "帽子", "모자"), ("bag", "bags", "かばん", "가방"), ("egg", "eggs", "卵", "달걀"),
    ("song", "songs", "歌", "노래"), ("door", "doors", "ドア", "문"), ("flower", "flowers", "花", "꽃"),
]  # fmt: skip
PLACES = [
    ("park", "公園", "공원"), ("garden", "庭", "정원"), ("school", "学校", "학교"), ("house", "家", "집"),
    ("city", "町", "도시"), ("kitchen", "台所", "부엌"), ("forest", "森", "숲"),
]  # fmt: skip
# English present (3rd person singular), present plural, past; Japanese present, past; Korean present, past.
TRANSITIVE = [
    ("sees", "see", "saw", "見る", "見た", "본다", "봤다"),
    ("eats", "eat", "ate", "食べる", "食べた", "먹는다", "먹었다"),
    ("finds", "find", "found", "見つける", "見つけた", "찾는다", "찾았다"),
    ("carries", "carry", "carried", "運ぶ", "運んだ", "나른다", "날랐다"),
    ("makes", "make", "made", "作る", "作った", "만든다", "만들었다"),
    ("opens", "open", "opened", "開ける", "開けた", "연다", "열었다"),
    ("washes", "wash", "washed", "洗う", "洗った", "씻는다", "씻었다"),
    ("buys", "buy", "bought", "買う", "買った", "산다", "샀다"),
    ("holds", "hold", "held", "持つ", "持った", "든다", "들었다"),
    ("chases", "chase", "chased", "追いかける", "追いかけた", "쫓는다", "쫓았다"),
    ("helps", "help", "helped", "手伝う", "手伝った", "돕는다", "도왔다"),
    ("likes", "like", "liked", "好む", "好んだ", "좋아한다", "좋아했다"),
]
INTRANSITIVE = [
    ("sleeps", "sleep", "slept", "眠る", "眠った", "잔다", "잤다"),
    ("runs", "run", "ran", "走る", "走った", "달린다", "달렸다"),
    ("sings", "sing", "sang", "歌う", "歌った", "노래한다", "노래했다"),
    ("walks", "walk", "walked", "歩く", "歩いた", "걷는다", "걸었다"),
    ("laughs", "laugh", "laughed", "笑う", "笑った", "웃는다", "웃었다"),
    ("swims", "swim", "swam", "泳ぐ", "泳いだ", "헤엄친다", "헤엄쳤다"),
    ("waits", "wait", "waited", "待つ", "待った", "기다린다", "기다렸다"),
]
ADJECTIVES = [
    ("big", "大きい", "큰"), ("small", "小さい", "작은"), ("red", "赤い", "빨간"), ("white", "白い", "하얀"),
    ("black", "黒い", "검은"), ("happy", "幸せな", "행복한"), ("young", "若い", "젊은"), ("old", "古い", "오래된"),
    ("quiet", "静かな", "조용한"), ("new", "新しい", "새로운"),
]  # fmt: skip
PARTICLES = {
    "ja": {"topic": "は", "object": "を", "place": "で", "end": "。"},
    "ko": {"topic": ("은", "는"), "object": ("을", "를"), "place": "에서", "end": "."},
}
SPECIAL_TOKENS = ["<pad>", "</s>", "<unk>", "<2ja>", "<2ko>"]


def _has_final_consonant(word: str) -> bool:
    """Hangul syllable U+AC00 + (initial * 21 + medial) * 28 + final: final 0 means it ends in a vowel."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


def _korean_particle(kind: str, noun: str) -> str:
    particle = PARTICLES["ko"][kind]
    if isinstance(particle, tuple):  # (after a consonant, after a vowel)
        return particle[0] if _has_final_consonant(noun) else particle[1]
    return particle


@dataclass(frozen=True)
class Pair:
    """One generated sentence and its translation. alignment: (source word index, target word index) for every
    target word that translates a source word (particles that mark a role align to nothing, except で/에서 which
    align to 'in')."""

    source: list[str]
    target: list[str]
    language: str
    alignment: list[tuple[int, int]]

    @property
    def source_text(self) -> str:
        return " ".join(self.source)

    @property
    def target_text(self) -> str:
        return " ".join(self.target)


@dataclass(frozen=True)
class Meaning:
    """What a sentence says, independent of the language: indices into the word lists above."""

    subject: int  # ANIMATE
    subject_plural: bool
    subject_adjective: int | None
    verb: int  # TRANSITIVE or INTRANSITIVE
    transitive: bool
    past: bool
    obj: int | None = None  # ANIMATE + THINGS (animate first)
    obj_plural: bool = False
    obj_adjective: int | None = None
    place: int | None = None


OBJECTS = ANIMATE + THINGS


def english(m: Meaning) -> tuple[list[str], dict[str, int]]:
    """English words and where each part of the meaning sits (part -> word index)."""
    words, at = [], {}

    def noun_phrase(noun, plural, adjective, role):
        words.append("the")
        if adjective is not None:
            at[f"{role}_adj"] = len(words)
            words.append(ADJECTIVES[adjective][0])
        at[role] = len(words)
        words.append(noun[1] if plural else noun[0])

    noun_phrase(ANIMATE[m.subject], m.subject_plural, m.subject_adjective, "subject")
    verbs = TRANSITIVE if m.transitive else INTRANSITIVE
    verb = verbs[m.verb]
    at["verb"] = len(words)
    words.append(verb[2] if m.past else (verb[1] if m.subject_plural else verb[0]))
    if m.transitive:
        noun_phrase(OBJECTS[m.obj], m.obj_plural, m.obj_adjective, "object")
    if m.place is not None:
        at["in"] = len(words)
        words += ["in", "the"]
        at["place"] = len(words)
        words.append(PLACES[m.place][0])
    at["end"] = len(words)
    words.append(".")
    return words, at


def translation(m: Meaning, language: str) -> tuple[list[str], dict[str, int]]:
    """Japanese or Korean words (subject-object-verb with particles) and where each part sits."""
    col = 1 if language == "ja" else 2  # column of the word lists (after English)
    words, at = [], {}

    def noun_phrase(noun_word: str, adjective, role, particle_kind):
        if adjective is not None:
            at[f"{role}_adj"] = len(words)
            words.append(ADJECTIVES[adjective][col])
        at[role] = len(words)
        words.append(noun_word)
        words.append(PARTICLES["ja"][particle_kind] if language == "ja" else _korean_particle(particle_kind, noun_word))

    noun_phrase(ANIMATE[m.subject][col + 1], m.subject_adjective, "subject", "topic")
    if m.place is not None:
        at["place"] = len(words)
        place = PLACES[m.place][col]
        words.append(place)
        at["in"] = len(words)
        words.append(PARTICLES[language]["place"])
    if m.transitive:
        noun_phrase(OBJECTS[m.obj][col + 1], m.obj_adjective, "object", "object")
    verbs = TRANSITIVE if m.transitive else INTRANSITIVE
    at["verb"] = len(words)
    words.append(verbs[m.verb][3 + 2 * (col - 1) + int(m.past)])
    at["end"] = len(words)
    words.append(PARTICLES[language]["end"])
    return words, at


def make_pair(m: Meaning, language: str) -> Pair:
    src, src_at = english(m)
    tgt, tgt_at = translation(m, language)
    alignment = sorted((src_at[part], tgt_at[part]) for part in tgt_at if part in src_at)
    return Pair([LANGUAGE_TAGS[language]] + src, tgt, language, [(s + 1, t) for s, t in alignment])


def random_meaning(rng: random.Random) -> Meaning:
    transitive = rng.random() < 0.7

    def adjective():
        return rng.randrange(len(ADJECTIVES)) if rng.random() < 0.35 else None

    return Meaning(
        subject=rng.randrange(len(ANIMATE)),
        subject_plural=rng.random() < 0.3,
        subject_adjective=adjective(),
        verb=rng.randrange(len(TRANSITIVE if transitive else INTRANSITIVE)),
        transitive=transitive,
        past=rng.random() < 0.5,
        obj=rng.randrange(len(OBJECTS)) if transitive else None,
        obj_plural=transitive and rng.random() < 0.3,
        obj_adjective=adjective() if transitive else None,
        place=rng.randrange(len(PLACES)) if rng.random() < 0.4 else None,
    )


def is_held_out(pair: Pair, share: float = 0.1) -> bool:
    """A fixed ~10% of all possible sentences, chosen by a hash of the English text: never trained on, whatever
    the seed or the number of pairs."""
    digest = hashlib.sha256(" ".join(pair.source[1:]).encode()).digest()
    return digest[0] < 256 * share


def generate(n: int, seed: int = 0, held_out: bool = False) -> list[Pair]:
    """n distinct pairs (each English sentence in one language, alternating ja/ko), from the training side or the
    held-out side of is_held_out."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        pair = make_pair(random_meaning(rng), LANGUAGES[len(out) % 2])
        key = (pair.source_text, pair.language)
        if key in seen or is_held_out(pair) != held_out:
            continue
        seen.add(key)
        out.append(pair)
    return out


def vocabulary() -> list[str]:
    """Every token the grammar can produce, specials first (fixed order: the tokenizer's ids)."""
    words: list[str] = []
    for row in ANIMATE + THINGS:
        words += list(row)
    for row in PLACES + TRANSITIVE + INTRANSITIVE + ADJECTIVES:
        words += list(row)
    words += ["the", "in", ".", "。", "は", "を", "で", "은", "는", "을", "를", "에서"]
    seen, ordered = set(SPECIAL_TOKENS), list(SPECIAL_TOKENS)
    for w in words:
        if w not in seen:
            seen.add(w)
            ordered.append(w)
    return ordered


def english_word_counts() -> tuple[int, int]:
    """(words, forms) of the grammar's English: each noun, verb, adjective and place once, plus "the" and "in"
    (66); and every written form (cat/cats, sees/see/saw, ...; 132, the full stop not counted)."""
    lemmas = ANIMATE + THINGS + PLACES + TRANSITIVE + INTRANSITIVE + ADJECTIVES
    forms = {w for row in ANIMATE + THINGS for w in row[:2]} | {w for row in TRANSITIVE + INTRANSITIVE for w in row[:3]}
    forms |= {row[0] for row in PLACES + ADJECTIVES} | {"the", "in"}
    return len(lemmas) + 2, len(forms)


def parse(text: str) -> tuple[Meaning | None, list[str]]:
    """The meaning of an English sentence of this grammar (None when it does not fit), and the words outside the
    vocabulary. Lower-cases and splits off a final full stop; used to translate the user's sentence by rule (for
    teacher forcing and to score the model) and to name unknown words."""
    words = text.lower().replace(".", " . ").split()
    known = set(vocabulary())
    unknown = [w for w in words if w not in known]
    if unknown or not words:
        return None, unknown
    if words[-1] != ".":
        words.append(".")
    for m in _candidate_meanings(words):
        if english(m)[0] == words:
            return m, []
    return None, []


def _candidate_meanings(words: list[str]):
    """Meanings whose English could be `words`, read off the content words (a small search, at most a few
    hundred candidates)."""

    def index(table, column, word):
        return [i for i, row in enumerate(table) if row[column] == word]

    def noun_options(word, table):
        return [(i, False) for i in index(table, 0, word)] + [(i, True) for i in index(table, 1, word)]

    adj_of = {row[0]: i for i, row in enumerate(ADJECTIVES)}
    place_of = {row[0]: i for i, row in enumerate(PLACES)}
    content = [w for w in words if w not in ("the", "in", ".")]
    if len(content) < 2:
        return
    pos = 0
    s_adj = adj_of.get(content[pos]) if content[pos] in adj_of and len(content) > 2 else None
    pos += s_adj is not None
    for subject, s_plural in noun_options(content[pos], ANIMATE):
        verb_word = content[pos + 1] if pos + 1 < len(content) else None
        rest = content[pos + 2 :]
        place = place_of.get(rest[-1]) if rest and "in" in words else None
        if place is not None:
            rest = rest[:-1]
        for transitive, table in ((True, TRANSITIVE), (False, INTRANSITIVE)):
            for v, row in enumerate(table):
                for past in (False, True):
                    if verb_word not in ((row[2],) if past else (row[0], row[1])):
                        continue
                    if not transitive:
                        yield Meaning(subject, s_plural, s_adj, v, False, past, place=place)
                        continue
                    if not rest:
                        continue
                    o_adj = adj_of.get(rest[0]) if len(rest) == 2 else None
                    for obj, o_plural in noun_options(rest[-1], OBJECTS):
                        yield Meaning(subject, s_plural, s_adj, v, True, past, obj, o_plural, o_adj, place)
