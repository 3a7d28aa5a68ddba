"""Exact attention maps of a long document: SmolLM2's weights of every head of one layer over thousands of tokens,
pooled to at most 256 x 256 cells for the browser (computed at 512 x 512, never holding n x n), with a zoom into
any window at full resolution. Without the model weights, a demo on RANDOM q and k."""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from app import models, ui
from core import long_context, long_maps
from core.device import default_device
from core.models import registry
from core.timing import human_bytes
from viz.long_maps import bin_range_labels, head_shares_figure, long_heatmap, payload_bytes

TEXT = {
    "title": {"en": "Attention maps of a long document", "ja": "長い文書の注意マップ", "ko": "긴 문서의 어텐션 맵"},
    "intro": {
        "en": "A head's attention over n tokens is an n × n matrix: at 8,192 tokens that is 67 million weights per "
              "head (256 MB in float32), too many to send to a browser or to look at. Here every weight is computed "
              "exactly, block by block, and each block of queries × keys is reduced to one cell: the **mean** of "
              "its weights, or the **max**. The full matrix is never held in memory. A zoom then shows any window "
              "at full resolution, token by token.",
        "ja": "n トークンに対する 1 ヘッドの注意は n × n の行列です。8,192 トークンでは 1 ヘッドあたり 6,700 万個の重み"
              "（float32 で 256 MB）になり、ブラウザに送ることも目で見ることもできません。ここではすべての重みをブロック"
              "ごとに正確に計算し、クエリ × キーの各ブロックを 1 つのセルにまとめます: その重みの**平均**、または**最大**"
              "です。行列全体をメモリに持つことはありません。さらにズームで任意の範囲をトークン単位の完全な解像度で"
              "表示します。",
        "ko": "n개 토큰에 대한 헤드 하나의 어텐션은 n × n 행렬입니다. 8,192개 토큰이면 헤드 하나당 가중치 6,700만 개"
              "(float32로 256 MB)로, 브라우저로 보내기도 눈으로 보기도 어렵습니다. 여기서는 모든 가중치를 블록별로 "
              "정확히 계산하고 쿼리 × 키의 각 블록을 셀 하나로 줄입니다: 그 가중치의 **평균** 또는 **최대**입니다. "
              "전체 행렬은 메모리에 두지 않습니다. 이어서 확대 보기로 원하는 구간을 토큰 단위의 완전한 해상도로 "
              "보여 줍니다.",
    },
    "source": {"en": "Attention of", "ja": "注意の出どころ", "ko": "어텐션의 출처"},
    "src_smollm2": {"en": "SmolLM2-135M (real weights)", "ja": "SmolLM2-135M（実際の重み）",
                    "ko": "SmolLM2-135M(실제 가중치)"},
    "src_random": {"en": "RANDOM q and k (no model needed)", "ja": "ランダムな q と k（モデル不要）",
                   "ko": "무작위 q와 k(모델 불필요)"},
    "doc": {
        "en": "The document: {chars:,} characters of public software licence texts (GPL-3, Apache-2.0, MPL, GFDL, "
              "…; file data/licence_texts.txt, the same text as the scaled-RoPE experiment). The page reads its "
              "first n tokens.",
        "ja": "文書: 公開ソフトウェアライセンスの文章 {chars:,} 文字（GPL-3、Apache-2.0、MPL、GFDL など。"
              "ファイル data/licence_texts.txt、RoPE スケーリング実験と同じ文章）。このページは先頭の n トークンを"
              "読みます。",
        "ko": "문서: 공개 소프트웨어 라이선스 문장 {chars:,}자(GPL-3, Apache-2.0, MPL, GFDL 등. 파일 "
              "data/licence_texts.txt, RoPE 스케일링 실험과 같은 문장). 이 페이지는 앞의 n개 토큰을 읽습니다.",
    },
    "document": {"en": "Document", "ja": "文書", "ko": "문서"},
    "doc_licences": {"en": "Public licence texts (shipped)", "ja": "公開ライセンス文書（同梱）",
                     "ko": "공개 라이선스 문서(포함됨)"},
    "doc_own": {"en": "My own text", "ja": "自分の文章", "ko": "내 문장"},
    "own_text": {"en": "Your document (up to 20,000 characters)", "ja": "あなたの文書（20,000 文字まで）",
                 "ko": "내 문서(최대 20,000자)"},
    "own_doc": {
        "en": "Your document: {chars:,} characters; the maps cover its first {n:,} SmolLM2 tokens.",
        "ja": "あなたの文書: {chars:,} 文字。マップは SmolLM2 のトークンで先頭 {n:,} 個を表します。",
        "ko": "내 문서: {chars:,}자. 맵은 SmolLM2 토큰 기준 앞의 {n:,}개를 보여 줍니다.",
    },
    "own_short": {
        "en": "Your document has {tokens:,} tokens, fewer than the {n:,} chosen: the maps cover all of it.",
        "ja": "あなたの文書は {tokens:,} トークンで、選んだ {n:,} より少ないため、マップは全体を表します。",
        "ko": "내 문서는 토큰 {tokens:,}개로 선택한 {n:,}개보다 적어, 맵이 문서 전체를 보여 줍니다.",
    },
    "missing_model": {
        "en": "SmolLM2 is not available here: {message}. The RANDOM demo below works without it.",
        "ja": "SmolLM2 はここでは使えません: {message}。下のランダムなデモはモデルなしで動きます。",
        "ko": "SmolLM2를 여기서 사용할 수 없습니다: {message}. 아래 무작위 데모는 모델 없이 작동합니다.",
    },
    "random_banner": {
        "en": "RANDOM: q and k are independent Gaussian numbers ({heads} query heads sharing {kv} key/value heads, "
              "head size {d}, as SmolLM2), not a model. The maps show only what causal softmax does to scores "
              "without structure: each query spreads its weight over the keys it may see.",
        "ja": "ランダム: q と k は独立なガウス乱数です（SmolLM2 と同じく {heads} 個のクエリヘッドが {kv} 個のキー/"
              "バリューヘッドを共有、ヘッド次元 {d}）。モデルではありません。マップが示すのは、構造のないスコアに因果的"
              "ソフトマックスが何をするかだけです: 各クエリは見えるキーに重みを広げます。",
        "ko": "무작위: q와 k는 독립적인 가우스 난수입니다(SmolLM2처럼 쿼리 헤드 {heads}개가 키/값 헤드 {kv}개를 "
              "공유, 헤드 크기 {d}). 모델이 아닙니다. 맵이 보여 주는 것은 구조 없는 점수에 인과적 소프트맥스가 하는 "
              "일뿐입니다: 각 쿼리는 볼 수 있는 키에 가중치를 퍼뜨립니다.",
    },
    "n": {"en": "Tokens n", "ja": "トークン数 n", "ko": "토큰 수 n"},
    "layer": {"en": "Layer", "ja": "層", "ko": "층"},
    "seed": {"en": "Random seed", "ja": "乱数シード", "ko": "난수 시드"},
    "slow_warning": {
        "en": "{n:,} tokens take a while on a small CPU: SmolLM2 runs every layer up to the chosen one over all "
              "tokens, and pooling costs about n² × heads. Measured on this project's 2-core CPU: {measured}",
        "ja": "{n:,} トークンは小さな CPU では時間がかかります: SmolLM2 は選んだ層までのすべての層を全トークンで"
              "計算し、プーリングには約 n² × ヘッド数の計算が必要です。このプロジェクトの 2 コア CPU での実測: {measured}",
        "ko": "{n:,}개 토큰은 작은 CPU에서 시간이 걸립니다: SmolLM2는 선택한 층까지 모든 층을 전체 토큰에 대해 "
              "계산하고, 풀링에는 약 n² × 헤드 수의 계산이 듭니다. 이 프로젝트의 2코어 CPU에서 실측: {measured}",
    },
    "measured_item": {"en": "n = {n:,}, layer {layer}: {fwd:.0f} s for q/k + {pool:.1f} s pooling (load {load})",
                      "ja": "n = {n:,}、層 {layer}: q/k に {fwd:.0f} 秒 + プーリング {pool:.1f} 秒（負荷 {load}）",
                      "ko": "n = {n:,}, 층 {layer}: q/k {fwd:.0f}초 + 풀링 {pool:.1f}초(부하 {load})"},
    "not_measured": {"en": "no figures yet (run benchmarks/bench_pooled.py --smollm2)",
                     "ja": "まだ数値がありません（benchmarks/bench_pooled.py --smollm2 を実行）",
                     "ko": "아직 수치가 없습니다(benchmarks/bench_pooled.py --smollm2 실행)"},
    "random_slow": {
        "en": "{n:,} random tokens: pooling costs about n² × heads, up to a minute or more on a small CPU.",
        "ja": "ランダムな {n:,} トークン: プーリングには約 n² × ヘッド数の計算が必要で、小さな CPU では 1 分以上"
              "かかることがあります。",
        "ko": "무작위 {n:,}개 토큰: 풀링에는 약 n² × 헤드 수의 계산이 들며, 작은 CPU에서는 1분 이상 걸릴 수 "
              "있습니다.",
    },
    "beyond_context": {
        "en": "n = {n:,} is past the {limit:,} positions SmolLM2 was trained on: its RoPE angles there are new to it "
              "(see the scaled-RoPE page).",
        "ja": "n = {n:,} は SmolLM2 が学習した {limit:,} 位置を超えています。そこでの RoPE の角度はモデルにとって"
              "未知です（RoPE スケーリングのページを参照）。",
        "ko": "n = {n:,}은(는) SmolLM2가 학습한 {limit:,}개 위치를 넘습니다. 그곳의 RoPE 각도는 모델이 처음 보는 "
              "것입니다(RoPE 스케일링 페이지 참고).",
    },
    "compute": {"en": "Compute the maps", "ja": "マップを計算", "ko": "맵 계산"},
    "press": {
        "en": "Press **Compute the maps**: every head of the chosen layer is computed once; switching head, mean/max, "
              "resolution or zoom afterwards needs no recomputation.",
        "ja": "**マップを計算** を押してください。選んだ層の全ヘッドを一度だけ計算します。その後のヘッド、平均/最大、"
              "解像度、ズームの切り替えに再計算は要りません。",
        "ko": "**맵 계산**을 누르세요. 선택한 층의 모든 헤드를 한 번만 계산합니다. 그 뒤 헤드, 평균/최대, 해상도, "
              "확대 보기를 바꿀 때는 다시 계산하지 않습니다.",
    },
    "running_model": {"en": "Running SmolLM2 up to layer {layer} on {n:,} tokens…",
                      "ja": "{n:,} トークンで SmolLM2 を層 {layer} まで計算中…",
                      "ko": "{n:,}개 토큰으로 SmolLM2를 층 {layer}까지 계산 중…"},
    "running_pool": {"en": "Pooling the exact weights of {heads} heads over {n:,} × {n:,}…",
                     "ja": "{heads} ヘッドの正確な重みを {n:,} × {n:,} にわたってプーリング中…",
                     "ko": "헤드 {heads}개의 정확한 가중치를 {n:,} × {n:,}에 걸쳐 풀링 중…"},
    "bad_input": {"en": "Cannot compute: {error}", "ja": "計算できません: {error}", "ko": "계산할 수 없습니다: {error}"},
    "timings": {
        "en": "{n:,} tokens, {heads} heads, causal. q and k of layer {layer}: {fwd:.2f} s (the layers above it never "
              "ran). Pooling all heads to {s} × {s} cells: {pool:.2f} s ({backend} on {device}). Computed once and "
              "cached.",
        "ja": "{n:,} トークン、{heads} ヘッド、因果的。層 {layer} の q と k: {fwd:.2f} 秒（それより上の層は計算して"
              "いません）。全ヘッドを {s} × {s} セルにプーリング: {pool:.2f} 秒（{device} 上の {backend}）。一度だけ"
              "計算してキャッシュします。",
        "ko": "{n:,}개 토큰, 헤드 {heads}개, 인과적. 층 {layer}의 q와 k: {fwd:.2f}초(그 위의 층은 계산하지 않음). "
              "모든 헤드를 {s} × {s} 셀로 풀링: {pool:.2f}초({device}의 {backend}). 한 번 계산해 캐시합니다.",
    },
    "timings_random": {
        "en": "{n:,} RANDOM tokens, {heads} heads, causal. Pooling all heads to {s} × {s} cells: {pool:.2f} s "
              "({backend} on {device}). Computed once and cached.",
        "ja": "ランダムな {n:,} トークン、{heads} ヘッド、因果的。全ヘッドを {s} × {s} セルにプーリング: {pool:.2f} 秒"
              "（{device} 上の {backend}）。一度だけ計算してキャッシュします。",
        "ko": "무작위 {n:,}개 토큰, 헤드 {heads}개, 인과적. 모든 헤드를 {s} × {s} 셀로 풀링: {pool:.2f}초"
              "({device}의 {backend}). 한 번 계산해 캐시합니다.",
    },
    "h_heads": {"en": "All heads of the layer", "ja": "この層の全ヘッド", "ko": "이 층의 모든 헤드"},
    "shares_title": {"en": "Where each head's weight goes (average over all {n:,} queries)",
                     "ja": "各ヘッドの重みの行き先（全 {n:,} クエリの平均）",
                     "ko": "각 헤드의 가중치가 가는 곳(전체 {n:,}개 쿼리의 평균)"},
    "first_share": {"en": "on the first {w} tokens", "ja": "先頭 {w} トークンへ", "ko": "처음 {w}개 토큰으로"},
    "first_token": {"en": "on the first token", "ja": "先頭のトークンへ", "ko": "첫 토큰으로"},
    "own_share": {"en": "on keys in the query's own bin of ~{w} tokens", "ja": "クエリ自身の約 {w} トークンのビン内のキーへ",
                  "ko": "쿼리 자신의 약 {w}개 토큰 구간 안의 키로"},
    "head_axis": {"en": "head", "ja": "ヘッド", "ko": "헤드"},
    "share_axis": {"en": "share of each query's weight", "ja": "各クエリの重みに占める割合",
                   "ko": "각 쿼리 가중치에서의 비율"},
    "shares_note": {
        "en": "Read off the exact pooled means (a block's mean × its size is the weight it holds). Check: every "
              "query row's weights sum to 1 within {err:.1e}.",
        "ja": "正確なプーリング平均から読み取った値です（ブロックの平均 × 大きさ = そのブロックが持つ重み）。確認: "
              "すべてのクエリ行の重みの和は誤差 {err:.1e} 以内で 1 です。",
        "ko": "정확한 풀링 평균에서 읽은 값입니다(블록 평균 × 크기 = 그 블록이 가진 가중치). 확인: 모든 쿼리 행의 "
              "가중치 합은 오차 {err:.1e} 이내로 1입니다.",
    },
    "h_view": {"en": "What to show", "ja": "表示の設定", "ko": "표시 설정"},
    "h_map": {"en": "One head, pooled", "ja": "1 ヘッド（プーリング）", "ko": "헤드 하나(풀링)"},
    "head": {"en": "Head", "ja": "ヘッド", "ko": "헤드"},
    "stat": {"en": "Each cell shows", "ja": "各セルの値", "ko": "각 셀의 값"},
    "stat_mean": {"en": "mean weight of the block", "ja": "ブロックの重みの平均", "ko": "블록 가중치의 평균"},
    "stat_max": {"en": "largest weight in the block", "ja": "ブロック内の最大の重み", "ko": "블록 안의 가장 큰 가중치"},
    "side": {"en": "Cells per side", "ja": "1 辺のセル数", "ko": "한 변의 셀 수"},
    "log": {"en": "Log colour scale", "ja": "対数カラースケール", "ko": "로그 색상 눈금"},
    "mean_name": {"en": "mean weight", "ja": "平均の重み", "ko": "평균 가중치"},
    "max_name": {"en": "max weight", "ja": "最大の重み", "ko": "최대 가중치"},
    "queries": {"en": "queries", "ja": "クエリ", "ko": "쿼리"},
    "keys": {"en": "keys", "ja": "キー", "ko": "키"},
    "x_binned": {"en": "key tokens (binned)", "ja": "キーのトークン（ビン）", "ko": "키 토큰(구간)"},
    "y_binned": {"en": "query tokens (binned)", "ja": "クエリのトークン（ビン）", "ko": "쿼리 토큰(구간)"},
    "map_title": {"en": "{src}: layer {layer}, head {head} (reads key/value head {kv}): {stat}, {s} × {s} cells",
                  "ja": "{src}: 層 {layer}、ヘッド {head}（キー/バリューヘッド {kv} を読む）: {stat}、{s} × {s} セル",
                  "ko": "{src}: 층 {layer}, 헤드 {head}(키/값 헤드 {kv}를 읽음): {stat}, {s} × {s} 셀"},
    "random_title": {"en": "RANDOM q, k: head {head} (reads key/value head {kv}): {stat}, {s} × {s} cells",
                     "ja": "ランダムな q, k: ヘッド {head}（キー/バリューヘッド {kv} を読む）: {stat}、{s} × {s} セル",
                     "ko": "무작위 q, k: 헤드 {head}(키/값 헤드 {kv}를 읽음): {stat}, {s} × {s} 셀"},
    "map_note": {
        "en": "Rows are queries (top = first token), columns keys; a cell covers about {rows} × {cols} tokens (hover "
              "shows its ranges). Grey cells: every key comes after every query, masked by the causal mask. "
              "The log scale colours log₁₀ of the value (hover shows it); weights below 10^{low:.1f} share the "
              "lowest colour.",
        "ja": "行がクエリ（上 = 先頭のトークン）、列がキーです。1 セルは約 {rows} × {cols} トークンを表します（範囲は"
              "ホバーで表示）。灰色のセル: すべてのキーがすべてのクエリより後にあり、因果マスクで隠されています。対数"
              "スケールでは値の log₁₀ で色を付けます（ホバーに表示）。10^{low:.1f} 未満の重みは最も低い色になります。",
        "ko": "행이 쿼리(위 = 첫 토큰), 열이 키입니다. 셀 하나는 약 {rows} × {cols}개 토큰을 나타냅니다(범위는 "
              "마우스를 올리면 표시). 회색 셀: 모든 키가 모든 쿼리보다 뒤에 있어 인과 마스크로 가려짐. 로그 눈금은 "
              "값의 log₁₀로 색을 칠합니다(마우스를 올리면 표시). 10^{low:.1f} 미만의 가중치는 가장 낮은 색입니다.",
    },
    "map_note_linear": {
        "en": "Rows are queries (top = first token), columns keys; a cell covers about {rows} × {cols} tokens (hover "
              "shows its ranges). Grey cells: every key comes after every query, masked by the causal mask.",
        "ja": "行がクエリ（上 = 先頭のトークン）、列がキーです。1 セルは約 {rows} × {cols} トークンを表します（範囲は"
              "ホバーで表示）。灰色のセル: すべてのキーがすべてのクエリより後にあり、因果マスクで隠されています。",
        "ko": "행이 쿼리(위 = 첫 토큰), 열이 키입니다. 셀 하나는 약 {rows} × {cols}개 토큰을 나타냅니다(범위는 "
              "마우스를 올리면 표시). 회색 셀: 모든 키가 모든 쿼리보다 뒤에 있어 인과 마스크로 가려짐.",
    },
    "h_zoom": {"en": "Zoom: a window at full resolution", "ja": "ズーム: 完全な解像度の窓", "ko": "확대: 완전한 해상도의 창"},
    "zoom_intro": {
        "en": "The exact weights of one window of the same head, one cell per (query, key) pair. Each row is still "
              "normalised over every key its query sees, not just the window, so the numbers are the model's own.",
        "ja": "同じヘッドの 1 つの窓の正確な重みを、(クエリ, キー) の組ごとに 1 セルで表示します。各行は窓の中だけで"
              "なく、そのクエリが見るすべてのキーで正規化されているので、数値はモデル自身のものです。",
        "ko": "같은 헤드의 창 하나에 대한 정확한 가중치를 (쿼리, 키) 쌍마다 셀 하나로 보여 줍니다. 각 행은 창 안만이 "
              "아니라 그 쿼리가 보는 모든 키에 대해 정규화되어 있으므로 숫자는 모델 자신의 것입니다.",
    },
    "zoom_size": {"en": "Window size (tokens a side)", "ja": "窓の大きさ（1 辺のトークン数）",
                  "ko": "창 크기(한 변의 토큰 수)"},
    "zoom_q0": {"en": "First query token", "ja": "最初のクエリトークン", "ko": "첫 쿼리 토큰"},
    "zoom_k0": {"en": "First key token", "ja": "最初のキートークン", "ko": "첫 키 토큰"},
    "zoom_title": {"en": "Head {head}: queries {q0}–{q1}, keys {k0}–{k1} (exact weights)",
                   "ja": "ヘッド {head}: クエリ {q0}–{q1}、キー {k0}–{k1}（正確な重み）",
                   "ko": "헤드 {head}: 쿼리 {q0}–{q1}, 키 {k0}–{k1}(정확한 가중치)"},
    "x_tokens": {"en": "key token", "ja": "キーのトークン", "ko": "키 토큰"},
    "y_tokens": {"en": "query token", "ja": "クエリのトークン", "ko": "쿼리 토큰"},
    "weight": {"en": "weight", "ja": "重み", "ko": "가중치"},
    "zoom_text": {"en": "Text of the query window", "ja": "クエリの窓の文章", "ko": "쿼리 창의 문장"},
    "zoom_mass": {
        "en": "These {c} keys hold {inside:.1%} of the weight of these queries, on average; the other {rest:.1%} "
              "goes to keys outside the window.",
        "ja": "これらの {c} 個のキーは、これらのクエリの重みの平均 {inside:.1%} を持ちます。残りの {rest:.1%} は窓の外"
              "のキーに向かいます。",
        "ko": "이 키 {c}개는 이 쿼리들 가중치의 평균 {inside:.1%}를 가집니다. 나머지 {rest:.1%}는 창 밖의 키로 "
              "갑니다.",
    },
    "bytes": {
        "en": "Sent to the browser for this view: {total} (pooled map {map}, zoom {zoom}, head bars {bars}). "
              "The full {n:,} × {n:,} float32 matrices of the {heads} heads would be {full}.",
        "ja": "この表示でブラウザに送ったデータ: {total}（プーリングしたマップ {map}、ズーム {zoom}、ヘッドの棒グラフ "
              "{bars}）。{heads} ヘッドの {n:,} × {n:,} の float32 行列をそのまま送ると {full} になります。",
        "ko": "이 화면에서 브라우저로 보낸 데이터: {total}(풀링한 맵 {map}, 확대 {zoom}, 헤드 막대그래프 {bars}). "
              "헤드 {heads}개의 {n:,} × {n:,} float32 행렬을 그대로 보내면 {full}입니다.",
    },
}

