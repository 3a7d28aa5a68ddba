"""Antecedent heads: which heads point a pronoun at which noun, and a held-out test of whether any head
(or SmolLM2's own answer) resolves the pronoun or just follows the first-mentioned noun."""
import hashlib
import json
from pathlib import Path

import numpy as np
import streamlit as st

from app import models, ui
from core import antecedents as ante
from viz.bars import accuracy_bars, head_ranking_bars
from viz.heatmap import matrix_heatmap

PRETRAINED = ("minilm", "smollm2")

TEXT = {
    "title": {"en": "Antecedent heads: it → cat?", "ja": "先行詞ヘッド: it → cat?", "ko": "선행사 헤드: it → cat?"},
    "intro": {
        "en": "For a pronoun, every head of the model gives some weight to each earlier noun. Some heads put most of "
              "it on one noun, which looks like resolving the pronoun. The test below checks whether such a head "
              "follows the meaning or only the position of the noun.",
        "ja": "代名詞から見ると、モデルの各ヘッドは前にある名詞それぞれにいくらかの重みを置きます。1 つの名詞に重みの大半を"
              "置くヘッドもあり、代名詞を解決しているように見えます。下のテストは、そのヘッドが意味を追っているのか、名詞の"
              "位置を追っているだけなのかを確かめます。",
        "ko": "대명사에서 보면 모델의 각 헤드는 앞에 있는 명사마다 어느 정도 가중치를 둡니다. 어떤 헤드는 한 명사에 대부분을 "
              "두어 대명사를 해결하는 것처럼 보입니다. 아래 검사는 그런 헤드가 의미를 따르는지, 명사의 위치만 따르는지 "
              "확인합니다.",
    },
    "try": {"en": "Try a sentence", "ja": "文で試す", "ko": "문장으로 해 보기"},
    "example": {"en": "Start from an example", "ja": "例から始める", "ko": "예에서 시작"},
    "own": {"en": "(my own text)", "ja": "（自分の文）", "ko": "(직접 쓴 문장)"},
    "text": {"en": "Sentence", "ja": "文", "ko": "문장"},
    "no_pronoun": {
        "en": "No pronoun found. Looked for: {words}.", "ja": "代名詞が見つかりません。探した語: {words}。",
        "ko": "대명사를 찾지 못했습니다. 찾은 단어: {words}.",
    },
    "pronoun": {"en": "Pronoun", "ja": "代名詞", "ko": "대명사"},
    "word_n": {"en": "word {i}", "ja": "{i} 語目", "ko": "{i}번째 단어"},
    "candidates": {"en": "Candidate antecedents", "ja": "先行詞の候補", "ko": "선행사 후보"},
    "heuristic": {
        "en": "Candidates are found by a simple rule, not a parser: the word right after a determiner (the, a, "
              "an, this, that, these, those, my, your, his, her, its, our, their) and capitalised words that do not "
              "start a sentence, before the pronoun. Correct the list if it is wrong. A word split into several "
              "tokens gets the SUM of the weights on its tokens; the pronoun is read from its first token.",
        "ja": "候補は構文解析ではなく単純な規則で探します: 代名詞より前で、限定詞（the, a, an, this, that, these, "
              "those, my, your, his, her, its, our, their）の直後の語と、文頭でない大文字で始まる語。間違っていたら"
              "直してください。複数のトークンに分かれた語は、そのトークンへの重みの合計を使います。代名詞は最初のトークン"
              "から読みます。",
        "ko": "후보는 구문 분석기가 아닌 간단한 규칙으로 찾습니다: 대명사 앞에서 한정사(the, a, an, this, that, these, "
              "those, my, your, his, her, its, our, their) 바로 뒤의 단어와, 문장 첫머리가 아닌 대문자로 시작하는 "
              "단어입니다. 틀리면 고치세요. 여러 토큰으로 나뉜 단어는 그 토큰들에 준 가중치의 합을 쓰고, 대명사는 첫 "
              "토큰에서 읽습니다.",
    },
    "stored": {
        "en": "This sentence is one of the built-in examples: its candidates and correct antecedent ('{answer}') "
              "are stored with it.",
        "ja": "この文は組み込みの例の 1 つです。候補と正しい先行詞（'{answer}'）は例と一緒に保存されています。",
        "ko": "이 문장은 내장 예 중 하나입니다. 후보와 올바른 선행사('{answer}')가 함께 저장되어 있습니다.",
    },
    "no_candidates": {
        "en": "Pick at least one candidate that comes before the pronoun.", "ja": "代名詞より前にある候補を 1 つ以上選んでください。",
        "ko": "대명사 앞에 있는 후보를 하나 이상 고르세요.",
    },
    "cut": {
        "en": "The pronoun lies beyond the part of the text the model read.", "ja": "代名詞がモデルの読んだ範囲の外にあります。",
        "ko": "대명사가 모델이 읽은 범위 밖에 있습니다.",
    },
    "rank_by": {"en": "Rank heads by their weight on", "ja": "ヘッドを次への重みで並べる", "ko": "다음에 준 가중치로 헤드 정렬"},
    "top": {"en": "How many heads", "ja": "表示するヘッド数", "ko": "헤드 수"},
    "ranking_title": {
        "en": "Top heads by weight from '{p}' to '{c}' (all {n} heads ranked)",
        "ja": "'{p}' から '{c}' への重みの上位ヘッド（全 {n} ヘッドを順位付け）",
        "ko": "'{p}'에서 '{c}'로 가는 가중치 상위 헤드 (전체 {n}개 헤드 순위)",
    },
    "weight_axis": {"en": "attention weight from the pronoun", "ja": "代名詞からの注意の重み",
                    "ko": "대명사에서 나온 어텐션 가중치"},
    "top_head": {
        "en": "Measured now: the top head for '{c}' is layer {l}, head {h} (0-indexed). It puts {weights}.",
        "ja": "今回の計測: '{c}' への重みが最大のヘッドは層 {l}・ヘッド {h}（0 始まり）。重みは {weights}。",
        "ko": "지금 측정한 결과: '{c}'에 가중치가 가장 큰 헤드는 층 {l}, 헤드 {h}(0부터 셈)입니다. 가중치: {weights}.",
    },
    "on": {"en": "{w:.2f} on '{c}'", "ja": "'{c}' に {w:.2f}", "ko": "'{c}'에 {w:.2f}"},
    "partner": {
        "en": "In the other sentence of this pair (“{sentence}”, where the answer is '{answer}'), the same head puts "
              "{weights}.",
        "ja": "この対のもう一方の文（“{sentence}”、答えは '{answer}'）では、同じヘッドの重みは {weights}。",
        "ko": "이 쌍의 다른 문장(“{sentence}”, 정답은 '{answer}')에서 같은 헤드의 가중치는 {weights}입니다.",
    },
    "stays": {
        "en": "It prefers '{c}' in both sentences, although the answer changes: in this pair the head follows the "
              "noun, not the meaning.",
        "ja": "答えが変わっても両方の文で '{c}' を選んでいます。この対では、ヘッドは意味ではなく名詞を追っています。",
        "ko": "정답이 바뀌어도 두 문장 모두에서 '{c}'를 고릅니다. 이 쌍에서 헤드는 의미가 아니라 명사를 따릅니다.",
    },
    "switches": {
        "en": "It switches to the right noun in both sentences of this pair. One pair is not evidence: see the "
              "held-out test below.",
        "ja": "この対の両方の文で正しい名詞に切り替わっています。1 対だけでは証拠になりません。下の保留データでの検証を見てください。",
        "ko": "이 쌍의 두 문장 모두에서 올바른 명사로 바뀝니다. 한 쌍은 증거가 아닙니다. 아래 보류 데이터 검사를 보세요.",
    },
    "wrong_way": {
        "en": "It prefers the wrong noun in both sentences of this pair.",
        "ja": "この対の両方の文で誤った名詞を選んでいます。",
        "ko": "이 쌍의 두 문장 모두에서 틀린 명사를 고릅니다.",
    },
    "eval": {"en": "Held-out test on {n} minimal pairs", "ja": "{n} 組の最小対による保留データでの検証",
             "ko": "최소쌍 {n}개로 한 보류 데이터 검사"},
    "eval_how": {
        "en": "Each pair: two sentences that differ in one word, which flips the antecedent (“The glass did not fit "
              "in the box because it was too wide / narrow.”). The pairs are split in two halves by a hash of their "
              "name. On the selection half, the head that most often gives more weight to the correct noun than to "
              "the other is chosen; it is then scored on the held-out half, where nothing was chosen. Both sentences "
              "of a pair are in the same half, so always picking the first-mentioned noun scores exactly 50%.",
        "ja": "各対は 1 語だけ違う 2 文で、その語が先行詞を入れ替えます（“The glass did not fit in the box because it "
              "was too wide / narrow.”）。対は名前のハッシュで 2 つに分けます。選択用の半分で、正しい名詞にもう一方より"
              "大きな重みを置く回数が最も多いヘッドを選び、何も選んでいない保留用の半分で採点します。対の 2 文は同じ半分に"
              "入るので、常に最初に出た名詞を選ぶとちょうど 50% になります。",
        "ko": "각 쌍은 한 단어만 다른 두 문장이며, 그 단어가 선행사를 바꿉니다(“The glass did not fit in the box "
              "because it was too wide / narrow.”). 쌍은 이름의 해시로 두 절반으로 나눕니다. 선택용 절반에서 올바른 "
              "명사에 다른 명사보다 큰 가중치를 가장 자주 주는 헤드를 고르고, 아무것도 고르지 않은 보류용 절반에서 "
              "채점합니다. 한 쌍의 두 문장은 같은 절반에 있으므로 항상 먼저 나온 명사를 고르면 정확히 50%입니다.",
    },
    "no_results": {
        "en": "No results file yet: run `python scripts/antecedent_eval.py` (or recompute below).",
        "ja": "結果ファイルがまだありません。`python scripts/antecedent_eval.py` を実行してください（または下で再計算）。",
        "ko": "결과 파일이 아직 없습니다. `python scripts/antecedent_eval.py`를 실행하세요(또는 아래에서 다시 계산).",
    },
    "provenance": {
        "en": "From results/antecedents.json, made by `{command}` on {date} ({device}).",
        "ja": "results/antecedents.json より。`{command}` で {date} に作成（{device}）。",
        "ko": "results/antecedents.json에서. `{command}`로 {date}에 생성({device}).",
    },
    "stale": {
        "en": "The pairs file changed since these results were computed; recompute them.",
        "ja": "この結果の計算後に対のファイルが変わりました。再計算してください。",
        "ko": "이 결과를 계산한 뒤 쌍 파일이 바뀌었습니다. 다시 계산하세요.",
    },
    "bar_head": {"en": "{name}: best head L{l} H{h}", "ja": "{name}: 最良ヘッド L{l} H{h}",
                 "ko": "{name}: 최고 헤드 L{l} H{h}"},
    "bar_choice": {"en": "{name}: its own next-token answer", "ja": "{name}: 自身の次トークンの答え",
                   "ko": "{name}: 자신의 다음 토큰 답"},
    "bars_title": {
        "en": "Accuracy on the {n} held-out sentences (95% Wilson intervals)",
        "ja": "保留データ {n} 文での正解率（95% Wilson 区間）",
        "ko": "보류 데이터 {n}문장에서의 정확도(95% Wilson 구간)",
    },
    "chance": {"en": "chance 50%", "ja": "偶然 50%", "ko": "우연 50%"},
    "acc_axis": {"en": "accuracy on held-out sentences", "ja": "保留データでの正解率", "ko": "보류 문장 정확도"},
    "head_finding": {
        "en": "**{name}**: the head chosen on the selection half (layer {l}, head {h}; right on {sel:.0%} there) is "
              "right on {acc:.0%} of the {n} held-out sentences (95% interval {lo:.0%}–{hi:.0%}; chance 50%). It "
              "picks the first-mentioned noun in {first:.0%} of them and changes its pick between the two sentences "
              "of {switch:.0%} of the held-out pairs.",
        "ja": "**{name}**: 選択用の半分で選んだヘッド（層 {l}・ヘッド {h}、そこでの正解率 {sel:.0%}）は、保留データ {n} 文の"
              " {acc:.0%} で正解（95% 区間 {lo:.0%}–{hi:.0%}、偶然 50%）。そのうち {first:.0%} で最初に出た名詞を選び、"
              "保留データの対のうち {switch:.0%} で 2 文の間で選択を変えました。",
        "ko": "**{name}**: 선택용 절반에서 고른 헤드(층 {l}, 헤드 {h}; 거기서 {sel:.0%} 정답)는 보류 문장 {n}개 중 "
              "{acc:.0%}에서 정답입니다(95% 구간 {lo:.0%}–{hi:.0%}, 우연 50%). 그중 {first:.0%}에서 먼저 나온 명사를 "
              "고르고, 보류 쌍의 {switch:.0%}에서 두 문장 사이에 선택을 바꿉니다.",
    },
    "verdict_chance": {
        "en": "The interval includes 50%: this head does not resolve these pronouns better than chance.",
        "ja": "区間が 50% を含みます。このヘッドは偶然より良く代名詞を解決しているとは言えません。",
        "ko": "구간이 50%를 포함합니다. 이 헤드가 우연보다 대명사를 잘 해결한다고 할 수 없습니다.",
    },
    "verdict_above": {
        "en": "The interval lies above 50%: on these pairs the head does better than chance.",
        "ja": "区間が 50% より上にあります。これらの対では、このヘッドは偶然より良い結果です。",
        "ko": "구간이 50%보다 위에 있습니다. 이 쌍들에서 이 헤드는 우연보다 낫습니다.",
    },
    "verdict_below": {
        "en": "The interval lies below 50%: the head prefers the wrong noun more often than not.",
        "ja": "区間が 50% より下にあります。このヘッドは誤った名詞を選ぶことの方が多いです。",
        "ko": "구간이 50%보다 아래에 있습니다. 이 헤드는 틀린 명사를 더 자주 고릅니다.",
    },
    "never_switch": {
        "en": "No head of {name} changes its preferred noun between the two sentences of any pair ({k} heads "
              "checked): in this decoder the pronoun only looks back, and the word that decides comes after it. "
              "Every head scores exactly 50% by construction.",
        "ja": "{name} のどのヘッドも、どの対でも 2 文の間で選ぶ名詞を変えません（{k} ヘッドを確認）。このデコーダでは代名詞は"
              "前しか見られず、答えを決める語はその後にあります。どのヘッドも構造上ちょうど 50% になります。",
        "ko": "{name}의 어떤 헤드도 어떤 쌍에서도 두 문장 사이에 고르는 명사를 바꾸지 않습니다({k}개 헤드 확인). 이 "
              "디코더에서 대명사는 뒤만 볼 수 있고(앞쪽 토큰만), 답을 정하는 단어는 그 뒤에 옵니다. 모든 헤드가 구조상 "
              "정확히 50%입니다.",
    },
    "some_switch": {
        "en": "{k} of the {total} heads of {name} change their preferred noun within at least one held-out pair.",
        "ja": "{name} の {total} ヘッドのうち {k} 個が、保留データの少なくとも 1 対で選ぶ名詞を変えます。",
        "ko": "{name}의 헤드 {total}개 중 {k}개가 보류 쌍 중 적어도 하나에서 고르는 명사를 바꿉니다.",
    },
    "choice_finding": {
        "en": "**{name}, its own answer** (next token after “<sentence> In this sentence, '<pronoun>' refers to the”, "
              "comparing the two nouns' first tokens): right on {acc:.0%} of the held-out sentences (95% interval "
              "{lo:.0%}–{hi:.0%}); it names the first-mentioned noun in {first:.0%} of them.",
        "ja": "**{name} 自身の答え**（“<文> In this sentence, '<代名詞>' refers to the” の次トークンで 2 つの名詞の最初の"
              "トークンを比較）: 保留データの {acc:.0%} で正解（95% 区間 {lo:.0%}–{hi:.0%}）。そのうち {first:.0%} で最初に"
              "出た名詞を答えました。",
        "ko": "**{name} 자신의 답**(“<문장> In this sentence, '<대명사>' refers to the” 다음 토큰에서 두 명사의 첫 토큰 "
              "비교): 보류 문장의 {acc:.0%}에서 정답(95% 구간 {lo:.0%}–{hi:.0%}); 그중 {first:.0%}에서 먼저 나온 명사를 "
              "답했습니다.",
    },
    "per_head_title": {
        "en": "{name}: accuracy of every head on the held-out half (0.5 = chance)",
        "ja": "{name}: 保留データでの全ヘッドの正解率（0.5 = 偶然）",
        "ko": "{name}: 보류 절반에서 모든 헤드의 정확도(0.5 = 우연)",
    },
    "layer": {"en": "layer", "ja": "層", "ko": "층"},
    "head": {"en": "head", "ja": "ヘッド", "ko": "헤드"},
    "accuracy": {"en": "accuracy", "ja": "正解率", "ko": "정확도"},
    "sentences": {"en": "Every sentence ({name})", "ja": "すべての文（{name}）", "ko": "모든 문장({name})"},
    "recompute": {"en": "Recompute now for {name}", "ja": "{name} について今すぐ再計算", "ko": "{name}에 대해 지금 다시 계산"},
    "recomputed": {"en": "Recomputed just now", "ja": "たった今再計算した結果", "ko": "방금 다시 계산한 결과"},
    "matches": {
        "en": "Per-sentence weights of the best head differ from the file by at most {d:.1e}; best head "
              "{same}.",
        "ja": "最良ヘッドの文ごとの重みとファイルの差は最大 {d:.1e}。最良ヘッドは {same}。",
        "ko": "최고 헤드의 문장별 가중치와 파일의 차이는 최대 {d:.1e}. 최고 헤드는 {same}.",
    },
    "same": {"en": "the same", "ja": "同じ", "ko": "같음"},
    "different": {"en": "different", "ja": "異なる", "ko": "다름"},
    "not_in_file": {"en": "This model is not in the results file.", "ja": "このモデルは結果ファイルにありません。",
                    "ko": "이 모델은 결과 파일에 없습니다."},
}
RESULTS = Path(__file__).resolve().parents[2] / "results" / "antecedents.json"
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
PAGE_TOKENS = 512


