"""Scaled dot-product attention one step at a time on matrices the user edits, checked against torch's SDPA on
screen, and why the scores are divided by sqrt(d_k) (softmax saturation)."""
import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from core import worked_example as wx
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.masks import entropy_vs_dk_figure, softmax_row_bars

TEXT = {
    "title": {"en": "Scaled dot-product attention, step by step", "ja": "スケール化ドット積注意をステップごとに",
              "ko": "스케일드 닷프로덕트 어텐션, 단계별로"},
    "intro": {
        "en": "Every attention layer computes the formula below. Edit Q, K and V (the classic worked example is "
              "loaded) and follow each step; the last step is compared with PyTorch's fused "
              "`scaled_dot_product_attention` on the same numbers.",
        "ja": "すべての注意層は下の式を計算します。Q、K、V を編集して（定番の計算例が入っています）各ステップを追って"
              "ください。最後のステップは同じ数値での PyTorch の融合カーネル `scaled_dot_product_attention` と比べます。",
        "ko": "모든 어텐션 층은 아래 식을 계산합니다. Q, K, V를 편집하고(잘 알려진 계산 예제가 들어 있습니다) 각 단계를 "
              "따라가 보세요. 마지막 단계는 같은 숫자에 대한 PyTorch의 융합 커널 `scaled_dot_product_attention` 결과와 "
              "비교합니다.",
    },
    "inputs": {"en": "Inputs", "ja": "入力", "ko": "입력"},
    "dk": {"en": "d_k (width of Q and K)", "ja": "d_k（Q と K の幅）", "ko": "d_k(Q와 K의 너비)"},
    "dv": {"en": "d_v (width of V)", "ja": "d_v（V の幅）", "ko": "d_v(V의 너비)"},
    "reset": {"en": "Back to the classic example", "ja": "定番の例に戻す", "ko": "기본 예제로 되돌리기"},
    "editor_help": {
        "en": "Click a cell to change it; add or delete rows with the table's controls. Rows of Q are queries, "
              "rows of K are keys, and row j of V is the value carried by key j.",
        "ja": "セルをクリックすると変更できます。行の追加・削除は表の操作で行います。Q の行はクエリ、K の行はキー、"
              "V の j 行目はキー j が運ぶ値です。",
        "ko": "셀을 클릭해 값을 바꾸세요. 행 추가·삭제는 표의 컨트롤로 합니다. Q의 행은 쿼리, K의 행은 키, V의 j번째 "
              "행은 키 j가 운반하는 값입니다.",
    },
    "q_label": {"en": "Q: queries ({n} × d_k)", "ja": "Q: クエリ ({n} × d_k)", "ko": "Q: 쿼리 ({n} × d_k)"},
    "k_label": {"en": "K: keys ({n} × d_k)", "ja": "K: キー ({n} × d_k)", "ko": "K: 키 ({n} × d_k)"},
    "v_label": {"en": "V: values ({n} × d_v)", "ja": "V: バリュー ({n} × d_v)", "ko": "V: 값 ({n} × d_v)"},
    "bad_empty": {
        "en": "Each of Q, K and V needs at least one row.", "ja": "Q、K、V にはそれぞれ 1 行以上が必要です。",
        "ko": "Q, K, V에는 각각 한 행 이상이 필요합니다.",
    },
    "bad_not_numeric": {
        "en": "Some cells are empty: fill every cell with a number.", "ja": "空のセルがあります。すべてのセルに数値を入れてください。",
        "ko": "빈 셀이 있습니다. 모든 셀에 숫자를 넣으세요.",
    },
    "bad_not_finite": {
        "en": "Use finite numbers no larger than {limit:g} in size.", "ja": "大きさが {limit:g} 以下の有限の数を使ってください。",
        "ko": "크기가 {limit:g} 이하인 유한한 숫자를 쓰세요.",
    },
    "bad_qk_width": {
        "en": "Q has {a} columns but K has {b}: a query and a key must have the same length d_k to be multiplied.",
        "ja": "Q は {a} 列、K は {b} 列です。クエリとキーの内積をとるには同じ長さ d_k が必要です。",
        "ko": "Q는 {a}열, K는 {b}열입니다. 쿼리와 키를 곱하려면 길이 d_k가 같아야 합니다.",
    },
    "bad_kv_rows": {
        "en": "K has {a} rows but V has {b}: every key needs exactly one value row. Add or delete rows so they match.",
        "ja": "K は {a} 行、V は {b} 行です。キー 1 つにつきバリューの行がちょうど 1 つ必要です。行を追加・削除して"
              "揃えてください。",
        "ko": "K는 {a}행, V는 {b}행입니다. 키 하나마다 값 행이 정확히 하나 필요합니다. 행을 추가하거나 지워서 "
              "맞추세요.",
    },
    "too_many_rows": {
        "en": "Only the first {k} rows of each matrix are used.", "ja": "各行列の最初の {k} 行だけを使います。",
        "ko": "각 행렬의 처음 {k}행만 사용합니다.",
    },
    "query": {"en": "query (row of Q)", "ja": "クエリ（Q の行）", "ko": "쿼리(Q의 행)"},
    "key": {"en": "key (row of K)", "ja": "キー（K の行）", "ko": "키(K의 행)"},
    "dim": {"en": "dimension of V", "ja": "V の次元", "ko": "V의 차원"},
    "step1": {"en": "Step 1 · Scores: Q Kᵀ", "ja": "ステップ 1 · スコア: Q Kᵀ", "ko": "1단계 · 점수: Q Kᵀ"},
    "step1_text": {
        "en": "Each score is the dot product of one query with one key: how well they match. For example:",
        "ja": "各スコアは 1 つのクエリと 1 つのキーの内積で、両者がどれだけ合うかを表します。例:",
        "ko": "각 점수는 쿼리 하나와 키 하나의 내적으로, 둘이 얼마나 잘 맞는지를 나타냅니다. 예:",
    },
    "step2": {"en": "Step 2 · Scale by 1/√d_k", "ja": "ステップ 2 · 1/√d_k 倍する", "ko": "2단계 · 1/√d_k로 스케일"},
    "step2_text": {
        "en": "Every score is divided by √d_k = √{dk} = {root:.4f} (multiplied by {scale:.4f}). Why: see the last "
              "section of this page.",
        "ja": "すべてのスコアを √d_k = √{dk} = {root:.4f} で割ります（{scale:.4f} 倍）。理由はこのページの最後の"
              "節を見てください。",
        "ko": "모든 점수를 √d_k = √{dk} = {root:.4f}로 나눕니다({scale:.4f}배). 이유는 이 페이지의 마지막 절을 "
              "보세요.",
    },
    "step3": {"en": "Step 3 · Softmax over the keys", "ja": "ステップ 3 · キー方向のソフトマックス",
              "ko": "3단계 · 키 방향 소프트맥스"},
    "step3_text": {
        "en": "Each row becomes weights: exponentiate, then divide by the row's sum, so every weight is positive "
              "and each row sums to 1. Row sums here: {sums}.",
        "ja": "各行を重みに変えます。指数をとり、行の和で割るので、重みはすべて正で各行の和は 1 になります。"
              "ここでの行の和: {sums}。",
        "ko": "각 행을 가중치로 바꿉니다. 지수를 취하고 행의 합으로 나누므로 모든 가중치는 양수이고 각 행의 합은 "
              "1입니다. 여기서 행의 합: {sums}.",
    },
    "step4": {"en": "Step 4 · Weighted sum of the values: weights · V", "ja": "ステップ 4 · バリューの重み付き和: 重み · V",
              "ko": "4단계 · 값의 가중합: 가중치 · V"},
    "step4_text": {
        "en": "Each query's output is a mix of the rows of V, mixed in the proportions of its weights:",
        "ja": "各クエリの出力は V の行を、その重みの割合で混ぜたものです:",
        "ko": "각 쿼리의 출력은 V의 행들을 그 가중치의 비율로 섞은 것입니다:",
    },
    "fig_scores": {"en": "Q Kᵀ (raw scores)", "ja": "Q Kᵀ（生のスコア）", "ko": "Q Kᵀ(원점수)"},
    "fig_scaled": {"en": "Q Kᵀ / √d_k (scaled scores)", "ja": "Q Kᵀ / √d_k（スケール後のスコア）",
                   "ko": "Q Kᵀ / √d_k(스케일된 점수)"},
    "fig_weights": {"en": "softmax(Q Kᵀ / √d_k): attention weights", "ja": "softmax(Q Kᵀ / √d_k): 注意の重み",
                    "ko": "softmax(Q Kᵀ / √d_k): 어텐션 가중치"},
    "fig_output": {"en": "Output = weights · V", "ja": "出力 = 重み · V", "ko": "출력 = 가중치 · V"},
    "check": {"en": "Check against PyTorch", "ja": "PyTorch との照合", "ko": "PyTorch와 비교"},
    "check_text": {
        "en": "`torch.nn.functional.scaled_dot_product_attention(Q, K, V)` on the same numbers (float64) gives:",
        "ja": "同じ数値（float64）での `torch.nn.functional.scaled_dot_product_attention(Q, K, V)` の結果:",
        "ko": "같은 숫자(float64)에 대한 `torch.nn.functional.scaled_dot_product_attention(Q, K, V)`의 결과:",
    },
    "check_ok": {
        "en": "Measured now: the four steps and SDPA agree; largest absolute difference {diff:.1e}.",
        "ja": "今回の計測: 4 つのステップと SDPA は一致しました。最大の絶対差は {diff:.1e} です。",
        "ko": "지금 측정한 결과: 네 단계와 SDPA가 일치합니다. 최대 절대 차이는 {diff:.1e}입니다.",
    },
    "check_bad": {
        "en": "Measured now: the four steps and SDPA differ by up to {diff:.3g}.",
        "ja": "今回の計測: 4 つのステップと SDPA の差は最大 {diff:.3g} です。",
        "ko": "지금 측정한 결과: 네 단계와 SDPA의 차이가 최대 {diff:.3g}입니다.",
    },
    "why": {"en": "Why divide by √d_k?", "ja": "なぜ √d_k で割るのか", "ko": "왜 √d_k로 나누는가"},
    "why_text": {
        "en": "If the d_k components of a query and a key are independent with variance 1, their dot product is a "
              "sum of d_k such products: its variance is d_k. With large d_k the scores spread widely, the largest "
              "one dominates, and the softmax saturates into an almost one-hot row (tiny gradients for every other "
              "key). Dividing by √d_k brings the variance back to 1 whatever d_k is. Below: random q and k with "
              "unit-variance components, {samples} rows per d_k, entropy in nats (higher = more spread out).",
        "ja": "クエリとキーの d_k 個の成分が互いに独立で分散 1 なら、内積はそのような積 d_k 個の和で、分散は d_k に"
              "なります。d_k が大きいとスコアが大きく散らばり、最大のものが支配して、ソフトマックスはほぼ one-hot の行に"
              "飽和します（他のキーの勾配はごく小さくなります）。√d_k で割ると d_k によらず分散が 1 に戻ります。下図: 成分の"
              "分散が 1 のランダムな q と k、d_k ごとに {samples} 行、エントロピーの単位はナット（大きいほど広がっている）。",
        "ko": "쿼리와 키의 d_k개 성분이 서로 독립이고 분산이 1이면, 내적은 그런 곱 d_k개의 합이므로 분산이 d_k입니다. "
              "d_k가 크면 점수가 넓게 퍼지고 가장 큰 점수가 지배해서, 소프트맥스가 거의 원-핫인 행으로 포화됩니다(다른 "
              "키의 기울기는 아주 작아짐). √d_k로 나누면 d_k와 상관없이 분산이 1로 돌아옵니다. 아래: 성분의 분산이 1인 "
              "무작위 q와 k, d_k마다 {samples}개 행, 엔트로피 단위는 내트(클수록 넓게 퍼짐).",
    },
    "sat_dk": {"en": "d_k", "ja": "d_k", "ko": "d_k"},
    "sat_keys": {"en": "Number of keys n", "ja": "キーの数 n", "ko": "키의 수 n"},
    "sat_title": {"en": "Mean entropy of a softmax row, {n} keys", "ja": "ソフトマックス 1 行の平均エントロピー（キー {n} 個）",
                  "ko": "소프트맥스 한 행의 평균 엔트로피(키 {n}개)"},
    "sat_scaled": {"en": "softmax(q·k / √d_k)", "ja": "softmax(q·k / √d_k)", "ko": "softmax(q·k / √d_k)"},
    "sat_unscaled": {"en": "softmax(q·k), no scaling", "ja": "softmax(q·k)（スケールなし）",
                     "ko": "softmax(q·k)(스케일 없음)"},
    "sat_max": {"en": "ln(n): uniform weights", "ja": "ln(n): 一様な重み", "ko": "ln(n): 균등한 가중치"},
    "sat_y": {"en": "mean entropy of a row (nats)", "ja": "1 行の平均エントロピー（ナット）", "ko": "한 행의 평균 엔트로피(내트)"},
    "sat_result": {
        "en": "Measured at d_k = {dk}: with the scaling a row's entropy averages {es:.2f} nats and its largest "
              "weight {ms:.2f}; without it, {eu:.2f} nats and {mu:.2f}. Uniform weights over {n} keys would have "
              "ln {n} = {mx:.2f} nats.",
        "ja": "d_k = {dk} での計測: スケールありでは 1 行のエントロピーの平均は {es:.2f} ナット、最大の重みは {ms:.2f}。"
              "スケールなしでは {eu:.2f} ナットと {mu:.2f}。キー {n} 個への一様な重みなら ln {n} = {mx:.2f} ナットです。",
        "ko": "d_k = {dk}에서 측정: 스케일이 있으면 한 행의 엔트로피 평균은 {es:.2f} 내트, 가장 큰 가중치는 {ms:.2f}. "
              "스케일이 없으면 {eu:.2f} 내트와 {mu:.2f}. 키 {n}개에 균등한 가중치라면 ln {n} = {mx:.2f} 내트입니다.",
    },
    "row_title": {"en": "One random row at d_k = {dk}", "ja": "d_k = {dk} でのランダムな 1 行",
                  "ko": "d_k = {dk}에서 무작위 한 행"},
    "row_scaled": {"en": "with 1/√d_k", "ja": "1/√d_k あり", "ko": "1/√d_k 있음"},
    "row_unscaled": {"en": "without scaling", "ja": "スケールなし", "ko": "스케일 없음"},
    "row_key": {"en": "key", "ja": "キー", "ko": "키"},
    "row_weight": {"en": "weight", "ja": "重み", "ko": "가중치"},
}

