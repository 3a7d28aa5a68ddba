"""How transformers know where a token is: sinusoidal, learned absolute, relative (Shaw), ALiBi and RoPE.
One part at a time (a radio bound to the URL), so each run computes only what is on screen."""
import math

import numpy as np
import streamlit as st
import torch

from app import models, ui
from core import alibi, learned_positions, relative, rope, sinusoidal
from core.models.minilm import minilm_position_embeddings
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels
from viz.positions import bars, circle_figure, collision_figure, curves, value_heatmap

TEXT = {
    "title": {"en": "Position encodings", "ja": "位置エンコーディング", "ko": "위치 인코딩"},
    "intro": {
        "en": "Attention by itself ignores order: shuffle the keys and each query gets the same weights, just "
              "shuffled. Every model therefore adds position somewhere: to the input (sinusoidal, learned), to "
              "the scores (relative, ALiBi), or by rotating q and k (RoPE). Pick one below.",
        "ja": "注意機構そのものは順序を無視します。キーを並べ替えても各クエリの重みは同じで、並びが変わるだけです。"
              "そのため、どのモデルもどこかで位置を加えます: 入力に（正弦波、学習済み）、スコアに（相対、ALiBi）、"
              "あるいは q と k を回転させて（RoPE）。下から 1 つ選んでください。",
        "ko": "어텐션 자체는 순서를 무시합니다. 키를 섞어도 각 쿼리의 가중치는 같고 순서만 바뀝니다. 그래서 모든 "
              "모델은 어딘가에 위치를 더합니다: 입력에(사인파, 학습형), 점수에(상대 위치, ALiBi), 또는 q와 k를 "
              "회전시켜(RoPE). 아래에서 하나를 고르세요.",
    },
    "part": {"en": "Encoding", "ja": "エンコーディング", "ko": "인코딩"},
    "part_sinusoidal": {"en": "Sinusoidal", "ja": "正弦波", "ko": "사인파"},
    "part_learned": {"en": "Learned absolute", "ja": "学習済み絶対位置", "ko": "학습형 절대 위치"},
    "part_relative": {"en": "Relative (Shaw)", "ja": "相対位置 (Shaw)", "ko": "상대 위치(Shaw)"},
    "part_alibi": {"en": "ALiBi", "ja": "ALiBi", "ko": "ALiBi"},
    "part_rope": {"en": "RoPE", "ja": "RoPE", "ko": "RoPE"},
    "position": {"en": "position", "ja": "位置", "ko": "위치"},
    "dimension": {"en": "dimension (column)", "ja": "次元（列）", "ko": "차원(열)"},
    # --- sinusoidal
    "sin_intro": {
        "en": "Vaswani et al. (2017) add a fixed vector to each token: column 2i holds sin(p·ωᵢ) and column 2i+1 "
              "cos(p·ωᵢ), with ωᵢ = base^(−2i/d). Early columns turn fast, late columns slowly.",
        "ja": "Vaswani ら (2017) は各トークンに固定のベクトルを足します。列 2i は sin(p·ωᵢ)、列 2i+1 は cos(p·ωᵢ)、"
              "ωᵢ = base^(−2i/d)。前の列は速く、後ろの列はゆっくり回ります。",
        "ko": "Vaswani 등(2017)은 각 토큰에 고정된 벡터를 더합니다. 열 2i는 sin(p·ωᵢ), 열 2i+1은 cos(p·ωᵢ)이며 "
              "ωᵢ = base^(−2i/d)입니다. 앞쪽 열은 빠르게, 뒤쪽 열은 느리게 돕니다.",
    },
    "d": {"en": "Dimensions d", "ja": "次元数 d", "ko": "차원 수 d"},
    "n": {"en": "Positions", "ja": "位置の数", "ko": "위치 수"},
    "base": {"en": "log₁₀ of the base (4 = 10,000 as in the paper)", "ja": "base の log₁₀（4 = 論文の 10,000）",
             "ko": "base의 log₁₀(4 = 논문의 10,000)"},
    "base_now": {"en": "base = {base:,.0f}", "ja": "base = {base:,.0f}", "ko": "base = {base:,.0f}"},
    "pe_title": {"en": "PE(position, dimension): rows are positions, columns dimensions",
                 "ja": "PE(位置, 次元): 行が位置、列が次元", "ko": "PE(위치, 차원): 행은 위치, 열은 차원"},
    "dot_title": {"en": "PE(i)·PE(j): rows i, columns j (constant along every diagonal)",
                  "ja": "PE(i)·PE(j): 行 i、列 j（各対角線に沿って一定）",
                  "ko": "PE(i)·PE(j): 행 i, 열 j(모든 대각선을 따라 일정)"},
    "dot_line_title": {"en": "PE(i)·PE(j) against the distance i − j", "ja": "距離 i − j に対する PE(i)·PE(j)",
                       "ko": "거리 i − j에 대한 PE(i)·PE(j)"},
    "distance": {"en": "distance i − j", "ja": "距離 i − j", "ko": "거리 i − j"},
    "dot": {"en": "dot product", "ja": "内積", "ko": "내적"},
    "dot_check": {
        "en": "Measured: over all {pairs:,} pairs (i, j), pairs at the same distance have the same dot product to "
              "within {spread:.1e}, because sin(a)sin(b) + cos(a)cos(b) = cos(a − b).",
        "ja": "計測結果: {pairs:,} 組すべての (i, j) で、同じ距離の組の内積は {spread:.1e} 以内で一致します。"
              "sin(a)sin(b) + cos(a)cos(b) = cos(a − b) だからです。",
        "ko": "측정 결과: 모든 {pairs:,}개 쌍 (i, j)에서 거리가 같은 쌍의 내적은 {spread:.1e} 이내로 같습니다. "
              "sin(a)sin(b) + cos(a)cos(b) = cos(a − b)이기 때문입니다.",
    },
    "why_both": {"en": "Why both sine and cosine?", "ja": "なぜ sin と cos の両方？", "ko": "왜 사인과 코사인 둘 다?"},
    "pair": {"en": "Frequency pair i (columns 2i, 2i+1)", "ja": "周波数ペア i（列 2i, 2i+1）",
             "ko": "주파수 쌍 i(열 2i, 2i+1)"},
    "collision_title": {"en": "Column 2i alone: sin(p·ωᵢ), ωᵢ = {omega:.4g}",
                        "ja": "列 2i だけ: sin(p·ωᵢ)、ωᵢ = {omega:.4g}", "ko": "열 2i만: sin(p·ωᵢ), ωᵢ = {omega:.4g}"},
    "circle_title": {"en": "Columns 2i and 2i+1 together: (sin, cos) on the unit circle",
                     "ja": "列 2i と 2i+1 を合わせると: 単位円上の (sin, cos)",
                     "ko": "열 2i와 2i+1을 함께: 단위원 위의 (sin, cos)"},
    "collision": {
        "en": "Measured: with the sine column alone, positions {p} and {q} get {sp:.4f} and {sq:.4f} (they differ "
              "by only {gap:.1e}). With the cosine next to it they are points {dist:.3f} apart on the circle, "
              "because sin x = sin(π − x) but cos x ≠ cos(π − x).",
        "ja": "計測結果: sin の列だけだと、位置 {p} と {q} は {sp:.4f} と {sq:.4f}（差はわずか {gap:.1e}）。"
              "隣に cos を置くと円上で {dist:.3f} 離れた点になります。sin x = sin(π − x) ですが cos x ≠ cos(π − x) "
              "だからです。",
        "ko": "측정 결과: 사인 열만 있으면 위치 {p}와 {q}는 {sp:.4f}와 {sq:.4f}입니다(차이는 겨우 {gap:.1e}). "
              "옆에 코사인을 두면 원 위에서 {dist:.3f}만큼 떨어진 점이 됩니다. sin x = sin(π − x)이지만 "
              "cos x ≠ cos(π − x)이기 때문입니다.",
    },
    "sine_only": {
        "en": "Measured: with sine in every column instead, PE(p)·PE(p+1) is no longer a function of the distance: "
              "over these positions it ranges from {lo:.3f} to {hi:.3f} (sin a · sin b = [cos(a−b) − cos(a+b)]/2 "
              "depends on a + b too).",
        "ja": "計測結果: 代わりに全列を sin にすると、PE(p)·PE(p+1) はもはや距離だけの関数ではありません。"
              "これらの位置では {lo:.3f} から {hi:.3f} まで変わります（sin a · sin b = [cos(a−b) − cos(a+b)]/2 は "
              "a + b にも依存）。",
        "ko": "측정 결과: 대신 모든 열을 사인으로 하면 PE(p)·PE(p+1)은 더 이상 거리만의 함수가 아닙니다. 이 위치들에서 "
              "{lo:.3f}부터 {hi:.3f}까지 변합니다(sin a · sin b = [cos(a−b) − cos(a+b)]/2는 a + b에도 의존).",
    },
    "sparsity": {"en": "Which dimensions carry position in a long context?",
                 "ja": "長い文脈で位置を運ぶのはどの次元か？", "ko": "긴 문맥에서 위치를 나르는 차원은?"},
    "sp_d": {"en": "Model width d", "ja": "モデル幅 d", "ko": "모델 폭 d"},
    "sp_n": {"en": "Context length", "ja": "文脈長", "ko": "문맥 길이"},
    "thr": {"en": "'Barely changes': varies by less than this share of its [−1, 1] range",
            "ja": "「ほとんど変わらない」: [−1, 1] の範囲に対してこの割合未満しか変化しない",
            "ko": "'거의 변하지 않음': [−1, 1] 범위의 이 비율보다 적게 변함"},
    "var_title": {"en": "How much each column changes over {n:,} positions (d = {d:,})",
                  "ja": "{n:,} 位置にわたる各列の変化量（d = {d:,}）", "ko": "{n:,}개 위치에 걸친 각 열의 변화량(d = {d:,})"},
    "variation": {"en": "(max − min) / 2 over the context", "ja": "文脈全体での (最大 − 最小) / 2",
                  "ko": "문맥 전체의 (최대 − 최소) / 2"},
    "sin_cols": {"en": "sine columns", "ja": "sin の列", "ko": "사인 열"},
    "cos_cols": {"en": "cosine columns", "ja": "cos の列", "ko": "코사인 열"},
    "threshold": {"en": "threshold", "ja": "しきい値", "ko": "임계값"},
    "sparsity_result": {
        "en": "Measured: {share:.1%} of the {d:,} columns ({count:,}) vary by less than {thr:.1%} of their range "
              "over all {n:,} positions (sine columns {s_share:.1%}, cosine columns {c_share:.1%}). The least-moving "
              "column still sweeps {least:.1%} of its range. Between two neighbouring positions, however, "
              "{step:.1%} of the columns move by less than {thr:.1%}: that holds at any context length.",
        "ja": "計測結果: {d:,} 列のうち {share:.1%}（{count:,} 列）が、{n:,} 位置全体で範囲の {thr:.1%} 未満しか"
              "変化しません（sin の列 {s_share:.1%}、cos の列 {c_share:.1%}）。最も動かない列でも範囲の {least:.1%} "
              "を動きます。一方、隣り合う 2 位置の間では {step:.1%} の列が {thr:.1%} 未満しか動きません。これは"
              "文脈長によらず成り立ちます。",
        "ko": "측정 결과: {d:,}개 열 중 {share:.1%}({count:,}개)가 {n:,}개 위치 전체에서 범위의 {thr:.1%} 미만으로만 "
              "변합니다(사인 열 {s_share:.1%}, 코사인 열 {c_share:.1%}). 가장 덜 움직이는 열도 범위의 {least:.1%}를 "
              "지나갑니다. 반면 이웃한 두 위치 사이에서는 {step:.1%}의 열이 {thr:.1%} 미만으로 움직입니다. 이는 "
              "문맥 길이와 무관합니다.",
    },
    "sparsity_note": {
        "en": "The slowest frequency is ω = base^(−(d−2)/d) ≈ 1/base, a wavelength of about 2π·base ≈ 63,000 "
              "positions for base 10,000: over 8,192 positions even that column turns about 0.8 radians. Shorter "
              "contexts or a larger base leave more columns almost constant; try the sliders.",
        "ja": "最も遅い周波数は ω = base^(−(d−2)/d) ≈ 1/base で、base 10,000 では波長は約 2π·base ≈ 63,000 位置です。"
              "8,192 位置ではその列でも約 0.8 ラジアン回ります。文脈が短いか base が大きいと、ほぼ一定の列が増えます。"
              "スライダーで試してください。",
        "ko": "가장 느린 주파수는 ω = base^(−(d−2)/d) ≈ 1/base이고, base 10,000이면 파장은 약 2π·base ≈ 63,000 "
              "위치입니다. 8,192개 위치에서는 그 열도 약 0.8라디안 돕니다. 문맥이 짧거나 base가 크면 거의 일정한 열이 "
              "늘어납니다. 슬라이더로 해 보세요.",
    },
    # --- learned
    "learned_intro": {
        "en": "BERT-style models learn one vector per position (MiniLM: 512 positions × 384 dimensions) and add it "
              "to the token embedding. Nothing ties position 5 to position 6 except training. Below: the cosine "
              "similarity between MiniLM's real position vectors.",
        "ja": "BERT 系のモデルは位置ごとに 1 つのベクトルを学習し（MiniLM: 512 位置 × 384 次元）、トークン埋め込みに"
              "足します。位置 5 と位置 6 を結びつけるのは学習だけです。下は MiniLM の実際の位置ベクトル同士のコサイン"
              "類似度です。",
        "ko": "BERT 계열 모델은 위치마다 벡터 하나를 학습하여(MiniLM: 512개 위치 × 384차원) 토큰 임베딩에 더합니다. "
              "위치 5와 위치 6을 이어 주는 것은 학습뿐입니다. 아래는 MiniLM의 실제 위치 벡터 사이의 코사인 "
              "유사도입니다.",
    },
    "npos": {"en": "Positions shown", "ja": "表示する位置の数", "ko": "표시할 위치 수"},
    "sim_title": {"en": "Cosine similarity of MiniLM position vectors (rows and columns: positions)",
                  "ja": "MiniLM の位置ベクトルのコサイン類似度（行と列: 位置）",
                  "ko": "MiniLM 위치 벡터의 코사인 유사도(행과 열: 위치)"},
    "pooled": {"en": " — {k}×{k} block means", "ja": " — {k}×{k} ブロック平均", "ko": " — {k}×{k} 블록 평균"},
    "similarity": {"en": "cosine similarity", "ja": "コサイン類似度", "ko": "코사인 유사도"},
    "sim_dist_title": {"en": "Similarity against distance (line: mean; band: min to max over pairs)",
                       "ja": "距離に対する類似度（線: 平均、帯: 組ごとの最小〜最大）",
                       "ko": "거리에 대한 유사도(선: 평균, 띠: 쌍별 최소~최대)"},
    "mean": {"en": "mean", "ja": "平均", "ko": "평균"},
    "learned_result": {
        "en": "Measured: neighbouring positions have mean similarity {s1:.2f}; positions 10 apart {s10:.2f}; "
              "{far} apart {sfar:.2f}. The min–max band shows how much this depends on where the pair sits: a "
              "learned table has no built-in notion of distance.",
        "ja": "計測結果: 隣り合う位置の平均類似度は {s1:.2f}、10 離れると {s10:.2f}、{far} 離れると {sfar:.2f}。"
              "最小〜最大の帯は、組の場所によってどれだけ変わるかを示します。学習済みの表には距離の概念が組み込まれて"
              "いません。",
        "ko": "측정 결과: 이웃한 위치의 평균 유사도는 {s1:.2f}, 10 떨어지면 {s10:.2f}, {far} 떨어지면 {sfar:.2f}입니다. "
              "최소~최대 띠는 쌍의 위치에 따라 얼마나 달라지는지 보여 줍니다. 학습된 표에는 거리 개념이 내장되어 있지 "
              "않습니다.",
    },
    # --- relative
    "rel_intro": {
        "en": "Shaw et al. (2018) add a learned vector per *offset* to the keys: the score of query i on key j gets "
              "S_ij = Q_i · E_clip(i−j), with offsets beyond ±k sharing one vector. Here Q, K and E are random "
              "(seeded) so you can watch the mechanism; they are not a trained model.",
        "ja": "Shaw ら (2018) は*オフセット*ごとに学習したベクトルをキーに加えます。クエリ i のキー j へのスコアに "
              "S_ij = Q_i · E_clip(i−j) が足され、±k を超えるオフセットは 1 つのベクトルを共有します。ここでの Q, K, E "
              "は（シード付きの）乱数で、仕組みを見るためのものです。学習済みモデルではありません。",
        "ko": "Shaw 등(2018)은 *오프셋*마다 학습된 벡터를 키에 더합니다. 쿼리 i의 키 j에 대한 점수에 "
              "S_ij = Q_i · E_clip(i−j)가 더해지고, ±k를 넘는 오프셋은 벡터 하나를 공유합니다. 여기서 Q, K, E는 "
              "(시드가 있는) 난수로, 메커니즘을 보기 위한 것이며 학습된 모델이 아닙니다.",
    },
    "rel_n": {"en": "Tokens", "ja": "トークン数", "ko": "토큰 수"},
    "rel_d": {"en": "Head size d", "ja": "ヘッドの次元 d", "ko": "헤드 크기 d"},
    "clip": {"en": "Clipping distance k", "ja": "クリップ距離 k", "ko": "클리핑 거리 k"},
    "seed": {"en": "Random seed", "ja": "乱数シード", "ko": "난수 시드"},
    "offset_title": {"en": "Which E each score uses: clip(i − j, −k, k)", "ja": "各スコアが使う E: clip(i − j, −k, k)",
                     "ko": "각 점수가 쓰는 E: clip(i − j, −k, k)"},
    "s_title": {"en": "S = Q_i · E_clip(i−j), added to QKᵀ", "ja": "S = Q_i · E_clip(i−j)（QKᵀ に加算）",
                "ko": "S = Q_i · E_clip(i−j)(QKᵀ에 더함)"},
    "rel_w_title": {"en": "Weights softmax((QKᵀ + S)/√d)", "ja": "重み softmax((QKᵀ + S)/√d)",
                    "ko": "가중치 softmax((QKᵀ + S)/√d)"},
    "query_axis": {"en": "query i (rows)", "ja": "クエリ i（行）", "ko": "쿼리 i(행)"},
    "key_axis": {"en": "key j (columns)", "ja": "キー j（列）", "ko": "키 j(열)"},
    "rel_result": {
        "en": "Measured: in every row, all keys further than k = {k} use the same vector, so their S values agree "
              "to within {spread:.1e}. Adding S changed the weights by up to {delta:.3f} compared with QKᵀ alone.",
        "ja": "計測結果: どの行でも k = {k} より遠いキーはすべて同じベクトルを使うので、S の値は {spread:.1e} 以内で"
              "一致します。S を足すと、QKᵀ だけの場合に比べて重みが最大 {delta:.3f} 変わりました。",
        "ko": "측정 결과: 모든 행에서 k = {k}보다 먼 키는 같은 벡터를 쓰므로 S 값이 {spread:.1e} 이내로 같습니다. "
              "S를 더하자 QKᵀ만 있을 때보다 가중치가 최대 {delta:.3f} 바뀌었습니다.",
    },
    # --- ALiBi
    "alibi_intro": {
        "en": "ALiBi (Press et al. 2022) adds no position vectors at all: head h subtracts m_h·(i − j) from the "
              "score of query i on key j. The slopes m_h are a fixed geometric sequence (8 heads: 1/2, 1/4, …, "
              "1/256), so some heads look only nearby and others far.",
        "ja": "ALiBi (Press ら 2022) は位置ベクトルを一切足しません。ヘッド h はクエリ i のキー j へのスコアから "
              "m_h·(i − j) を引きます。傾き m_h は固定の等比数列（8 ヘッドなら 1/2, 1/4, …, 1/256）なので、近くだけを"
              "見るヘッドと遠くまで見るヘッドができます。",
        "ko": "ALiBi(Press 등 2022)는 위치 벡터를 전혀 더하지 않습니다. 헤드 h는 쿼리 i의 키 j에 대한 점수에서 "
              "m_h·(i − j)를 뺍니다. 기울기 m_h는 고정된 등비수열(헤드 8개: 1/2, 1/4, …, 1/256)이라 가까운 곳만 보는 "
              "헤드와 먼 곳까지 보는 헤드가 생깁니다.",
    },
    "heads": {"en": "Heads", "ja": "ヘッド数", "ko": "헤드 수"},
    "al_n": {"en": "Tokens", "ja": "トークン数", "ko": "토큰 수"},
    "al_head": {"en": "Head to show", "ja": "表示するヘッド", "ko": "표시할 헤드"},
    "slopes_title": {"en": "Slope m_h per head", "ja": "ヘッドごとの傾き m_h", "ko": "헤드별 기울기 m_h"},
    "head": {"en": "head", "ja": "ヘッド", "ko": "헤드"},
    "slope": {"en": "slope", "ja": "傾き", "ko": "기울기"},
    "bias_title": {"en": "Head {h}: bias −m·(i − j) (grey: future keys, masked)",
                   "ja": "ヘッド {h}: バイアス −m·(i − j)（灰色: 未来のキー、マスク）",
                   "ko": "헤드 {h}: 바이어스 −m·(i − j)(회색: 미래 키, 마스킹)"},
    "al_w_title": {"en": "Head {h}: weights from the bias alone (all content scores 0)",
                   "ja": "ヘッド {h}: バイアスだけによる重み（内容スコアはすべて 0）",
                   "ko": "헤드 {h}: 바이어스만으로 나온 가중치(내용 점수는 모두 0)"},
    "bias": {"en": "bias", "ja": "バイアス", "ko": "바이어스"},
    "weight": {"en": "weight", "ja": "重み", "ko": "가중치"},
    "span_col": {"en": "keys holding 90% of the weight", "ja": "重みの 90% を持つキーの数",
                 "ko": "가중치의 90%를 가진 키 수"},
    "span_note": {
        "en": "With no content signal, head h's weights on distances 0, 1, 2, … fall geometrically by e^(−m_h); "
              "the table gives the shortest window holding 90% of the weight (unlimited history).",
        "ja": "内容の信号がなければ、ヘッド h の距離 0, 1, 2, … への重みは e^(−m_h) の比で等比的に減ります。"
              "表は重みの 90% を含む最短の窓です（履歴が無限の場合）。",
        "ko": "내용 신호가 없으면 헤드 h의 거리 0, 1, 2, …에 대한 가중치는 e^(−m_h) 비율로 등비적으로 줄어듭니다. "
              "표는 가중치의 90%를 담는 가장 짧은 창입니다(이력이 무한한 경우).",
    },
    # --- RoPE
    "rope_intro": {
        "en": "RoPE (Su et al. 2021) rotates q and k instead of adding anything: the head's d dimensions form d/2 "
              "pairs, and pair i at position m turns by the angle m·θᵢ, θᵢ = base^(−2(i−1)/d). Because "
              "(R_m q)·(R_n k) = q·R_(n−m) k, scores depend on the offset m − n only.",
        "ja": "RoPE (Su ら 2021) は何かを足す代わりに q と k を回転させます。ヘッドの d 次元を d/2 個のペアに分け、"
              "位置 m のペア i を角度 m·θᵢ（θᵢ = base^(−2(i−1)/d)）だけ回します。(R_m q)·(R_n k) = q·R_(n−m) k なので、"
              "スコアはオフセット m − n だけに依存します。",
        "ko": "RoPE(Su 등 2021)는 무언가를 더하는 대신 q와 k를 회전시킵니다. 헤드의 d차원을 d/2개 쌍으로 나누고, "
              "위치 m의 쌍 i를 각도 m·θᵢ(θᵢ = base^(−2(i−1)/d))만큼 돌립니다. (R_m q)·(R_n k) = q·R_(n−m) k이므로 "
              "점수는 오프셋 m − n에만 의존합니다.",
    },
    "rope_d": {"en": "Head size d", "ja": "ヘッドの次元 d", "ko": "헤드 크기 d"},
    "rope_base": {"en": "log₁₀ of the base (4 = 10,000; SmolLM2 uses 5 = 100,000)",
                  "ja": "base の log₁₀（4 = 10,000、SmolLM2 は 5 = 100,000）",
                  "ko": "base의 log₁₀(4 = 10,000, SmolLM2는 5 = 100,000)"},
    "m": {"en": "Position m", "ja": "位置 m", "ko": "위치 m"},
    "layout": {"en": "Layout", "ja": "レイアウト", "ko": "레이아웃"},
    "layout_adjacent": {"en": "adjacent pairs (2i, 2i+1), as in the paper",
                        "ja": "隣接ペア (2i, 2i+1)、論文どおり", "ko": "인접 쌍 (2i, 2i+1), 논문 방식"},
    "layout_rotate_half": {"en": "rotate_half (i, i + d/2), as in Llama / transformers",
                           "ja": "rotate_half (i, i + d/2)、Llama / transformers 方式",
                           "ko": "rotate_half (i, i + d/2), Llama / transformers 방식"},
    "r_title": {"en": "Rotation matrix R_m at m = {m} (rows: output dimension, columns: input dimension)",
                "ja": "m = {m} の回転行列 R_m（行: 出力次元、列: 入力次元）",
                "ko": "m = {m}의 회전 행렬 R_m(행: 출력 차원, 열: 입력 차원)"},
    "out_dim": {"en": "output dimension", "ja": "出力次元", "ko": "출력 차원"},
    "in_dim": {"en": "input dimension", "ja": "入力次元", "ko": "입력 차원"},
    "angles_title": {"en": "Angle m·θᵢ (mod 2π) of each pair at each position",
                     "ja": "各位置での各ペアの角度 m·θᵢ（mod 2π）", "ko": "각 위치에서 각 쌍의 각도 m·θᵢ(mod 2π)"},
    "pair_axis": {"en": "pair i (fast → slow)", "ja": "ペア i（速い → 遅い）", "ko": "쌍 i(빠름 → 느림)"},
    "angle": {"en": "angle (rad)", "ja": "角度 (rad)", "ko": "각도(rad)"},
    "rope_n": {"en": "Positions", "ja": "位置の数", "ko": "위치 수"},
    "rope_pair": {"en": "Pair to follow", "ja": "追うペア", "ko": "따라갈 쌍"},
    "traj_title": {"en": "Pair {i}: the vector (1, 0) rotated by m·θ, θ = {theta:.4g} rad per position",
                   "ja": "ペア {i}: ベクトル (1, 0) を m·θ 回転、θ = 1 位置あたり {theta:.4g} rad",
                   "ko": "쌍 {i}: 벡터 (1, 0)을 m·θ 회전, θ = 위치당 {theta:.4g} rad"},
    "check_title": {"en": "Numerical check: the same random q and k placed at every position",
                    "ja": "数値チェック: 同じ乱数の q と k をすべての位置に置く",
                    "ko": "수치 확인: 같은 난수 q와 k를 모든 위치에 둠"},
    "scores_title": {"en": "q_m · k_n (rows: query position m, columns: key position n)",
                     "ja": "q_m · k_n（行: クエリ位置 m、列: キー位置 n）",
                     "ko": "q_m · k_n(행: 쿼리 위치 m, 열: 키 위치 n)"},
    "score": {"en": "score", "ja": "スコア", "ko": "점수"},
    "query_pos": {"en": "query position m", "ja": "クエリ位置 m", "ko": "쿼리 위치 m"},
    "key_pos": {"en": "key position n", "ja": "キー位置 n", "ko": "키 위치 n"},
    "check_result": {
        "en": "Measured: across all {pairs:,} (m, n) pairs, the scores range over {range:.3f}, yet pairs with the "
              "same m − n agree to within {spread:.1e}: the score depends on m − n only.",
        "ja": "計測結果: {pairs:,} 組の (m, n) でスコアは {range:.3f} の幅で変わりますが、m − n が同じ組は {spread:.1e} "
              "以内で一致します。スコアは m − n だけに依存します。",
        "ko": "측정 결과: {pairs:,}개 (m, n) 쌍에서 점수는 {range:.3f} 범위로 변하지만, m − n이 같은 쌍은 {spread:.1e} "
              "이내로 같습니다. 점수는 m − n에만 의존합니다.",
    },
    "layouts": {"en": "Two layouts, one rotation", "ja": "2 つのレイアウト、1 つの回転", "ko": "두 레이아웃, 하나의 회전"},
    "layouts_result": {
        "en": "The paper rotates adjacent dimensions (2i, 2i+1); Llama and transformers rotate (i, i + d/2) with "
              "rotate_half. Reordering the dimensions by the permutation P = {perm} maps one onto the other. "
              "Measured on a random vector: |rotate_half(Px) − P·adjacent(x)| ≤ {diff:.1e}, while without P the "
              "two differ by up to {nodiff:.2f}. So a checkpoint converted between the two conventions must have "
              "its q and k weight rows permuted.",
        "ja": "論文は隣接次元 (2i, 2i+1) を回し、Llama と transformers は rotate_half で (i, i + d/2) を回します。"
              "置換 P = {perm} で次元を並べ替えると一方が他方に移ります。乱数ベクトルで計測: "
              "|rotate_half(Px) − P·adjacent(x)| ≤ {diff:.1e}、P なしでは最大 {nodiff:.2f} 違います。したがって、"
              "2 つの流儀の間でチェックポイントを変換するときは q と k の重みの行を並べ替える必要があります。",
        "ko": "논문은 인접 차원 (2i, 2i+1)을 돌리고, Llama와 transformers는 rotate_half로 (i, i + d/2)를 돌립니다. "
              "순열 P = {perm}으로 차원을 재배열하면 하나가 다른 하나로 옮겨집니다. 난수 벡터로 측정: "
              "|rotate_half(Px) − P·adjacent(x)| ≤ {diff:.1e}, P 없이는 최대 {nodiff:.2f} 다릅니다. 따라서 두 방식 "
              "사이에서 체크포인트를 변환할 때는 q와 k 가중치의 행을 재배열해야 합니다.",
    },
    "smol": {"en": "Look at SmolLM2's real rotated q and k (loads the model)",
             "ja": "SmolLM2 の実際に回転された q と k を見る（モデルを読み込みます）",
             "ko": "SmolLM2의 실제 회전된 q와 k 보기(모델을 불러옵니다)"},
    "text": {"en": "Text for SmolLM2", "ja": "SmolLM2 に入れる文", "ko": "SmolLM2에 넣을 문장"},
    "layer": {"en": "Layer", "ja": "層", "ko": "층"},
    "smol_head": {"en": "Query head", "ja": "クエリヘッド", "ko": "쿼리 헤드"},
    "bands": {"en": "Frequency bands", "ja": "周波数帯の数", "ko": "주파수 대역 수"},
    "band": {"en": "Band to show", "ja": "表示する帯", "ko": "표시할 대역"},
    "empty": {"en": "Type some text to run SmolLM2.", "ja": "SmolLM2 を実行するには文を入力してください。",
              "ko": "SmolLM2를 실행하려면 텍스트를 입력하세요."},
    "q_title": {"en": "Layer {l}, head {h}: rotated q (rows: tokens, columns: dimensions in rotate_half layout)",
                "ja": "層 {l}・ヘッド {h}: 回転後の q（行: トークン、列: rotate_half レイアウトの次元）",
                "ko": "층 {l}, 헤드 {h}: 회전된 q(행: 토큰, 열: rotate_half 레이아웃의 차원)"},
    "k_title": {"en": "Layer {l}, key/value head {g}: rotated k (rows: tokens, columns: dimensions)",
                "ja": "層 {l}・キー/バリューヘッド {g}: 回転後の k（行: トークン、列: 次元）",
                "ko": "층 {l}, 키/값 헤드 {g}: 회전된 k(행: 토큰, 열: 차원)"},
    "token": {"en": "token", "ja": "トークン", "ko": "토큰"},
    "band_share_title": {"en": "Share of |score| each frequency pair contributes (mean over visible query-key pairs)",
                         "ja": "各周波数ペアが |スコア| に寄与する割合（見えるクエリ・キーの組の平均）",
                         "ko": "각 주파수 쌍이 |점수|에 기여하는 비율(보이는 쿼리-키 쌍 평균)"},
    "pair_label": {"en": "pair i (fast → slow)", "ja": "ペア i（速い → 遅い）", "ko": "쌍 i(빠름 → 느림)"},
    "share": {"en": "share of |score|", "ja": "|スコア| に占める割合", "ko": "|점수| 중 비율"},
    "band_title": {"en": "Band {b} (pairs {a}–{z}): its part of the scaled score q·k/√d",
                   "ja": "帯 {b}（ペア {a}–{z}）: スケール済みスコア q·k/√d のうちこの帯の分",
                   "ko": "대역 {b}(쌍 {a}–{z}): 스케일된 점수 q·k/√d 중 이 대역의 몫"},
    "band_result": {
        "en": "Measured: the {n} bands add up to the model's own scaled scores to within {diff:.1e}. Band shares "
              "of |score| (fast → slow): {shares}.",
        "ja": "計測結果: {n} 個の帯の和はモデル自身のスケール済みスコアと {diff:.1e} 以内で一致します。"
              "|スコア| に占める各帯の割合（速い → 遅い）: {shares}。",
        "ko": "측정 결과: {n}개 대역의 합은 모델 자체의 스케일된 점수와 {diff:.1e} 이내로 같습니다. |점수| 중 각 "
              "대역의 비율(빠름 → 느림): {shares}.",
    },
}
DEFAULT_TEXT = "The cat sat on the mat because it was tired. Then the cat slept."
SMOL_TOKENS = 64            # tokens of the SmolLM2 text used on this page (the bands figure is n x n per band)
PARTS = ("sinusoidal", "learned", "relative", "alibi", "rope")


