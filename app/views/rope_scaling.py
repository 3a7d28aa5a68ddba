"""Scaled RoPE: what linear, dynamic NTK, YaRN, LongRoPE and llama3 scaling do to each frequency (computed by
transformers' own RoPE code), and what they do to SmolLM2's loss past its 8,192-token training context."""
import numpy as np
import streamlit as st
import torch

from app import models, ui
from app import rope_figures as figs
from core import long_context, rope_scaling as rs
from viz.positions import curves

TEXT = {
    "title": {"en": "Scaled RoPE: longer contexts", "ja": "スケーリングした RoPE: より長い文脈",
              "ko": "스케일링한 RoPE: 더 긴 문맥"},
    "intro": {
        "en": "A RoPE model trained on L₀ positions has never seen the angles m·θᵢ of larger m for its slow pairs. "
              "Scaling methods change the frequencies θᵢ so that a longer context maps back onto familiar angles. "
              "Every number below comes from transformers' own RoPE code (`ROPE_INIT_FUNCTIONS`) for SmolLM2's "
              "settings: head size 64, base 100,000, L₀ = 8,192.",
        "ja": "L₀ 位置で学習した RoPE モデルは、遅いペアについて m が大きいときの角度 m·θᵢ を見たことがありません。"
              "スケーリング手法は周波数 θᵢ を変え、長い文脈を見慣れた角度に戻します。以下の数値はすべて SmolLM2 の設定"
              "（ヘッド次元 64、base 100,000、L₀ = 8,192）で transformers 自身の RoPE コード (`ROPE_INIT_FUNCTIONS`) "
              "が計算したものです。",
        "ko": "L₀개 위치로 학습한 RoPE 모델은 느린 쌍에 대해 m이 큰 각도 m·θᵢ를 본 적이 없습니다. 스케일링 방법은 "
              "주파수 θᵢ를 바꿔 긴 문맥을 익숙한 각도로 되돌립니다. 아래 숫자는 모두 SmolLM2 설정(헤드 크기 64, "
              "base 100,000, L₀ = 8,192)에서 transformers 자체의 RoPE 코드(`ROPE_INIT_FUNCTIONS`)가 계산한 것입니다.",
    },
    "methods": {
        "en": "- **default**: plain RoPE.\n- **linear** (position interpolation): every θᵢ divided by the factor s.\n"
              "- **dynamic** (NTK-aware): the base is raised for the current length L, base·(s·L/L₀ − s + 1)^(d/(d−2)); "
              "nothing changes while L ≤ L₀.\n- **yarn**: fast pairs kept, slow pairs divided by s, a ramp between, "
              "and q·k multiplied by (0.1·ln s + 1)².\n- **longrope**: one factor per pair, found by search for each "
              "model. SmolLM2 has none, so we use the search's YaRN starting point; its attention factor is "
              "√(1 + ln s / ln L₀).\n- **llama3**: wavelengths above L₀ divided by s, below L₀/4 kept, a smooth blend "
              "between.",
        "ja": "- **default**: 通常の RoPE。\n- **linear**（位置補間）: すべての θᵢ を係数 s で割る。\n"
              "- **dynamic**（NTK-aware）: 現在の長さ L に応じて base を上げる。base·(s·L/L₀ − s + 1)^(d/(d−2))。"
              "L ≤ L₀ の間は何も変わらない。\n- **yarn**: 速いペアはそのまま、遅いペアは s で割り、間はランプでつなぎ、"
              "q·k に (0.1·ln s + 1)² を掛ける。\n- **longrope**: ペアごとの係数をモデルごとに探索で求める。SmolLM2 には"
              "ないので、探索の出発点である YaRN の値を使う。注意係数は √(1 + ln s / ln L₀)。\n- **llama3**: 波長が L₀ "
              "より長いものは s で割り、L₀/4 より短いものはそのまま、間はなめらかに混ぜる。",
        "ko": "- **default**: 일반 RoPE.\n- **linear**(위치 보간): 모든 θᵢ를 계수 s로 나눔.\n"
              "- **dynamic**(NTK-aware): 현재 길이 L에 맞춰 base를 올림. base·(s·L/L₀ − s + 1)^(d/(d−2)). "
              "L ≤ L₀인 동안은 아무것도 바뀌지 않음.\n- **yarn**: 빠른 쌍은 그대로, 느린 쌍은 s로 나누고, 사이는 "
              "램프로 잇고, q·k에 (0.1·ln s + 1)²를 곱함.\n- **longrope**: 쌍마다 계수를 모델별 탐색으로 찾음. "
              "SmolLM2에는 없으므로 탐색의 출발점인 YaRN 값을 씀. 어텐션 계수는 √(1 + ln s / ln L₀).\n"
              "- **llama3**: 파장이 L₀보다 긴 것은 s로 나누고, L₀/4보다 짧은 것은 그대로, 사이는 부드럽게 섞음.",
    },
    "factor": {"en": "Scale factor s", "ja": "スケール係数 s", "ko": "스케일 계수 s"},
    "maxd": {"en": "Longest distance / sequence length", "ja": "最大距離 / 系列長", "ko": "최대 거리 / 시퀀스 길이"},
    "wl_title": {"en": "Wavelength 2π/θᵢ of each pair (positions per full turn); dashed: L₀",
                 "ja": "各ペアの波長 2π/θᵢ（1 回転あたりの位置数）、破線: L₀",
                 "ko": "각 쌍의 파장 2π/θᵢ(한 바퀴당 위치 수), 점선: L₀"},
    "pair": {"en": "pair i (fast → slow)", "ja": "ペア i（速い → 遅い）", "ko": "쌍 i(빠름 → 느림)"},
    "wavelength": {"en": "wavelength (positions)", "ja": "波長（位置）", "ko": "파장(위치)"},
    "ratio_title": {"en": "θᵢ(default) / θᵢ(method): 1 = extrapolated (kept), s = interpolated",
                    "ja": "θᵢ(default) / θᵢ(手法): 1 = 外挿（そのまま）、s = 補間",
                    "ko": "θᵢ(default) / θᵢ(방법): 1 = 외삽(그대로), s = 보간"},
    "ratio": {"en": "ratio", "ja": "比", "ko": "비율"},
    "col_method": {"en": "method", "ja": "手法", "ko": "방법"},
    "col_kept": {"en": "pairs kept (extrapolated)", "ja": "そのままのペア（外挿）", "ko": "그대로인 쌍(외삽)"},
    "col_interp": {"en": "pairs interpolated by ≥ s", "ja": "s 以上で補間されたペア", "ko": "s 이상 보간된 쌍"},
    "col_between": {"en": "pairs in between", "ja": "中間のペア", "ko": "중간 쌍"},
    "col_att": {"en": "attention factor (q·k ×factor²)", "ja": "注意係数（q·k に係数² を掛ける）",
                "ko": "어텐션 계수(q·k에 계수² 곱함)"},
    "train_ctx": {"en": "L₀ = 8,192", "ja": "L₀ = 8,192", "ko": "L₀ = 8,192"},
    "wl_note": {
        "en": "A pair whose wavelength is shorter than L₀ completed full turns during training, so every angle it "
              "shows at longer positions was seen: it can be extrapolated safely. Pairs with wavelength above L₀ "
              "meet new angles past L₀; those are the ones to interpolate. Dynamic NTK and LongRoPE are shown for "
              "a sequence of the chosen length.",
        "ja": "波長が L₀ より短いペアは学習中に何周もしたので、長い位置で現れる角度もすべて見たことがあり、安全に外挿"
              "できます。波長が L₀ を超えるペアは L₀ の先で新しい角度に出会うので、補間すべきはこちらです。dynamic NTK "
              "と LongRoPE は選んだ長さの系列で表示しています。",
        "ko": "파장이 L₀보다 짧은 쌍은 학습 중에 여러 바퀴를 돌았으므로 긴 위치에서 나타나는 각도도 모두 본 적이 있어 "
              "안전하게 외삽할 수 있습니다. 파장이 L₀를 넘는 쌍은 L₀ 너머에서 새로운 각도를 만나므로 이쪽을 보간해야 "
              "합니다. dynamic NTK와 LongRoPE는 선택한 길이의 시퀀스로 표시합니다.",
    },
    "decay_title": {"en": "Expected q·k/d against distance (line: mean per bin, band: min–max in the bin)",
                    "ja": "距離に対する q·k/d の期待値（線: ビンごとの平均、帯: ビン内の最小〜最大）",
                    "ko": "거리에 대한 q·k/d의 기댓값(선: 구간별 평균, 띠: 구간 내 최소~최대)"},
    "distance": {"en": "distance m − n (log scale)", "ja": "距離 m − n（対数目盛）", "ko": "거리 m − n(로그 눈금)"},
    "qk": {"en": "expected q·k / d", "ja": "q·k / d の期待値", "ko": "q·k / d 기댓값"},
    "decay_note": {
        "en": "What is plotted: for a query and a key carrying the same content x (independent entries of mean 0, "
              "variance 1), E[(R_m x)·(R_n x)]/d = a²·mean_i cos((m−n)·θᵢ), where a is the method's attention "
              "factor. This is also exactly q·k/d for q = k = all-ones. Every distance from 0 to {maxd:,} is "
              "computed; the browser receives {bins} log-spaced bins (mean, min, max), not {maxd:,} points.",
        "ja": "描いているもの: 同じ内容 x（平均 0・分散 1 の独立な成分）を持つクエリとキーについて、"
              "E[(R_m x)·(R_n x)]/d = a²·mean_i cos((m−n)·θᵢ)。a は手法の注意係数です。これは q = k = 全要素 1 の"
              "ときの q·k/d そのものでもあります。0 から {maxd:,} までのすべての距離を計算し、ブラウザには {maxd:,} 点"
              "ではなく対数間隔の {bins} 個のビン（平均・最小・最大）だけを送ります。",
        "ko": "그린 것: 같은 내용 x(평균 0, 분산 1인 독립 성분)를 가진 쿼리와 키에 대해 "
              "E[(R_m x)·(R_n x)]/d = a²·mean_i cos((m−n)·θᵢ)이며, a는 방법의 어텐션 계수입니다. 이는 q = k = 모두 "
              "1일 때의 q·k/d와도 정확히 같습니다. 0부터 {maxd:,}까지 모든 거리를 계산하고, 브라우저에는 {maxd:,}개 점이 "
              "아니라 로그 간격의 {bins}개 구간(평균, 최소, 최대)만 보냅니다.",
    },
    "res_title": {"en": "Resolution: angle between neighbouring positions as s grows",
                  "ja": "分解能: s を大きくしたときの隣接位置間の角度", "ko": "해상도: s가 커질 때 이웃 위치 사이의 각도"},
    "measure": {"en": "Angle measured", "ja": "測る角度", "ko": "측정할 각도"},
    "measure_vector": {"en": "between the whole rotated vectors (all-ones content)",
                       "ja": "回転後のベクトル全体の間（内容は全要素 1）", "ko": "회전된 벡터 전체 사이(내용은 모두 1)"},
    "measure_fastest_pair": {"en": "step of the fastest pair (finest detail)", "ja": "最も速いペアの 1 歩（最も細かい区別）",
                             "ko": "가장 빠른 쌍의 한 걸음(가장 세밀한 구분)"},
    "measure_slowest_pair": {"en": "step of the slowest pair (smallest angle)", "ja": "最も遅いペアの 1 歩（最小の角度）",
                             "ko": "가장 느린 쌍의 한 걸음(가장 작은 각도)"},
    "angle": {"en": "angle between positions m and m+1 (rad)", "ja": "位置 m と m+1 の間の角度 (rad)",
              "ko": "위치 m과 m+1 사이의 각도(rad)"},
    "res_result": {
        "en": "Measured at s = {s:g}: linear interpolation divides every step by s (fastest pair {lin:.3g} rad instead "
              "of {base:.3g}), so neighbouring positions are squeezed together; YaRN keeps the fast pairs "
              "({yarn:.3g} rad) and only squeezes the slow ones.",
        "ja": "s = {s:g} での計測: 線形補間はすべての歩幅を s で割る（最も速いペアは {base:.3g} rad でなく {lin:.3g} rad）"
              "ので、隣接位置が押し縮められます。YaRN は速いペアを保ち（{yarn:.3g} rad）、遅いペアだけを縮めます。",
        "ko": "s = {s:g}에서 측정: 선형 보간은 모든 걸음을 s로 나누므로(가장 빠른 쌍이 {base:.3g} rad 대신 {lin:.3g} rad) "
              "이웃 위치가 서로 눌려 붙습니다. YaRN은 빠른 쌍을 유지하고({yarn:.3g} rad) 느린 쌍만 줄입니다.",
    },
    "factor_axis": {"en": "scale factor s (log scale)", "ja": "スケール係数 s（対数目盛）", "ko": "스케일 계수 s(로그 눈금)"},
    "experiment": {"en": "The real experiment: SmolLM2 past 8,192 tokens", "ja": "実際の実験: 8,192 トークンを超えた SmolLM2",
                   "ko": "실제 실험: 8,192 토큰을 넘어선 SmolLM2"},
    "exp_intro": {
        "en": "SmolLM2-135M reads one long text with no scaling and with transformers' linear, dynamic NTK and "
              "YaRN scaling, without any fine-tuning, and we record the loss (negative log-likelihood of the next "
              "token) at every position. The numbers come from the committed results file below; rerun them with "
              "the command it shows.",
        "ja": "SmolLM2-135M に長い 1 つの文章を、スケーリングなし、および transformers の linear・dynamic NTK・YaRN "
              "スケーリングで読ませ（追加学習なし）、各位置での損失（次トークンの負の対数尤度）を記録します。数値は"
              "下のコミット済み結果ファイルからのもので、表示されたコマンドで再実行できます。",
        "ko": "SmolLM2-135M에 긴 텍스트 하나를 스케일링 없이, 그리고 transformers의 linear, dynamic NTK, YaRN "
              "스케일링으로 읽히고(추가 학습 없음), 각 위치의 손실(다음 토큰의 음의 로그 가능도)을 기록합니다. 숫자는 "
              "아래의 커밋된 결과 파일에서 오며, 표시된 명령으로 다시 실행할 수 있습니다.",
    },
    "no_results": {
        "en": "No results file yet (results/long_context.json). Create it with: python scripts/long_context_experiment.py",
        "ja": "結果ファイル (results/long_context.json) はまだありません。作成するには: "
              "python scripts/long_context_experiment.py",
        "ko": "결과 파일(results/long_context.json)이 아직 없습니다. 만들려면: python scripts/long_context_experiment.py",
    },
    "partial": {"en": "This results file holds {k} of the {total} configurations; missing: {missing}.",
                "ja": "この結果ファイルには {total} 個の設定のうち {k} 個があります。ないもの: {missing}。",
                "ko": "이 결과 파일에는 {total}개 설정 중 {k}개가 있습니다. 없는 것: {missing}."},
    "exp_n": {"en": "Text length of the run", "ja": "実行したテキストの長さ", "ko": "실행한 텍스트 길이"},
    "n_tokens": {"en": "{n:,} tokens", "ja": "{n:,} トークン", "ko": "{n:,}개 토큰"},
    "exp_factor": {"en": "Show factor", "ja": "表示する係数", "ko": "표시할 계수"},
    "all": {"en": "all", "ja": "すべて", "ko": "전부"},
    "loss_title": {"en": "Mean loss per block of {b:,} positions (dashed: L₀ = 8,192)",
                   "ja": "{b:,} 位置ごとの平均損失（破線: L₀ = 8,192）", "ko": "{b:,}개 위치 블록별 평균 손실(점선: L₀ = 8,192)"},
    "position": {"en": "position in the text (tokens)", "ja": "文章中の位置（トークン）", "ko": "텍스트 내 위치(토큰)"},
    "loss": {"en": "loss (nats per token)", "ja": "損失（トークンあたり nats）", "ko": "손실(토큰당 nats)"},
    "col_run": {"en": "run", "ja": "実行", "ko": "실행"},
    "col_within": {"en": "mean loss, positions < 8,192", "ja": "平均損失（位置 < 8,192）", "ko": "평균 손실(위치 < 8,192)"},
    "col_beyond": {"en": "mean loss, positions ≥ 8,192", "ja": "平均損失（位置 ≥ 8,192）", "ko": "평균 손실(위치 ≥ 8,192)"},
    "col_seconds": {"en": "seconds", "ja": "秒", "ko": "초"},
    "exp_best": {
        "en": "In this file: beyond 8,192 positions the lowest mean loss is {best_loss:.2f} ({best}); with no scaling "
              "it is {none_loss:.2f}. Within the training context the lowest is {in_loss:.2f} ({in_best}).",
        "ja": "このファイルでは: 8,192 位置を超えた範囲で平均損失が最も低いのは {best_loss:.2f}（{best}）、スケーリング"
              "なしでは {none_loss:.2f}。学習文脈内で最も低いのは {in_loss:.2f}（{in_best}）。",
        "ko": "이 파일에서: 8,192개 위치를 넘어선 구간에서 평균 손실이 가장 낮은 것은 {best_loss:.2f}({best}), 스케일링 "
              "없이는 {none_loss:.2f}입니다. 학습 문맥 안에서 가장 낮은 것은 {in_loss:.2f}({in_best})입니다.",
    },
    "exp_meta": {"en": "How these numbers were made", "ja": "これらの数値の作り方", "ko": "이 숫자를 만든 방법"},
    "meta_text": {
        "en": "Command: `{command}`  \nDate: {date}  \nDevice: {device}; torch {torch}, transformers {tf}  \n"
              "Model: {model} ({weights})  \nText: {path}, {n:,} of {avail:,} tokens: licence texts shipped with "
              "Debian (/usr/share/common-licenses) and Python's LICENSE, concatenated; they may be copied "
              "verbatim.  \nDynamic NTK is computed by transformers for the whole sequence length, so in one "
              "pass every position uses the frequencies for {n:,} tokens.",
        "ja": "コマンド: `{command}`  \n日時: {date}  \nデバイス: {device}、torch {torch}、transformers {tf}  \n"
              "モデル: {model}（{weights}）  \n文章: {path}、{avail:,} トークン中 {n:,} トークン。Debian 付属の"
              "ライセンス文 (/usr/share/common-licenses) と Python の LICENSE を連結したもので、逐語的な複製が許されて"
              "います。  \ndynamic NTK は transformers が系列全体の長さで計算するため、1 回の実行ではすべての位置が "
              "{n:,} トークン用の周波数を使います。",
        "ko": "명령: `{command}`  \n날짜: {date}  \n장치: {device}, torch {torch}, transformers {tf}  \n"
              "모델: {model}({weights})  \n텍스트: {path}, {avail:,}개 토큰 중 {n:,}개. Debian에 포함된 라이선스 "
              "문서(/usr/share/common-licenses)와 Python의 LICENSE를 이어 붙인 것으로, 그대로 복제할 수 있습니다.  \n"
              "dynamic NTK는 transformers가 시퀀스 전체 길이로 계산하므로, 한 번의 실행에서 모든 위치가 {n:,}개 토큰용 "
              "주파수를 씁니다.",
    },
    "live": {"en": "Rerun a small size live", "ja": "小さいサイズをその場で再実行", "ko": "작은 크기로 바로 다시 실행"},
    "live_intro": {
        "en": "A live run on this server (CPU unless a GPU is present) is kept short, so it stays inside the "
              "training context: it shows what scaling costs on positions the model already handles.",
        "ja": "このサーバーでの実行（GPU がなければ CPU）は短くしているため、学習文脈の内側に収まります。モデルが"
              "すでに扱える位置でスケーリングがどれだけ損をするかを示します。",
        "ko": "이 서버에서의 실행(GPU가 없으면 CPU)은 짧게 제한하므로 학습 문맥 안에 머뭅니다. 모델이 이미 다룰 수 "
              "있는 위치에서 스케일링이 얼마나 손해를 보는지 보여 줍니다.",
    },
    "live_n": {"en": "Tokens", "ja": "トークン数", "ko": "토큰 수"},
    "live_method": {"en": "Method", "ja": "手法", "ko": "방법"},
    "live_factor": {"en": "Factor", "ja": "係数", "ko": "계수"},
    "run": {"en": "Run", "ja": "実行", "ko": "실행"},
    "live_title": {"en": "Live run: mean loss per block of {b} positions", "ja": "その場の実行: {b} 位置ごとの平均損失",
                   "ko": "바로 실행: {b}개 위치 블록별 평균 손실"},
    "running": {"en": "Running {label}…", "ja": "{label} を実行中…", "ko": "{label} 실행 중…"},
}
FACTORS = ["2", "4", "8", "16", "32"]
DISTANCES = ["16384", "32768", "65536", "131072"]
LIVE_SIZES = ["256", "512", "1024", "2048"]
LIVE_METHODS = ["linear", "dynamic", "yarn"]
LIVE_BUCKET = 128
ORIGINAL = rs.SMOLLM2_ROPE["original_context"]