MAX_WIDTH = 8          # d_k and d_v
MAX_ROWS = 12          # rows of Q, K, V used: matrices stay readable
SAT_DKS = [2 ** i for i in range(11)]   # 1 .. 1024
SAT_SAMPLES = 512
SAT_SEED = 0
STATE = "sdpa_editor"  # base matrices of the editors, and a generation counter that renews the editors' keys


def classic_state() -> dict:
    return {"gen": 0, "dims": (2, 3), "q": np.array(wx.CLASSIC_Q), "k": np.array(wx.CLASSIC_K),
            "v": np.array(wx.CLASSIC_V)}


def reset() -> None:
    gen = st.session_state.get(STATE, classic_state())["gen"] + 1
    st.session_state[STATE] = {**classic_state(), "gen": gen}
    st.session_state.pop(STATE + "_last", None)
    st.session_state["dk"], st.session_state["dv"] = 2, 3


def editor_bases(d_k: int, d_v: int) -> dict:
    """The matrices the editors start from. When d_k or d_v changes, the user's current numbers are cut or
    zero-padded to the new width and the editors start afresh (new keys) from them: an editor's stored edits
    only make sense against the exact table it was created with."""
    state = st.session_state.setdefault(STATE, classic_state())
    if state["dims"] != (d_k, d_v):
        q, k, v = st.session_state.get(STATE + "_last", (state["q"], state["k"], state["v"]))
        state.update(q=wx.resize(q, len(q), d_k), k=wx.resize(k, len(k), d_k), v=wx.resize(v, len(v), d_v),
                     dims=(d_k, d_v), gen=state["gen"] + 1)
    return state


