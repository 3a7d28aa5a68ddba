"""Masks on a padded batch of the user's sentences (padding, look-ahead, both), and the three kinds of attention
of the original Transformer with their shapes. A small randomly initialised attention: labelled as such."""
import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from core import mask_walkthrough as mw
from core.tokenize_simple import simple_tokenize
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels
from viz.masks import mask_figure

TEXT = {
    "title": {"en": "Masks and the three kinds of attention", "ja": "マスクと 3 種類の注意",
              "ko": "마스크와 세 가지 어텐션"},
    "intro": {
        "en": "A mask decides which keys each query may look at: masked keys get exactly zero weight. Sentences of "
              "different lengths are padded to one length to run as a batch, and the padding mask hides the padding; "
              "a decoder also uses the look-ahead (causal) mask so that no token sees the tokens after it.",
        "ja": "マスクは各クエリがどのキーを見てよいかを決めます。マスクされたキーの重みはちょうど 0 です。長さの違う文は"
              "バッチとして処理するために同じ長さまでパディングされ、パディングマスクがそのパディングを隠します。デコーダは"
              "さらに先読み防止（因果）マスクを使い、どのトークンも自分より後のトークンを見られないようにします。",
        "ko": "마스크는 각 쿼리가 어떤 키를 볼 수 있는지 정합니다. 마스킹된 키의 가중치는 정확히 0입니다. 길이가 다른 "
              "문장들은 배치로 처리하기 위해 같은 길이로 패딩되고, 패딩 마스크가 그 패딩을 가립니다. 디코더는 여기에 "
              "미리보기 방지(인과) 마스크를 더해 어떤 토큰도 자기 뒤의 토큰을 보지 못하게 합니다.",
    },
    "random": {
        "en": "Random weights — not a trained model. The attention here (d_model {d}, {h} heads) is randomly "
              "initialised (seed {seed}) so the masks and shapes can be shown without a model; the weight patterns "
              "mean nothing about language. Words are split by a simple rule-based tokenizer (CJK characters one "
              "by one), not a model's tokenizer.",
        "ja": "ランダムな重み — 学習済みモデルではありません。ここでの注意（d_model {d}、{h} ヘッド）はランダムに初期化"
              "されています（シード {seed}）。モデルなしでマスクと形状を見せるためで、重みのパターンは言語について何も意味"
              "しません。単語は簡単な規則ベースのトークナイザで分割しています（CJK は 1 文字ずつ）。モデルのトークナイザでは"
              "ありません。",
        "ko": "무작위 가중치 — 학습된 모델이 아닙니다. 여기의 어텐션(d_model {d}, 헤드 {h}개)은 무작위로 초기화되었습니다"
              "(시드 {seed}). 모델 없이 마스크와 형태를 보여 주기 위한 것이며, 가중치 패턴은 언어에 대해 아무 의미가 "
              "없습니다. 단어는 간단한 규칙 기반 토크나이저로 나눕니다(CJK는 한 글자씩). 모델의 토크나이저가 아닙니다.",
    },
    "texts": {"en": "Sentences (one per line, 2–4)", "ja": "文（1 行に 1 文、2〜4 文）", "ko": "문장(한 줄에 하나, 2~4개)"},
    "too_many": {"en": "Only the first {k} lines are used.", "ja": "最初の {k} 行だけを使います。",
                 "ko": "처음 {k}줄만 사용합니다."},
    "need_two": {
        "en": "A batch needs at least two sentences with words in them (one per line); showing the example "
              "sentences instead.",
        "ja": "バッチには単語を含む文が 2 つ以上必要です（1 行に 1 文）。代わりに例文を表示します。",
        "ko": "배치에는 단어가 있는 문장이 두 개 이상 필요합니다(한 줄에 하나). 대신 예문을 보여 줍니다.",
    },
    "cut": {
        "en": "Sentence {i} has {n:,} tokens; the first {k} are used (the matrices stay readable).",
        "ja": "文 {i} は {n:,} トークンあります。最初の {k} トークンだけを使います（行列を読みやすく保つため）。",
        "ko": "문장 {i}은(는) 토큰이 {n:,}개입니다. 처음 {k}개만 사용합니다(행렬을 읽기 쉽게 유지).",
    },
    "batch": {"en": "The padded batch", "ja": "パディングされたバッチ", "ko": "패딩된 배치"},
    "batch_text": {
        "en": "{b} sentences of {lengths} tokens, right-padded with {pad} to {n} positions: a {b} × {n} batch.",
        "ja": "{lengths} トークンの {b} 文を {pad} で右詰めにパディングして {n} 位置に揃えた {b} × {n} のバッチ。",
        "ko": "{lengths}개 토큰으로 된 문장 {b}개를 {pad}로 오른쪽 패딩해 {n}개 위치로 맞춘 {b} × {n} 배치.",
    },
    "sentence": {"en": "sentence", "ja": "文", "ko": "문장"},
    "position": {"en": "position", "ja": "位置", "ko": "위치"},
    "real": {"en": "real token (1)", "ja": "実トークン (1)", "ko": "실제 토큰 (1)"},
    "padding": {"en": "padding (0)", "ja": "パディング (0)", "ko": "패딩 (0)"},
    "am_title": {"en": "attention_mask: 1 = real token, 0 = padding", "ja": "attention_mask: 1 = 実トークン、0 = パディング",
                 "ko": "attention_mask: 1 = 실제 토큰, 0 = 패딩"},
    "masks": {"en": "The three masks for one sentence", "ja": "1 文に対する 3 つのマスク", "ko": "한 문장에 대한 세 마스크"},
    "pick": {"en": "Sentence", "ja": "文", "ko": "문장"},
    "head": {"en": "Head", "ja": "ヘッド", "ko": "헤드"},
    "kind": {"en": "Mask applied below", "ja": "下で使うマスク", "ko": "아래에 적용할 마스크"},
    "kind_padding": {"en": "padding (encoder)", "ja": "パディング（エンコーダ）", "ko": "패딩(인코더)"},
    "kind_causal": {"en": "look-ahead only", "ja": "先読み防止のみ", "ko": "미리보기 방지만"},
    "kind_both": {"en": "padding + look-ahead (decoder)", "ja": "パディング + 先読み防止（デコーダ）",
                  "ko": "패딩 + 미리보기 방지(디코더)"},
    "m_padding": {"en": "Padding mask: keys that are padding are hidden", "ja": "パディングマスク: パディングのキーを隠す",
                  "ko": "패딩 마스크: 패딩인 키를 가림"},
    "m_causal": {"en": "Look-ahead mask: key position ≤ query position", "ja": "先読み防止マスク: キーの位置 ≤ クエリの位置",
                 "ko": "미리보기 방지 마스크: 키 위치 ≤ 쿼리 위치"},
    "m_both": {"en": "Combined (logical AND)", "ja": "組み合わせ（論理積）", "ko": "결합(논리곱)"},
    "may": {"en": "may attend", "ja": "注意できる", "ko": "볼 수 있음"},
    "masked": {"en": "masked", "ja": "マスク", "ko": "마스킹됨"},
    "key_axis": {"en": "key (attended to)", "ja": "キー（見られる側）", "ko": "키(보이는 쪽)"},
    "query_axis": {"en": "query (attending)", "ja": "クエリ（見る側）", "ko": "쿼리(보는 쪽)"},
    "steps": {"en": "Scores → mask → weights", "ja": "スコア → マスク → 重み", "ko": "점수 → 마스크 → 가중치"},
    "steps_text": {
        "en": "Left: the scaled scores QKᵀ/√d_k of head {h} for every pair, before any mask. Middle: the mask. "
              "Right: softmax with the masked scores set to −∞, so masked cells (grey ✕) get exactly 0.",
        "ja": "左: ヘッド {h} のスケール後のスコア QKᵀ/√d_k（マスク前、すべての組）。中央: マスク。右: マスクされた"
              "スコアを −∞ にしてからのソフトマックス。マスクされたセル（灰色の ✕）の重みはちょうど 0 です。",
        "ko": "왼쪽: 헤드 {h}의 스케일된 점수 QKᵀ/√d_k(마스크 전, 모든 쌍). 가운데: 마스크. 오른쪽: 마스킹된 점수를 "
              "−∞로 바꾼 뒤의 소프트맥스. 마스킹된 칸(회색 ✕)의 가중치는 정확히 0입니다.",
    },
    "f_scores": {"en": "Scores before masking", "ja": "マスク前のスコア", "ko": "마스킹 전 점수"},
    "f_mask": {"en": "Mask", "ja": "マスク", "ko": "마스크"},
    "f_weights": {"en": "Weights after masking", "ja": "マスク後の重み", "ko": "마스킹 후 가중치"},
    "facts": {
        "en": "Measured now, all {h} heads of all {b} sentences: largest weight on a masked cell {mx}; row sums "
              "between {lo:.6f} and {hi:.6f}; weights · V vs PyTorch SDPA: largest difference {diff:.1e}.",
        "ja": "今回の計測（全 {b} 文・全 {h} ヘッド）: マスクされたセルの最大の重み {mx}、行の和は {lo:.6f}〜{hi:.6f}、"
              "重み · V と PyTorch SDPA の最大差 {diff:.1e}。",
        "ko": "지금 측정한 결과(문장 {b}개, 헤드 {h}개 전체): 마스킹된 칸의 최대 가중치 {mx}, 행의 합 {lo:.6f}~{hi:.6f}, "
              "가중치 · V와 PyTorch SDPA의 최대 차이 {diff:.1e}.",
    },
    "pad_rows": {
        "en": "Rows of padding tokens (queries) are computed too, but their outputs are never used.",
        "ja": "パディングトークンの行（クエリ）も計算されますが、その出力は使われません。",
        "ko": "패딩 토큰의 행(쿼리)도 계산되지만 그 출력은 쓰이지 않습니다.",
    },
    "kinds": {"en": "The three kinds of attention in the Transformer", "ja": "Transformer の 3 種類の注意",
              "ko": "트랜스포머의 세 가지 어텐션"},
    "kinds_text": {
        "en": "The original Transformer (Vaswani et al., 2017) uses attention three ways. Pick a source sentence "
              "for the encoder and a target sentence for the decoder (a batch of one each). Each layer has its own "
              "random weights. Shapes are (batch, heads, tokens, d_head), d_model = {d}, {h} heads of d_head = {dh}.",
        "ja": "元の Transformer（Vaswani ら, 2017）は注意を 3 通りに使います。エンコーダへのソース文とデコーダへのターゲット"
              "文を選んでください（それぞれバッチサイズ 1）。各層は別々のランダムな重みを持ちます。形状は（バッチ, ヘッド, "
              "トークン, d_head）、d_model = {d}、d_head = {dh} のヘッドが {h} 個です。",
        "ko": "원래 트랜스포머(Vaswani 외, 2017)는 어텐션을 세 가지로 씁니다. 인코더에 넣을 소스 문장과 디코더에 넣을 타깃 "
              "문장을 고르세요(각각 배치 크기 1). 각 층은 서로 다른 무작위 가중치를 가집니다. 형태는 (배치, 헤드, 토큰, "
              "d_head)이고, d_model = {d}, d_head = {dh}인 헤드가 {h}개입니다.",
    },
    "src": {"en": "Source sentence (encoder)", "ja": "ソース文（エンコーダ）", "ko": "소스 문장(인코더)"},
    "tgt": {"en": "Target sentence (decoder)", "ja": "ターゲット文（デコーダ）", "ko": "타깃 문장(디코더)"},
    "encoder_self": {"en": "Encoder self-attention", "ja": "エンコーダの自己注意", "ko": "인코더 셀프 어텐션"},
    "decoder_self": {"en": "Masked decoder self-attention", "ja": "マスク付きデコーダの自己注意",
                     "ko": "마스크된 디코더 셀프 어텐션"},
    "cross": {"en": "Encoder-decoder (cross) attention", "ja": "エンコーダ・デコーダ（クロス）注意",
              "ko": "인코더-디코더(크로스) 어텐션"},
    "encoder_self_text": {
        "en": "Q, K and V all come from the source. Every token sees every token, in both directions (on a padded "
              "batch: all real tokens).",
        "ja": "Q、K、V はすべてソースから。どのトークンも双方向にすべてのトークンを見ます（パディングされたバッチでは"
              "すべての実トークン）。",
        "ko": "Q, K, V 모두 소스에서 옵니다. 모든 토큰이 양방향으로 모든 토큰을 봅니다(패딩된 배치에서는 모든 실제 "
              "토큰).",
    },
    "decoder_self_text": {
        "en": "Q, K and V all come from the target. The look-ahead mask hides later tokens: the decoder must "
              "predict them, so it may not read them.",
        "ja": "Q、K、V はすべてターゲットから。先読み防止マスクが後のトークンを隠します。デコーダはそれらを予測する"
              "側なので、読んではいけません。",
        "ko": "Q, K, V 모두 타깃에서 옵니다. 미리보기 방지 마스크가 뒤의 토큰을 가립니다. 디코더는 그것을 예측해야 "
              "하므로 읽으면 안 됩니다.",
    },
    "cross_text": {
        "en": "Q from the decoder (target), K and V from the encoder (source): rows are target tokens, columns "
              "source tokens, so the weights are n_target × n_source. Here K and V come straight from the source "
              "embeddings; a real Transformer uses the encoder stack's output (same shapes).",
        "ja": "Q はデコーダ（ターゲット）から、K と V はエンコーダ（ソース）から。行はターゲットのトークン、列はソースの"
              "トークンなので、重みは n_target × n_source です。ここでは K と V をソースの埋め込みから直接作っています。"
              "実際の Transformer はエンコーダスタックの出力を使います（形状は同じ）。",
        "ko": "Q는 디코더(타깃)에서, K와 V는 인코더(소스)에서 옵니다. 행은 타깃 토큰, 열은 소스 토큰이므로 가중치는 "
              "n_target × n_source입니다. 여기서는 K와 V를 소스 임베딩에서 바로 만듭니다. 실제 트랜스포머는 인코더 "
              "스택의 출력을 씁니다(형태는 같음).",
    },
    "shape_line": {
        "en": "Q {q} · K {k} → weights {w}; weights · V {v} → heads joined and projected: output {o}",
        "ja": "Q {q} · K {k} → 重み {w}、重み · V {v} → ヘッドを結合して射影: 出力 {o}",
        "ko": "Q {q} · K {k} → 가중치 {w}, 가중치 · V {v} → 헤드를 이어 붙여 사영: 출력 {o}",
    },
    "shapes": {"en": "Shapes", "ja": "形状", "ko": "형태"},
    "col_kind": {"en": "attention", "ja": "注意", "ko": "어텐션"},
    "col_x": {"en": "queries from (x)", "ja": "クエリの元 (x)", "ko": "쿼리 출처 (x)"},
    "col_ctx": {"en": "keys/values from", "ja": "キー/バリューの元", "ko": "키/값 출처"},
    "col_check": {"en": "|weights·V − SDPA|", "ja": "|重み·V − SDPA|", "ko": "|가중치·V − SDPA|"},
}
EXAMPLES = ["The cat sat on the mat.", "Dogs bark.", "It was tired because it had chased a mouse."]
MAX_SENTENCES = 4
MAX_TOKENS = 12   # per sentence: a 12 x 12 matrix still shows its numbers
SEED = 0
KIND_KEYS = {"padding": "kind_padding", "causal": "kind_causal", "both": "kind_both"}


