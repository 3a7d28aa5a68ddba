"""The Japanese and Korean words use one term per core concept, and never leave an English UI word where the reader
sees their own: a study group that meets 注意 on one page and アテンション on the next, or is told to press a button
by its English name, stumbles over words instead of over attention."""

import re
import tomllib
from pathlib import Path

import pytest

from app import i18n

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("ja", "ko")


def _lesson_texts(lang: str) -> dict[str, tuple[str, str]]:
    """{'<file>:<path>': (en, lang)} for every inline {en = ..., ja = ..., ko = ...} table of lessons/*.toml."""
    out = {}

    def walk(node, where):
        if isinstance(node, dict):
            if isinstance(node.get("en"), str) and isinstance(node.get(lang), str):
                out[where] = (node["en"], node[lang])
            else:
                for k, v in node.items():
                    walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    for path in sorted((ROOT / "lessons").glob("*.toml")):
        walk(tomllib.loads(path.read_text(encoding="utf-8")), path.name)
    return out


def _pairs(lang: str) -> dict[str, tuple[str, str]]:
    """Every (English, translation) pair a reader of `lang` meets: the page catalog and the lessons."""
    english = {k: " / ".join(i18n.forms(v)) for k, v in i18n.flat(i18n.catalog("en")).items()}
    theirs = {k: " / ".join(i18n.forms(v)) for k, v in i18n.flat(i18n.catalog(lang)).items()}
    pairs = {f"locales:{k}": (english[k], theirs[k]) for k in english if k in theirs}
    pairs.update(_lesson_texts(lang))
    return pairs


# The one term each file uses for a core concept (the field's and the file's majority), and the variants it replaced.
# Verb uses stay: 注意を向ける / 注意する側 ("to attend"), 주의를 기울이다 / 주의하는 쪽, a dict's 値 in the lookup analogy.
NAT = r"(?<![A-Za-z_])nats?(?![A-Za-z_])"  # the unit of entropy and loss, spelled in the reader's script
DECLARED = {
    "ja": {
        "attention (noun)": ("アテンション", r"注意(?!を向け|する|され|でき|しな|を均等に)"),
        "self-attention": ("セルフアテンション", r"自己(?:注意|アテンション)"),
        "query (noun)": ("クエリ", r"問い合わせ"),
        "key/value heads and cache": ("キー・バリュー / キーとバリュー", r"キー(?:・|と)値(?!だけ)"),
        "decoder": ("デコーダ", r"デコーダー"),
        "tokenizer": ("トークナイザ", r"トークナイザー"),
        "look-ahead mask": ("先読み防止マスク", r"先読み(?:禁止)?マスク|先読み禁止"),
        # attending / attended to: 注意する側 (the verb) or the plainer 見る側, never a third word
        "attending / attended to": ("注意する側 / 注意される側", r"注目(?:する|される)側"),
        "harm (ablation; 悪化する stays the verb)": ("害", r"悪化(?!し)"),
        # held-out: the data a claim is measured on, never used to train or choose (評価用の半分 beside 選択用の半分)
        "held-out": ("評価データ / 評価用", r"保留|取り分け|ホールドアウト|検証用|検証損失"),
        "nat (unit)": ("ナット", NAT),
        "full attention": ("完全なアテンション", r"全アテンション"),
        "unembedding": ("アンエンベディング", r"埋め込み解除|出力埋め込み"),
        "final norm": ("最終ノルム", r"最終正規化"),
        # the detector's English name stays beside the word, 誘導（induction）, never in its place
        "induction / previous-token head": ("誘導ヘッド / 直前トークンヘッド", r"\binduction\b(?!）)|previous-token"),
    },
    "ko": {
        "attention (noun)": ("어텐션", r"주의(?!를 |하는|받는|할 )"),
        "cross-attention": ("크로스 어텐션", r"교차 어텐션"),
        "query (noun)": ("쿼리", r"질의"),
        "value": ("값", r"밸류"),
        "window": ("윈도우", r"윈도(?!우)"),
        "look-ahead mask": ("미리보기 방지 마스크", r"미래 마스크|미리보기 마스크|미리보기 금지"),
        "attending / attended to": ("주의하는 쪽 / 주의받는 쪽", r"주목(?:하는|받는) 쪽"),
        "eviction": ("내보내기", r"축출"),
        "placebo": ("플라세보", r"위약"),
        "zero ablation": ("제로 어블레이션", r"영 어블레이션"),
        "harm (ablation)": ("피해", r"악화"),
        "held-out": ("평가 데이터 / 평가용", r"보류|떼어 둔|홀드아웃|검증용|검증 (?:손실|정확도|지표)"),
        "nat (unit)": ("내트", NAT),
        "full attention": ("완전한 어텐션", r"전체 어텐션"),
        "ablation": ("어블레이션", r"절제"),
        "unembedding": ("언임베딩", r"출력 임베딩"),
        "final norm": ("최종 정규화", r"최종 노름"),
        "induction / previous-token head": ("유도 헤드 / 이전 토큰 헤드", r"\binduction\b(?!\))|previous-token"),
        "head view (the /attention view's name)": ("헤드 보기", r"(?:헤드|모델|토큰) 뷰"),
    },
}


