"""Linear attention (Katharopoulos et al. 2020): which product is computed first and what it costs, the attention
matrix it implies next to softmax's on the same Q and K, measured time against n with the log-log slope, and
generation speed of its RNN form against softmax with and without a KV cache."""
import math

import streamlit as st

from app import ui
from core import linear_scaling as ls
from core.linear_attention import associativity_costs
from core.timing import machine_info
from viz.heatmap import attention_heatmap
from viz.scaling import loglog_figure

TEXT = {
    "title": {"en": "Linear attention: from n² to n", "ja": "線形注意: n² から n へ", "ko": "선형 어텐션: n²에서 n으로"},
    "intro": {
        "en": "Softmax attention weighs key j for query i by exp(qᵢ·kⱼ/√d), normalised over j. Linear attention "
              "(Katharopoulos et al. 2020, “Transformers are RNNs”) replaces exp(q·k) by a kernel φ(q)·φ(k) with "
              "φ(x) = elu(x) + 1, which is positive everywhere. Then the output is φ(Q)·φ(K)ᵀ·V, row-normalised, "
              "and a matrix product can be computed in either order.",
        "ja": "ソフトマックス注意は、クエリ i に対するキー j の重みを exp(qᵢ·kⱼ/√d) を j について正規化して決めます。"
              "線形注意（Katharopoulos ら 2020「Transformers are RNNs」）は exp(q·k) をカーネル φ(q)·φ(k) に置き換えます。"
              "φ(x) = elu(x) + 1 はどこでも正です。すると出力は行ごとに正規化した φ(Q)·φ(K)ᵀ·V になり、行列の積は"
              "どちらの順序でも計算できます。",
        "ko": "소프트맥스 어텐션은 쿼리 i에 대한 키 j의 가중치를 exp(qᵢ·kⱼ/√d)를 j에 대해 정규화해 정합니다. 선형 "
              "어텐션(Katharopoulos 외 2020, “Transformers are RNNs”)은 exp(q·k)를 커널 φ(q)·φ(k)로 바꿉니다. "
              "φ(x) = elu(x) + 1은 어디서나 양수입니다. 그러면 출력은 행별로 정규화한 φ(Q)·φ(K)ᵀ·V가 되고, 행렬 곱은 "
              "어느 순서로든 계산할 수 있습니다.",
    },
    "h_trick": {"en": "1. Which product is computed first", "ja": "1. どの積を先に計算するか",
                "ko": "1. 어느 곱을 먼저 계산하는가"},
    "trick": {
        "en": "**(φ(Q)·φ(K)ᵀ)·V** builds an n × n matrix first, as softmax must (exp does not factor). "
              "**φ(Q)·(φ(K)ᵀ·V)** builds a d × d matrix first: one sum over all keys that every query then reads. "
              "The counts below are exact multiply-adds for one head, the row normaliser included.",
        "ja": "**(φ(Q)·φ(K)ᵀ)·V** は、ソフトマックスと同じく（exp は分解できない）まず n × n の行列を作ります。"
              "**φ(Q)·(φ(K)ᵀ·V)** はまず d × d の行列を作ります。全キーにわたる 1 回の和を、すべてのクエリが読むだけです。"
              "下の数は 1 ヘッド分の正確な積和の回数で、行の正規化も含みます。",
        "ko": "**(φ(Q)·φ(K)ᵀ)·V**는 소프트맥스처럼(exp는 분해되지 않음) 먼저 n × n 행렬을 만듭니다. "
              "**φ(Q)·(φ(K)ᵀ·V)**는 먼저 d × d 행렬을 만듭니다. 모든 키에 대한 합 하나를 모든 쿼리가 읽기만 합니다. "
              "아래 수는 헤드 하나의 정확한 곱셈-덧셈 횟수이며 행 정규화도 포함합니다.",
    },
    "n": {"en": "Sequence length n", "ja": "系列長 n", "ko": "시퀀스 길이 n"},
    "d": {"en": "Head size d (= d_v)", "ja": "ヘッド次元 d（= d_v）", "ko": "헤드 크기 d(= d_v)"},
    "col_order": {"en": "order", "ja": "順序", "ko": "순서"},
    "col_first": {"en": "computed first", "ja": "先に計算する積", "ko": "먼저 계산하는 곱"},
    "col_shape": {"en": "intermediate shape", "ja": "中間結果の形", "ko": "중간 결과의 형태"},
    "col_numbers": {"en": "numbers held", "ja": "保持する数の個数", "ko": "보관하는 수의 개수"},
    "col_madds": {"en": "multiply-adds", "ja": "積和の回数", "ko": "곱셈-덧셈 횟수"},
    "order_quadratic": {"en": "(φ(Q)·φ(K)ᵀ)·V", "ja": "(φ(Q)·φ(K)ᵀ)·V", "ko": "(φ(Q)·φ(K)ᵀ)·V"},
    "order_linear": {"en": "φ(Q)·(φ(K)ᵀ·V)", "ja": "φ(Q)·(φ(K)ᵀ·V)", "ko": "φ(Q)·(φ(K)ᵀ·V)"},
    "trick_result": {
        "en": "At n = {n:,} and d = {d}: the n × n order takes {quad:,} multiply-adds and holds {qnum:,} numbers; "
              "the d × d order takes {lin:,} and holds {lnum:,}: {ratio:,.1f}× fewer operations. With d = {d}, "
              "the d × d order is cheaper from n = {cross:,} on.",
        "ja": "n = {n:,}、d = {d} のとき: n × n の順序は積和 {quad:,} 回で {qnum:,} 個の数を保持し、d × d の順序は "
              "{lin:,} 回で {lnum:,} 個です。演算は {ratio:,.1f} 分の 1 になります。d = {d} では n = {cross:,} 以上で "
              "d × d の順序のほうが安くなります。",
        "ko": "n = {n:,}, d = {d}일 때: n × n 순서는 곱셈-덧셈 {quad:,}번에 수 {qnum:,}개를 보관하고, d × d 순서는 "
              "{lin:,}번에 {lnum:,}개입니다. 연산이 {ratio:,.1f}분의 1로 줄어듭니다. d = {d}에서는 n = {cross:,}부터 "
              "d × d 순서가 더 쌉니다.",
    },
    "cost_title": {"en": "Multiply-adds of the two orders against n (d = {d})",
                   "ja": "2 つの順序の積和回数と n（d = {d}）", "ko": "두 순서의 곱셈-덧셈 횟수와 n(d = {d})"},
    "multiply_adds": {"en": "multiply-adds (log scale)", "ja": "積和の回数（対数目盛）", "ko": "곱셈-덧셈 횟수(로그 눈금)"},
    "n_axis": {"en": "sequence length n (log scale)", "ja": "系列長 n（対数目盛）", "ko": "시퀀스 길이 n(로그 눈금)"},
    "h_implied": {"en": "2. The attention matrix linear attention implies", "ja": "2. 線形注意が暗に使う注意行列",
                  "ko": "2. 선형 어텐션이 암묵적으로 쓰는 어텐션 행렬"},
    "implied": {
        "en": "Linear attention never builds an n × n matrix, but its output equals A·V for "
              "Aᵢⱼ = φ(qᵢ)·φ(kⱼ) / Σⱼ′ φ(qᵢ)·φ(kⱼ′). Below, the same random Q, K, V (entries with standard deviation "
              "σ) go through softmax(QKᵀ/√d) and through linear attention. Raise σ: softmax sharpens, the kernel "
              "weights stay spread out.",
        "ja": "線形注意は n × n 行列を作りませんが、その出力は Aᵢⱼ = φ(qᵢ)·φ(kⱼ) / Σⱼ′ φ(qᵢ)·φ(kⱼ′) とした A·V に"
              "等しくなります。下では、同じランダムな Q, K, V（成分の標準偏差 σ）を softmax(QKᵀ/√d) と線形注意に通します。"
              "σ を上げると、ソフトマックスは鋭くなり、カーネルの重みは広がったままです。",
        "ko": "선형 어텐션은 n × n 행렬을 만들지 않지만, 출력은 Aᵢⱼ = φ(qᵢ)·φ(kⱼ) / Σⱼ′ φ(qᵢ)·φ(kⱼ′)로 둔 A·V와 "
              "같습니다. 아래에서는 같은 무작위 Q, K, V(성분의 표준편차 σ)를 softmax(QKᵀ/√d)와 선형 어텐션에 통과시킵니다. "
              "σ를 키우면 소프트맥스는 날카로워지고, 커널 가중치는 퍼진 채로 남습니다.",
    },
    "im_n": {"en": "Tokens n", "ja": "トークン数 n", "ko": "토큰 수 n"},
    "im_d": {"en": "Head size d", "ja": "ヘッド次元 d", "ko": "헤드 크기 d"},
    "spread": {"en": "Spread σ of q, k, v entries", "ja": "q, k, v の成分の広がり σ", "ko": "q, k, v 성분의 퍼짐 σ"},
    "causal": {"en": "Causal (each query sees only earlier keys)", "ja": "因果的（各クエリは前のキーだけを見る）",
               "ko": "인과적(각 쿼리는 앞쪽 키만 봄)"},
    "seed": {"en": "Random seed", "ja": "乱数シード", "ko": "난수 시드"},
    "softmax_title": {"en": "softmax(QKᵀ/√d)", "ja": "softmax(QKᵀ/√d)", "ko": "softmax(QKᵀ/√d)"},
    "linear_title": {"en": "linear: φ(q)·φ(k), row-normalised", "ja": "線形: φ(q)·φ(k) を行ごとに正規化",
                     "ko": "선형: φ(q)·φ(k)를 행별로 정규화"},
    "key_axis": {"en": "key j (attended to)", "ja": "キー j（注意される側）", "ko": "키 j(주목받는 쪽)"},
    "query_axis": {"en": "query i (attending)", "ja": "クエリ i（注意する側）", "ko": "쿼리 i(주목하는 쪽)"},
    "implied_stats": {
        "en": "Mean row entropy: softmax {es:.3f} nats, linear {el:.3f} nats (uniform rows would have ln n = "
              "{uniform:.3f}{causal_note}). Mean largest weight per row: softmax {ms:.3f}, linear {ml:.3f}. "
              "Check: |A·V − output| ≤ {cs:.1e} for softmax (against torch's SDPA) and ≤ {cl:.1e} for linear "
              "(against the d × d order).",
        "ja": "行エントロピーの平均: ソフトマックス {es:.3f} nats、線形 {el:.3f} nats（一様な行なら ln n = {uniform:.3f}"
              "{causal_note}）。各行の最大重みの平均: ソフトマックス {ms:.3f}、線形 {ml:.3f}。確認: |A·V − 出力| は"
              "ソフトマックスで {cs:.1e} 以下（torch の SDPA と比較）、線形で {cl:.1e} 以下（d × d の順序と比較）。",
        "ko": "행 엔트로피 평균: 소프트맥스 {es:.3f} nats, 선형 {el:.3f} nats(균일한 행이면 ln n = {uniform:.3f}"
              "{causal_note}). 행별 최대 가중치의 평균: 소프트맥스 {ms:.3f}, 선형 {ml:.3f}. 확인: |A·V − 출력|은 "
              "소프트맥스에서 {cs:.1e} 이하(torch의 SDPA와 비교), 선형에서 {cl:.1e} 이하(d × d 순서와 비교).",
    },
    "causal_note": {"en": " for the last row", "ja": "、最後の行の場合", "ko": ", 마지막 행의 경우"},
    "h_timing": {"en": "3. Time against sequence length", "ja": "3. 系列長に対する時間", "ko": "3. 시퀀스 길이에 따른 시간"},
    "timing": {
        "en": "On log-log axes a power law t ∝ nᵏ is a straight line of slope k. Softmax here is PyTorch's fused "
              "SDPA (it never stores the n × n matrix, but still does n²·d work); linear is the d × d order. "
              "Small n is dominated by fixed per-call overhead, so the slope is fitted on the largest sizes only "
              "(n ≥ largest/8).",
        "ja": "両対数軸では、べき乗則 t ∝ nᵏ は傾き k の直線になります。ここでのソフトマックスは PyTorch の融合 SDPA"
              "（n × n 行列を保存しないが、仕事量は n²·d のまま）で、線形は d × d の順序です。小さな n では呼び出しごとの"
              "固定オーバーヘッドが支配的なので、傾きは大きいサイズ（n ≥ 最大値/8）だけで当てはめます。",
        "ko": "로그-로그 축에서 거듭제곱 법칙 t ∝ nᵏ는 기울기 k인 직선입니다. 여기서 소프트맥스는 PyTorch의 융합 "
              "SDPA(n × n 행렬을 저장하지 않지만 작업량은 여전히 n²·d)이고, 선형은 d × d 순서입니다. 작은 n에서는 "
              "호출마다의 고정 오버헤드가 지배적이므로 기울기는 큰 크기(n ≥ 최댓값/8)에서만 맞춥니다.",
    },
    "committed": {"en": "Committed results", "ja": "コミット済みの結果", "ko": "커밋된 결과"},
    "no_results": {
        "en": "No results file yet ({path}). Create it with: python benchmarks/bench_linear.py",
        "ja": "結果ファイル（{path}）はまだありません。作成するには: python benchmarks/bench_linear.py",
        "ko": "결과 파일({path})이 아직 없습니다. 만들려면: python benchmarks/bench_linear.py",
    },
    "meta": {
        "en": "Command: `{command}` · date {date} · {device} ({device_name}), torch {torch}, {threads} thread(s) · "
              "load average (1 min) {load_before} before, {load_after} after, on {cpus} cores: other work shares "
              "this machine, so read the numbers as orders of magnitude.",
        "ja": "コマンド: `{command}` · 日時 {date} · {device}（{device_name}）、torch {torch}、{threads} スレッド · "
              "負荷平均（1 分）実行前 {load_before}、実行後 {load_after}、{cpus} コア: ほかの処理とマシンを共有しているので、"
              "数値は桁の目安として読んでください。",
        "ko": "명령: `{command}` · 날짜 {date} · {device}({device_name}), torch {torch}, 스레드 {threads}개 · "
              "부하 평균(1분) 실행 전 {load_before}, 실행 후 {load_after}, 코어 {cpus}개: 다른 작업과 기계를 공유하므로 "
              "숫자는 자릿수 정도로 읽으세요.",
    },
    "time_title": {"en": "Attention time against n (1 × {heads} head × n × {d}, {kind})",
                   "ja": "n に対する注意の時間（1 × {heads} ヘッド × n × {d}、{kind}）",
                   "ko": "n에 따른 어텐션 시간(1 × 헤드 {heads}개 × n × {d}, {kind})"},
    "kind_causal": {"en": "causal", "ja": "因果的", "ko": "인과적"},
    "kind_full": {"en": "non-causal", "ja": "非因果的", "ko": "비인과적"},
    "ms_axis": {"en": "milliseconds (log scale)", "ja": "ミリ秒（対数目盛）", "ko": "밀리초(로그 눈금)"},
    "softmax": {"en": "softmax (SDPA)", "ja": "ソフトマックス (SDPA)", "ko": "소프트맥스 (SDPA)"},
    "linear": {"en": "linear", "ja": "線形", "ko": "선형"},
    "fit_label": {"en": "fit: slope {slope:.2f}", "ja": "当てはめ: 傾き {slope:.2f}", "ko": "맞춤: 기울기 {slope:.2f}"},
    "slopes": {
        "en": "Fitted on n ≥ {fit_from:,}: softmax grows with slope {soft:.2f}, linear with slope {lin:.2f} "
              "(2 = quadratic, 1 = linear). At n = {n:,} softmax took {soft_ms:,.1f} ms and linear {lin_ms:,.1f} ms.",
        "ja": "n ≥ {fit_from:,} で当てはめると、ソフトマックスは傾き {soft:.2f}、線形は傾き {lin:.2f} で増えます"
              "（2 = 二次、1 = 線形）。n = {n:,} でソフトマックスは {soft_ms:,.1f} ms、線形は {lin_ms:,.1f} ms でした。",
        "ko": "n ≥ {fit_from:,}에서 맞추면 소프트맥스는 기울기 {soft:.2f}, 선형은 기울기 {lin:.2f}로 늘어납니다"
              "(2 = 이차, 1 = 선형). n = {n:,}에서 소프트맥스는 {soft_ms:,.1f} ms, 선형은 {lin_ms:,.1f} ms 걸렸습니다.",
    },
    "slopes_none": {"en": "Too few sizes were timed to fit a slope.", "ja": "傾きを当てはめるには計測したサイズが少なすぎます。",
                    "ko": "기울기를 맞추기에는 측정한 크기가 너무 적습니다."},
    "col_n": {"en": "n", "ja": "n", "ko": "n"},
    "col_soft_ms": {"en": "softmax ms", "ja": "ソフトマックス ms", "ko": "소프트맥스 ms"},
    "col_lin_ms": {"en": "linear ms", "ja": "線形 ms", "ko": "선형 ms"},
    "col_ratio": {"en": "softmax ÷ linear", "ja": "ソフトマックス ÷ 線形", "ko": "소프트맥스 ÷ 선형"},
    "skipped": {"en": "skipped (time limit)", "ja": "省略（時間制限）", "ko": "생략(시간 제한)"},
    "live": {"en": "Run it on this machine", "ja": "このマシンで実行", "ko": "이 기계에서 실행"},
    "live_intro": {
        "en": "Runs on the server's CPU, one size after another from n = 256, and stops "
              "starting new sizes after {limit} s. Sizes up to 2,048 take about a second; 16,384 can take a minute "
              "on a small CPU.",
        "ja": "サーバーの CPU で n = 256 から順に実行し、{limit} 秒を過ぎたら新しいサイズを始めません。"
              "2,048 までなら約 1 秒、16,384 は小さな CPU では 1 分ほどかかることがあります。",
        "ko": "서버의 CPU에서 n = 256부터 차례로 실행하며, {limit}초가 지나면 새 크기를 시작하지 "
              "않습니다. 2,048까지는 약 1초, 16,384는 작은 CPU에서 1분 정도 걸릴 수 있습니다.",
    },
    "max_n": {"en": "Largest n", "ja": "最大の n", "ko": "가장 큰 n"},
    "run_timing": {"en": "Run the timing", "ja": "時間を計測", "ko": "시간 측정 실행"},
    "running": {"en": "Running: {label}", "ja": "実行中: {label}", "ko": "실행 중: {label}"},
    "live_result": {"en": "Your run", "ja": "あなたの実行", "ko": "당신의 실행"},
    "live_meta": {
        "en": "Measured just now on {device} ({device_name}), torch {torch}, {threads} thread(s), load average {load}.",
        "ja": "たった今 {device}（{device_name}）、torch {torch}、{threads} スレッド、負荷平均 {load} で計測。",
        "ko": "방금 {device}({device_name}), torch {torch}, 스레드 {threads}개, 부하 평균 {load}에서 측정.",
    },
    "h_generation": {"en": "4. Generating tokens: RNN form vs KV cache vs no cache",
                     "ja": "4. トークン生成: RNN 形式、KV キャッシュあり、キャッシュなし",
                     "ko": "4. 토큰 생성: RNN 형식, KV 캐시, 캐시 없음"},
    "generation": {
        "en": "A decoder generates one token at a time. Causal linear attention is an RNN: it keeps S = Σ φ(kⱼ)vⱼᵀ "
              "(d × d per head) and z = Σ φ(kⱼ), so a step costs the same whatever the context. Softmax with a KV "
              "cache keeps every earlier key and value and reads all L of them per step (∝ L). Without a cache it "
              "must rerun the layer over the whole prefix every step (∝ L²). Measured on one attention layer of "
              "SmolLM2's width (576 = 9 heads × 64) with random weights: the cost does not depend on their values.",
        "ja": "デコーダは 1 トークンずつ生成します。因果的線形注意は RNN です: S = Σ φ(kⱼ)vⱼᵀ（ヘッドごとに d × d）と "
              "z = Σ φ(kⱼ) を保持するので、1 ステップのコストは文脈の長さによらず一定です。KV キャッシュ付きのソフトマックスは"
              "過去のキーと値をすべて保持し、ステップごとに L 個すべてを読みます（∝ L）。キャッシュがなければ毎ステップ"
              "接頭辞全体で層を計算し直す必要があります（∝ L²）。SmolLM2 と同じ幅（576 = 9 ヘッド × 64）でランダムな重みの"
              "注意層 1 つで計測しました。コストは重みの値によりません。",
        "ko": "디코더는 토큰을 하나씩 생성합니다. 인과적 선형 어텐션은 RNN입니다: S = Σ φ(kⱼ)vⱼᵀ(헤드마다 d × d)와 "
              "z = Σ φ(kⱼ)를 보관하므로 한 단계의 비용은 문맥 길이와 상관없이 같습니다. KV 캐시가 있는 소프트맥스는 이전 "
              "키와 값을 모두 보관하고 단계마다 L개를 모두 읽습니다(∝ L). 캐시가 없으면 매 단계 접두사 전체에 대해 층을 "
              "다시 계산해야 합니다(∝ L²). SmolLM2와 같은 너비(576 = 헤드 9개 × 64)에 무작위 가중치를 가진 어텐션 층 "
              "하나로 측정했습니다. 비용은 가중치 값과 무관합니다.",
    },
    "rnn": {"en": "RNN form (linear)", "ja": "RNN 形式（線形）", "ko": "RNN 형식(선형)"},
    "kv_cache": {"en": "softmax + KV cache", "ja": "ソフトマックス + KV キャッシュ", "ko": "소프트맥스 + KV 캐시"},
    "no_cache": {"en": "softmax, no cache", "ja": "ソフトマックス、キャッシュなし", "ko": "소프트맥스, 캐시 없음"},
    "gen_title": {"en": "Generation speed after a prompt of L tokens", "ja": "L トークンのプロンプト後の生成速度",
                  "ko": "L개 토큰 프롬프트 뒤의 생성 속도"},
    "ctx_axis": {"en": "context L (tokens, log scale)", "ja": "文脈 L（トークン、対数目盛）", "ko": "문맥 L(토큰, 로그 눈금)"},
    "tok_axis": {"en": "tokens per second (log scale)", "ja": "毎秒トークン数（対数目盛）", "ko": "초당 토큰 수(로그 눈금)"},
    "col_ctx": {"en": "context L", "ja": "文脈 L", "ko": "문맥 L"},
    "col_rnn_kv": {"en": "RNN ÷ KV cache", "ja": "RNN ÷ KV キャッシュ", "ko": "RNN ÷ KV 캐시"},
    "col_kv_none": {"en": "KV cache ÷ no cache", "ja": "KV キャッシュ ÷ キャッシュなし", "ko": "KV 캐시 ÷ 캐시 없음"},
    "gen_result": {
        "en": "At L = {ctx:,}: the RNN form generated {rnn:,.1f} tokens/s, softmax with a KV cache {kv:,.1f} "
              "({r1:,.2f}× slower than the RNN form) and without a cache {none:,.2f} ({r2:,.0f}× slower than with "
              "one).",
        "ja": "L = {ctx:,} で: RNN 形式は毎秒 {rnn:,.1f} トークン、KV キャッシュ付きのソフトマックスは {kv:,.1f}（RNN 形式の "
              "{r1:,.2f} 分の 1 の速さ）、キャッシュなしは {none:,.2f}（キャッシュありの {r2:,.0f} 分の 1 の速さ）でした。",
        "ko": "L = {ctx:,}에서: RNN 형식은 초당 {rnn:,.1f} 토큰, KV 캐시가 있는 소프트맥스는 {kv:,.1f}(RNN 형식보다 "
              "{r1:,.2f}배 느림), 캐시 없이는 {none:,.2f}(캐시가 있을 때보다 {r2:,.0f}배 느림)를 생성했습니다.",
    },
    "gen_live_intro": {
        "en": "Contexts from 256 up to the one you pick; each measurement stops after {budget} s (at least one "
              "token). The whole run keeps to {limit} s: a measurement that the previous context's time says would "
              "end later is skipped and marked so. Without a cache, 8,192 tokens of context cost seconds per token "
              "on a small CPU.",
        "ja": "文脈は 256 から選んだ長さまで。各計測は {budget} 秒で打ち切り（最低 1 トークン）。全体は {limit} 秒以内に"
              "収めます: 1 つ前の文脈の時間から見て終わりが遅くなる計測は行わず、省略と表示します。キャッシュなしでは、"
              "文脈 8,192 トークンで小さな CPU だと 1 トークンに数秒かかります。",
        "ko": "문맥은 256부터 고른 길이까지입니다. 각 측정은 {budget}초에 멈춥니다(최소 토큰 1개). 전체 실행은 "
              "{limit}초 안에 끝납니다: 이전 문맥의 시간으로 볼 때 더 늦게 끝날 측정은 건너뛰고 생략으로 표시합니다. "
              "캐시가 없으면 문맥 8,192 토큰에서 작은 CPU로 토큰 하나에 몇 초가 걸립니다.",
    },
    "max_ctx": {"en": "Longest context L", "ja": "最長の文脈 L", "ko": "가장 긴 문맥 L"},
    "run_gen": {"en": "Run the generation", "ja": "生成を計測", "ko": "생성 측정 실행"},
}
COST_SIZES = [2 ** k for k in range(4, 18)]              # 16 .. 131,072
TRICK_N = [str(n) for n in COST_SIZES]
TRICK_D = ["16", "32", "64", "128", "256"]
IMPLIED_D = ["4", "8", "16", "32", "64"]
TIMING_MAX = ["512", "1024", "2048", "4096", "8192", "16384"]
GEN_MAX = ["256", "512", "1024", "2048", "4096", "8192"]
LIVE_MIN = 256
LIVE_DEADLINE_S = 120      # no size starts after this, nor a mode that its last time says would overrun it
LIVE_BUDGET_S = 2.0        # one measurement stops repeating after this long
HEADS, HEAD_DIM = 1, 64    # the timing shape, as in benchmarks/bench_linear.py
MODES = ("rnn", "kv_cache", "no_cache")


