"""PyTorch's SDPA backends against a naive matmul-softmax-matmul (committed benchmark + a small live CPU run), and
grouped-query attention: what sharing key/value heads saves in the KV cache of real models."""
import streamlit as st

from app import ui
from core import kv_cache as kvc
from core import sdpa_backends as sb
from core.timing import human_bytes, machine_info
from viz.scaling import grouped_bars

TEXT = {
    "title": {"en": "SDPA backends and grouped-query attention", "ja": "SDPA のバックエンドとグループ化クエリ注意",
              "ko": "SDPA 백엔드와 그룹 쿼리 어텐션"},
    "intro": {
        "en": "The same formula, softmax(QKᵀ/√d)·V, runs through very different kernels, and a model's key/value "
              "heads decide how much memory generation needs. Both are measured or computed below.",
        "ja": "同じ式 softmax(QKᵀ/√d)·V でも、実行するカーネルはまったく異なります。また、モデルのキー/バリューヘッドの数が"
              "生成に必要なメモリを決めます。以下ではどちらも計測または計算します。",
        "ko": "같은 식 softmax(QKᵀ/√d)·V라도 전혀 다른 커널로 실행되며, 모델의 키/값 헤드 수가 생성에 필요한 메모리를 "
              "정합니다. 아래에서 둘 다 측정하거나 계산합니다.",
    },
    "h_backends": {"en": "1. SDPA backends", "ja": "1. SDPA のバックエンド", "ko": "1. SDPA 백엔드"},
    "backends": {
        "en": "- **naive**: Q·Kᵀ, softmax, ·V as three separate operations; the n × n scores and weights are stored.\n"
              "- **flash** (FlashAttention): walks over blocks of keys with a running softmax, so the n × n matrix "
              "never exists in memory. PyTorch also has a CPU version.\n"
              "- **efficient** (memory-efficient attention, xFormers' kernel): also tiled; CUDA only.\n"
              "- **cudnn**: NVIDIA cuDNN's fused attention; CUDA only.\n"
              "- **math**: PyTorch's composite of ordinary operations, the always-available fallback.\n\n"
              "TFLOP/s counts 4·B·H·n²·d floating-point operations (two matrix products), halved for a causal mask.",
        "ja": "- **naive**: Q·Kᵀ、ソフトマックス、·V を別々の 3 つの演算で行い、n × n のスコアと重みを保存します。\n"
              "- **flash**（FlashAttention）: キーのブロックを順に処理しながらソフトマックスを更新するので、n × n 行列は"
              "メモリ上に存在しません。PyTorch には CPU 版もあります。\n"
              "- **efficient**（メモリ効率の良い注意、xFormers のカーネル）: これもタイル化。CUDA 専用。\n"
              "- **cudnn**: NVIDIA cuDNN の融合注意。CUDA 専用。\n"
              "- **math**: 通常の演算を組み合わせた PyTorch の実装で、常に使える予備です。\n\n"
              "TFLOP/s は 4·B·H·n²·d 回の浮動小数点演算（2 つの行列積）で数え、因果マスクでは半分にします。",
        "ko": "- **naive**: Q·Kᵀ, 소프트맥스, ·V를 별개의 세 연산으로 하며 n × n 점수와 가중치를 저장합니다.\n"
              "- **flash**(FlashAttention): 키 블록을 차례로 돌며 소프트맥스를 갱신하므로 n × n 행렬이 메모리에 존재하지 "
              "않습니다. PyTorch에는 CPU 버전도 있습니다.\n"
              "- **efficient**(메모리 효율 어텐션, xFormers 커널): 역시 타일 방식. CUDA 전용.\n"
              "- **cudnn**: NVIDIA cuDNN의 융합 어텐션. CUDA 전용.\n"
              "- **math**: 일반 연산을 조합한 PyTorch 구현으로, 언제나 쓸 수 있는 대비책입니다.\n\n"
              "TFLOP/s는 4·B·H·n²·d번의 부동소수점 연산(행렬 곱 두 번)으로 세며, 인과 마스크에서는 절반으로 합니다.",
    },
    "committed": {"en": "Committed results: {device}", "ja": "コミット済みの結果: {device}", "ko": "커밋된 결과: {device}"},
    "no_results": {
        "en": "No results file yet (results/bench_sdpa.json). Create it with: python benchmarks/bench_sdpa.py",
        "ja": "結果ファイル（results/bench_sdpa.json）はまだありません。作成するには: python benchmarks/bench_sdpa.py",
        "ko": "결과 파일(results/bench_sdpa.json)이 아직 없습니다. 만들려면: python benchmarks/bench_sdpa.py",
    },
    "not_measured": {"en": "{device}: {why}. Measure with: python benchmarks/bench_sdpa.py --device {device}",
                     "ja": "{device}: {why}。計測するには: python benchmarks/bench_sdpa.py --device {device}",
                     "ko": "{device}: {why}. 측정하려면: python benchmarks/bench_sdpa.py --device {device}"},
    "meta": {
        "en": "Command: `{command}` · date {date} · {device_name}, torch {torch}, {threads} thread(s) · load "
              "average (1 min) {load_before} before, {load_after} after, on {cpus} cores. Peak memory: {how}.",
        "ja": "コマンド: `{command}` · 日時 {date} · {device_name}、torch {torch}、{threads} スレッド · 負荷平均（1 分）"
              "実行前 {load_before}、実行後 {load_after}、{cpus} コア。ピークメモリ: {how}。",
        "ko": "명령: `{command}` · 날짜 {date} · {device_name}, torch {torch}, 스레드 {threads}개 · 부하 평균(1분) "
              "실행 전 {load_before}, 실행 후 {load_after}, 코어 {cpus}개. 최대 메모리: {how}.",
    },
    "availability": {"en": "Which backends run here", "ja": "ここで動くバックエンド", "ko": "여기서 실행되는 백엔드"},
    "col_backend": {"en": "backend", "ja": "バックエンド", "ko": "백엔드"},
    "col_available": {"en": "available", "ja": "利用可", "ko": "사용 가능"},
    "col_reason": {"en": "why not (as PyTorch reports it)", "ja": "使えない理由（PyTorch の報告）",
                   "ko": "쓸 수 없는 이유(PyTorch 보고)"},
    "yes": {"en": "yes", "ja": "はい", "ko": "예"},
    "no": {"en": "no", "ja": "いいえ", "ko": "아니요"},
    "col_shape": {"en": "shape", "ja": "形", "ko": "형태"},
    "col_status": {"en": "status", "ja": "状態", "ko": "상태"},
    "col_ms": {"en": "ms", "ja": "ms", "ko": "ms"},
    "col_tflops": {"en": "TFLOP/s", "ja": "TFLOP/s", "ko": "TFLOP/s"},
    "col_peak": {"en": "peak extra memory", "ja": "追加メモリのピーク", "ko": "추가 메모리 최댓값"},
    "col_diff": {"en": "max |out − naive|", "ja": "max |出力 − naive|", "ko": "max |출력 − naive|"},
    "ms_title": {"en": "Time per call (lower is better)", "ja": "1 回の呼び出しの時間（低いほど良い）",
                 "ko": "호출당 시간(낮을수록 좋음)"},
    "ms_axis": {"en": "milliseconds (log scale)", "ja": "ミリ秒（対数目盛）", "ko": "밀리초(로그 눈금)"},
    "mem_title": {"en": "Peak extra memory per call", "ja": "1 回の呼び出しの追加メモリのピーク",
                  "ko": "호출당 추가 메모리 최댓값"},
    "mem_axis": {"en": "MiB (log scale)", "ja": "MiB（対数目盛）", "ko": "MiB(로그 눈금)"},
    "backends_result": {
        "en": "Largest shape here ({shape}): the fastest backend is **{best}** at {best_ms:,.1f} ms, the naive "
              "version takes {naive_ms:,.1f} ms ({speedup:,.1f}× slower) and {naive_mem} of extra memory against "
              "{best_mem} for {best}. Every backend's output is within {diff:.1e} of the naive one.",
        "ja": "ここで最大の形（{shape}）: 最速のバックエンドは **{best}** で {best_ms:,.1f} ms。naive は {naive_ms:,.1f} ms"
              "（{speedup:,.1f} 倍遅い）で、追加メモリは {best} の {best_mem} に対し {naive_mem} です。どのバックエンドの"
              "出力も naive との差は {diff:.1e} 以内です。",
        "ko": "여기서 가장 큰 형태({shape}): 가장 빠른 백엔드는 **{best}**로 {best_ms:,.1f} ms, naive는 "
              "{naive_ms:,.1f} ms({speedup:,.1f}배 느림)이며 추가 메모리는 {best}의 {best_mem}에 비해 {naive_mem}입니다. "
              "모든 백엔드의 출력은 naive와의 차이가 {diff:.1e} 이내입니다.",
    },
    "live": {"en": "Small live run on this server's CPU", "ja": "このサーバーの CPU で小さく実行",
             "ko": "이 서버의 CPU에서 작게 실행"},
    "live_intro": {
        "en": "One shape, B = 1, H = {heads}, d = {d}, float32, every backend plus the naive version; each "
              "measurement stops repeating after {budget} s.",
        "ja": "1 つの形（B = 1、H = {heads}、d = {d}、float32）で、すべてのバックエンドと naive を実行します。各計測は "
              "{budget} 秒で繰り返しを打ち切ります。",
        "ko": "형태 하나(B = 1, H = {heads}, d = {d}, float32)로 모든 백엔드와 naive를 실행합니다. 각 측정은 {budget}초가 "
              "지나면 반복을 멈춥니다.",
    },
    "sd_n": {"en": "Sequence length n", "ja": "系列長 n", "ko": "시퀀스 길이 n"},
    "sd_causal": {"en": "Causal mask", "ja": "因果マスク", "ko": "인과 마스크"},
    "run": {"en": "Run the backends", "ja": "バックエンドを実行", "ko": "백엔드 실행"},
    "running": {"en": "Running: {label}", "ja": "実行中: {label}", "ko": "실행 중: {label}"},
    "live_meta": {
        "en": "Measured just now on {device_name}, torch {torch}, {threads} thread(s), load average {load}.",
        "ja": "たった今 {device_name}、torch {torch}、{threads} スレッド、負荷平均 {load} で計測。",
        "ko": "방금 {device_name}, torch {torch}, 스레드 {threads}개, 부하 평균 {load}에서 측정.",
    },
    "h_gqa": {"en": "2. Grouped-query attention and the KV cache", "ja": "2. グループ化クエリ注意と KV キャッシュ",
              "ko": "2. 그룹 쿼리 어텐션과 KV 캐시"},
    "gqa": {
        "en": "While generating, a decoder keeps the key and value of every earlier token in every layer: "
              "**2 × layers × kv_heads × head_dim × context × bytes × batch**. Multi-head attention (MHA) has one "
              "key/value head per query head. Grouped-query attention (GQA) lets a group of query heads share one "
              "key/value head; multi-query attention (MQA) shares a single one among all. The cache shrinks by "
              "heads ÷ kv_heads; every query head still forms its own attention pattern.",
        "ja": "生成中、デコーダはすべての層で過去の全トークンのキーと値を保持します: "
              "**2 × 層数 × kv_heads × head_dim × 文脈長 × バイト数 × バッチ**。マルチヘッド注意（MHA）はクエリヘッド 1 つに"
              "キー/バリューヘッドが 1 つです。グループ化クエリ注意（GQA）では複数のクエリヘッドが 1 つのキー/バリューヘッドを"
              "共有し、マルチクエリ注意（MQA）では全ヘッドが 1 つを共有します。キャッシュは heads ÷ kv_heads 分の 1 に"
              "なりますが、各クエリヘッドは自分の注意パターンを作れます。",
        "ko": "생성하는 동안 디코더는 모든 층에서 이전 모든 토큰의 키와 값을 보관합니다: "
              "**2 × 층 수 × kv_heads × head_dim × 문맥 길이 × 바이트 수 × 배치**. 멀티헤드 어텐션(MHA)은 쿼리 헤드 "
              "하나에 키/값 헤드가 하나입니다. 그룹 쿼리 어텐션(GQA)은 여러 쿼리 헤드가 키/값 헤드 하나를 공유하고, "
              "멀티쿼리 어텐션(MQA)은 모든 헤드가 하나를 공유합니다. 캐시는 heads ÷ kv_heads분의 1로 줄지만, 각 쿼리 "
              "헤드는 여전히 자신의 어텐션 패턴을 만듭니다.",
    },
    "cfg": {"en": "Model", "ja": "モデル", "ko": "모델"},
    "custom": {"en": "custom", "ja": "カスタム", "ko": "사용자 지정"},
    "layers": {"en": "Layers", "ja": "層数", "ko": "층 수"},
    "heads": {"en": "Query heads", "ja": "クエリヘッド数", "ko": "쿼리 헤드 수"},
    "kv": {"en": "Key/value heads", "ja": "キー/バリューヘッド数", "ko": "키/값 헤드 수"},
    "hd": {"en": "Head size", "ja": "ヘッド次元", "ko": "헤드 크기"},
    "ctx": {"en": "Context (tokens)", "ja": "文脈長（トークン）", "ko": "문맥 길이(토큰)"},
    "batch": {"en": "Batch (sequences)", "ja": "バッチ（系列数）", "ko": "배치(시퀀스 수)"},
    "dtype": {"en": "Cache number format", "ja": "キャッシュの数値形式", "ko": "캐시 숫자 형식"},
    "bad_heads": {"en": "Query heads ({h}) must be a multiple of key/value heads ({kv}).",
                  "ja": "クエリヘッド数（{h}）はキー/バリューヘッド数（{kv}）の倍数でなければなりません。",
                  "ko": "쿼리 헤드 수({h})는 키/값 헤드 수({kv})의 배수여야 합니다."},
    "config": {
        "en": "{name}: {layers} layers, {heads} query heads, {kv} key/value heads (groups of {group}), head size "
              "{hd}, trained context {maxc:,} tokens. Source: {source}.",
        "ja": "{name}: {layers} 層、クエリヘッド {heads}、キー/バリューヘッド {kv}（{group} 個ずつのグループ）、ヘッド次元 "
              "{hd}、学習時の文脈長 {maxc:,} トークン。出典: {source}。",
        "ko": "{name}: {layers}층, 쿼리 헤드 {heads}개, 키/값 헤드 {kv}개({group}개씩 그룹), 헤드 크기 {hd}, 학습 문맥 "
              "{maxc:,} 토큰. 출처: {source}.",
    },
    "formula": {
        "en": "2 × {layers} × {kv} × {hd} × {ctx:,} × {bytes:g} × {batch} = **{total:,.0f} bytes ({human})**, "
              "{per_token} per token.",
        "ja": "2 × {layers} × {kv} × {hd} × {ctx:,} × {bytes:g} × {batch} = **{total:,.0f} バイト（{human}）**、"
              "1 トークンあたり {per_token}。",
        "ko": "2 × {layers} × {kv} × {hd} × {ctx:,} × {bytes:g} × {batch} = **{total:,.0f}바이트({human})**, "
              "토큰당 {per_token}.",
    },
    "col_variant": {"en": "attention", "ja": "注意の種類", "ko": "어텐션 종류"},
    "col_kv": {"en": "key/value heads", "ja": "キー/バリューヘッド", "ko": "키/값 헤드"},
    "col_cache": {"en": "KV cache", "ja": "KV キャッシュ", "ko": "KV 캐시"},
    "col_per_token": {"en": "per token", "ja": "1 トークンあたり", "ko": "토큰당"},
    "col_saving": {"en": "smaller than MHA by", "ja": "MHA と比べた縮小率", "ko": "MHA 대비 축소 배율"},
    "this_model": {"en": " (this model)", "ja": "（このモデル）", "ko": "(이 모델)"},
    "cache_title": {"en": "KV cache of the same model as MHA, GQA and MQA", "ja": "同じモデルを MHA・GQA・MQA にした場合の KV キャッシュ",
                    "ko": "같은 모델을 MHA, GQA, MQA로 했을 때의 KV 캐시"},
    "gib": {"en": "GiB", "ja": "GiB", "ko": "GiB"},
    "window": {
        "en": "This model's config sets sliding_window = {w:,}: each layer attends to at most the last {w:,} "
              "tokens, so a rolling-buffer cache holds {pos:,} positions: {human}.",
        "ja": "このモデルの config は sliding_window = {w:,} です。各層は直近 {w:,} トークンまでしか注意しないので、"
              "循環バッファのキャッシュは {pos:,} 位置だけを保持します: {human}。",
        "ko": "이 모델의 config는 sliding_window = {w:,}입니다. 각 층은 최근 {w:,} 토큰까지만 주목하므로 순환 버퍼 "
              "캐시는 {pos:,}개 위치만 보관합니다: {human}.",
    },
    "check": {
        "en": "Check on random tensors with these heads ({heads} query, {kv} key/value): PyTorch's SDPA with "
              "enable_gqa=True differs from plain MHA on K/V repeated so that query head h reads key/value head "
              "h ÷ {group} (rounded down) by {same:.1e}; repeated in the other order (head h reads h mod {kv}) by "
              "{wrong:.2f}{wrong_note}. GQA is MHA with repeated K/V, and which heads share matters.",
        "ja": "このヘッド数（クエリ {heads}、キー/バリュー {kv}）のランダムなテンソルで確認: enable_gqa=True の PyTorch "
              "SDPA と、クエリヘッド h がキー/バリューヘッド h ÷ {group}（切り捨て）を読むように K/V を繰り返した通常の MHA "
              "との差は {same:.1e}、逆の順序で繰り返す（ヘッド h が h mod {kv} を読む）と差は {wrong:.2f}{wrong_note}。"
              "GQA は K/V を繰り返した MHA であり、どのヘッドが共有するかが重要です。",
        "ko": "이 헤드 수(쿼리 {heads}, 키/값 {kv})의 무작위 텐서로 확인: enable_gqa=True인 PyTorch SDPA와, 쿼리 헤드 h가 "
              "키/값 헤드 h ÷ {group}(내림)을 읽도록 K/V를 반복한 일반 MHA의 차이는 {same:.1e}, 반대 순서로 반복하면"
              "(헤드 h가 h mod {kv}를 읽음) 차이는 {wrong:.2f}{wrong_note}. GQA는 K/V를 반복한 MHA이며, 어떤 헤드가 "
              "공유하는지가 중요합니다.",
    },
    "wrong_same": {"en": " (with 1 or all key/value heads both orders coincide)",
                   "ja": "（キー/バリューヘッドが 1 つまたは全部なら 2 つの順序は一致）",
                   "ko": "(키/값 헤드가 1개이거나 전부이면 두 순서가 같음)"},
}
LIVE_N = ["128", "256", "512", "1024"]
LIVE_HEADS, LIVE_D, LIVE_BUDGET_S = 4, 64, 1.0
PRESET_KEYS = [*kvc.PRESETS, "custom"]
DTYPES = list(kvc.DTYPE_BYTES)
MIB = 1024 ** 2


