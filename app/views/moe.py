"""Mixture-of-Experts routing you can see: the repo's own small Mixtral-style model, trained on labelled simple
English, shows for your text where each token goes, how full each expert is, what capacity drops, and what each
expert specialises in; a balanced and a collapsed checkpoint side by side; and the sizes of real MoE models."""
import numpy as np
import streamlit as st
import torch

from app import ui
from core import moe, moe_catalog, moe_training
from core.models import ModelUnavailable, moe_model
from viz import moe as vmoe
from viz.labels import indexed_labels

TEXT = {
    "title": {"en": "Mixture of Experts: where each token goes", "ja": "Mixture of Experts: 各トークンの行き先",
              "ko": "Mixture of Experts: 각 토큰이 가는 곳"},
    "intro": {
        "en": "In a Mixture-of-Experts layer a small router scores every expert (a feed-forward network) for each "
              "token; the token is sent only to its top-k experts, whose outputs are mixed with the renormalised "
              "router probabilities. The model here is this project's own tiny Mixtral (4 layers, 8 experts, top-2), "
              "trained by scripts/train_moe.py on generated simple English with a vocabulary of about 270 words: "
              "any other word becomes [UNK]. Every number below is computed from its router on your text.",
        "ja": "Mixture-of-Experts 層では、小さなルーターが各トークンについて全エキスパート（フィードフォワードネットワーク）"
              "を採点し、トークンは上位 k 個のエキスパートだけに送られます。その出力は正規化し直したルーター確率で混ぜられます。"
              "ここでのモデルはこのプロジェクト独自の小さな Mixtral（4 層、8 エキスパート、上位 2）で、scripts/train_moe.py "
              "が約 270 語の語彙の生成された簡単な英語で学習させたものです。それ以外の単語は [UNK] になります。以下の数値は"
              "すべて、あなたの文に対するルーターから計算しています。",
        "ko": "Mixture-of-Experts 층에서는 작은 라우터가 토큰마다 모든 전문가(피드포워드 네트워크)에 점수를 매기고, 토큰은 "
              "상위 k개 전문가에게만 보내집니다. 그 출력은 다시 정규화한 라우터 확률로 섞입니다. 여기 모델은 이 프로젝트가 "
              "직접 만든 작은 Mixtral(4층, 전문가 8개, 상위 2개)로, scripts/train_moe.py가 약 270개 단어로 된 생성된 쉬운 "
              "영어로 학습시켰습니다. 그 밖의 단어는 [UNK]가 됩니다. 아래 숫자는 모두 입력한 문장에 대한 라우터에서 계산합니다.",
    },
    "text": {"en": "Text (simple English works best)", "ja": "文（簡単な英語が最適）", "ko": "문장(쉬운 영어가 가장 좋음)"},
    "ckpt": {"en": "Checkpoint", "ja": "チェックポイント", "ko": "체크포인트"},
    "balanced": {"en": "balanced (trained with the load-balancing loss)", "ja": "均衡（負荷分散損失ありで学習）",
                 "ko": "균형(부하 분산 손실로 학습)"},
    "collapsed": {"en": "collapsed (trained without it)", "ja": "崩壊（負荷分散損失なしで学習）",
                  "ko": "붕괴(부하 분산 손실 없이 학습)"},
    "balanced_short": {"en": "balanced", "ja": "均衡", "ko": "균형"},
    "collapsed_short": {"en": "collapsed", "ja": "崩壊", "ko": "붕괴"},
    "layer": {"en": "Layer", "ja": "層", "ko": "층"},
    "cf": {"en": "Capacity factor", "ja": "容量係数", "ko": "용량 계수"},
    "cf_help": {
        "en": "Each expert may take at most ceil(factor × tokens × k / experts) assignments; the rest are dropped "
              "(that token gets nothing from that expert). At 4.0 = experts / k nothing can be dropped.",
        "ja": "各エキスパートが受け取れる割り当ては最大 ceil(係数 × トークン数 × k / エキスパート数) 個で、残りは捨てられます"
              "（そのトークンはそのエキスパートから何も受け取りません）。4.0 = エキスパート数 / k では何も捨てられません。",
        "ko": "각 전문가는 최대 ceil(계수 × 토큰 수 × k / 전문가 수)개의 할당만 받고 나머지는 버려집니다(그 토큰은 그 "
              "전문가에게서 아무것도 받지 못합니다). 4.0 = 전문가 수 / k에서는 아무것도 버려지지 않습니다.",
    },
    "unavailable": {"en": "The MoE checkpoints are missing: {message}", "ja": "MoE チェックポイントがありません: {message}",
                    "ko": "MoE 체크포인트가 없습니다: {message}"},
    "weights": {"en": "Weights: {note}.", "ja": "重み: {note}。", "ko": "가중치: {note}."},
    "empty": {"en": "Type some text to see its routing. The comparison and the table below do not need it.",
              "ja": "ルーティングを見るには文を入力してください。下の比較と表は入力なしでも表示されます。",
              "ko": "라우팅을 보려면 문장을 입력하세요. 아래 비교와 표는 입력 없이도 보입니다."},
    "truncated": {"en": "Your text has {n:,} tokens; this model reads at most {limit}, so the first {limit} are shown.",
                  "ja": "入力は {n:,} トークンです。このモデルが読むのは最大 {limit} トークンなので、先頭の {limit} を表示します。",
                  "ko": "입력은 {n:,}개 토큰입니다. 이 모델은 최대 {limit}개만 읽으므로 앞의 {limit}개를 보여 줍니다."},
    "unknown": {"en": "{n} of {total} words are outside the model's vocabulary and became [UNK].",
                "ja": "{total} 語のうち {n} 語がモデルの語彙になく [UNK] になりました。",
                "ko": "{total}개 단어 중 {n}개가 모델의 어휘에 없어 [UNK]가 되었습니다."},
    "routing_h": {"en": "Router probabilities, layer {layer}", "ja": "ルーター確率（層 {layer}）",
                  "ko": "라우터 확률(층 {layer})"},
    "heatmap_title": {"en": "{ckpt}: token × expert router probabilities, layer {layer}, capacity factor {cf}",
                      "ja": "{ckpt}: トークン × エキスパートのルーター確率、層 {layer}、容量係数 {cf}",
                      "ko": "{ckpt}: 토큰 × 전문가 라우터 확률, 층 {layer}, 용량 계수 {cf}"},
    "expert_axis": {"en": "expert", "ja": "エキスパート", "ko": "전문가"},
    "token_axis": {"en": "token (in reading order)", "ja": "トークン（読む順）", "ko": "토큰(읽는 순서)"},
    "chosen": {"en": "chosen (top-2)", "ja": "選択（上位 2）", "ko": "선택(상위 2)"},
    "dropped": {"en": "dropped (expert full)", "ja": "破棄（エキスパートが満杯）", "ko": "버려짐(전문가가 가득 참)"},
    "m_switch": {"en": "Switch balance loss", "ja": "Switch 負荷分散損失", "ko": "Switch 부하 분산 손실"},
    "m_switch_help": {"en": "N·Σ f_i·P_i: 1.0 = balanced, {n} = all tokens on one expert.",
                      "ja": "N·Σ f_i·P_i: 1.0 = 均衡、{n} = 全トークンが 1 つのエキスパートへ。",
                      "ko": "N·Σ f_i·P_i: 1.0 = 균형, {n} = 모든 토큰이 전문가 하나로."},
    "m_dev": {"en": "Deviation from uniform", "ja": "一様からのずれ", "ko": "균등에서의 편차"},
    "m_dev_help": {"en": "N·Σ (f_i − 1/N)²: 0 = uniform load, {m} = all on one expert.",
                   "ja": "N·Σ (f_i − 1/N)²: 0 = 一様な負荷、{m} = 全部が 1 つのエキスパートへ。",
                   "ko": "N·Σ (f_i − 1/N)²: 0 = 균등한 부하, {m} = 모두 전문가 하나로."},
    "m_entropy": {"en": "Mean router entropy", "ja": "ルーターの平均エントロピー", "ko": "라우터 평균 엔트로피"},
    "m_entropy_help": {"en": "In nats; log {n} = {max:.2f} means the router cannot decide.",
                       "ja": "単位はナット。log {n} = {max:.2f} はルーターが決められない状態。",
                       "ko": "단위는 nat. log {n} = {max:.2f}는 라우터가 결정하지 못하는 상태."},
    "m_dropped": {"en": "Dropped assignments", "ja": "破棄された割り当て", "ko": "버려진 할당"},
    "m_dropped_help": {"en": "{tokens} token(s) lost both experts. Capacity: {cap} per expert.",
                       "ja": "{tokens} トークンが両方のエキスパートを失いました。容量: エキスパートあたり {cap}。",
                       "ko": "{tokens}개 토큰이 두 전문가를 모두 잃었습니다. 용량: 전문가당 {cap}."},
    "load_title": {"en": "Expert load on your text, layer {layer} (share of the top-2 choices)",
                   "ja": "あなたの文でのエキスパート負荷、層 {layer}（上位 2 選択に占める割合）",
                   "ko": "입력 문장에서의 전문가 부하, 층 {layer}(상위 2 선택 중 비율)"},
    "share_axis": {"en": "share of assignments", "ja": "割り当ての割合", "ko": "할당 비율"},
    "uniform": {"en": "uniform", "ja": "一様", "ko": "균등"},
    "capacity_line": {"en": "capacity", "ja": "容量", "ko": "용량"},
    "entropy_title": {"en": "Router entropy per token, layer {layer}", "ja": "トークンごとのルーターエントロピー、層 {layer}",
                      "ko": "토큰별 라우터 엔트로피, 층 {layer}"},
    "entropy_axis": {"en": "router entropy (nats)", "ja": "ルーターエントロピー（ナット）", "ko": "라우터 엔트로피(nat)"},
    "entropy_max": {"en": "log E (undecided)", "ja": "log E（決められない）", "ko": "log E(결정 못 함)"},
    "drop_title": {"en": "Share of assignments dropped vs capacity factor (your text, layer {layer})",
                   "ja": "容量係数ごとの破棄された割り当ての割合（あなたの文、層 {layer}）",
                   "ko": "용량 계수에 따른 버려진 할당 비율(입력 문장, 층 {layer})"},
    "drop_x": {"en": "capacity factor", "ja": "容量係数", "ko": "용량 계수"},
    "drop_y": {"en": "share dropped", "ja": "破棄の割合", "ko": "버려진 비율"},
    "slider": {"en": "slider", "ja": "スライダー", "ko": "슬라이더"},
    "first_choice": {"en": "Tokens of your text whose first choice is each expert (layer {layer})",
                     "ja": "各エキスパートを第 1 候補にしたあなたの文のトークン（層 {layer}）",
                     "ko": "각 전문가를 첫 번째로 고른 입력 문장의 토큰(층 {layer})"},
    "col_expert": {"en": "expert", "ja": "エキスパート", "ko": "전문가"},
    "col_tokens": {"en": "tokens", "ja": "トークン", "ko": "토큰"},
    "spec_h": {"en": "What each expert specialises in", "ja": "各エキスパートの得意分野", "ko": "각 전문가가 맡는 것"},
    "spec_intro": {
        "en": "Measured on {n:,} held-out generated tokens whose word category is known (the generator labels "
              "every word). Each row: of the tokens routed to that expert (either of its two choices), the share "
              "in each category. Lift = that share divided by the category's share overall.",
        "ja": "語の品詞が分かっている保留データの生成トークン {n:,} 個で計測（生成器がすべての語にラベルを付けます）。"
              "各行: そのエキスパートに送られたトークン（2 つの選択のどちらでも）のうち、各品詞が占める割合。"
              "リフト = その割合 ÷ 全体でのその品詞の割合。",
        "ko": "단어 품사를 아는 보류 생성 토큰 {n:,}개로 측정했습니다(생성기가 모든 단어에 라벨을 붙입니다). 각 행: 그 "
              "전문가로 보내진 토큰(두 선택 중 어느 쪽이든) 중 각 품사의 비율. 리프트 = 그 비율 ÷ 전체에서 그 품사의 비율.",
    },
    "spec_title": {"en": "{ckpt}, layer {layer}: category shares per expert (held-out text)",
                   "ja": "{ckpt}、層 {layer}: エキスパートごとの品詞の割合（保留データ）",
                   "ko": "{ckpt}, 층 {layer}: 전문가별 품사 비율(보류 데이터)"},
    "category_axis": {"en": "word category", "ja": "品詞", "ko": "품사"},
    "spec_line": {"en": "Expert {e}: {cat} is {share:.0%} of its tokens ({lift:.1f}× its overall share); "
                        "it takes {load:.1%} of all assignments.",
                  "ja": "エキスパート {e}: {cat} がトークンの {share:.0%}（全体での割合の {lift:.1f} 倍）。"
                        "全割り当ての {load:.1%} を受け持ちます。",
                  "ko": "전문가 {e}: {cat}이(가) 토큰의 {share:.0%}(전체 비율의 {lift:.1f}배). "
                        "전체 할당의 {load:.1%}를 맡습니다."},
    "spec_unused": {"en": "Expert {e}: receives no tokens.", "ja": "エキスパート {e}: トークンを受け取りません。",
                    "ko": "전문가 {e}: 토큰을 받지 않습니다."},
    "compare_h": {"en": "Balanced vs collapsed checkpoint", "ja": "均衡と崩壊のチェックポイントの比較",
                  "ko": "균형 체크포인트와 붕괴 체크포인트 비교"},
    "compare_intro": {
        "en": "Same data, seed, architecture and steps; only the load-balancing loss differs. Measured now on the "
              "held-out text.",
        "ja": "データ、シード、構造、ステップ数は同じで、負荷分散損失だけが違います。保留データで今計測した値です。",
        "ko": "데이터, 시드, 구조, 스텝 수는 같고 부하 분산 손실만 다릅니다. 보류 데이터로 지금 측정한 값입니다.",
    },
    "layer_load_title": {"en": "{ckpt}: expert load per layer (held-out text)",
                         "ja": "{ckpt}: 層ごとのエキスパート負荷（保留データ）",
                         "ko": "{ckpt}: 층별 전문가 부하(보류 데이터)"},
    "layer_axis": {"en": "layer", "ja": "層", "ko": "층"},
    "m_loss": {"en": "Held-out loss (nats/token)", "ja": "保留データの損失（ナット/トークン）",
               "ko": "보류 데이터 손실(nat/토큰)"},
    "m_min": {"en": "Least-used expert", "ja": "最も使われないエキスパート", "ko": "가장 적게 쓰인 전문가"},
    "m_max": {"en": "Most-used expert", "ja": "最も使われるエキスパート", "ko": "가장 많이 쓰인 전문가"},
    "m_min_help": {"en": "Smallest share of assignments over all layers and experts (uniform = {u:.1%}).",
                   "ja": "全層・全エキスパートでの割り当ての最小割合（一様 = {u:.1%}）。",
                   "ko": "모든 층과 전문가 중 가장 작은 할당 비율(균등 = {u:.1%})."},
    "compare_text": {"en": "Both checkpoints on your text, layer {layer}", "ja": "あなたの文での両チェックポイント、層 {layer}",
                     "ko": "입력 문장에서 두 체크포인트, 층 {layer}"},
    "curves_title": {"en": "Training loss (next-token cross-entropy on training batches)",
                     "ja": "学習損失（学習バッチでの次トークン交差エントロピー）",
                     "ko": "학습 손실(학습 배치의 다음 토큰 교차 엔트로피)"},
    "curves_note": {"en": "Training curves are read from the report the training script wrote (data/moe/*/report.json).",
                    "ja": "学習曲線は学習スクリプトが書いたレポート（data/moe/*/report.json）から読んでいます。",
                    "ko": "학습 곡선은 학습 스크립트가 쓴 보고서(data/moe/*/report.json)에서 읽습니다."},
    "step_axis": {"en": "training step", "ja": "学習ステップ", "ko": "학습 스텝"},
    "loss_axis": {"en": "loss (nats/token)", "ja": "損失（ナット/トークン）", "ko": "손실(nat/토큰)"},
    "real_h": {"en": "Real MoE models", "ja": "実際の MoE モデル", "ko": "실제 MoE 모델"},
    "real_intro": {
        "en": "Published sizes; the two fractions are computed from them. A token uses a larger share of all "
              "parameters than of the routed experts, because attention, embeddings and shared experts always run.",
        "ja": "公表された規模と、そこから計算した 2 つの割合。注意機構、埋め込み、共有エキスパートは常に動くため、"
              "トークンが使うパラメータの割合はルーティングされるエキスパートの割合より大きくなります。",
        "ko": "공개된 규모와 그로부터 계산한 두 비율. 어텐션, 임베딩, 공유 전문가는 항상 실행되므로 토큰이 쓰는 전체 "
              "파라미터 비율은 라우팅되는 전문가 비율보다 큽니다.",
    },
    "c_model": {"en": "model", "ja": "モデル", "ko": "모델"},
    "c_experts": {"en": "routed experts (+ shared)", "ja": "ルーティングされるエキスパート（+ 共有）",
                  "ko": "라우팅 전문가(+ 공유)"},
    "c_active": {"en": "active per token", "ja": "トークンあたりの活性", "ko": "토큰당 활성"},
    "c_total": {"en": "total parameters", "ja": "総パラメータ", "ko": "전체 파라미터"},
    "c_active_p": {"en": "active parameters", "ja": "活性パラメータ", "ko": "활성 파라미터"},
    "c_frac": {"en": "active fraction", "ja": "活性の割合", "ko": "활성 비율"},
    "c_routed": {"en": "routed experts used", "ja": "使うルーティングエキスパートの割合", "ko": "쓰는 라우팅 전문가 비율"},
    "c_source": {"en": "source", "ja": "出典", "ko": "출처"},
    "ours": {"en": "This page's model: {total:,} parameters, {active:,} active per token ({frac:.0%}), 2 of 8 "
                   "experts per layer.",
             "ja": "このページのモデル: パラメータ {total:,} 個、トークンあたり活性 {active:,} 個（{frac:.0%}）、"
                   "各層 8 エキスパート中 2 個。",
             "ko": "이 페이지의 모델: 파라미터 {total:,}개, 토큰당 활성 {active:,}개({frac:.0%}), 층마다 전문가 8개 중 2개."},
}