SOURCES = ("smollm2", "random")
DOCUMENTS = ("licences", "own")
OWN_TEXT_DEFAULT = ("The cat sat on the mat because it was tired. Later the dog came in, saw the cat and lay "
                    "down next to it. ") * 8
CPU_LENGTHS = ("512", "1024", "2048", "4096", "8192")
GPU_LENGTHS = CPU_LENGTHS + ("16384", "32768")
RANDOM_LENGTHS = ("512", "1024", "2048", "4096", "8192", "16384")
DEFAULT_LENGTH = "2048"       # SmolLM2 to layer 12 + pooling: ~4 s on the 2-core CPU when idle, ~15 s when busy
SMOLLM2_LAYERS = 30
TRAINED_CONTEXT = 8192        # SmolLM2's max_position_embeddings: longer documents reach unseen RoPE angles
DEFAULT_LAYER = 12            # a layer whose heads differ: some sink into the first tokens, some stay local
SLOW_FROM = 4096              # warn from here on (CPU)
SIDES = ("64", "128", "256")  # 256 x 256 float32 cells are ~0.45 MB of JSON; 512 x 512 would be ~1.8 MB
ZOOM_SIZES = ("16", "32", "64", "128", "256")
COMPUTE_KEY = "_long_maps_request"


def on_gpu() -> bool:
    return default_device().type == "cuda"