@st.cache_data(show_spinner=False, max_entries=16)
def _methods(factor: float, seq_len: int):
    return figs.method_rows(factor, seq_len)


@st.cache_data(show_spinner=False, max_entries=16)
def _decay(factor: float, max_distance: int):
    return figs.decay_envelopes(factor, max_distance)


@st.cache_data(show_spinner=False)
def _resolution():
    return figs.resolution()


def _live(model, n: int, method: str, factor: float) -> list[dict]:
    """Plain RoPE and one scaled run on the first n tokens of the long text, with a progress bar. Results are kept
    in the session (a rerun of the page shows them again without recomputing)."""
    store = st.session_state.setdefault("_rope_live_runs", {})
    key = (n, method, factor)
    if key not in store:
        ids = torch.tensor(model.tokenizer(long_context.load_long_text())["input_ids"][:n])
        bar = st.progress(0.0)

        def progress(frac, label):
            bar.progress(min(1.0, max(0.0, frac)), text=ui.tr(TEXT, "running", label=label))
        store[key] = long_context.evaluate_scaling(model.model, ids, [("default", 1.0), (method, factor)],
                                                   bucket=LIVE_BUCKET, original_context=ORIGINAL, progress=progress)
        bar.empty()
    return store[key]


def formulas(T) -> None:
    st.markdown(T("methods"))
    c1, c2 = st.columns(2)
    with c1:
        factor = float(ui.select("factor", T("factor"), FACTORS, "4"))
    with c2:
        maxd = int(ui.select("maxd", T("maxd"), DISTANCES, "131072", format_func=lambda v: f"{int(v):,}"))
    rows = _methods(factor, maxd)
    pairs = np.arange(len(rows[0]["ratio"]))
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(figs.wavelength_figure(rows, T), f"rope-wavelengths-s{factor:g}",
                       data={"pair": pairs, **{r["method"]: r["wavelength"] for r in rows}}, key="fig-wl")
    with c2:
        ui.show_figure(figs.ratio_figure(rows, factor, T), f"rope-interpolation-s{factor:g}",
                       data={"pair": pairs, **{r["method"]: r["ratio"] for r in rows}}, key="fig-ratio")
    st.dataframe({T("col_method"): [r["method"] for r in rows], T("col_kept"): [r["kept"] for r in rows],
                  T("col_interp"): [r["interpolated"] for r in rows], T("col_between"): [r["between"] for r in rows],
                  T("col_att"): [round(r["attention_factor"], 4) for r in rows]}, hide_index=True)
    st.caption(T("wl_note"))

    decay = _decay(factor, maxd)
    ui.show_figure(figs.decay_figure(decay, T), f"rope-qk-decay-s{factor:g}",
                   data={"distance_from": decay["default"]["start"], "distance_to": decay["default"]["end"],
                         **{f"{m}_mean": e["mean"] for m, e in decay.items()}}, key="fig-decay")
    st.caption(T("decay_note", maxd=maxd, bins=len(decay["default"]["mean"])))

    st.subheader(T("res_title"))
    measure = ui.select("measure", T("measure"), ["fastest_pair", "slowest_pair", "vector"], "fastest_pair",
                        format_func=lambda v: T(f"measure_{v}"), radio=True, horizontal=True)
    res = _resolution()
    ui.show_figure(figs.resolution_figure(res, measure, T), f"rope-resolution-{measure}",
                   data={"factor": figs.RES_FACTORS, **{m: v[measure] for m, v in res.items()}}, key="fig-res")
    k = int(np.argmin(np.abs(figs.RES_FACTORS - factor)))
    st.info(T("res_result", s=figs.RES_FACTORS[k], lin=res["linear"]["fastest_pair"][k],
              base=res["default"]["fastest_pair"][k], yarn=res["yarn"]["fastest_pair"][k]))