def edit_matrix(label: str, base: np.ndarray, name: str, gen: int) -> np.ndarray:
    columns = [f"{name}·{j}" for j in range(base.shape[1])]
    frame = pd.DataFrame(base, columns=columns)
    config = {c: st.column_config.NumberColumn(c, required=True) for c in columns}
    st.caption(label)
    edited = st.data_editor(frame, key=f"sdpa-{name}-{gen}", num_rows="dynamic", column_config=config)
    return pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def fmt(x: float) -> str:
    return f"{x:.6g}"


def dot_line(q: np.ndarray, k: np.ndarray, score: float, i: int = 0, j: int = 0) -> str:
    terms = " + ".join(f"{fmt(a)}×{fmt(b)}" for a, b in zip(q[i], k[j]))
    return f"score[q{i}, k{j}] = q{i} · k{j} = {terms} = {fmt(score)}"


def mix_line(weights: np.ndarray, output: np.ndarray, i: int = 0) -> str:
    parts = " + ".join(f"{w:.4f}×v{j}" for j, w in enumerate(weights[i]))
    return f"out[q{i}] = {parts} = [{', '.join(fmt(x) for x in output[i])}]"


@st.cache_data(show_spinner=False, max_entries=32)
def saturation(d_ks: tuple, n_keys: int) -> wx.Saturation:
    return wx.softmax_entropy_vs_dk(list(d_ks), n_keys=n_keys, seed=SAT_SEED, n_samples=SAT_SAMPLES)


