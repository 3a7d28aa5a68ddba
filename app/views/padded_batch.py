"""A padded batch through a real model: the attention mask, padded keys at exactly zero weight, and each
sentence's attention in the batch equal to its run alone."""
import numpy as np
import streamlit as st

from app import attention_figures as figs
from app import models, ui
from core import views
from viz.heatmap import matrix_heatmap
from viz.labels import indexed_labels

TEXT = {
    "title": {"en": "Padded batches", "ja": "パディングされたバッチ", "ko": "패딩된 배치"},
    "intro": {
        "en": "Models run several sentences at once as one rectangle: shorter ones are filled up with padding "
              "tokens, and the attention mask (1 = real token, 0 = padding) hides those from every query. Here "
              "2–4 sentences go through the real tokenizer and model together.",
        "ja": "モデルは複数の文を 1 つの長方形としてまとめて処理します。短い文はパディングトークンで埋められ、アテンション"
              "マスク（1 = 実トークン、0 = パディング）がそれらをすべてのクエリから隠します。ここでは 2〜4 文を実際の"
              "トークナイザとモデルにまとめて通します。",
        "ko": "모델은 여러 문장을 하나의 직사각형으로 한꺼번에 처리합니다. 짧은 문장은 패딩 토큰으로 채워지고, 어텐션 "
              "마스크(1 = 실제 토큰, 0 = 패딩)가 이를 모든 쿼리로부터 가립니다. 여기서는 2~4개 문장을 실제 토크나이저와 "
              "모델에 함께 넣습니다.",
    },
    "texts": {"en": "Sentences (one per line, 2–4)", "ja": "文（1 行に 1 文、2〜4 文）", "ko": "문장(한 줄에 하나, 2~4개)"},
    "too_many": {"en": "Only the first {k} lines are used.", "ja": "最初の {k} 行だけを使います。",
                 "ko": "처음 {k}줄만 사용합니다."},
    "need_two": {
        "en": "Write at least two non-empty lines to see padding.", "ja": "パディングを見るには空でない行を 2 行以上書いてください。",
        "ko": "패딩을 보려면 비어 있지 않은 줄을 두 줄 이상 쓰세요.",
    },
    "mask_title": {"en": "attention_mask: 1 = real token, 0 = padding", "ja": "attention_mask: 1 = 実トークン、0 = パディング",
                   "ko": "attention_mask: 1 = 실제 토큰, 0 = 패딩"},
    "position": {"en": "position", "ja": "位置", "ko": "위치"},
    "sentence": {"en": "sentence", "ja": "文", "ko": "문장"},
    "tokens_table": {"en": "Tokens as the model sees them (padding included)", "ja": "モデルが見るトークン（パディングを含む）",
                     "ko": "모델이 보는 토큰(패딩 포함)"},
    "pick": {"en": "Sentence to look at", "ja": "見る文", "ko": "볼 문장"},
    "layer": {"en": "Layer", "ja": "層", "ko": "층"},
    "head": {"en": "Head", "ja": "ヘッド", "ko": "헤드"},
    "head_title": {
        "en": "Sentence {i} inside the padded batch, layer {l}, head {h}: grey = masked key",
        "ja": "パディングされたバッチ内の文 {i}、層 {l}・ヘッド {h}: 灰色 = マスクされたキー",
        "ko": "패딩된 배치 안의 문장 {i}, 층 {l}, 헤드 {h}: 회색 = 마스킹된 키",
    },
    "pad_rows": {
        "en": "Rows of padding tokens are computed too but are never used; only the real rows matter.",
        "ja": "パディングトークンの行も計算されますが使われません。意味があるのは実トークンの行だけです。",
        "ko": "패딩 토큰의 행도 계산되지만 쓰이지 않습니다. 의미 있는 것은 실제 토큰의 행뿐입니다.",
    },
    "check": {"en": "Check against each sentence run alone", "ja": "各文を単独で実行した結果との照合",
              "ko": "각 문장을 단독 실행한 결과와 비교"},
    "col_tokens": {"en": "real tokens", "ja": "実トークン", "ko": "실제 토큰"},
    "col_padding": {"en": "padding tokens", "ja": "パディング", "ko": "패딩 토큰"},
    "col_pad_weight": {"en": "largest weight on a padded key", "ja": "パディングキーへの最大の重み",
                       "ko": "패딩 키에 준 최대 가중치"},
    "col_diff": {"en": "largest |batch − alone| over all heads", "ja": "全ヘッドでの |バッチ − 単独| の最大値",
                 "ko": "모든 헤드에서 |배치 − 단독|의 최댓값"},
    "verdict_ok": {
        "en": "Measured now: every padded key gets exactly 0 weight from every real query in all {heads} heads, "
              "and each sentence's weights in the batch equal its run alone to within {diff:.1e}.",
        "ja": "今回の計測: {heads} 個のヘッドすべてで、実クエリからパディングキーへの重みはちょうど 0 で、"
              "バッチ内の各文の重みは単独実行と {diff:.1e} 以内で一致しました。",
        "ko": "지금 측정한 결과: {heads}개 헤드 모두에서 실제 쿼리가 패딩 키에 주는 가중치는 정확히 0이고, 배치 안 각 "
              "문장의 가중치는 단독 실행과 {diff:.1e} 이내로 같습니다.",
    },
    "verdict_bad": {
        "en": "Measured now: padding leaks into this batch (largest weight on a padded key {pad:.3g}, largest "
              "difference from the run alone {diff:.3g}).",
        "ja": "今回の計測: このバッチではパディングが漏れています（パディングキーへの最大の重み {pad:.3g}、単独実行との"
              "最大差 {diff:.3g}）。",
        "ko": "지금 측정한 결과: 이 배치에서는 패딩이 새어 듭니다(패딩 키에 준 최대 가중치 {pad:.3g}, 단독 실행과의 최대 "
              "차이 {diff:.3g}).",
    },
}
DEFAULT_TEXTS = "The cat sat on the mat.\nIt was tired because it had chased a mouse all night.\nDogs bark."
MAX_SENTENCES = 4
PAGE_TOKENS = 96          # per sentence on this page: the point is the padding, not long texts
DIFF_TOLERANCE = 1e-4

