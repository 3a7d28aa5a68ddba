"""The pages of the app, in navigation order, with what each teaches (shown on the landing page).

Only built pages are listed. To add a page: write app/pages/<file>.py and add one entry here.
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
]
