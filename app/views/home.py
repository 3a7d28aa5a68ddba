"""Landing page: what Attention Lab is and what each page teaches."""
import streamlit as st

from app import catalog, ui

TEXT = {
    "title": {"en": "Attention Lab", "ja": "Attention Lab", "ko": "Attention Lab"},
    "intro": {
        "en": "Paste your own sentences and look inside transformer attention: real pretrained models, masks on "
              "padded batches, position encodings, Mixture-of-Experts routing and the cost of attention at scale. "
              "Every number on these pages is computed from your input by the `core` engine and checked by tests "
              "against an independent reference.",
        "ja": "自分の文章を貼り付けて、Transformer の注意機構の中を見てみましょう。実際の事前学習モデル、パディングされた"
              "バッチのマスク、位置エンコーディング、Mixture-of-Experts のルーティング、大規模な注意の計算コストを扱います。"
              "ページ上の数値はすべて `core` エンジンが入力から計算し、独立した基準とテストで照合しています。",
        "ko": "직접 쓴 문장을 붙여 넣고 트랜스포머 어텐션의 내부를 살펴보세요. 실제 사전학습 모델, 패딩된 배치의 마스크, "
              "위치 인코딩, Mixture-of-Experts 라우팅, 대규모 어텐션의 비용을 다룹니다. 이 페이지의 모든 숫자는 `core` "
              "엔진이 입력으로부터 계산하며, 독립적인 기준과 테스트로 검증됩니다.",
    },
    "pages": {"en": "Pages", "ja": "ページ", "ko": "페이지"},
}

T = ui.page_setup(TEXT)
st.title(T("title"))
st.markdown(T("intro"))
st.subheader(T("pages"))
for page in catalog.PAGES[1:]:
    st.page_link(f"views/{page['file']}", label=ui.tr(page, "title"), icon=page["icon"])
    st.caption(ui.tr(page, "teaches"))
ui.page_end()