def loss_figure(T, runs: list[dict], bucket: int, title: str, name: str, key: str) -> None:
    x = {r["label"]: long_context.bucket_midpoints(r) for r in runs}
    fig = curves(None, {r["label"]: np.asarray(r["mean_loss"]) for r in runs}, x_per_series=x, title=title,
                 x_title=T("position"), y_title=T("loss"), markers=True,
                 vlines=[(ORIGINAL, "L₀")] if max(max(r["end"]) for r in runs) >= ORIGINAL else None, height=460)
    data = {"bucket_start": runs[0]["start"], "bucket_end": runs[0]["end"],
            **{r["label"]: r["mean_loss"] for r in runs}}
    ui.show_figure(fig, name, data=data, key=key)


def experiment(T) -> None:
    st.subheader(T("experiment"))
    st.markdown(T("exp_intro"))
    by_length = {n: r for n, r in long_context.results_by_length().items() if r["runs"]}
    if not by_length:
        st.info(T("no_results"))
    else:
        lengths = [str(n) for n in by_length]
        chosen = ui.select("exp_n", T("exp_n"), lengths, lengths[-1], format_func=lambda v: T("n_tokens", n=int(v)),
                           radio=True, horizontal=True) if len(lengths) > 1 else lengths[0]
        res = by_length[int(chosen)]
        missing = long_context.missing_runs(res)
        if missing:
            st.warning(T("partial", k=len(res["runs"]), total=len(long_context.STANDARD_RUNS),
                         missing=", ".join(missing)))
        factors = sorted({f"{r['factor']:g}" for r in res["runs"] if r["method"] != "default"}, key=float)
        pick = ui.select("exp_factor", T("exp_factor"), ["all"] + factors, "all",
                         format_func=lambda v: T("all") if v == "all" else f"s = {v}", radio=True, horizontal=True)
        runs = [r for r in res["runs"] if pick == "all" or r["method"] == "default" or f"{r['factor']:g}" == pick]
        loss_figure(T, runs, res["bucket"], T("loss_title", b=res["bucket"]), "long-context-loss", "fig-loss")
        st.dataframe({T("col_run"): [r["label"] for r in runs],
                      T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
                      T("col_beyond"): [None if r["mean_loss_beyond_context"] is None
                                        else round(r["mean_loss_beyond_context"], 3) for r in runs],
                      T("col_seconds"): [r["seconds"] for r in runs]}, hide_index=True)
        beyond = [r for r in res["runs"] if r["mean_loss_beyond_context"] is not None]
        none = next((r for r in beyond if r["method"] == "default"), None)
        if beyond and none is not None:
            best = min(beyond, key=lambda r: r["mean_loss_beyond_context"])
            in_best = min(res["runs"], key=lambda r: r["mean_loss_within_context"])
            st.info(T("exp_best", best=best["label"], best_loss=best["mean_loss_beyond_context"],
                      none_loss=none["mean_loss_beyond_context"], in_best=in_best["label"],
                      in_loss=in_best["mean_loss_within_context"]))
        with st.expander(T("exp_meta")):
            st.markdown(T("meta_text", command=res.get("command", "?"), date=res.get("date", "?"),
                          device=res.get("device", "?"), torch=res.get("torch", "?"), tf=res.get("transformers", "?"),
                          model=res.get("model", "?"), weights=res.get("weights_note", ""),
                          path=res["text"]["path"], n=res["n_tokens"], avail=res["text"]["tokens_available"]))

    st.subheader(T("live"))
    st.caption(T("live_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = int(ui.select("live_n", T("live_n"), LIVE_SIZES, "512"))
    with c2:
        method = ui.select("live_method", T("live_method"), LIVE_METHODS, "linear")
    with c3:
        factor = float(ui.select("live_factor", T("live_factor"), ["2", "4", "8"], "4"))
    runs = st.session_state.get("_rope_live_runs", {}).get((n, method, factor))
    if st.button(T("run"), key="live-run"):
        model = models.load("smollm2")
        if model is not None:
            runs = _live(model, n, method, factor)
    if runs:
        loss_figure(T, runs, LIVE_BUCKET, T("live_title", b=LIVE_BUCKET), f"live-loss-{method}-{factor:g}",
                    "fig-live")
        st.dataframe({T("col_run"): [r["label"] for r in runs],
                      T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
                      T("col_seconds"): [r["seconds"] for r in runs]}, hide_index=True)


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
formulas(T)
experiment(T)
ui.page_end()
