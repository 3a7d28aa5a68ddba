"""Look inside a real pretrained model: every head at once, one head large, one token across heads, and
aggregates (mean over heads, rollout, entropy)."""
import numpy as np
import streamlit as st

from app import attention_figures as figs
from app import models, ui
from core import views
from core.antecedents import PRONOUNS

TEXT = {
    "title": {"en": "Inside a pretrained model", "ja": "事前学習モデルの中", "ko": "사전학습 모델의 내부"},
    "intro": {
        "en": "Your text goes through the real model; every weight below is recomputed exactly from the queries and "
              "keys the model produced. Rows are queries (the token that looks), columns are keys (the token looked "
              "at); each row sums to 1.",
        "ja": "入力した文は実際のモデルを通ります。下の重みはすべて、モデルが作ったクエリとキーから正確に再計算したものです。"
              "行はクエリ（見る側のトークン）、列はキー（見られる側のトークン）で、各行の和は 1 です。",
        "ko": "입력한 텍스트는 실제 모델을 통과합니다. 아래의 모든 가중치는 모델이 만든 쿼리와 키로부터 정확히 다시 계산한 "
              "것입니다. 행은 쿼리(보는 토큰), 열은 키(보이는 토큰)이며, 각 행의 합은 1입니다.",
    },
    "text": {"en": "Text", "ja": "テキスト", "ko": "텍스트"},
    "view": {"en": "View", "ja": "表示", "ko": "보기"},
    "grid": {"en": "Model view (all heads)", "ja": "モデルビュー（全ヘッド）", "ko": "모델 보기(모든 헤드)"},
    "head": {"en": "Head view (one head)", "ja": "ヘッドビュー（1 ヘッド）", "ko": "헤드 보기(헤드 하나)"},
    "token": {"en": "Token view (one query)", "ja": "トークンビュー（1 クエリ）", "ko": "토큰 보기(쿼리 하나)"},
    "aggregate": {"en": "Aggregates", "ja": "集約", "ko": "집계"},
    "hide_special": {
        "en": "Hide special tokens ([CLS], [SEP], BOS) and renormalise rows",
        "ja": "特殊トークン（[CLS]、[SEP]、BOS）を隠して行を再正規化",
        "ko": "특수 토큰([CLS], [SEP], BOS)을 숨기고 행을 재정규화",
    },
    "hidden_note": {
        "en": "Special tokens hidden: their rows and columns are removed and each remaining row is divided by the "
              "weight it kept, so rows sum to 1 again. These are not the model's raw weights.",
        "ja": "特殊トークンを隠しています。その行と列を取り除き、残った各行を残った重みの和で割って再び和を 1 にしています。"
              "モデルの生の重みではありません。",
        "ko": "특수 토큰을 숨겼습니다. 그 행과 열을 없애고 남은 각 행을 남은 가중치의 합으로 나누어 다시 합이 1이 되게 "
              "했습니다. 모델의 원래 가중치가 아닙니다.",
    },
    "no_special": {
        "en": "This model added no special tokens to this text: nothing to hide.",
        "ja": "このモデルはこの文に特殊トークンを加えていません。隠すものはありません。",
        "ko": "이 모델은 이 텍스트에 특수 토큰을 넣지 않았습니다. 숨길 것이 없습니다.",
    },
    "layer": {"en": "Layer", "ja": "層", "ko": "층"},
    "head_n": {"en": "Head", "ja": "ヘッド", "ko": "헤드"},
    "open": {"en": "Open layer {l}, head {h} in the head view", "ja": "層 {l}・ヘッド {h} をヘッドビューで開く",
             "ko": "층 {l}, 헤드 {h}를 헤드 보기로 열기"},
    "grid_help": {
        "en": "Hover a tile to see its layer and head; choose one with Layer and Head above (outlined in red) and "
              "open it large. Blank cells: the query may not see that key (decoder).",
        "ja": "タイルにカーソルを合わせると層とヘッドが出ます。上の「層」「ヘッド」で選び（赤枠）、大きく開けます。"
              "空白のセル: クエリがそのキーを見られない（デコーダ）。",
        "ko": "타일 위에 마우스를 올리면 층과 헤드가 보입니다. 위의 층·헤드로 하나를 고르고(빨간 테두리) 크게 여세요. "
              "빈 칸: 쿼리가 그 키를 볼 수 없음(디코더).",
    },
    "gqa": {
        "en": "Grouped-query attention: {H} query heads share {K} key/value heads. Query head {h} reads key/value "
              "head {k}, together with query heads {group}: they score against the same keys and differ only in "
              "their queries.",
        "ja": "グループ化クエリ注意 (GQA): {H} 個のクエリヘッドが {K} 個のキー/バリューヘッドを共有します。クエリヘッド {h} "
              "はキー/バリューヘッド {k} を読み、クエリヘッド {group} と共有しています。同じキーに対してスコアを計算し、"
              "違うのはクエリだけです。",
        "ko": "그룹 쿼리 어텐션(GQA): 쿼리 헤드 {H}개가 키/값 헤드 {K}개를 공유합니다. 쿼리 헤드 {h}는 키/값 헤드 {k}를 "
              "읽으며 쿼리 헤드 {group}와 공유합니다. 같은 키에 대해 점수를 내고 쿼리만 다릅니다.",
    },
    "gqa_groups": {"en": "Key/value head {k} ← query heads {group}", "ja": "キー/バリューヘッド {k} ← クエリヘッド {group}",
                   "ko": "키/값 헤드 {k} ← 쿼리 헤드 {group}"},
    "window": {
        "en": "Full resolution window (instead of block means)", "ja": "フル解像度の窓（ブロック平均の代わりに）",
        "ko": "원래 해상도 창(블록 평균 대신)",
    },
    "window_from": {"en": "Window starts at token", "ja": "窓の開始トークン", "ko": "창 시작 토큰"},
    "query": {"en": "Query token", "ja": "クエリトークン", "ko": "쿼리 토큰"},
    "aggregate_kind": {"en": "Aggregate", "ja": "集約の種類", "ko": "집계 종류"},
    "mean": {"en": "Mean over heads (layer above)", "ja": "ヘッド平均（上の層）", "ko": "헤드 평균(위의 층)"},
    "rollout": {"en": "Attention rollout (up to the layer above)", "ja": "アテンション・ロールアウト（上の層まで）",
                "ko": "어텐션 롤아웃(위의 층까지)"},
    "entropy": {"en": "Entropy per head", "ja": "ヘッドごとのエントロピー", "ko": "헤드별 엔트로피"},
    "rollout_note": {
        "en": "Rollout: per layer, A = mean over heads, mixed with the residual connection as 0.5·A + 0.5·I (rows "
              "renormalised), taken as the share of information each token takes from the others; layers are "
              "chained by matrix products, R = A₀…A_l applied from layer 0 up. It is a rough estimate of "
              "information flow, not an explanation of the output.",
        "ja": "ロールアウト: 各層で A = ヘッド平均を残差接続と 0.5·A + 0.5·I で混ぜ（行を再正規化）、「各トークンがほかから"
              "受け取る情報の割合」とみなします。層 0 から順に行列積でつなぎます。情報の流れの大まかな推定であり、出力の"
              "説明ではありません。",
        "ko": "롤아웃: 층마다 A = 헤드 평균을 잔차 연결과 0.5·A + 0.5·I로 섞고(행 재정규화), 이를 '각 토큰이 다른 "
              "토큰에서 받는 정보의 비율'로 봅니다. 층 0부터 행렬곱으로 이어 붙입니다. 정보 흐름의 대략적인 추정일 뿐 "
              "출력의 설명은 아닙니다.",
    },
    "entropy_extremes": {
        "en": "Most focused head: layer {l0}, head {h0} ({e0:.2f} nats). Most spread out: layer {l1}, head {h1} "
              "({e1:.2f} nats). Rows spread evenly over every key they may see would average {u:.2f} nats.",
        "ja": "最も集中しているヘッド: 層 {l0}・ヘッド {h0}（{e0:.2f} nat）。最も広がっているヘッド: 層 {l1}・ヘッド {h1}"
              "（{e1:.2f} nat）。各行が見られるキー全体に一様に広がれば平均 {u:.2f} nat になります。",
        "ko": "가장 집중된 헤드: 층 {l0}, 헤드 {h0} ({e0:.2f} nat). 가장 퍼진 헤드: 층 {l1}, 헤드 {h1} ({e1:.2f} nat). "
              "각 행이 볼 수 있는 모든 키에 고르게 퍼지면 평균 {u:.2f} nat입니다.",
    },
}
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
VIEWS = ("grid", "head", "token", "aggregate")
AGGREGATES = ("mean", "rollout", "entropy")