def number(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def associativity(T) -> None:
    st.subheader(T("h_trick"))
    st.markdown(T("trick"))
    c1, c2 = st.columns(2)
    with c1:
        n = int(ui.select("n", T("n"), TRICK_N, "4096", format_func=lambda v: f"{int(v):,}"))
    with c2:
        d = int(ui.select("d", T("d"), TRICK_D, "64"))
    costs = associativity_costs(n, d)
    orders = ("quadratic", "linear")
    st.dataframe({
        T("col_order"): [T(f"order_{o}") for o in orders],
        T("col_first"): [costs[o]["first_product"] for o in orders],
        T("col_shape"): [" × ".join(f"{s:,}" for s in costs[o]["intermediate_shape"]) for o in orders],
        T("col_numbers"): [f"{costs[o]['intermediate_numbers']:,}" for o in orders],
        T("col_madds"): [f"{costs[o]['multiply_adds']:,}" for o in orders],
    }, hide_index=True)
    quad, lin = costs["quadratic"], costs["linear"]
    st.markdown(T("trick_result", n=n, d=d, quad=quad["multiply_adds"], qnum=quad["intermediate_numbers"],
                  lin=lin["multiply_adds"], lnum=lin["intermediate_numbers"],
                  ratio=quad["multiply_adds"] / lin["multiply_adds"], cross=ls.associativity_crossover(d)))
    curves = ls.cost_curves(COST_SIZES, d)
    series = {T("order_quadratic"): curves["quadratic"], T("order_linear"): curves["linear"]}
    fig = loglog_figure(COST_SIZES, series, title=T("cost_title", d=d), x_title=T("n_axis"),
                        y_title=T("multiply_adds"), height=360)
    ui.show_figure(fig, f"associativity-d{d}", data={"n": COST_SIZES, **curves}, key="fig-cost")


def implied(T) -> None:
    st.subheader(T("h_implied"))
    st.markdown(T("implied"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = ui.slider("im_n", T("im_n"), 2, 48, 12)
        d = int(ui.select("im_d", T("im_d"), IMPLIED_D, "16"))
    with c2:
        spread = ui.slider("spread", T("spread"), 0.25, 4.0, 1.0, step=0.25)
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    with c3:
        causal = ui.checkbox("causal", T("causal"))
    r = ls.implied_matrices(n, d, spread, causal, seed)
    queries = [f"q{i}" for i in range(n)]
    keys = [f"k{j}" for j in range(n)]
    c1, c2 = st.columns(2)
    for col, kind in ((c1, "softmax"), (c2, "linear")):
        with col:
            fig = attention_heatmap(r[kind], queries, keys, masked=r["mask"], title=T(f"{kind}_title"),
                                    x_title=T("key_axis"), y_title=T("query_axis"), zmax=1.0)
            ui.show_figure(fig, f"{kind}-weights-n{n}-s{spread:g}", data=r[kind], row_labels=queries,
                           col_labels=keys, key=f"fig-{kind}")
    st.markdown(T("implied_stats", es=r["entropy_softmax"], el=r["entropy_linear"], uniform=math.log(n),
                  causal_note=T("causal_note") if causal else "", ms=r["row_max_softmax"], ml=r["row_max_linear"],
                  cs=r["check_softmax"], cl=r["check_linear"]))


# --- timing -----------------------------------------------------------------------------------------------------

def timing_view(T, rows: list[dict], slopes: dict, heads: int, d: int, causal: bool, name: str, key: str) -> None:
    sizes = [r["n"] for r in rows]
    series = {T("softmax"): [r["softmax_ms"] for r in rows], T("linear"): [r["linear_ms"] for r in rows]}
    fits = {T("softmax"): _fit(slopes, "softmax"), T("linear"): _fit(slopes, "linear")}
    fig = loglog_figure(sizes, series, fits, fit_from=slopes.get("fit_from"), x_title=T("n_axis"),
                        y_title=T("ms_axis"), fit_label=T("fit_label"),
                        title=T("time_title", heads=heads, d=d, kind=T("kind_causal" if causal else "kind_full")))
    ui.show_figure(fig, name, data={"n": sizes, "softmax_ms": series[T("softmax")],
                                    "linear_ms": series[T("linear")]}, key=key)
    done = [r for r in rows if not r.get("skipped") and r.get("softmax_ms") is not None]
    if slopes.get("softmax") is not None and slopes.get("linear") is not None and done:
        last = done[-1]
        st.markdown(T("slopes", fit_from=slopes["fit_from"], soft=slopes["softmax"], lin=slopes["linear"],
                      n=last["n"], soft_ms=last["softmax_ms"], lin_ms=last["linear_ms"]))
    else:
        st.markdown(T("slopes_none"))
    st.dataframe({
        T("col_n"): [f"{r['n']:,}" for r in rows],
        T("col_soft_ms"): [T("skipped") if r.get("skipped") else number(r["softmax_ms"], ",.3f") for r in rows],
        T("col_lin_ms"): [T("skipped") if r.get("skipped") else number(r["linear_ms"], ",.3f") for r in rows],
        T("col_ratio"): ["" if r.get("skipped") or not r.get("linear_ms")
                         else f"{r['softmax_ms'] / r['linear_ms']:,.1f}" for r in rows],
    }, hide_index=True)


def _fit(slopes: dict, kind: str):
    if slopes.get(kind) is None:
        return None
    return slopes[kind], slopes[f"{kind}_intercept"]


def results_meta(T, res: dict) -> None:
    st.caption(T("meta", command=res.get("command", "?"), date=res.get("date", "?"), device=res.get("device", "?"),
                 device_name=res.get("device_name", "?"), torch=res.get("torch", "?"),
                 threads=res.get("torch_threads", "?"), load_before=res.get("loadavg_1min_before", "?"),
                 load_after=res.get("loadavg_1min_after", "?"), cpus=res.get("cpu_count", "?")))


def live_meta(T) -> None:
    info = machine_info("cpu")
    st.caption(T("live_meta", device=info["device"], device_name=info["device_name"], torch=info["torch"],
                 threads=info["torch_threads"], load=info["loadavg_1min"]))


def progress_bar(T):
    bar = st.progress(0.0)
    return bar, lambda frac, label: bar.progress(min(1.0, max(0.0, frac)), text=T("running", label=label))


def timing(T, res: dict | None) -> None:
    st.subheader(T("h_timing"))
    st.markdown(T("timing"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path="results/bench_linear.json"))
    else:
        sc = res["scaling"]
        timing_view(T, sc["rows"], sc["slopes"], sc.get("heads", HEADS), sc.get("head_dim", HEAD_DIM),
                    bool(sc.get("causal")), "linear-vs-softmax-time-committed", "fig-time-committed")
        results_meta(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", limit=LIVE_DEADLINE_S))
        c1, c2 = st.columns(2)
        with c1:
            max_n = int(ui.select("max_n", T("max_n"), TIMING_MAX, "2048", format_func=lambda v: f"{int(v):,}"))
        with c2:
            causal = ui.checkbox("t_causal", T("causal"))
        if st.button(T("run_timing"), key="run-timing"):
            bar, progress = progress_bar(T)
            rows = ls.time_scaling(ls.power_of_two_sizes(LIVE_MIN, max_n), heads=HEADS, head_dim=HEAD_DIM,
                                   causal=causal, reps=3, budget_s=LIVE_BUDGET_S, deadline_s=LIVE_DEADLINE_S,
                                   progress=progress)
            bar.empty()
            st.session_state["_linear_timing"] = {"rows": rows, "slopes": ls.fit_slopes(rows), "causal": causal}
        live = st.session_state.get("_linear_timing")
        if live:
            st.markdown(f"**{T('live_result')}**")
            timing_view(T, live["rows"], live["slopes"], HEADS, HEAD_DIM, live["causal"],
                        "linear-vs-softmax-time-live", "fig-time-live")
            live_meta(T)


# --- generation -------------------------------------------------------------------------------------------------

def generation_view(T, rows: list[dict], name: str, key: str) -> None:
    contexts = [r["context"] for r in rows]
    series = {T(m): [r.get(f"{m}_tok_s") for r in rows] for m in MODES}
    fig = loglog_figure(contexts, series, title=T("gen_title"), x_title=T("ctx_axis"), y_title=T("tok_axis"))
    ui.show_figure(fig, name, data={"context": contexts, **{f"{m}_tok_s": series[T(m)] for m in MODES}}, key=key)
    st.dataframe({
        T("col_ctx"): [f"{c:,}" for c in contexts],
        **{T(m): [T("skipped") if r.get("skipped") or r.get(f"{m}_skipped") else number(r.get(f"{m}_tok_s"), ",.2f")
                  for r in rows] for m in MODES},
        T("col_rnn_kv"): [number(r.get("rnn_over_kv_cache"), ",.2f") for r in rows],
        T("col_kv_none"): [number(r.get("kv_cache_over_no_cache"), ",.1f") for r in rows],
    }, hide_index=True)
    full = [r for r in rows if r.get("rnn_over_kv_cache") and r.get("kv_cache_over_no_cache")]
    if full:
        last = full[-1]
        st.markdown(T("gen_result", ctx=last["context"], rnn=last["rnn_tok_s"], kv=last["kv_cache_tok_s"],
                      none=last["no_cache_tok_s"], r1=last["rnn_over_kv_cache"], r2=last["kv_cache_over_no_cache"]))


def generation(T, res: dict | None) -> None:
    st.subheader(T("h_generation"))
    st.markdown(T("generation"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path="results/bench_linear.json"))
    else:
        generation_view(T, res["generation"]["rows"], "generation-speed-committed", "fig-gen-committed")
        results_meta(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("gen_live_intro", budget=LIVE_BUDGET_S, limit=LIVE_DEADLINE_S))
        max_ctx = int(ui.select("max_ctx", T("max_ctx"), GEN_MAX, "512", format_func=lambda v: f"{int(v):,}"))
        if st.button(T("run_gen"), key="run-gen"):
            bar, progress = progress_bar(T)
            rows = ls.generation_table(ls.power_of_two_sizes(LIVE_MIN, max_ctx), steps=16, budget_s=LIVE_BUDGET_S,
                                       deadline_s=LIVE_DEADLINE_S, progress=progress)
            bar.empty()
            st.session_state["_linear_generation"] = rows
        live = st.session_state.get("_linear_generation")
        if live:
            st.markdown(f"**{T('live_result')}**")
            generation_view(T, live, "generation-speed-live", "fig-gen-live")
            live_meta(T)


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
associativity(T)
implied(T)
results = ls.load_results()
timing(T, results)
generation(T, results)
ui.page_end()