CAPACITY_FACTORS = [round(0.25 * i, 2) for i in range(1, 17)]   # 0.25 .. 4.0 (= experts / k here)
DEFAULT_TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


@st.cache_resource(show_spinner=False)
def load(variant: str):
    return moe_model.load_moe(variant)


@st.cache_resource(show_spinner=False, max_entries=8)
def route_text(variant: str, text: str) -> dict:
    """Router logits of every layer for one text (the run is cached; the page slices it)."""
    model = load(variant)
    batch = model.tokenize([text])
    trace = model.run(batch)
    full = len(model.tokenizer(text)["input_ids"])
    return {"tokens": batch.tokens[0], "ids": batch.input_ids[0], "logits": trace.router_logits,
            "n_full": full, "truncated": batch.truncated[0]}


@st.cache_resource(show_spinner=False)
def held_out(variant: str) -> dict:
    return moe_training.evaluate(load(variant).model, moe_training.held_out_batch())


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))

try:
    models = {v: load(v) for v in moe_model.VARIANTS}
except ModelUnavailable as err:
    st.error(T("unavailable", message=str(err)))
    models = None

if models is not None:
    text = ui.text_area("text", T("text"), DEFAULT_TEXT)
    c1, c2, c3 = st.columns(3)
    with c1:
        variant = ui.select("ckpt", T("ckpt"), list(moe_model.VARIANTS), "balanced", format_func=T)
    model = models[variant]
    with c2:
        layer = ui.slider("layer", T("layer"), 0, model.n_layers - 1, 1)
    with c3:
        cf = ui.slider("cf", T("cf"), 0.25, 4.0, 1.25, step=0.25, help=T("cf_help"))
    st.caption(T("weights", note=model.weights_note))
    n_experts, top_k = model.n_experts, model.top_k
    ckpt_name = T(f"{variant}_short")

    routed = route_text(variant, text) if text.strip() else None
    if routed is None:
        st.info(T("empty"))
    else:
        if routed["truncated"]:
            st.info(T("truncated", n=routed["n_full"], limit=model.max_positions))
        tokens = routed["tokens"]
        words = [t for t in tokens[1:]]
        n_unk = sum(t == "[UNK]" for t in words)
        if n_unk:
            st.warning(T("unknown", n=n_unk, total=len(words)))
        logits = routed["logits"][layer]
        routing = moe.route_tokens(logits, top_k, capacity_factor=cf)
        no_cap = moe.route_tokens(logits, top_k)
        load_shares = moe.expert_load(routing.top_k_index, n_experts)
        entropy = moe.router_entropy(routing.probs)
        labels = indexed_labels(tokens)

        st.subheader(T("routing_h", layer=layer))
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(T("m_switch"), f"{float(moe.switch_balance_loss(routing.probs, routing.top_k_index)):.3f}",
                  help=T("m_switch_help", n=n_experts))
        m2.metric(T("m_dev"), f"{float(moe.uniform_deviation_loss(load_shares)):.3f}",
                  help=T("m_dev_help", m=n_experts - 1))
        m3.metric(T("m_entropy"), f"{float(entropy.mean()):.3f}",
                  help=T("m_entropy_help", n=n_experts, max=float(np.log(n_experts))))
        n_dropped = int((~routing.kept).sum())
        m4.metric(T("m_dropped"), f"{n_dropped} / {routing.kept.numel()}",
                  help=T("m_dropped_help", tokens=int((~routing.kept.any(-1)).sum()), cap=routing.capacity))

        fig = vmoe.router_heatmap(routing.probs.numpy(), labels, routing.chosen().numpy(), routing.dropped().numpy(),
                                  title=T("heatmap_title", ckpt=ckpt_name, layer=layer, cf=cf),
                                  x_title=T("expert_axis"), y_title=T("token_axis"), chosen_name=T("chosen"),
                                  dropped_name=T("dropped"))
        ui.show_figure(fig, f"moe-router-{variant}-layer{layer}", data=routing.probs.numpy(), row_labels=labels,
                       col_labels=vmoe.expert_labels(n_experts), key="router")

        left, right = st.columns(2)
        with left:
            cap_share = routing.capacity / max(1, routing.kept.numel())
            fig = vmoe.load_bars({ckpt_name: load_shares.numpy()}, title=T("load_title", layer=layer),
                                 y_title=T("share_axis"), uniform_label=T("uniform"),
                                 capacity_share=cap_share if cap_share < 1 else None, capacity_label=T("capacity_line"))
            ui.show_figure(fig, f"moe-load-{variant}-layer{layer}",
                           data={"expert": vmoe.expert_labels(n_experts), "share": load_shares.tolist(),
                                 "count": moe.expert_counts(routing.top_k_index, n_experts).tolist()}, key="load")
            shares = moe.dropped_share_by_capacity(no_cap.top_k_index, n_experts, CAPACITY_FACTORS)
            fig = vmoe.dropped_curve(CAPACITY_FACTORS, shares, current=cf, title=T("drop_title", layer=layer),
                                     x_title=T("drop_x"), y_title=T("drop_y"), current_label=T("slider"))
            ui.show_figure(fig, f"moe-dropped-{variant}-layer{layer}",
                           data={"capacity_factor": CAPACITY_FACTORS, "dropped_share": shares}, key="dropped")
        with right:
            fig = vmoe.entropy_bars(entropy.numpy(), labels, float(np.log(n_experts)),
                                    title=T("entropy_title", layer=layer), x_title=T("entropy_axis"),
                                    max_label=T("entropy_max"))
            ui.show_figure(fig, f"moe-entropy-{variant}-layer{layer}",
                           data={"token": labels, "entropy_nats": entropy.tolist()}, key="entropy")

        st.markdown(f"**{T('first_choice', layer=layer)}**")
        first = routing.top_k_index[:, 0].tolist()
        rows = {T("col_expert"): [], T("col_tokens"): []}
        for e in range(n_experts):
            picked = sorted({tokens[i] for i, f in enumerate(first) if f == e})
            rows[T("col_expert")].append(f"expert {e}")
            rows[T("col_tokens")].append(" · ".join(picked[:40]) + (" …" if len(picked) > 40 else ""))
        st.dataframe(rows, hide_index=True, width="stretch")   # dataframe cells are text, never HTML

    # --- specialisation (held-out, labelled) ---------------------------------------------------------------
    st.subheader(T("spec_h"))
    stats = held_out(variant)
    names = moe_model.category_names()
    counts = torch.tensor(stats["layers"][layer]["category_counts"], dtype=torch.float32)
    keep = counts.sum(0) > 0          # categories the held-out text contains (no [UNK] there)
    counts, shown_names = counts[:, keep], [n for n, k in zip(names, keep.tolist()) if k]
    st.caption(T("spec_intro", n=stats["held_out_tokens"]))
    shares, lift = moe.category_shares(counts), moe.category_lift(counts)
    fig = vmoe.category_heatmap(shares.numpy(), lift.numpy(), shown_names,
                                title=T("spec_title", ckpt=ckpt_name, layer=layer), x_title=T("category_axis"),
                                y_title=T("expert_axis"))
    ui.show_figure(fig, f"moe-specialisation-{variant}-layer{layer}", data=shares.numpy(),
                   row_labels=vmoe.expert_labels(n_experts), col_labels=shown_names, key="spec")
    layer_load = stats["layers"][layer]["expert_load"]
    for e, (cat, share, lf) in enumerate(moe.top_categories(counts, shown_names)):
        st.markdown("- " + (T("spec_line", e=e, cat=cat, share=share, lift=lf, load=layer_load[e]) if cat
                            else T("spec_unused", e=e)))

    # --- balanced vs collapsed -----------------------------------------------------------------------------
    st.subheader(T("compare_h"))
    st.caption(T("compare_intro"))
    columns = st.columns(len(moe_model.VARIANTS))
    for col, v in zip(columns, moe_model.VARIANTS):
        s = held_out(v)
        loads = np.array([lay["expert_load"] for lay in s["layers"]])
        with col:
            a, b, c = st.columns(3)
            a.metric(T("m_loss"), f"{s['held_out_loss']:.3f}")
            b.metric(T("m_min"), f"{loads.min():.1%}", help=T("m_min_help", u=1 / n_experts))
            c.metric(T("m_max"), f"{loads.max():.1%}")
            fig = vmoe.layer_load_heatmap(loads, title=T("layer_load_title", ckpt=T(f"{v}_short")),
                                          x_title=T("expert_axis"), y_title=T("layer_axis"), zmax=0.5)
            ui.show_figure(fig, f"moe-layer-load-{v}", data=loads,
                           row_labels=[f"layer {i}" for i in range(len(loads))],
                           col_labels=vmoe.expert_labels(n_experts), key=f"layer-load-{v}")
    if routed is not None:
        both = {}
        for v in moe_model.VARIANTS:
            r = moe.route_tokens(route_text(v, text)["logits"][layer], top_k)
            both[T(f"{v}_short")] = moe.expert_load(r.top_k_index, n_experts).numpy()
        fig = vmoe.load_bars(both, title=T("compare_text", layer=layer), y_title=T("share_axis"),
                             uniform_label=T("uniform"))
        ui.show_figure(fig, f"moe-compare-layer{layer}",
                       data={"expert": vmoe.expert_labels(n_experts), **{k: v.tolist() for k, v in both.items()}},
                       key="compare")
    curves = {T(f"{v}_short"): ([e["step"] for e in models[v].report["loss_curve"]],
                                [e["lm_loss"] for e in models[v].report["loss_curve"]]) for v in moe_model.VARIANTS}
    fig = vmoe.loss_curves(curves, title=T("curves_title"), x_title=T("step_axis"), y_title=T("loss_axis"))
    ui.show_figure(fig, "moe-training-loss", key="curves")
    st.caption(T("curves_note"))

# --- real models ---------------------------------------------------------------------------------------------
st.subheader(T("real_h"))
st.caption(T("real_intro"))
table = moe_catalog.moe_table()
st.dataframe({
    T("c_model"): table["model"],
    T("c_experts"): [f"{r} + {s}" if s else str(r) for r, s in zip(table["routed_experts"], table["shared_experts"])],
    T("c_active"): [f"{k} + {s}" if s else str(k) for k, s in zip(table["routed_per_token"], table["shared_experts"])],
    T("c_total"): [f"{t:g}B" for t in table["total_params_b"]],
    T("c_active_p"): [f"{a:g}B" for a in table["active_params_b"]],
    T("c_frac"): [f"{f:.1%}" for f in table["active_fraction"]],
    T("c_routed"): [f"{f:.1%}" for f in table["routed_fraction"]],
    T("c_source"): table["source"],
}, hide_index=True, width="stretch")
if models is not None:
    total, active = moe_model.parameter_counts(models["balanced"].model)
    st.caption(T("ours", total=total, active=active, frac=moe_catalog.active_fraction(active, total)))
ui.page_end()