def open_head_view() -> None:
    st.session_state["view"] = "head"


def fig_tr(key: str, /, **fmt) -> str:
    return ui.tr(figs.FIG_TEXT, key, **fmt)


def window_start(trace, hide: bool) -> int | None:
    """For texts longer than the full-resolution limit: None (block means) or the window's first token."""
    m = len(figs.token_labels(trace, 0, hide)[0])
    if m <= figs.FULL_RES_MAX or not ui.checkbox("win", T("window")):
        return None
    return ui.number("from", T("window_from"), 0, m - figs.FULL_RES_MAX, 0)


def default_query(positions: list[int], tokens: list[str]) -> int:
    """The first pronoun (where attention to an antecedent is interesting), else the middle token."""
    for p in positions:
        if tokens[p].strip().lower() in PRONOUNS:
            return p
    return positions[len(positions) // 2]


def show_gqa(model, trace, head: int) -> None:
    if trace.n_kv_heads == trace.n_heads:
        return
    groups = model.kv_groups()
    k = trace.kv_head(head)
    st.info(T("gqa", H=trace.n_heads, K=trace.n_kv_heads, h=head, k=k,
              group=", ".join(str(g) for g in groups[k] if g != head)))
    st.caption(" · ".join(T("gqa_groups", k=i, group=", ".join(map(str, g))) for i, g in enumerate(groups)))


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
key = models.pick_model()
model = models.load(key)
if model is not None:
    text = ui.text_area("text", T("text"), DEFAULT_TEXT)
    if not text.strip():
        st.info(ui.tr(models.MODEL_TEXT, "empty"))
    else:
        trace = models.run(key, model, [text])
        view = ui.select("view", T("view"), VIEWS, "grid", format_func=T, radio=True, horizontal=True)
        hide = ui.checkbox("nospecial", T("hide_special"))
        if hide:
            st.caption(T("hidden_note") if bool(trace.batch.special[0].any()) else T("no_special"))
        c1, c2 = st.columns(2)
        with c1:
            layer = ui.number("layer", T("layer"), 0, trace.n_layers - 1, trace.n_layers - 1)
        with c2:
            head = ui.number("head", T("head_n"), 0, trace.n_heads - 1, 0)

        if view == "grid":
            st.caption(T("grid_help"))
            fig = figs.grid_figure(trace, hide_special=hide, highlight=(layer, head), tr=fig_tr)
            ui.show_figure(fig, "all-heads", key="fig-grid")
            st.button(T("open", l=layer, h=head), on_click=open_head_view)
        elif view == "head":
            show_gqa(model, trace, head)
            fig, (w, labels) = figs.head_figure(trace, layer, head, hide_special=hide,
                                                window=window_start(trace, hide), tr=fig_tr)
            ui.show_figure(fig, f"layer{layer}-head{head}", data=w, row_labels=labels, col_labels=labels,
                           key="fig-head")
        elif view == "token":
            shown, labels = figs.token_labels(trace, 0, hide)
            positions = [int(p) for p in shown]
            label_of = dict(zip(positions, labels))
            options = [str(p) for p in positions]
            q = ui.select("token", T("query"), options, str(default_query(positions, trace.batch.tokens[0])),
                          format_func=lambda p: label_of[int(p)])
            fig, (w, rows, cols) = figs.token_figure(trace, int(q), hide_special=hide, tr=fig_tr)
            ui.show_figure(fig, f"token{q}", data=w, row_labels=rows, col_labels=cols, key="fig-token")
        else:
            kind = ui.select("agg", T("aggregate_kind"), AGGREGATES, "mean", format_func=T, radio=True,
                             horizontal=True)
            fig, (w, rows, cols) = figs.aggregate_figure(trace, kind, layer, hide_special=hide,
                                                         window=None if kind == "entropy"
                                                         else window_start(trace, hide), tr=fig_tr)
            ui.show_figure(fig, kind, data=w, row_labels=rows, col_labels=cols, key="fig-aggregate")
            if kind == "rollout":
                st.caption(T("rollout_note"))
            if kind == "entropy":
                lo, hi = np.unravel_index(np.argmin(w), w.shape), np.unravel_index(np.argmax(w), w.shape)
                st.markdown(T("entropy_extremes", l0=lo[0], h0=lo[1], e0=float(w[lo]), l1=hi[0], h1=hi[1],
                              e1=float(w[hi]), u=views.uniform_entropy(trace, 0, hide)))
ui.page_end()