# The lookup analogy compares attention with a Python dict in the dict's own words: its keys and values (キーと値).
ANALOGY = {"locales:sdpa_steps.lookup_text"}


@pytest.mark.parametrize("lang", LANGS)
def test_one_term_per_concept(lang):
    bad = [
        f"{where} ({concept}: {term}, not {m.group(0)!r}): {text[max(0, m.start() - 15) : m.end() + 15]}"
        for where, (_, text) in _pairs(lang).items()
        if where not in ANALOGY
        for concept, (term, rejected) in DECLARED[lang].items()
        for m in re.finditer(rejected, text)
    ]
    assert not bad, "\n".join(bad)


# Where English says "attention" the mechanism is meant; proper names, code and URLs keep their Latin letters.
_KEPT = re.compile(
    r"Attention Lab|FlashAttention|`[^`]*`|\{[^}]*\}|/[\w/-]*attention[\w-]*|\battention\(|attention_\w+"
)
_ATTENTION_WORD = {"ja": "アテンション", "ko": "어텐션"}


@pytest.mark.parametrize("lang", LANGS)
def test_where_english_says_attention_the_translation_does_too(lang):
    """Not left in English ('the attention interface'), not lost ('uniform attention over 16 keys' -> 'uniform over
    16'), not rendered by the everyday word for paying attention."""
    bad = []
    for where, (en, text) in _pairs(lang).items():
        if re.search(r"\battention\b", _KEPT.sub("", en), flags=re.I) and _ATTENTION_WORD[lang] not in text:
            bad.append(f"{where}: {en[:80]!r} -> {text[:80]!r}")
        if re.search(r"\battention\b(?!\()", _KEPT.sub("", text), flags=re.I):
            bad.append(f"{where}: English 'attention' left in {text[:120]!r}")
    assert not bad, "\n".join(bad)


def _labels(lang: str) -> dict[str, str]:
    """Short English UI strings (a button, a column, a row name: up to 5 words) and their translation in `lang`."""
    english = i18n.flat(i18n.catalog("en"))
    theirs = i18n.flat(i18n.catalog(lang))
    return {
        en: theirs[k]
        for k, en in english.items()
        if isinstance(en, str)
        and len(en.split()) <= 5
        and re.fullmatch(r"[A-Za-z][a-z ]*[a-z]( \{\w+\})?", en)
        and theirs[k] != en
    }


@pytest.mark.parametrize("lang", LANGS)
def test_lessons_quote_the_labels_the_reader_sees(lang):
    """A lesson step that says 「Compute the maps」を押して sends a Japanese reader after a button that reads マップを計算."""
    labels = _labels(lang)
    bad = []
    for where, (_, text) in _lesson_texts(lang).items():
        for quoted in re.findall(r"[「'‘“]([^」'’”]+)[」'’”]", text):
            stem = re.sub(r"\{\w+\}", "{}", quoted)
            for en, translated in labels.items():
                if re.sub(r"\{\w+\}", "{}", en) == stem:
                    bad.append(f"{where}: quotes {quoted!r}, the {lang} page shows {translated!r}")
    assert not bad, "\n".join(bad)