@st.cache_resource(show_spinner=False, max_entries=2)
def _smollm2_qk(_model, text_id: str, n: int, layer: int, _text: str):
    """One layer's q and k of the first n tokens of _text (the model forward, cached per text id, n, layer)."""
    import time
    batch = long_maps.document_batch(_model, _text, n)
    t0 = time.perf_counter()
    q, k, scale = _model.layer_qk(batch, layer)
    return q, k, scale, batch.tokens[0], time.perf_counter() - t0


@st.cache_resource(show_spinner=False)
def _gpu_smollm2():
    """A separate SmolLM2 on the GPU for long documents (the shared one stays on the CPU for the other pages)."""
    model = registry.LOADERS["smollm2"]()
    model.model.to("cuda")
    return model


@st.cache_resource(show_spinner=False, max_entries=2)
def _random_qk(n: int, seed: int):
    return long_maps.random_qk(n, seed=seed)


@st.cache_data(show_spinner=False, max_entries=4)
def _maps(source: str, text_id: str, n: int, layer: int, seed: int, _qk) -> long_maps.LayerMaps:
    """Pooled mean and max of every head (cached per source, text, n, layer, seed; _qk is not hashed)."""
    q, k, scale = _qk[:3]
    device = default_device()
    return long_maps.layer_maps(q.to(device), k.to(device), scale, causal=True)