def show_steps(T) -> None:
    st.subheader(T("inputs"))
    c1, c2, c3 = st.columns([1, 1, 2])
    with c1:
        d_k = ui.number("dk", T("dk"), 1, MAX_WIDTH, 2)
    with c2:
        d_v = ui.number("dv", T("dv"), 1, MAX_WIDTH, 3)
    with c3:
        st.button(T("reset"), on_click=reset)
    st.caption(T("editor_help"))
    state = editor_bases(d_k, d_v)
    cq, ck, cv = st.columns(3)
    with cq:
        q = edit_matrix(T("q_label", n=len(state["q"])), state["q"], "Q", state["gen"])
    with ck:
        k = edit_matrix(T("k_label", n=len(state["k"])), state["k"], "K", state["gen"])
    with cv:
        v = edit_matrix(T("v_label", n=len(state["v"])), state["v"], "V", state["gen"])
    st.session_state[STATE + "_last"] = (q, k, v)
    if max(len(q), len(k), len(v)) > MAX_ROWS:
        st.info(T("too_many_rows", k=MAX_ROWS))
        q, k, v = q[:MAX_ROWS], k[:MAX_ROWS], v[:MAX_ROWS]

    problems = wx.input_problems(q, k, v)
    for code in problems:
        shapes = {"qk_width": (q.shape[1], k.shape[1]), "kv_rows": (k.shape[0], v.shape[0])}
        a, b = shapes.get(code, (0, 0))
        st.error(T(f"bad_{code}", a=a, b=b, limit=wx.MAX_ABS_INPUT))
    if problems:
        return
    s = wx.sdpa_steps(q, k, v)
    n_q, n_k = s.scores.shape
    q_labels, k_labels = [f"q{i}" for i in range(n_q)], [f"k{j}" for j in range(n_k)]
    v_labels = [f"V·{j}" for j in range(s.output.shape[1])]
    axes = dict(x_title=T("key"), y_title=T("query"))

    left, right = st.columns(2)
    with left:
        st.subheader(T("step1"))
        st.markdown(T("step1_text"))
        st.code(dot_line(s.q, s.k, s.scores[0, 0]), language=None)
        fig = matrix_heatmap(s.scores, q_labels, k_labels, title=T("fig_scores"), value_name="QKᵀ", decimals=4,
                             **axes)
        ui.show_figure(fig, "sdpa-step1-scores", data=s.scores, row_labels=q_labels, col_labels=k_labels,
                       key="fig-scores")
    with right:
        st.subheader(T("step2"))
        st.markdown(T("step2_text", dk=q.shape[1], root=1 / s.scale, scale=s.scale))
        st.code(f"{fmt(s.scores[0, 0])} × {s.scale:.6f} = {fmt(s.scaled[0, 0])}", language=None)
        fig = matrix_heatmap(s.scaled, q_labels, k_labels, title=T("fig_scaled"), value_name="QKᵀ/√d_k",
                             decimals=4, **axes)
        ui.show_figure(fig, "sdpa-step2-scaled", data=s.scaled, row_labels=q_labels, col_labels=k_labels,
                       key="fig-scaled")
    left, right = st.columns(2)
    with left:
        st.subheader(T("step3"))
        st.markdown(T("step3_text", sums=", ".join(f"{x:.6f}" for x in s.weights.sum(1))))
        row = ", ".join(fmt(x) for x in s.scaled[0])
        st.code(f"softmax([{row}]) = [{', '.join(f'{w:.6f}' for w in s.weights[0])}]", language=None)
        fig = attention_heatmap(s.weights, q_labels, k_labels, title=T("fig_weights"), zmax=1.0, decimals=4, **axes)
        ui.show_figure(fig, "sdpa-step3-weights", data=s.weights, row_labels=q_labels, col_labels=k_labels,
                       key="fig-weights")
    with right:
        st.subheader(T("step4"))
        st.markdown(T("step4_text"))
        st.code(mix_line(s.weights, s.output), language=None)
        fig = matrix_heatmap(s.output, q_labels, v_labels, title=T("fig_output"), x_title=T("dim"),
                             y_title=T("query"), value_name="output", decimals=4)
        ui.show_figure(fig, "sdpa-step4-output", data=s.output, row_labels=q_labels, col_labels=v_labels,
                       key="fig-output")

    st.subheader(T("check"))
    st.markdown(T("check_text"))
    st.dataframe(pd.DataFrame(s.sdpa_output, index=q_labels, columns=v_labels))
    if s.max_abs_diff <= 1e-9:
        st.success(T("check_ok", diff=s.max_abs_diff))
    else:
        st.warning(T("check_bad", diff=s.max_abs_diff))