@st.cache_data(show_spinner=False)
def builtin_sentences() -> dict[str, dict]:
    """Every stored sentence by its text: pair id, pronoun, candidates, answer, and the pair's other sentence."""
    data = ante.load_pairs()
    out = {}
    for group in (data["examples"], data["pairs"]):
        for pair in group:
            for k, s in enumerate(pair["sentences"]):
                other = pair["sentences"][1 - k] if len(pair["sentences"]) == 2 else None
                out[s["text"]] = {"pair": pair["id"], "pronoun": pair["pronoun"], "candidates": pair["candidates"],
                                  "answer": s["answer"], "other": other}
    return out


def load_results() -> dict | None:
    try:
        return json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def use_example() -> None:
    choice = st.session_state.get("ante_example")
    if choice and choice != "own":
        st.session_state["text"] = choice


def md(word: str) -> str:
    """A word of the reader's text inside markdown: '_' and '*' would start emphasis."""
    return word.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def weights_phrase(weights, names) -> str:
    return ", ".join(T("on", w=float(w), c=md(c)) for w, c in zip(weights, names))


def try_sentence(key: str, model) -> None:
    st.subheader(T("try"))
    stored = builtin_sentences()
    st.selectbox(T("example"), ["own", *stored], key="ante_example", on_change=use_example,
                 format_func=lambda s: T("own") if s == "own" else f"{stored[s]['pair']}: {s}")
    text = ui.text_area("text", T("text"), DEFAULT_TEXT)
    words = ante.split_words(text)
    pronouns = ante.find_pronouns(words)
    if not text.strip() or not pronouns:
        st.info(T("no_pronoun", words=", ".join(ante.PRONOUNS)))
        return
    info = stored.get(text)
    default_p = None
    if info:
        _, default_p, default_c = ante.locate(text, info["pronoun"], info["candidates"])
        st.caption(T("stored", answer=info["answer"]))
    else:
        default_p = next((p for p in pronouns if ante.find_candidates(text, words, p)), pronouns[0])
    options = [str(p) for p in pronouns]
    p = int(ui.select("pron", T("pronoun"), options, str(default_p),
                      format_func=lambda i: f"{words[int(i)].text} ({T('word_n', i=int(i))})"))
    if not info or p != default_p:
        default_c = ante.find_candidates(text, words, p)
        st.caption(T("heuristic"))
    before = [str(i) for i in range(p)]
    chosen = st.multiselect(T("candidates"), before, default=[str(c) for c in default_c],
                            format_func=lambda i: f"{words[int(i)].text} ({T('word_n', i=int(i))})",
                            key=f"cands-{hash(text)}-{p}")
    cands = sorted(int(c) for c in chosen)
    if not cands:
        st.info(T("no_candidates"))
        return
    trace = models.run(key, model, [text], PAGE_TOKENS)
    analysis = ante.measure(model, trace, p, cands)
    if analysis is None:
        st.info(T("cut"))
        return
    names = [words[c].text for c in cands]
    c1, c2 = st.columns([3, 1])
    with c1:
        by = int(ui.select("rank", T("rank_by"), [str(i) for i in range(len(cands))], "0",
                           format_func=lambda i: names[int(i)]))
    with c2:
        top = ui.number("top", T("top"), 1, 30, 10)
    ranking = ante.rank_heads(analysis.weights, by)
    shown = ranking[:top]
    w = np.array([[float(analysis.weights[l, h, c]) for c in range(len(cands))] for l, h, _ in shown])
    fig = head_ranking_bars([f"L{l} H{h}" for l, h, _ in shown], w, names,
                            title=T("ranking_title", p=words[p].text, c=names[by], n=len(ranking)),
                            x_title=T("weight_axis"))
    ui.show_figure(fig, "antecedent-heads", data={"layer": [r[0] for r in shown], "head": [r[1] for r in shown],
                                                  **{n: w[:, i] for i, n in enumerate(names)}}, key="fig-ranking")
    l, h, _ = ranking[0]
    st.markdown(T("top_head", c=md(names[by]), l=l, h=h, weights=weights_phrase(w[0], names)))
    if info and info["other"] and p == default_p and cands == default_c:
        other = info["other"]
        other_w = ante.measure_sentence(model, other["text"], info["pronoun"], info["candidates"])[l, h]
        st.markdown(T("partner", sentence=other["text"], answer=other["answer"],
                      weights=weights_phrase(other_w.tolist(), names)))
        pick_here, pick_there = int(np.argmax(w[0])), int(other_w.argmax())
        if pick_here == pick_there:
            st.markdown(T("stays", c=md(names[pick_here])))
        elif names[pick_here] == info["answer"]:
            st.markdown(T("switches"))
        else:
            st.markdown(T("wrong_way"))