def read_sentences(T) -> list[list[str]]:
    raw = ui.text_area("text", T("texts"), "\n".join(EXAMPLES), height=120)
    lines = [line for line in raw.splitlines() if line.strip()]
    if len(lines) > MAX_SENTENCES:
        st.info(T("too_many", k=MAX_SENTENCES))
        lines = lines[:MAX_SENTENCES]
    tokenized = [simple_tokenize(line, MAX_TOKENS) for line in lines]
    tokenized = [t for t in tokenized if t.tokens]
    if len(tokenized) < 2:
        st.info(T("need_two"))
        tokenized = [simple_tokenize(line, MAX_TOKENS) for line in EXAMPLES]
    for i, t in enumerate(tokenized):
        if t.truncated:
            st.info(T("cut", i=i, n=t.n_total, k=MAX_TOKENS))
    return [t.tokens for t in tokenized]


def show_batch(T, batch: mw.PaddedBatch) -> list[str]:
    st.subheader(T("batch"))
    b, n = batch.attention_mask.shape
    st.markdown(T("batch_text", b=b, n=n, lengths=", ".join(str(x) for x in batch.lengths), pad=f"`{mw.PAD}`"))
    rows = [f"{T('sentence')} {i}" for i in range(b)]
    st.dataframe(pd.DataFrame(batch.padded, index=rows, columns=[str(j) for j in range(n)]))
    fig = mask_figure(batch.attention_mask.numpy().astype(bool), rows, [str(j) for j in range(n)],
                      title=T("am_title"), allowed_name=T("real"), masked_name=T("padding"),
                      x_title=T("position"), y_title=T("sentence"), height=150 + 40 * b)
    ui.show_figure(fig, "attention-mask", data=batch.attention_mask.numpy(), row_labels=rows,
                   col_labels=[str(j) for j in range(n)], key="fig-am")
    return rows