def show_saturation(T) -> None:
    st.header(T("why"))
    st.markdown(T("why_text", samples=SAT_SAMPLES))
    c1, c2 = st.columns(2)
    with c1:
        d_k = ui.slider("sdk", T("sat_dk"), 1, 1024, 64)
    with c2:
        n = ui.slider("keys", T("sat_keys"), 2, 64, 16)
    d_ks = tuple(sorted(set(SAT_DKS) | {d_k}))
    sat = saturation(d_ks, n)
    i = d_ks.index(d_k)
    st.markdown(T("sat_result", dk=d_k, es=sat.entropy_scaled[i], ms=sat.max_weight_scaled[i],
                  eu=sat.entropy_unscaled[i], mu=sat.max_weight_unscaled[i], n=n, mx=sat.max_entropy))
    left, right = st.columns([3, 2])
    with left:
        fig = entropy_vs_dk_figure(sat.d_k, sat.entropy_scaled, sat.entropy_unscaled, sat.max_entropy, d_k,
                                   title=T("sat_title", n=n), scaled_name=T("sat_scaled"),
                                   unscaled_name=T("sat_unscaled"), max_name=T("sat_max"), y_title=T("sat_y"))
        ui.show_figure(fig, f"softmax-saturation-n{n}", key="fig-saturation",
                       data={"d_k": sat.d_k, "entropy_scaled": sat.entropy_scaled,
                             "entropy_unscaled": sat.entropy_unscaled, "max_weight_scaled": sat.max_weight_scaled,
                             "max_weight_unscaled": sat.max_weight_unscaled})
    with right:
        row = wx.example_row(d_k, n, SAT_SEED)
        fig = softmax_row_bars(row["weights_scaled"], row["weights_unscaled"], [f"k{j}" for j in range(n)],
                               title=T("row_title", dk=d_k), scaled_name=T("row_scaled"),
                               unscaled_name=T("row_unscaled"), x_title=T("row_key"), y_title=T("row_weight"))
        ui.show_figure(fig, f"softmax-row-dk{d_k}-n{n}", key="fig-row",
                       data={"key": [f"k{j}" for j in range(n)], "score": row["scores"],
                             "weight_scaled": row["weights_scaled"], "weight_unscaled": row["weights_unscaled"]})


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
show_steps(T)
show_saturation(T)
ui.page_end()