def show_results(res: dict, name: str) -> None:
    held, sel = res["halves"]["held_out"], res["halves"]["selection"]
    l, h = res["best_head"]
    lo, hi = held["head_interval"]
    st.markdown(T("head_finding", name=name, l=l, h=h, sel=sel["head_accuracy"], acc=held["head_accuracy"],
                  n=held["n_sentences"], lo=lo, hi=hi, first=held["head_first_mentioned_share"],
                  switch=held.get("best_head_switch_share", float("nan"))))
    st.markdown(T("verdict_chance") if lo <= 0.5 <= hi else T("verdict_above") if lo > 0.5 else T("verdict_below"))
    total = res["n_layers"] * res["n_heads"]
    if res.get("is_causal") and held.get("heads_that_ever_switch") == 0 and sel.get("heads_that_ever_switch") == 0:
        st.markdown(T("never_switch", name=name, k=total))
    elif "heads_that_ever_switch" in held:
        st.markdown(T("some_switch", name=name, k=held["heads_that_ever_switch"], total=total))
    if "choice_accuracy" in held:
        clo, chi = held["choice_interval"]
        st.markdown(T("choice_finding", name=name, acc=held["choice_accuracy"], lo=clo, hi=chi,
                      first=held["choice_first_mentioned_share"]))


