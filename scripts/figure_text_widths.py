"""How wide plotly draws figure text in the app, in headless chromium, against viz.labels' width guess.

A figure's words are drawn in SVG by plotly in the font stack Streamlit's theme gives every figure; viz.labels cuts
titles to a figure's width by a guess (a Latin character COLUMN_EM of the type's size, a kana or kanji WIDE_EM, a Hangul syllable
HANGUL_EM). This
opens a page of the app, reads the font of a drawn axis title, and measures in that figure's own SVG (same font
family, the sizes the figures use: tick labels 12 px, axis titles 14, panel titles 16) single characters of each
script and every short string of the catalogs (en: Latin, ja: kana/kanji with some Latin, ko: Hangul with some
Latin). Per language: the drawn width in em per character of each Latin string and of each string's wide characters
(drawn alone), and the ratio of drawn to guessed width (viz.labels.label_columns, and two columns a wide character
as before) (over 1: the guess too narrow, the title may run past its panel; under 1: it wraps early).

    python scripts/figure_text_widths.py        # -> results/figure_text_widths.json
"""

from __future__ import annotations

import html
import json
import re
import statistics
import sys
import unicodedata
from datetime import UTC, datetime
from urllib.parse import urlencode

from app import i18n
from core.results import save_result
from scripts.a11y_axe_all import served_chromium
from scripts.load_test import loadavg
from tests.test_browser import PAGE_RUN_MS, wait_for_run
from viz import labels

SIZES = (labels.FONT_PX, labels.AXIS_TITLE_PX, labels.PANEL_TITLE_PX)
SAMPLES = {  # single characters, each script's
    "latin lower": "abcdefghijklmnopqrstuvwxyz",
    "latin upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "digits": "0123456789",
    "kana": "あいうえおかきくけこさしすせそアイウエオカキクケコトークン",
    "kanji": "注意行列頭層鍵値位置確率",
    "full-width": "０１２ＱＫＶ",
    "hangul": "어텐션헤드레이어쿼리키값위치확률",
    "ja punctuation": "、。（）「」：・",
}
MAX_CHARS = 60  # a figure's words: titles, axis titles, legend entries (longer catalog strings are page prose)
# In the figure's SVG, as plotly sets its own text: widths of each string at each size, in px
MEASURE = r"""([strings, sizes]) => {
  const root = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
  const drawn = root.querySelector('.infolayer g[class$="title"] > text') || root.querySelector('.xtick text');
  const svg = root.querySelector('svg.main-svg');
  const family = getComputedStyle(drawn).fontFamily;
  const probe = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  probe.setAttribute('x', 0); probe.setAttribute('y', 100);
  probe.style.fontFamily = family; probe.style.whiteSpace = 'pre';
  svg.appendChild(probe);
  const widths = strings.map(s => sizes.map(size => {
    probe.style.fontSize = size + 'px'; probe.textContent = s; return probe.getComputedTextLength(); }));
  probe.remove();
  return {family, widths};
}"""


def narrow_and_wide(text: str) -> tuple[int, int]:
    wide = sum(unicodedata.east_asian_width(c) in ("W", "F") for c in text)
    return len(text) - wide, wide


def catalog_strings(lang: str) -> list[str]:
    """The catalog's short strings as a figure shows them: format fields filled with a number, no page markup."""
    out = []
    for value in (f for v in i18n.flat(i18n.catalog(lang)).values() for f in i18n.forms(v)):
        s = re.sub(r"\{[^}]*\}", "12", str(value))
        if 2 <= len(s) <= MAX_CHARS and not re.search(r"[*`\[\]<>\n$\\]", s):
            out.append(s)
    return sorted(set(out))


def quantiles(values: list[float]) -> dict:
    values = sorted(values)
    return {
        "n": len(values),
        "median": round(statistics.median(values), 3),
        "p90": round(values[int(0.9 * (len(values) - 1))], 3),
        "max": round(values[-1], 3),
    }


def main() -> None:
    started, load_before = datetime.now(UTC).isoformat(timespec="seconds"), loadavg()
    strings = {lang: catalog_strings(lang) for lang in i18n.languages()}
    with served_chromium() as (base, browser):
        page = browser.new_page(viewport={"width": 1366, "height": 900}, device_scale_factor=1)
        page.goto(f"{base}/masks?{urlencode({'lang': 'ja'})}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot .xtick text', timeout=PAGE_RUN_MS)
        wait_for_run(page)
        samples = page.evaluate(MEASURE, [list(SAMPLES.values()), list(SIZES)])
        measured = {lang: page.evaluate(MEASURE, [texts, list(SIZES)]) for lang, texts in strings.items()}
        wide_only = {  # each string's wide characters alone: their width apart from the Latin and spaces among them
            lang: page.evaluate(MEASURE, [["".join(c for c in t if narrow_and_wide(c)[1]) for t in texts], list(SIZES)])
            for lang, texts in strings.items()
        }
    per_char = {
        name: {str(size): round(w / (len(text) * size), 3) for size, w in zip(SIZES, widths, strict=True)}
        for (name, text), widths in zip(SAMPLES.items(), samples["widths"], strict=True)
    }
    per_lang = {}
    for lang, texts in strings.items():
        latin_em, wide_em, ratio, ratio_before = [], [], [], []
        for text, widths, wide_widths in zip(texts, measured[lang]["widths"], wide_only[lang]["widths"], strict=True):
            narrow, wide = narrow_and_wide(text)
            for size, w, ww in zip(SIZES, widths, wide_widths, strict=True):
                ratio.append(w / (labels.label_columns(html.escape(text)) * labels.COLUMN_EM * size))
                ratio_before.append(w / ((narrow + 2 * wide) * labels.COLUMN_EM * size))  # two columns a wide one
                if wide:
                    wide_em.append(ww / (wide * size))
                else:
                    latin_em.append(w / (narrow * size))
        per_lang[lang] = {
            "strings": len(texts),
            "drawn_over_guessed": quantiles(ratio),
            "drawn_over_guessed_at_two_columns_a_wide_character": quantiles(ratio_before),
            **({"em_per_latin_character": quantiles(latin_em)} if latin_em else {}),
            **({"em_per_wide_character": quantiles(wide_em)} if wide_em else {}),
        }
    result = {
        "command": "python " + " ".join(["scripts/figure_text_widths.py", *sys.argv[1:]]),
        "date": started,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "browser": "headless chromium (playwright), the app served by streamlit run, page /masks?lang=ja, 1366 px",
        "font_family": samples["family"],
        "sizes_px": list(SIZES),
        "guess": {"COLUMN_EM": labels.COLUMN_EM, "WIDE_EM": labels.WIDE_EM, "HANGUL_EM": labels.HANGUL_EM},
        "em_per_character": per_char,
        "catalog_strings": per_lang,
    }
    save_result("figure_text_widths", result)
    print(json.dumps(result, indent=1, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