T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
key = models.pick_model()
model = models.load(key)
if model is not None:
    raw = ui.text_area("text", T("texts"), DEFAULT_TEXTS, height=120)
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if len(lines) > MAX_SENTENCES:
        st.info(T("too_many", k=MAX_SENTENCES))
        lines = lines[:MAX_SENTENCES]
    if len(lines) < 2:
        st.info(T("need_two"))
    else:
        trace = models.run(key, model, lines, PAGE_TOKENS)
        batch = trace.batch
        mask = batch.attention_mask.numpy()
        rows = [f"{T('sentence')} {i}" for i in range(len(lines))]
        fig = matrix_heatmap(mask, rows, [str(j) for j in range(mask.shape[1])], title=T("mask_title"),
                             x_title=T("position"), colorscale="Blues", zmid=None, value_name="attention_mask",
                             show_values=mask.size <= 40 * 4, decimals=0, height=160 + 40 * len(lines))
        ui.show_figure(fig, "attention-mask", data=mask, row_labels=rows, key="fig-mask")
        st.caption(T("tokens_table"))
        st.dataframe({r: toks for r, toks in zip(rows, batch.tokens)}, hide_index=False)

        c1, c2, c3 = st.columns(3)
        with c1:
            i = int(ui.select("row", T("pick"), [str(k) for k in range(len(lines))], "0",
                              format_func=lambda k: rows[int(k)]))
        with c2:
            layer = ui.number("layer", T("layer"), 0, trace.n_layers - 1, 0)
        with c3:
            head = ui.number("head", T("head"), 0, trace.n_heads - 1, 0)
        w = trace.attention(layer, head, i)
        labels = indexed_labels(batch.tokens[i])
        fig = figs.square_figure(w, ~trace.mask(i), labels, T("head_title", i=i, l=layer, h=head),
                                 lambda k, **f: ui.tr(figs.FIG_TEXT, k, **f))
        ui.show_figure(fig, f"padded-sentence{i}-layer{layer}-head{head}", data=w.numpy(), row_labels=labels,
                       col_labels=labels, key="fig-padded-head")
        if views.real_length(trace, i) < mask.shape[1]:
            st.caption(T("pad_rows"))

        st.subheader(T("check"))
        report = models.padding_report(key, tuple(lines), min(PAGE_TOKENS, model.max_positions))
        st.dataframe({T("sentence"): rows, T("col_tokens"): [r["tokens"] for r in report],
                      T("col_padding"): [r["padding"] for r in report],
                      T("col_pad_weight"): [r["max_pad_weight"] for r in report],
                      T("col_diff"): [r["max_diff_alone"] for r in report]})
        pad = max(r["max_pad_weight"] for r in report)
        diff = max(r["max_diff_alone"] for r in report)
        if pad == 0.0 and np.isfinite(diff) and diff <= DIFF_TOLERANCE:
            st.success(T("verdict_ok", heads=trace.n_layers * trace.n_heads, diff=diff))
        else:
            st.warning(T("verdict_bad", pad=pad, diff=diff))
ui.page_end()