def evaluation(key: str, model) -> None:
    data = ante.load_pairs()
    st.subheader(T("eval", n=len(data["pairs"])))
    st.markdown(T("eval_how"))
    results = load_results()
    if results is None:
        st.info(T("no_results"))
    else:
        st.caption(T("provenance", command=results["command"], date=results["date"], device=results["device"]))
        if results.get("pairs_sha256") != hashlib.sha256(ante.PAIRS_PATH.read_bytes()).hexdigest():
            st.warning(T("stale"))
        labels, acc, low, high = [], [], [], []
        n_held = 0
        for k, res in results["models"].items():
            name = models.model_name(k).split(":")[0] if k in models.MODEL_KEYS else res["model"]
            held = res["halves"]["held_out"]
            n_held = held["n_sentences"]
            labels.append(T("bar_head", name=name, l=res["best_head"][0], h=res["best_head"][1]))
            acc.append(held["head_accuracy"])
            low.append(held["head_interval"][0])
            high.append(held["head_interval"][1])
            if "choice_accuracy" in held:
                labels.append(T("bar_choice", name=name))
                acc.append(held["choice_accuracy"])
                low.append(held["choice_interval"][0])
                high.append(held["choice_interval"][1])
        if labels:
            fig = accuracy_bars(labels, acc, low, high, title=T("bars_title", n=n_held), x_title=T("acc_axis"),
                                chance_label=T("chance"))
            ui.show_figure(fig, "antecedent-accuracy", data={"": labels, "accuracy": acc, "low": low, "high": high},
                           key="fig-accuracy")
        for k, res in results["models"].items():
            show_results(res, models.model_name(k).split(":")[0] if k in models.MODEL_KEYS else res["model"])
        res = results["models"].get(key)
        name = models.model_name(key).split(":")[0]
        if res is None:
            st.info(T("not_in_file"))
        else:
            acc_map = np.array(res["per_head"]["held_out"]["accuracy"])
            fig = matrix_heatmap(acc_map, [str(i) for i in range(acc_map.shape[0])],
                                 [str(j) for j in range(acc_map.shape[1])], title=T("per_head_title", name=name),
                                 x_title=T("head"), y_title=T("layer"), colorscale="RdBu", zmid=0.5,
                                 value_name=T("accuracy"))
            ui.show_figure(fig, f"antecedent-per-head-{key}", data=acc_map, key="fig-per-head")
            with st.expander(T("sentences", name=name)):
                st.dataframe(res["sentences"])
    name = models.model_name(key).split(":")[0]
    if model is not None and st.button(T("recompute", name=name)):
        bar = st.progress(0.0)
        live = ante.evaluate(model, data["pairs"], progress=bar.progress)
        st.subheader(T("recomputed"))
        show_results(live, name)
        res = (results or {}).get("models", {}).get(key)
        if res is not None and len(res["sentences"]) == len(live["sentences"]):
            d = max(abs(a - b) for r0, r1 in zip(res["sentences"], live["sentences"])
                    for a, b in zip(r0["best_head_weights"], r1["best_head_weights"]))
            st.caption(T("matches", d=d, same=T("same") if res["best_head"] == live["best_head"]
                         else T("different")))


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
key = models.pick_model(options=PRETRAINED)   # the tiny MoE knows ~270 words: no pronoun test for it
model = models.load(key)
if model is not None:
    try_sentence(key, model)
evaluation(key, model)     # the stored results need no model; only the live recompute does
ui.page_end()
