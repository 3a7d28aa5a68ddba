"""The pages of the app, in navigation order, with what each teaches (shown on the landing page).

Only built pages are listed. To add a page: write app/views/<file>.py and add one entry here.
"""

SECTIONS = {
    "start": {"en": "Start", "ja": "はじめに", "ko": "시작"},
    "basics": {"en": "Attention basics", "ja": "注意機構の基本", "ko": "어텐션 기초"},
    "models": {"en": "Real models", "ja": "実際のモデル", "ko": "실제 모델"},
    "position": {"en": "Position", "ja": "位置", "ko": "위치"},
    "moe": {"en": "Mixture of Experts", "ja": "Mixture of Experts", "ko": "Mixture of Experts"},
    "scale": {"en": "Speed and scale", "ja": "速度と規模", "ko": "속도와 규모"},
}

PAGES = [
    {
        "file": "home.py", "url": "home", "section": "start", "icon": ":material/home:",
        "title": {"en": "What each page teaches", "ja": "各ページで学べること", "ko": "각 페이지에서 배우는 것"},
        "teaches": {"en": "This overview.", "ja": "この概要。", "ko": "이 개요."},
    },
    {
        "file": "sdpa_steps.py", "url": "sdpa-steps", "section": "basics", "icon": ":material/calculate:",
        "title": {"en": "Scaled dot-product attention, step by step", "ja": "スケール化ドット積注意をステップごとに",
                  "ko": "스케일드 닷프로덕트 어텐션, 단계별로"},
        "teaches": {
            "en": "softmax(QKᵀ/√d_k)·V on matrices you edit: the scores, the scaling, the softmax and the weighted "
                  "sum of V, checked against PyTorch's SDPA; and why √d_k (softmax saturation as d_k grows).",
            "ja": "自分で編集する行列で softmax(QKᵀ/√d_k)·V: スコア、スケーリング、ソフトマックス、V の重み付き和を"
                  "PyTorch の SDPA と照合。そしてなぜ √d_k なのか（d_k が大きくなるとソフトマックスが飽和する）。",
            "ko": "직접 편집하는 행렬로 softmax(QKᵀ/√d_k)·V: 점수, 스케일링, 소프트맥스, V의 가중합을 PyTorch의 SDPA와 "
                  "비교. 그리고 왜 √d_k인지(d_k가 커지면 소프트맥스가 포화됨).",
        },
    },
    {
        "file": "masks.py", "url": "masks", "section": "basics", "icon": ":material/filter_alt:",
        "title": {"en": "Masks and the three kinds of attention", "ja": "マスクと 3 種類の注意",
                  "ko": "마스크와 세 가지 어텐션"},
        "teaches": {
            "en": "Padding and look-ahead masks on a batch of your sentences: scores before masking, the mask, the "
                  "weights after; then encoder self-attention, masked decoder self-attention and encoder-decoder "
                  "cross-attention with their shapes.",
            "ja": "自分の文のバッチでパディングマスクと先読み防止マスク: マスク前のスコア、マスク、マスク後の重み。"
                  "さらにエンコーダの自己注意、マスク付きデコーダの自己注意、エンコーダ・デコーダ間のクロス注意とその形状。",
            "ko": "직접 쓴 문장 배치에서 패딩 마스크와 미리보기 방지 마스크: 마스킹 전 점수, 마스크, 마스킹 후 가중치. "
                  "이어서 인코더 셀프 어텐션, 마스크된 디코더 셀프 어텐션, 인코더-디코더 크로스 어텐션과 그 형태.",
        },
    },
    {
        "file": "attention_views.py", "url": "attention", "section": "models", "icon": ":material/grid_view:",
        "title": {"en": "Inside a pretrained model", "ja": "事前学習モデルの中", "ko": "사전학습 모델의 내부"},
        "teaches": {
            "en": "Every head of MiniLM or SmolLM2 on your text: all heads at once, one head large, one token across "
                  "heads, mean over heads, attention rollout and per-head entropy.",
            "ja": "あなたの文に対する MiniLM や SmolLM2 の全ヘッド: 全ヘッドの一覧、1 ヘッドの拡大、1 トークンの全ヘッドでの重み、"
                  "ヘッド平均、アテンション・ロールアウト、ヘッドごとのエントロピー。",
            "ko": "입력한 문장에 대한 MiniLM 또는 SmolLM2의 모든 헤드: 전체 헤드 한눈에, 헤드 하나 크게, 토큰 하나의 헤드별 "
                  "가중치, 헤드 평균, 어텐션 롤아웃, 헤드별 엔트로피.",
        },
    },
    {
        "file": "padded_batch.py", "url": "padded-batch", "section": "models", "icon": ":material/view_agenda:",
        "title": {"en": "Padded batches", "ja": "パディングされたバッチ", "ko": "패딩된 배치"},
        "teaches": {
            "en": "Several sentences through the real tokenizer at once: the attention mask, padded keys with exactly "
                  "zero weight, and the check that each sentence's attention equals its run alone.",
            "ja": "複数の文を実際のトークナイザでまとめて処理: アテンションマスク、重みがちょうど 0 のパディングキー、"
                  "各文の注意が単独で実行したときと等しいことの確認。",
            "ko": "여러 문장을 실제 토크나이저로 한 번에 처리: 어텐션 마스크, 가중치가 정확히 0인 패딩 키, 각 문장의 "
                  "어텐션이 단독 실행과 같다는 확인.",
        },
    },
    {
        "file": "antecedents.py", "url": "antecedents", "section": "models", "icon": ":material/link:",
        "title": {"en": "Antecedent heads (it → cat?)", "ja": "先行詞ヘッド（it → cat?）", "ko": "선행사 헤드(it → cat?)"},
        "teaches": {
            "en": "Which heads point a pronoun at a noun, and a held-out test on minimal pairs of whether any head "
                  "(or SmolLM2's own answer) resolves the pronoun or just follows the first-mentioned noun.",
            "ja": "代名詞を名詞に向けるヘッドはどれか。最小対の保留データで、ヘッド（や SmolLM2 自身の答え）が代名詞を"
                  "解決しているのか、単に最初に出た名詞を追っているだけなのかを検証。",
            "ko": "대명사를 명사로 향하게 하는 헤드는 무엇인지, 그리고 최소쌍 보류 데이터로 어떤 헤드(또는 SmolLM2 자신의 "
                  "답)가 대명사를 해결하는지, 아니면 먼저 나온 명사를 따라갈 뿐인지 검증.",
        },
    },
    {
        "file": "positions.py", "url": "positions", "section": "position", "icon": ":material/pin_drop:",
        "title": {"en": "Position encodings", "ja": "位置エンコーディング", "ko": "위치 인코딩"},
        "teaches": {
            "en": "Sinusoidal (why sine and cosine, which dimensions carry position), MiniLM's learned position "
                  "vectors, Shaw's relative scores with clipping, ALiBi's slopes and biases, and RoPE: the rotation, "
                  "its distance-only scores, the two layouts, and SmolLM2's real rotated q and k by frequency band.",
            "ja": "正弦波（なぜ sin と cos か、どの次元が位置を運ぶか）、MiniLM の学習済み位置ベクトル、Shaw のクリップ付き"
                  "相対スコア、ALiBi の傾きとバイアス、そして RoPE: 回転、距離だけで決まるスコア、2 つのレイアウト、"
                  "SmolLM2 の実際に回転された q と k の周波数帯ごとの寄与。",
            "ko": "사인파(왜 사인과 코사인인지, 어떤 차원이 위치를 나르는지), MiniLM의 학습된 위치 벡터, Shaw의 클리핑된 "
                  "상대 점수, ALiBi의 기울기와 바이어스, 그리고 RoPE: 회전, 거리만으로 정해지는 점수, 두 레이아웃, "
                  "SmolLM2의 실제 회전된 q와 k의 주파수 대역별 기여.",
        },
    },
    {
        "file": "rope_scaling.py", "url": "rope-scaling", "section": "position", "icon": ":material/open_in_full:",
        "title": {"en": "Scaled RoPE: longer contexts", "ja": "スケーリングした RoPE: より長い文脈",
                  "ko": "스케일링한 RoPE: 더 긴 문맥"},
        "teaches": {
            "en": "Linear, dynamic NTK, YaRN, LongRoPE and llama3 scaling from transformers' own code: which "
                  "frequencies each interpolates, the q·k decay up to 131,072 positions, the resolution cost, and "
                  "SmolLM2's measured loss past its 8,192-token training context.",
            "ja": "transformers 自身のコードによる linear・dynamic NTK・YaRN・LongRoPE・llama3 スケーリング: どの周波数を"
                  "補間するか、131,072 位置までの q·k の減衰、分解能の代償、学習文脈 8,192 トークンを超えた SmolLM2 の"
                  "実測損失。",
            "ko": "transformers 자체 코드로 본 linear, dynamic NTK, YaRN, LongRoPE, llama3 스케일링: 각각 어떤 주파수를 "
                  "보간하는지, 131,072개 위치까지의 q·k 감쇠, 해상도 비용, 8,192 토큰 학습 문맥을 넘어선 SmolLM2의 "
                  "실측 손실.",
        },
    },
    {
        "file": "moe.py", "url": "moe", "section": "moe", "icon": ":material/call_split:",
        "title": {"en": "Mixture-of-Experts routing", "ja": "Mixture-of-Experts のルーティング",
                  "ko": "Mixture-of-Experts 라우팅"},
        "teaches": {
            "en": "Where each token of your text goes in this project's own small Mixtral: router probabilities and "
                  "top-k choices per layer, expert load, router entropy, tokens dropped by a capacity factor, the "
                  "balance loss, what each expert specialises in, a balanced vs a collapsed checkpoint, and the "
                  "sizes of real MoE models.",
            "ja": "このプロジェクト独自の小さな Mixtral で、あなたの文の各トークンがどこへ行くか: 層ごとのルーター確率と "
                  "top-k の選択、エキスパートの負荷、ルーターのエントロピー、容量係数で落とされるトークン、負荷分散損失、"
                  "各エキスパートの専門、均衡したチェックポイントと崩壊したチェックポイントの比較、実際の MoE モデルの規模。",
            "ko": "이 프로젝트가 직접 학습한 작은 Mixtral에서 입력 문장의 각 토큰이 어디로 가는지: 층별 라우터 확률과 "
                  "top-k 선택, 전문가 부하, 라우터 엔트로피, 용량 계수로 버려지는 토큰, 부하 분산 손실, 각 전문가의 "
                  "전문 분야, 균형 잡힌 체크포인트와 붕괴한 체크포인트 비교, 실제 MoE 모델의 규모.",
        },
    },
    {
        "file": "linear_attention.py", "url": "linear-attention", "section": "scale",
        "icon": ":material/trending_flat:",
        "title": {"en": "Linear attention: from n² to n", "ja": "線形注意: n² から n へ", "ko": "선형 어텐션: n²에서 n으로"},
        "teaches": {
            "en": "The associativity trick (which product first and what it costs), the attention matrix linear "
                  "attention implies next to softmax's on the same Q and K, a log-log timing to n = 16k with fitted "
                  "slopes, and generation speed of the RNN form against softmax with and without a KV cache.",
            "ja": "結合法則の工夫（どの積を先に計算し、いくらかかるか）、同じ Q と K でソフトマックスと並べた線形注意の"
                  "暗黙の注意行列、n = 16k までの両対数の実測時間と当てはめた傾き、そして RNN 形式と KV キャッシュあり・"
                  "なしのソフトマックスの生成速度。",
            "ko": "결합 법칙 트릭(어느 곱을 먼저 계산하고 비용이 얼마인지), 같은 Q와 K에서 소프트맥스와 나란히 본 선형 "
                  "어텐션의 암묵적 어텐션 행렬, n = 16k까지의 로그-로그 실측 시간과 맞춘 기울기, 그리고 RNN 형식과 KV "
                  "캐시 유무에 따른 소프트맥스의 생성 속도.",
        },
    },
    {
        "file": "sdpa_gqa.py", "url": "sdpa-gqa", "section": "scale", "icon": ":material/memory:",
        "title": {"en": "SDPA backends and GQA memory", "ja": "SDPA のバックエンドと GQA のメモリ",
                  "ko": "SDPA 백엔드와 GQA 메모리"},
        "teaches": {
            "en": "PyTorch's flash, memory-efficient, cuDNN and math kernels against a naive matmul-softmax-matmul "
                  "(time, TFLOP/s, peak memory, which run where and why), and a KV-cache calculator for MHA, GQA "
                  "and MQA with SmolLM2, Llama-3-8B and Mistral-7B.",
            "ja": "PyTorch の flash・memory-efficient・cuDNN・math カーネルと素朴な matmul-softmax-matmul の比較（時間、"
                  "TFLOP/s、ピークメモリ、どこで動きなぜ動かないか）、そして SmolLM2・Llama-3-8B・Mistral-7B による MHA・"
                  "GQA・MQA の KV キャッシュ計算機。",
            "ko": "PyTorch의 flash, memory-efficient, cuDNN, math 커널과 단순한 matmul-softmax-matmul 비교(시간, "
                  "TFLOP/s, 최대 메모리, 어디서 실행되고 왜 안 되는지), 그리고 SmolLM2, Llama-3-8B, Mistral-7B로 보는 "
                  "MHA, GQA, MQA의 KV 캐시 계산기.",
        },
    },
    {
        "file": "long_maps.py", "url": "long-maps", "section": "scale", "icon": ":material/zoom_in:",
        "title": {"en": "Attention maps of a long document", "ja": "長い文書の注意マップ",
                  "ko": "긴 문서의 어텐션 맵"},
        "teaches": {
            "en": "SmolLM2's exact attention over thousands of tokens, every head of a layer pooled to mean and max "
                  "cells without ever holding n × n: which heads sink into the first tokens and which stay local, "
                  "and a zoom into any window at full resolution (with a RANDOM demo when the weights are missing).",
            "ja": "数千トークンにわたる SmolLM2 の正確な注意。n × n を一度も保持せずに、層の全ヘッドを平均と最大の"
                  "セルにプーリング: どのヘッドが先頭のトークンに集まり、どのヘッドが近くにとどまるか。任意の窓を完全な"
                  "解像度でズーム（重みがないときはランダムなデモ）。",
            "ko": "수천 개 토큰에 걸친 SmolLM2의 정확한 어텐션. n × n을 한 번도 보관하지 않고 층의 모든 헤드를 평균과 "
                  "최대 셀로 풀링: 어떤 헤드가 처음 토큰에 몰리고 어떤 헤드가 가까이 머무는지, 그리고 원하는 창을 "
                  "완전한 해상도로 확대(가중치가 없으면 무작위 데모).",
        },
    },
]