@st.cache_data(show_spinner=False, max_entries=8)
def _sparsity(n: int, d: int, base: float, thr: float):
    var = sinusoidal.dimension_variation(n, d, base)
    return var, sinusoidal.slow_dimension_share(n, d, base, thr), sinusoidal.neighbour_step_share(d, base, thr)


def sinusoidal_part(T) -> None:
    st.markdown(T("sin_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.slider("d", T("d"), 8, 256, 64, step=8)
    d -= d % 2          # sin/cos pairs: an odd width from a link is rounded down
    with c2:
        n = ui.slider("n", T("n"), 16, 256, 128, step=16)
    with c3:
        base = 10 ** ui.slider("base", T("base"), 1.0, 6.0, 4.0, step=0.1)
    st.caption(T("base_now", base=base))
    pe = sinusoidal.sinusoidal_encoding(n, d, base)
    ui.show_figure(value_heatmap(pe, title=T("pe_title"), x_title=T("dimension"), y_title=T("position"),
                                 value_name="PE", decimals=3), "sinusoidal-pe", data=pe, key="fig-pe")

    dots = pe @ pe.T
    spread = max(float(np.ptp(np.diagonal(dots, offset=k))) for k in range(-(n - 1), n))
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(value_heatmap(dots, title=T("dot_title"), x_title="j", y_title="i", value_name=T("dot"),
                                     colorscale="Viridis", zmid=None), "sinusoidal-dot", data=dots, key="fig-dot")
    with c2:
        k = np.arange(-(n - 1), n)
        by = sinusoidal.pe_dot_by_distance(k, d, base)
        ui.show_figure(curves(k, {T("dot"): by}, title=T("dot_line_title"), x_title=T("distance"),
                              y_title=T("dot")), "sinusoidal-dot-distance", data={"distance": k, "dot": by},
                       key="fig-dot-line")
    st.success(T("dot_check", pairs=n * n, spread=spread))

    st.subheader(T("why_both"))
    i = ui.slider("pair", T("pair"), 0, d // 2 - 1, min(2, d // 2 - 1))
    omega = float(sinusoidal.sinusoidal_frequencies(d, base)[i])
    col = sinusoidal.sine_collision(omega, n)
    positions = np.arange(n)
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(collision_figure(positions, np.sin(positions * omega), col["p"], col["q"],
                                        title=T("collision_title", omega=omega), x_title=T("position")),
                       "sine-collision", data={"position": positions, "sin": np.sin(positions * omega)},
                       key="fig-collision")
    with c2:
        pts = np.stack([np.sin(positions * omega), np.cos(positions * omega)], 1)
        ui.show_figure(circle_figure(pts, [(col["p"], f"p = {col['p']}"), (col["q"], f"p = {col['q']}")],
                                     title=T("circle_title"), x_title="sin", y_title="cos",
                                     colour_title=T("position")), "sin-cos-circle", key="fig-circle")
    st.info(T("collision", p=col["p"], q=col["q"], sp=col["sin_p"], sq=col["sin_q"], gap=col["sine_gap"],
              dist=col["pair_distance"]))
    so = sinusoidal.sine_only_encoding(n, d, base)
    neighbour = np.einsum("pd,pd->p", so[:-1], so[1:])
    st.info(T("sine_only", lo=float(neighbour.min()), hi=float(neighbour.max())))

    st.subheader(T("sparsity"))
    c1, c2, c3 = st.columns(3)
    with c1:
        sp_d = int(ui.select("sp_d", T("sp_d"), ["512", "1024", "2048", "3072", "4096"], "3072"))
    with c2:
        sp_n = int(ui.select("sp_n", T("sp_n"), ["128", "512", "2048", "8192", "32768"], "8192",
                             format_func=lambda v: f"{int(v):,}"))
    with c3:
        thr = float(ui.select("thr", T("thr"), ["0.001", "0.01", "0.05", "0.1"], "0.01",
                              format_func=lambda v: f"{float(v):.1%}"))
    var, share, step = _sparsity(sp_n, sp_d, base, thr)
    cols = np.arange(sp_d)
    fig = curves(cols[0::2], {T("sin_cols"): var[0::2], T("cos_cols"): var[1::2]},
                 title=T("var_title", n=sp_n, d=sp_d), x_title=T("dimension"), y_title=T("variation"), log_y=True,
                 x_per_series={T("cos_cols"): cols[1::2]}, hlines=[(thr, T("threshold"))])
    ui.show_figure(fig, "sinusoidal-variation", data={"dimension": cols, "variation": var}, key="fig-var")
    st.info(T("sparsity_result", share=share["share"], d=sp_d, count=share["count"], thr=thr, n=sp_n,
              s_share=share["sin_share"], c_share=share["cos_share"], least=float(var.min()), step=step))
    st.caption(T("sparsity_note"))


def learned_part(T) -> None:
    st.markdown(T("learned_intro"))
    model = models.load("minilm")
    if model is None:
        return
    table = minilm_position_embeddings(model)
    n = int(ui.select("npos", T("npos"), ["64", "128", "256", "512"], "128"))
    n = min(n, table.shape[0])
    sim = learned_positions.cosine_similarity_matrix(table[:n])
    k = 2 if n > 256 else 1
    shown = learned_positions.block_mean(sim, k)
    axis = np.arange(0, n, k) + (k - 1) / 2
    title = T("sim_title") + (T("pooled", k=k) if k > 1 else "")
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(value_heatmap(shown, x=axis, y=axis, title=title, x_title=T("position"),
                                     y_title=T("position"), value_name=T("similarity"), zmin=-1.0, zmax=1.0),
                       "minilm-position-similarity", data=shown, key="fig-sim")
    by = learned_positions.similarity_by_distance(sim)
    with c2:
        ui.show_figure(curves(by["distance"], {T("mean"): by["mean"]}, bands={T("mean"): (by["min"], by["max"])},
                              title=T("sim_dist_title"), x_title=T("distance"), y_title=T("similarity")),
                       "minilm-similarity-by-distance", data=by, key="fig-sim-dist")
    far = min(100, n - 1)
    st.info(T("learned_result", s1=by["mean"][1], s10=by["mean"][min(10, n - 1)], far=far, sfar=by["mean"][far]))


def relative_part(T) -> None:
    st.markdown(T("rel_intro"))
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.slider("rel_n", T("rel_n"), 3, 24, 10)
    with c2:
        d = ui.slider("rel_d", T("rel_d"), 2, 32, 8, step=2)
    with c3:
        k = ui.slider("clip", T("clip"), 0, 12, 2)
    with c4:
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    g = torch.Generator().manual_seed(seed)
    q, key = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)
    table = torch.randn(2 * k + 1, d, generator=g)
    out = relative.shaw_attention(q, key, table, k)
    labels = [str(i) for i in range(n)]
    offsets = relative.clipped_offset_index(n, k).numpy() - k
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(matrix_heatmap(offsets, labels, labels, title=T("offset_title"), x_title=T("key_axis"),
                                      y_title=T("query_axis"), value_name="clip(i−j)", decimals=0,
                                      show_values=n <= 16), "shaw-offsets", data=offsets, key="fig-offsets")
    with c2:
        s = out["relative"].numpy()
        ui.show_figure(matrix_heatmap(s, labels, labels, title=T("s_title"), x_title=T("key_axis"),
                                      y_title=T("query_axis"), value_name="S"), "shaw-s", data=s, key="fig-s")
    w = out["weights"].numpy()
    ui.show_figure(attention_heatmap(w, labels, labels, title=T("rel_w_title"), x_title=T("key_axis"),
                                     y_title=T("query_axis")), "shaw-weights", data=w, key="fig-shaw-w")
    # every row: keys beyond the clipping distance share one vector, on each side
    rel_idx = relative.relative_offsets(n)
    spread = 0.0
    for side in (rel_idx > k, rel_idx < -k):
        for i in range(n):
            vals = out["relative"][i][side[i]]
            if vals.numel() > 1:
                spread = max(spread, float(vals.max() - vals.min()))
    content_only = torch.softmax(out["content"] / math.sqrt(d), -1)
    st.info(T("rel_result", k=k, spread=spread, delta=float((out["weights"] - content_only).abs().max())))


def alibi_part(T) -> None:
    st.markdown(T("alibi_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        heads = ui.slider("heads", T("heads"), 1, 32, 8)
    with c2:
        n = ui.slider("al_n", T("al_n"), 4, 64, 16)
    with c3:
        h = ui.slider("al_head", T("al_head"), 0, heads - 1, 0) if heads > 1 else 0
    slopes = alibi.alibi_slopes(heads)
    names = [str(i) for i in range(heads)]
    text = [f"2^{math.log2(m):.3g}" for m in slopes.tolist()]
    ui.show_figure(bars(names, slopes.numpy(), title=T("slopes_title"), x_title=T("head"), y_title=T("slope"),
                        text=text, log_y=True), "alibi-slopes", data={"head": names, "slope": slopes.numpy()},
                   key="fig-slopes")
    bias = alibi.alibi_bias(heads, n)[h]
    future = torch.isinf(bias)
    labels = [str(i) for i in range(n)]
    c1, c2 = st.columns(2)
    with c1:
        fig = attention_heatmap(bias.masked_fill(future, 0.0).numpy(), labels, labels, masked=future.numpy(),
                                title=T("bias_title", h=h), x_title=T("key_axis"), y_title=T("query_axis"),
                                zmin=None, zmax=0.0, colorscale="Reds_r", value_name=T("bias"), decimals=3)
        ui.show_figure(fig, f"alibi-bias-head{h}", data=bias.numpy(), key="fig-bias")
    with c2:
        w = alibi.alibi_weights(heads, n)[h].numpy()
        ui.show_figure(attention_heatmap(w, labels, labels, masked=future.numpy(), title=T("al_w_title", h=h),
                                         x_title=T("key_axis"), y_title=T("query_axis"), value_name=T("weight")),
                       f"alibi-weights-head{h}", data=w, key="fig-alibi-w")
    span = alibi.effective_span(slopes)
    st.dataframe({T("head"): names, T("slope"): slopes.numpy(), T("span_col"): span.long().numpy()})
    st.caption(T("span_note"))


def rope_part(T) -> None:
    st.markdown(T("rope_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.slider("rope_d", T("rope_d"), 4, 64, 16, step=2)
    d -= d % 2          # keep RoPE pairs whole whatever the widget returns
    with c2:
        base = 10 ** ui.slider("rope_base", T("rope_base"), 1.0, 6.0, 4.0, step=0.1)
    with c3:
        m = ui.slider("m", T("m"), 0, 500, 3)
    layout = ui.select("layout", T("layout"), ["adjacent", "rotate_half"], "adjacent",
                       format_func=lambda v: T(f"layout_{v}"), radio=True, horizontal=True)
    inv = rope.rope_inv_freq(d, base)
    R = rope.rotation_matrix(m, inv, layout).numpy()
    dims = [str(i) for i in range(d)]
    ui.show_figure(matrix_heatmap(R, dims, dims, title=T("r_title", m=m), x_title=T("in_dim"),
                                  y_title=T("out_dim"), value_name="R", show_values=d <= 12),
                   f"rope-rotation-m{m}", data=R, key="fig-rot")

    c1, c2 = st.columns(2)
    with c1:
        n = ui.slider("rope_n", T("rope_n"), 8, 512, 64, step=8)
    with c2:
        i = ui.slider("rope_pair", T("rope_pair"), 0, d // 2 - 1, 0)
    angles = torch.remainder(rope.rope_angles(torch.arange(n), inv), 2 * math.pi).numpy()
    ui.show_figure(value_heatmap(angles, title=T("angles_title"), x_title=T("pair_axis"), y_title=T("position"),
                                 colorscale="Twilight", zmid=None, zmin=0.0, zmax=2 * math.pi,
                                 value_name=T("angle")), "rope-angles", data=angles, key="fig-angles")
    theta = float(inv[i])
    pts = rope.pair_trajectory([1.0, 0.0], theta, torch.arange(min(n, 64))).numpy()
    ui.show_figure(circle_figure(pts, [(0, "m = 0")], title=T("traj_title", i=i, theta=theta),
                                 colour_title=T("position")), f"rope-pair{i}", key="fig-traj")

    st.subheader(T("check_title"))
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    n_check = min(n, 64)
    check = rope.relative_score_check(q, k, n_check, inv)
    c1, c2 = st.columns(2)
    with c1:
        s = check["scores"].numpy()
        ui.show_figure(value_heatmap(s, title=T("scores_title"), x_title=T("key_pos"), y_title=T("query_pos"),
                                     value_name=T("score")), "rope-score-check", data=s, key="fig-check")
    with c2:
        off = check["offsets"].numpy()
        ui.show_figure(curves(off, {T("score"): check["score_by_offset"].numpy()}, title="q_m · k_n  vs  m − n",
                              x_title="m − n", y_title=T("score"), markers=n_check <= 32),
                       "rope-score-by-offset", data={"offset": off, "score": check["score_by_offset"].numpy()},
                       key="fig-check-line")
    st.success(T("check_result", pairs=n_check * n_check, range=check["score_range"], spread=check["max_spread"]))

    st.subheader(T("layouts"))
    perm = rope.half_permutation(d)
    x = torch.randn(5, d, generator=g, dtype=torch.float64)
    pos = torch.arange(5) * 7 + m
    diff = float((rope.apply_rope_rotate_half(x[..., perm], pos, inv)
                  - rope.apply_rope_adjacent(x, pos, inv)[..., perm]).abs().max())
    nodiff = float((rope.apply_rope_rotate_half(x, pos, inv) - rope.apply_rope_adjacent(x, pos, inv)).abs().max())
    perm_text = str(perm.tolist()) if d <= 16 else str(perm[:8].tolist())[:-1] + ", …]"
    st.info(T("layouts_result", perm=perm_text, diff=diff, nodiff=nodiff))

    if ui.checkbox("smol", T("smol"), False):
        smollm2_bands(T)


def smollm2_bands(T) -> None:
    model = models.load("smollm2")
    if model is None:
        return
    text = ui.text_area("text", T("text"), DEFAULT_TEXT, height=80)
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = ui.slider("layer", T("layer"), 0, model.n_layers - 1, 3)
    with c2:
        head = ui.slider("head", T("smol_head"), 0, model.n_heads - 1, 0)
    with c3:
        n_bands = int(ui.select("bands", T("bands"), ["2", "4", "8"], "4"))
    if not text.strip():
        st.info(T("empty"))
        return
    trace = models.run("smollm2", model, [text], SMOL_TOKENS)
    q = trace.queries[layer][0, head].double()
    g = trace.kv_head(head)
    k = trace.keys[layer][0, g].double()
    tokens = indexed_labels(trace.batch.tokens[0])
    dims = [str(j) for j in range(q.shape[-1])]
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(matrix_heatmap(q.numpy(), tokens, dims, title=T("q_title", l=layer, h=head),
                                      x_title=T("dimension"), y_title=T("token"), value_name="q", show_values=False),
                       f"smollm2-q-l{layer}-h{head}", data=q.numpy(), row_labels=tokens, col_labels=dims, key="fig-q")
    with c2:
        ui.show_figure(matrix_heatmap(k.numpy(), tokens, dims, title=T("k_title", l=layer, g=g),
                                      x_title=T("dimension"), y_title=T("token"), value_name="k", show_values=False),
                       f"smollm2-k-l{layer}-g{g}", data=k.numpy(), row_labels=tokens, col_labels=dims, key="fig-k")
    visible = trace.mask(0)
    scale = trace.scale
    half = q.shape[-1] // 2
    per_pair = rope.frequency_band_contributions(q, k, half) * scale          # (d/2, n, n): one band per pair
    abs_total = per_pair.abs().sum(0)
    share = (per_pair.abs() / abs_total.clamp_min(1e-30))[:, visible].mean(-1).numpy()
    pairs = [str(j) for j in range(half)]
    ui.show_figure(bars(pairs, share, title=T("band_share_title"), x_title=T("pair_label"), y_title=T("share")),
                   f"smollm2-pair-share-l{layer}-h{head}", data={"pair": pairs, "share": share}, key="fig-share")
    bands = rope.frequency_band_contributions(q, k, n_bands) * scale
    edges = rope.band_edges(half, n_bands)
    full = (q @ k.T) * scale
    diff = float((bands.sum(0) - full)[visible].abs().max())
    band_share = [float((bands[b].abs() / bands.abs().sum(0).clamp_min(1e-30))[visible].mean()) for b in range(n_bands)]
    b = ui.slider("band", T("band"), 0, n_bands - 1, 0)
    fig = attention_heatmap(bands[b].numpy(), tokens, tokens, masked=(~visible).numpy(),
                            title=T("band_title", b=b, a=edges[b][0], z=edges[b][1] - 1), zmin=None,
                            colorscale="RdBu", value_name=T("score"), decimals=2)
    fig.data[0].update(zmid=0.0)     # signed contributions: white at 0
    ui.show_figure(fig, f"smollm2-band{b}-l{layer}-h{head}", data=bands[b].numpy(), row_labels=tokens,
                   col_labels=tokens, key="fig-band")
    st.info(T("band_result", n=n_bands, diff=diff, shares=", ".join(f"{s:.0%}" for s in band_share)))


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
part = ui.select("part", T("part"), PARTS, "sinusoidal", format_func=lambda v: T(f"part_{v}"), radio=True,
                 horizontal=True)
{"sinusoidal": sinusoidal_part, "learned": learned_part, "relative": relative_part, "alibi": alibi_part,
 "rope": rope_part}[part](T)
ui.page_end()