@st.cache_data(show_spinner=False)
def _measured_smollm2() -> list[dict]:
    """SmolLM2 timings from results/bench_pooled.json (empty if the benchmark has not been run with --smollm2)."""
    import json
    path = long_context.ROOT / "results" / "bench_pooled.json"
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["cpu"]["smollm2"]["rows"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def settings(T):
    """(source, n, layer, seed) from the widgets, with the notes each choice needs; None for the model when
    SmolLM2 cannot be used."""
    source = ui.select("src", T("source"), SOURCES, "smollm2", format_func=lambda s: T(f"src_{s}"), radio=True)
    model_problem = registry.model_status().get("smollm2") if source == "smollm2" else None
    if model_problem:
        st.error(T("missing_model", message=model_problem))
    c1, c2 = st.columns(2)
    if source == "smollm2":
        lengths = GPU_LENGTHS if on_gpu() else CPU_LENGTHS
        with c1:
            n = int(ui.select("n", T("n"), lengths, DEFAULT_LENGTH))
        with c2:
            layer = ui.slider("layer", T("layer"), 0, SMOLLM2_LAYERS - 1, DEFAULT_LAYER)
        seed = 0
        if n > TRAINED_CONTEXT:
            st.warning(T("beyond_context", n=n, limit=TRAINED_CONTEXT))
        if n >= SLOW_FROM and not on_gpu():
            rows = [r for r in _measured_smollm2() if r.get("n_tokens", 0) >= SLOW_FROM]
            measured = "; ".join(T("measured_item", n=r["n_tokens"], layer=r["layer"], fwd=r["forward_s"],
                                   pool=r["pool_s"], load=r.get("loadavg_1min", "?")) for r in rows) \
                or T("not_measured")
            st.warning(T("slow_warning", n=n, measured=measured))
    else:
        shape = long_maps.RANDOM_SHAPE
        st.warning(T("random_banner", heads=shape["heads"], kv=shape["kv_heads"], d=shape["head_dim"]))
        with c1:
            n = int(ui.select("n", T("n"), RANDOM_LENGTHS, DEFAULT_LENGTH))
        with c2:
            seed = ui.number("seed", T("seed"), 0, 9999, 0)
        layer = 0
        if n >= 8192 and not on_gpu():
            st.warning(T("random_slow", n=n))
    return source, n, layer, seed, model_problem


def document(T) -> tuple[str, str]:
    """(kind, text) of the document SmolLM2 reads: the shipped licence texts, or the user's own."""
    kind = ui.select("doc", T("document"), DOCUMENTS, "licences", format_func=lambda s: T(f"doc_{s}"),
                     horizontal=True, radio=True)
    if kind == "own":
        return kind, ui.text_area("text", T("own_text"), OWN_TEXT_DEFAULT, height=150)
    return kind, long_context.load_long_text()


def compute(T, source: str, text_id: str, n: int, layer: int, seed: int, text: str = ""):
    """(maps, qk, tokens, forward seconds) or None (with a message) when nothing can be computed."""
    if source == "smollm2":
        model = _gpu_smollm2() if on_gpu() else models.load("smollm2")
        if model is None:
            return None
        with st.spinner(T("running_model", layer=layer, n=n)):
            try:
                qk = _smollm2_qk(model, text_id, n, layer, text)
            except ValueError as err:
                st.error(T("bad_input", error=str(err)))
                return None
        tokens, forward_s = qk[3], qk[4]
    else:
        qk = _random_qk(n, seed)
        tokens, forward_s = None, 0.0
    n_real = qk[0].shape[2]
    with st.spinner(T("running_pool", heads=qk[0].shape[1], n=n_real)):
        maps = _maps(source, text_id, n, layer, seed, qk)
    return maps, qk, tokens, forward_s


def show_heads(T, maps: long_maps.LayerMaps, head: int) -> int:
    summary = long_maps.head_summary(maps)
    first_w = int(maps.col_edges[1] - maps.col_edges[0])
    own_w = int(round(float(np.diff(maps.row_edges).mean())))
    first_label = T("first_share", w=first_w) if first_w > 1 else T("first_token")
    fig = head_shares_figure(summary["first_share"], summary["own_bin_share"], first_label,
                             T("own_share", w=own_w), title=T("shares_title", n=maps.n), head_label=T("head_axis"),
                             share_label=T("share_axis"), selected=head)
    ui.show_figure(fig, "long-maps-head-shares", data={"head": list(range(len(summary["first_share"]))),
                                                       "first_share": summary["first_share"].tolist(),
                                                       "own_bin_share": summary["own_bin_share"].tolist()},
                   key="fig-shares")
    st.caption(T("shares_note", err=float(summary["row_sum_error"].max())))
    return payload_bytes(fig)


@dataclass
class View:
    """How to show the computed maps: chosen before or after computing (changing it never recomputes)."""
    head: int
    stat: str          # "mean" or "max"
    side: int          # cells per side on screen
    log_scale: bool
    zoom_size: int
    zoom_q0: int
    zoom_k0: int


def view_controls(T, n: int, heads: int) -> View:
    """Every display widget, drawn before the results whether or not they exist yet: a shared link then keeps
    head, zoom and the rest (a widget missing from a run would have its link parameter dropped)."""
    st.subheader(T("h_view"))
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    with c1:
        head = ui.slider("head", T("head"), 0, heads - 1, 0)
    with c2:
        stat = ui.select("stat", T("stat"), ("mean", "max"), "mean", format_func=lambda s: T(f"stat_{s}"),
                         radio=True)
    with c3:
        side = int(ui.select("side", T("side"), SIDES, "256"))
    with c4:
        log_scale = ui.checkbox("log", T("log"), True)
    c1, c2, c3 = st.columns(3)
    with c1:
        size = min(int(ui.select("zsize", T("zoom_size"), ZOOM_SIZES, "64")), n)
    start = max(0, n - size)            # default window: the last tokens, on the diagonal
    with c2:
        q0 = ui.number("zq", T("zoom_q0"), 0, n - 1, start)
    with c3:
        k0 = ui.number("zk", T("zoom_k0"), 0, n - 1, start)
    return View(head, stat, side, log_scale, size, q0, k0)


def show_map(T, maps, source: str, layer: int, view: View, kv_head: int) -> int:
    head, stat = view.head, view.stat
    mean, mx, r_edges, c_edges = long_maps.coarsen(maps.mean[head], maps.max[head], maps.row_edges, maps.col_edges,
                                                   view.side)
    values = mean if stat == "mean" else mx
    masked = long_maps.future_cells(r_edges, c_edges) if maps.causal else None
    rows, cols = bin_range_labels(r_edges), bin_range_labels(c_edges)
    title = T("random_title" if source == "random" else "map_title", src="SmolLM2", layer=layer, head=head,
              kv=kv_head, stat=T(f"stat_{stat}"), s=len(rows))
    fig = long_heatmap(values, rows, cols, masked=masked, log_scale=view.log_scale, title=title,
                       x_title=T("x_binned"), y_title=T("y_binned"), value_name=T(f"{stat}_name"),
                       row_name=T("queries"), col_name=T("keys"))
    ui.show_figure(fig, f"long-maps-{source}-l{layer}-h{head}-{stat}", data=values, row_labels=rows,
                   col_labels=cols, key="fig-map")
    cell_rows = int(round(float(np.diff(r_edges).mean())))
    cell_cols = int(round(float(np.diff(c_edges).mean())))
    if view.log_scale:
        st.caption(T("map_note", rows=cell_rows, cols=cell_cols, low=float(fig.data[0].zmin)))
    else:
        st.caption(T("map_note_linear", rows=cell_rows, cols=cell_cols))
    return payload_bytes(fig)


def show_zoom(T, qk, tokens, view: View) -> int:
    st.subheader(T("h_zoom"))
    st.caption(T("zoom_intro"))
    q, k, scale = qk[:3]
    head = view.head
    weights, masked, rows, cols = long_maps.zoom_window(q, k, scale, True, head, view.zoom_q0, view.zoom_k0,
                                                        view.zoom_size)
    names = tokens if tokens is not None else [""] * q.shape[2]
    row_labels = [f"{i} {names[i]}" for i in range(rows.start, rows.stop)]
    col_labels = [f"{j} {names[j]}" for j in range(cols.start, cols.stop)]
    fig = long_heatmap(weights, row_labels, col_labels, masked=masked, log_scale=view.log_scale,
                       title=T("zoom_title", head=head, q0=rows.start, q1=rows.stop - 1, k0=cols.start,
                               k1=cols.stop - 1),
                       x_title=T("x_tokens"), y_title=T("y_tokens"), value_name=T("weight"),
                       row_name=T("queries"), col_name=T("keys"))
    ui.show_figure(fig, f"long-maps-zoom-h{head}-q{rows.start}-k{cols.start}", data=weights, row_labels=row_labels,
                   col_labels=col_labels, key="fig-zoom")
    inside = float(weights.sum(-1).mean())
    st.caption(T("zoom_mass", c=cols.stop - cols.start, inside=inside, rest=max(0.0, 1.0 - inside)))
    if tokens is not None:
        with st.expander(T("zoom_text")):
            st.text("".join(tokens[rows.start:rows.stop]))     # st.text: shown as plain text, never as HTML
    return payload_bytes(fig)


def main() -> None:
    T = ui.page_setup(TEXT)
    st.title(T("title"))
    st.markdown(T("intro"))
    source, n, layer, seed, model_problem = settings(T)
    kind, text = document(T) if source == "smollm2" else ("licences", "")
    text_id = long_context.text_fingerprint(text)
    if source == "smollm2" and not model_problem and kind == "licences":
        st.caption(T("doc", chars=len(text)))
    shape = long_maps.RANDOM_SHAPE              # SmolLM2's shape too: 9 query heads, 3 key/value heads
    view = view_controls(T, n, shape["heads"])
    request = (source, text_id, n, layer, seed)
    if st.button(T("compute"), type="primary", disabled=bool(model_problem)):
        st.session_state[COMPUTE_KEY] = request
    if st.session_state.get(COMPUTE_KEY) != request or model_problem:
        st.info(T("press"))
        ui.page_end()
        return
    result = compute(T, source, text_id, n, layer, seed, text)
    if result is None:
        ui.page_end()
        return
    maps, qk, tokens, forward_s = result
    if kind == "own":
        st.caption(T("own_doc", chars=len(text), n=maps.n))
        if maps.n < n:
            st.info(T("own_short", tokens=maps.n, n=n))
    heads = maps.mean.shape[0]
    device = default_device().type
    if source == "smollm2":
        st.caption(T("timings", n=maps.n, heads=heads, layer=layer, fwd=forward_s, s=maps.mean.shape[-1],
                     pool=maps.seconds, backend=maps.backend, device=device))
    else:
        st.caption(T("timings_random", n=maps.n, heads=heads, s=maps.mean.shape[-1], pool=maps.seconds,
                     backend=maps.backend, device=device))
    st.subheader(T("h_heads"))
    bars = show_heads(T, maps, view.head)
    st.subheader(T("h_map"))
    kv_head = view.head // (heads // qk[1].shape[1])
    map_bytes = show_map(T, maps, source, layer, view, kv_head)
    zoom_bytes = show_zoom(T, qk, tokens, view)
    st.info(T("bytes", total=human_bytes(bars + map_bytes + zoom_bytes), map=human_bytes(map_bytes),
              zoom=human_bytes(zoom_bytes), bars=human_bytes(bars), n=maps.n, heads=heads,
              full=human_bytes(long_maps.full_matrix_bytes(maps.n, heads))))
    ui.page_end()


main()