def show_masks_and_weights(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.subheader(T("masks"))
    c1, c2, c3 = st.columns(3)
    with c1:
        i = int(ui.select("row", T("pick"), [str(k) for k in range(len(rows))], "0", format_func=lambda k: rows[int(k)]))
    with c2:
        head = ui.number("head", T("head"), 0, mw.N_HEADS - 1, 0)
    with c3:
        kind = ui.select("mask", T("kind"), list(mw.MASK_KINDS), "both", format_func=lambda k: T(KIND_KEYS[k]))
    result = mw.masked_batch_attention(token_lists, kind, seed=SEED)
    labels = indexed_labels(result.batch.padded[i])
    axes = dict(x_title=T("key_axis"), y_title=T("query_axis"))
    cols = st.columns(3)
    for col, k in zip(cols, mw.MASK_KINDS):
        allowed = mw.mask_of_kind(k, result.batch.attention_mask)[i, 0].numpy()
        with col:
            fig = mask_figure(allowed, labels, labels, title=T(f"m_{k}"), allowed_name=T("may"),
                              masked_name=T("masked"), **axes)
            ui.show_figure(fig, f"mask-{k}-sentence{i}", data=allowed.astype(int), row_labels=labels,
                           col_labels=labels, key=f"fig-mask-{k}")

    st.subheader(T("steps"))
    st.markdown(T("steps_text", h=head))
    allowed = result.allowed[i]
    scores, weights = result.scores[i, head], result.weights[i, head]
    cols = st.columns(3)
    with cols[0]:
        fig = matrix_heatmap(scores, labels, labels, title=T("f_scores"), value_name="QKᵀ/√d", **axes)
        ui.show_figure(fig, f"scores-sentence{i}-head{head}", data=scores, row_labels=labels, col_labels=labels,
                       key="fig-scores")
    with cols[1]:
        fig = mask_figure(allowed, labels, labels, title=f"{T('f_mask')}: {T(KIND_KEYS[kind])}",
                          allowed_name=T("may"), masked_name=T("masked"), **axes)
        ui.show_figure(fig, f"mask-{kind}-sentence{i}-applied", data=allowed.astype(int), row_labels=labels,
                       col_labels=labels, key="fig-mask-applied")
    with cols[2]:
        fig = attention_heatmap(weights, labels, labels, masked=~allowed, title=T("f_weights"), zmax=1.0, **axes)
        ui.show_figure(fig, f"weights-{kind}-sentence{i}-head{head}", data=weights, row_labels=labels,
                       col_labels=labels, key="fig-weights")
    every_allowed = np.broadcast_to(result.allowed[:, None], result.weights.shape)
    masked_max = float(result.weights[~every_allowed].max()) if (~every_allowed).any() else 0.0
    sums = result.weights.sum(-1)
    st.markdown(T("facts", h=mw.N_HEADS, b=len(token_lists), mx=f"{masked_max:g}", lo=float(sums.min()),
                  hi=float(sums.max()), diff=result.sdpa_diff))
    if len(token_lists[i]) < len(labels):
        st.caption(T("pad_rows"))


def show_three_kinds(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.header(T("kinds"))
    st.markdown(T("kinds_text", d=mw.D_MODEL, h=mw.N_HEADS, dh=mw.D_MODEL // mw.N_HEADS))
    options = [str(k) for k in range(len(rows))]
    c1, c2 = st.columns(2)
    with c1:
        src = int(ui.select("src", T("src"), options, "0", format_func=lambda k: rows[int(k)]))
    with c2:
        tgt = int(ui.select("tgt", T("tgt"), options, "1", format_func=lambda k: rows[int(k)]))
    head = int(st.session_state.get("head", 0))
    kinds = mw.three_kinds(token_lists[src], token_lists[tgt], seed=SEED)
    cols = st.columns(3)
    for col, k in zip(cols, kinds):
        with col:
            st.subheader(T(k.kind))
            st.markdown(T(f"{k.kind}_text"))
            s = k.shapes
            st.code(T("shape_line", q=s["Q"], k=s["K"], w=s["weights"], v=s["V"], o=s["output"]), language=None)
            q_labels, k_labels = indexed_labels(k.query_tokens), indexed_labels(k.key_tokens)
            fig = attention_heatmap(k.weights[head], q_labels, k_labels, masked=~k.allowed, zmax=1.0,
                                    title=f"{T(k.kind)} · {T('head')} {head}", x_title=T("key_axis"),
                                    y_title=T("query_axis"))
            ui.show_figure(fig, f"{k.kind}-head{head}", data=k.weights[head], row_labels=q_labels,
                           col_labels=k_labels, key=f"fig-{k.kind}")
    st.subheader(T("shapes"))
    source = {"encoder_self": (src, src), "decoder_self": (tgt, tgt), "cross": (tgt, src)}
    st.dataframe(pd.DataFrame({
        T("col_kind"): [T(k.kind) for k in kinds],
        T("col_x"): [f"{rows[source[k.kind][0]]} {k.shapes['x']}" for k in kinds],
        T("col_ctx"): [f"{rows[source[k.kind][1]]} {k.shapes['context']}" for k in kinds],
        "Q": [str(k.shapes["Q"]) for k in kinds], "K": [str(k.shapes["K"]) for k in kinds],
        "V": [str(k.shapes["V"]) for k in kinds],
        "softmax(QKᵀ/√d)": [str(k.shapes["weights"]) for k in kinds],
        "output": [str(k.shapes["output"]) for k in kinds],
        T("col_check"): [f"{k.sdpa_diff:.1e}" for k in kinds],
    }), hide_index=True)


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
st.warning(T("random", d=mw.D_MODEL, h=mw.N_HEADS, seed=SEED), icon=":material/casino:")
token_lists = read_sentences(T)
batch_rows = show_batch(T, mw.pad_batch(token_lists))
show_masks_and_weights(T, token_lists, batch_rows)
show_three_kinds(T, token_lists, batch_rows)
ui.page_end()