def number(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def shape_label(r: dict) -> str:
    return sb.AttentionShape(r["batch"], r["heads"], r["seq_len"], r["head_dim"], r["causal"], r["dtype"]).label()


def short_labels(rows: list[dict]) -> dict[str, str]:
    """Full shape label -> only the parts that differ between these rows (readable bar-chart categories)."""
    fields = [("batch", "B={}"), ("heads", "H={}"), ("seq_len", "n={}"), ("head_dim", "d={}"), ("dtype", "{}")]
    varying = [(f, fmt) for f, fmt in fields if len({r[f] for r in rows}) > 1]
    out = {}
    for r in rows:
        parts = [fmt.format(r[f]) for f, fmt in varying] + (["causal"] if r["causal"] else [])
        out[shape_label(r)] = " ".join(parts) or f"n={r['seq_len']}"
    return out


def backend_rows_view(T, rows: list[dict], name: str, key: str) -> None:
    """Table, time and memory bars, and the sentence comparing the best backend to the naive version."""
    ok = [r for r in rows if r["status"] == "ok"]
    st.dataframe({
        T("col_shape"): [shape_label(r) for r in rows],
        T("col_backend"): [r["backend"] for r in rows],
        T("col_status"): [r["status"] for r in rows],
        T("col_ms"): [number(r["ms"], ",.2f") for r in rows],
        T("col_tflops"): [number(r["tflops"], ".4f") for r in rows],
        T("col_peak"): [human_bytes(r["peak_bytes"]) if r["status"] == "ok" else "–" for r in rows],
        T("col_diff"): [number(r["max_abs_diff_vs_naive"], ".1e") for r in rows],
    }, hide_index=True)
    if not ok:
        return
    shapes = list(dict.fromkeys(shape_label(r) for r in ok))
    names = list(dict.fromkeys(r["backend"] for r in ok))
    cell = {(shape_label(r), r["backend"]): r for r in ok}
    short = short_labels(ok)
    categories = [short[s] for s in shapes]

    def values(field, scale=1.0):
        return {b: [None if (s, b) not in cell or cell[(s, b)][field] is None else cell[(s, b)][field] / scale
                    for s in shapes] for b in names}
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(grouped_bars(categories, values("ms"), title=T("ms_title"), y_title=T("ms_axis"), log_y=True),
                       f"{name}-ms", data={"shape": shapes, **values("ms")}, key=f"{key}-ms")
    with c2:
        # a log axis has no place for 0 B (a kernel that reused freed memory): no bar there, the table says 0 B
        mem = {b: [v if v else None for v in vs] for b, vs in values("peak_bytes", MIB).items()}
        ui.show_figure(grouped_bars(categories, mem, title=T("mem_title"), y_title=T("mem_axis"), log_y=True),
                       f"{name}-memory", data={"shape": shapes, **values("peak_bytes")}, key=f"{key}-mem")
    biggest = max(ok, key=lambda r: r["flops"])
    same = [r for r in ok if shape_label(r) == shape_label(biggest)]
    naive = next((r for r in same if r["backend"] == sb.NAIVE), None)
    fused = [r for r in same if r["backend"] != sb.NAIVE]
    diffs = [r["max_abs_diff_vs_naive"] for r in ok if r["max_abs_diff_vs_naive"] is not None]
    if naive and fused and diffs:
        best = min(fused, key=lambda r: r["ms"])
        st.markdown(T("backends_result", shape=shape_label(biggest), best=best["backend"], best_ms=best["ms"],
                      naive_ms=naive["ms"], speedup=naive["ms"] / best["ms"],
                      naive_mem=human_bytes(naive["peak_bytes"]),
                      best_mem=human_bytes(best["peak_bytes"]), diff=max(diffs)))


def availability_view(T, avail: list[dict]) -> None:
    st.markdown(f"*{T('availability')}*")
    st.dataframe({T("col_backend"): [a["backend"] for a in avail],
                  T("col_available"): [T("yes") if a["available"] else T("no") for a in avail],
                  T("col_reason"): [a["reason"] or "" for a in avail]}, hide_index=True)


def backends(T) -> None:
    st.subheader(T("h_backends"))
    st.markdown(T("backends"))
    results = sb.load_results()
    if results is None:
        st.info(T("no_results"))
    for device, run in (results or {}).items():
        st.markdown(f"**{T('committed', device=device)}**")
        if isinstance(run, str):
            st.info(T("not_measured", device=device, why=run))
            continue
        availability_view(T, run.get("availability", []))
        backend_rows_view(T, run["rows"], f"sdpa-{device}-committed", f"fig-sdpa-{device}")
        how = next((r["memory_method"] for r in run["rows"] if r.get("memory_method")), "?")
        st.caption(T("meta", command=run["command"], date=run.get("date", "?"), device_name=run.get("device_name", "?"),
                     torch=run.get("torch", "?"), threads=run.get("torch_threads", "?"),
                     load_before=run.get("loadavg_1min_before", "?"), load_after=run.get("loadavg_1min_after", "?"),
                     cpus=run.get("cpu_count", "?"), how=how))
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", heads=LIVE_HEADS, d=LIVE_D, budget=LIVE_BUDGET_S))
        c1, c2 = st.columns(2)
        with c1:
            n = int(ui.select("sd_n", T("sd_n"), LIVE_N, "256"))
        with c2:
            causal = ui.checkbox("sd_causal", T("sd_causal"))
        if st.button(T("run"), key="run-sdpa"):
            bar = st.progress(0.0)
            shape = sb.AttentionShape(1, LIVE_HEADS, n, LIVE_D, causal=causal)
            rows = sb.benchmark([shape], "cpu", reps=3, budget_s=LIVE_BUDGET_S,
                                progress=lambda f, label: bar.progress(min(1.0, f), text=T("running", label=label)))
            bar.empty()
            st.session_state["_sdpa_live"] = {"rows": rows, "availability": sb.availability("cpu")}
        live = st.session_state.get("_sdpa_live")
        if live:
            availability_view(T, live["availability"])
            backend_rows_view(T, live["rows"], "sdpa-cpu-live", "fig-sdpa-live")
            info = machine_info("cpu")
            st.caption(T("live_meta", device_name=info["device_name"], torch=info["torch"],
                         threads=info["torch_threads"], load=info["loadavg_1min"]))


# --- GQA ----------------------------------------------------------------------------------------------------------

def model_config(T) -> kvc.ModelConfig | None:
    key = ui.select("cfg", T("cfg"), PRESET_KEYS, "llama-3-8b",
                    format_func=lambda k: T("custom") if k == "custom" else kvc.PRESETS[k].name)
    if key != "custom":
        cfg = kvc.PRESETS[key]
        st.caption(T("config", name=cfg.name, layers=cfg.layers, heads=cfg.heads, kv=cfg.kv_heads, group=cfg.group_size,
                     hd=cfg.head_dim, maxc=cfg.max_context, source=cfg.source))
        return cfg
    c = st.columns(4)
    with c[0]:
        layers = ui.number("layers", T("layers"), 1, 512, 32)
    with c[1]:
        heads = ui.number("heads", T("heads"), 1, 256, 32)
    with c[2]:
        kv = ui.number("kv", T("kv"), 1, 256, 8)
    with c[3]:
        hd = ui.number("hd", T("hd"), 1, 1024, 128)
    if kv > heads or heads % kv:
        st.error(T("bad_heads", h=heads, kv=kv))
        return None
    return kvc.ModelConfig(T("custom"), layers, heads, kv, hd, max_context=0, dtype="bfloat16", source="")


def gqa(T) -> None:
    st.subheader(T("h_gqa"))
    st.markdown(T("gqa"))
    cfg = model_config(T)
    c1, c2, c3 = st.columns(3)
    with c1:
        ctx = ui.number("ctx", T("ctx"), 1, 10_000_000, 8192)
    with c2:
        batch = ui.number("batch", T("batch"), 1, 4096, 1)
    with c3:
        dtype = ui.select("dtype", T("dtype"), DTYPES, "bfloat16")
    if cfg is None:
        return
    nbytes = kvc.DTYPE_BYTES[dtype]
    total = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, ctx, nbytes, batch)
    per_token = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, nbytes, 1)
    st.markdown(T("formula", layers=cfg.layers, kv=cfg.kv_heads, hd=cfg.head_dim, ctx=ctx, bytes=nbytes, batch=batch,
                  total=total, human=human_bytes(total), per_token=human_bytes(per_token)))
    if cfg.sliding_window is not None:
        pos = kvc.cached_positions(ctx, cfg.sliding_window)
        windowed = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, pos, nbytes, batch)
        st.markdown(T("window", w=cfg.sliding_window, pos=pos, human=human_bytes(windowed)))
    rows = kvc.attention_variants(cfg.layers, cfg.heads, cfg.kv_heads, cfg.head_dim, ctx, nbytes, batch)
    labels = [r["variant"] + (T("this_model") if r["configured"] else "") for r in rows]
    st.dataframe({T("col_variant"): labels, T("col_kv"): [r["kv_heads"] for r in rows],
                  T("col_cache"): [human_bytes(r["bytes"]) for r in rows],
                  T("col_per_token"): [human_bytes(r["bytes_per_token"]) for r in rows],
                  T("col_saving"): [f"{r['saving_vs_mha']:,.1f}×" for r in rows]}, hide_index=True)
    gib = [r["bytes"] / 1024 ** 3 for r in rows]
    fig = grouped_bars(labels, {T("col_cache"): gib}, title=T("cache_title"), y_title=T("gib"), height=360)
    ui.show_figure(fig, f"kv-cache-{cfg.name}-{ctx}", data={"variant": [r["variant"] for r in rows],
                                                           "kv_heads": [r["kv_heads"] for r in rows],
                                                           "bytes": [r["bytes"] for r in rows]}, key="fig-kv")
    chk = sb.gqa_check(cfg.heads, cfg.kv_heads)
    st.markdown(T("check", heads=cfg.heads, kv=cfg.kv_heads, group=cfg.group_size, same=chk["max_abs_diff_repeated"],
                  wrong=chk["max_abs_diff_wrong_order"],
                  wrong_note=T("wrong_same") if cfg.kv_heads in (1, cfg.heads) else ""))


T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
backends(T)
gqa(T)
ui.page_end()
