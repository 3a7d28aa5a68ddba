"""Every declared state of every page shows what its default shows: no exception, figure titles that fit a phone, a
caption under each figure, and no English that did not come from the catalog. The other page tests open a page at
its defaults; a visitor reaches the rest by a widget or a link (?part=alignment, ?view=aggregate, ?smol=1), where
/encoder-decoder's alignment bars ran off a phone unseen.

A state is one discrete setting changed from where it is shown: each option of a choice whose options are declared
(core/state.py Choice), each flag flipped, one at a time, never the product. A setting shown only in another state
(/positions' `layout` in its rope part, `bands` once SmolLM2's bands are on) is changed from the first state that
shows it, found as the page writes it into its link; a choice whose options come from the run (a row, a tile, a
token) takes them from that state. Numbers are opened at their two ends (_sizes_at_their_ends). Model pickers are
left to the tests of models on pages (tests/pages/test_models_on_pages.py). A state that runs a model for seconds
is opened on a short text (CHEAPER); a few that cost seconds each are left to their page's tests (COSTLY).

Each state is opened once, in one language made of all three (`pseudo_widest`): each catalog string is the widest
of its English, Japanese and Korean words (as tests/pages/test_app_pages.py's titles check), and an English one is
drawn in look-alike accented letters of the same width. A title that fits there fits in each language; a format
error in any language raises; and a plain ASCII word on the page that no Japanese or Korean string of this run, no
text in a text box and no name of a model or unit explains came from somewhere else than the catalog: English on the
Japanese and Korean pages (an engine's sentence, a builder's own word, an identifier)."""

from __future__ import annotations

import functools
import json
import re

import pytest

from app import i18n, shared, ui
from core.lessons.answers import PAGE_STATES
from core.state import Choice, Flag, Unknown
from tests.apptest_helpers import run_view
from tests.pages.test_page_states import MODEL_PAGES
from tests.phone_figures import placed_in_the_way_on_a_phone, titles_too_wide_for_a_phone
from viz.labels import label_columns

MODEL_FREE = True  # its tests not marked slow load no model (tests/conftest.py checks it)
PSEUDO = "widest"
LOOK_ALIKE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áƀçđéƒĝĥíĵķĺṁñóṗʠŕśţúṽŵẋýźÁḂÇĎÉḞĜĤÍĴĶĹṀÑÓṖǪŔŚŢÚṼŴẊÝŹ",
)  # one column each, as an ASCII letter (core.pooling.char_columns): the same lines, the same widths
# Kept as written: markup, entities, plotly's %{...}, Streamlit's icons, formulas, addresses, one-letter symbols
# (a number format's '.3g', a variable's 'n')
KEPT = re.compile(
    r"<[^>]*>|&#?\w+;|%\{[^}]*\}|:material/\w+:|\$[^$]*\$|\\[A-Za-z]+|https?://\S+|\]\([^)]*\)|(?<![A-Za-z])[A-Za-z](?![A-Za-z])"
)
WORD = re.compile(r"[A-Za-z]{3,}")
# a file, a command's option, an identifier as a provenance line quotes them (results/x.json, --max-n, num_heads)
PATHS = re.compile(r"\S*[/_\\]\S*|--?[a-z][\w-]*|\S+\.(?:py|json|txt|csv|toml|md)\b|\bpython\b")
# Not words of a language: units, number types, tokenizers' special tokens, names of models, papers and libraries
NAMES = {
    "CLS", "SEP", "PAD", "MASK", "UNK", "BOS", "EOS", "endoftext", "ms", "GiB", "MiB", "KiB", "TFLOP", "GFLOP",
    "float", "bfloat", "int", "fp", "SDPA", "RoPE", "ALiBi", "GQA", "MQA", "MHA", "KV", "YaRN", "NTK", "MoE", "CPU",
    "GPU", "CUDA", "PyTorch", "Transformer", "XL", "SmolLM", "MiniLM", "Llama", "Mistral", "BERT", "softmax", "RNN",
    "LSTM", "GRU", "CSV", "URL", "png", "svg", "llama", "mistral", "smollm", "custom", "AMD", "EPYC", "NVIDIA",
    "Intel", "Xeon", "Triton",
}  # fmt: skip


def _model_words() -> set[str]:
    """The English the shipped translation models read (their grammar's words): the pages list them as examples."""
    from core.encoder_decoder.view import example_sentences, vocabulary_groups

    return {w for line in [*example_sentences(), *sum(vocabulary_groups().values(), [])] for w in WORD.findall(line)}


def _model_names() -> set[str]:
    """Names in the shipped models' English titles (MiniLM, Instruct, Marian; a results file names its model so)."""
    return {w for title in i18n.section(i18n.REFERENCE, "model_titles").values() for w in WORD.findall(title)
            if not w.islower()}  # fmt: skip


NAMES |= _model_words() | _model_names()
# English still on a page, each to be put in the reader's words: {page: {word: where}}
KNOWN_ENGLISH: dict[str, dict[str, str]] = {}
# What a phone's check reads as in the way, left as it is, measured: {(page, the figure's key): what it reads}.
# /kv-cache's step map sets its legend under its colour bar, in a bottom margin sized for both at a fixed height
# (viz.kv_cache.step_figure), where viz.style.LEGEND_AT_FOOT's rule expects a plot that a phone shortens; /moe's
# layer-load maps set their colour bar's one-word title across its top, for their cells' room beside each other
# (32e5109, results/beside_layout_moe.json: no finding on a phone or at 1,100-1,366 px in en, ja, ko).
IN_THE_WAY_MEASURED = {
    ("kv-cache", "fig-step"): "legend at",
    ("moe", "balanced"): "colour bar titled",
    ("moe", "collapsed"): "colour bar titled",
    ("flash-attention", "fig-tiles"): "colour bar titled",
}
# Figures without a caption under them, each to get one: {(page, the figure's key)}
UNCAPTIONED: set[tuple[str, str]] = set()
# A state that runs a model for seconds, opened on less: {(page, key, value): the settings that make it cheap}
CHEAPER = {("transformer-xl", "live", "1"): {"text": "The cat sat on the mat. The cat sat.", "lseg": "4"}}  # 1 s, not 5
# and states left out for what they cost, each opened by its page's own tests: /ablation's live part runs SmolLM2's
# ablations (5 s on one head and one draw: tests/pages/test_ablation_page.py), /kv-cache's other heads rerun its
# generation's maps for one head's numbers (1.3 s each: tests/pages/test_kv_cache_page.py)
COSTLY = {("ablation", "part", "live"), ("kv-cache", "head", "0"), ("kv-cache", "head", "8")}


def _look_alike(text: str) -> str:
    kept = [(m.start(), m.end()) for m in KEPT.finditer(text)]
    out, at = [], 0
    for start, end in kept:
        out += [text[at:start].translate(LOOK_ALIKE), text[start:end]]
        at = end
    return "".join([*out, text[at:].translate(LOOK_ALIKE)])


def _template_look_alike(template: str) -> str:
    """A format string's literal text in look-alike letters, its fields as written."""
    from string import Formatter

    out, literal = [], ""
    for text, name, spec, conversion in Formatter().parse(template):
        literal += text  # an escaped brace splits a literal: '%{{x}}' reads as '%{' and 'x}'
        if name is not None:
            out.append(_look_alike(literal).replace("{", "{{").replace("}", "}}"))
            out.append("{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
            literal = ""
    return "".join([*out, _look_alike(literal).replace("{", "{{").replace("}", "}}")])


@pytest.fixture
def pseudo_widest(monkeypatch):
    """A link's `lang` for the language of all three; yields the set of ASCII words the Japanese and Korean strings
    drawn in this test hold (what may stay in Latin letters on their pages: RoPE, softmax, a model's name)."""
    text = i18n.text
    latin: set[str] = set()

    def widest(lang, path, key, /, **fmt):
        if lang != PSEUDO:
            return text(lang, path, key, **fmt)
        try:
            return _widest(path, key, tuple(sorted(fmt.items())))
        except TypeError:  # a value that does not hash
            return _widest.__wrapped__(path, key, tuple(sorted(fmt.items())))

    @functools.cache
    def _widest(path, key, fmt):
        fmt = dict(fmt)
        said = {code: text(code, path, key, **fmt) for code in i18n.languages()}
        code = max(said, key=lambda c: label_columns(said[c]))
        for other in said.keys() - {i18n.REFERENCE}:  # its own words, not what fills its fields (a word of core's)
            own = i18n.section(other, path).get(key) or ""
            latin.update(
                WORD.findall(" ".join(v for k, v in own.items() if k != "count") if isinstance(own, dict) else own)
            )
        if code != i18n.REFERENCE:
            return said[code]
        template = i18n.section(code, path)[key]
        if i18n.is_plural(template):  # a plural's form for this count, as i18n.text picks it
            template = i18n.plural(code, template, fmt)
        return _template_look_alike(template).format(**fmt) if fmt else _look_alike(template)

    monkeypatch.setattr(i18n, "text", widest)
    monkeypatch.setattr(ui, "LANGS", {**ui.LANGS, PSEUDO: PSEUDO})
    yield latin
    from app import catalog

    catalog._sections.cache_clear()  # the navigation, figures and tables kept for the pseudo language
    shared._figures.clear()
    shared._tables.clear()


# Model pickers: each option opens another model (tests/pages/test_models_on_pages.py opens them on their pages)
MODEL_PICKERS = {"model", "src", "pick"}


def discrete(page: str, written: dict[str, str] | None = None) -> dict[str, tuple]:
    """{key: its values as a link writes them} for each choice and each flag of the page. A choice whose options come
    from the run (a row of the batch, a tile, a token, a head) takes them from the state the page wrote (`written`,
    read by the page's declaration); one it cannot resolve there, and the model pickers, are left out."""
    found = {}
    for field in PAGE_STATES[page]:
        if isinstance(field, Flag):
            found[field.key] = ("0", "1")
        elif isinstance(field, Choice) and field.key not in MODEL_PICKERS:
            try:
                values = tuple(field.text(v) for v in field.options_in())
            except (Unknown, AttributeError, TypeError):
                if written is None:
                    continue
                try:
                    values = tuple(field.text(v) for v in field.options_in(PAGE_STATES[page].read(written)))
                except Exception:  # noqa: BLE001  (a context this reader cannot build: the page's tests have it)
                    continue
            found[field.key] = _sizes_at_their_ends(values)
    return found


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sizes_at_their_ends(values: tuple) -> tuple:
    """A choice's values, those that are numbers (n = 16 .. 131,072, a factor 2 .. 32, a row, a head) at their two
    ends: the widest number, the other side of a verdict; the numbers between change only numbers (each is a new
    computation: 0.15 s a state). Words ('mean', 'all') all."""
    numbers = sorted((v for v in values if _number(v)), key=float)
    ends = (numbers[0], numbers[-1]) if numbers else ()
    return tuple(dict.fromkeys(v for v in values if not _number(v) or v in ends))


def _strip(text: str, prose: bool) -> str:
    """Page text without what is not words: markup, code spans (a token, a name as typed), formulas, addresses; in
    prose also quoted text (“sat”, an example sentence) and files, options and identifiers a provenance line quotes
    (in a figure or a table's header an identifier is the page's own word left untranslated)."""
    text = re.sub(r"<[^>]*>|“[^”]*”", " ", str(text))
    text = re.sub(r"(`+)(.+?)\1", " ", text, flags=re.DOTALL)
    if prose:
        text = PATHS.sub(" ", text)
    return KEPT.sub(" ", text)


# Pages whose figures' categories are a model's predictions (/kv-cache's next tokens, /logit-lens' top tokens): any
# word of its vocabulary, not the page's; their figures are read for titles, legends and hover words only
PREDICTED_TOKENS = {"kv-cache", "logit-lens"}
DRAWN_DATA = {"x", "y", "text", "labels"}


def _figure_texts(spec: dict, data: bool = True) -> list[str]:
    """The words a sent figure draws: titles, axis and panel titles, tick texts, legend and hover words, and (`data`)
    its traces' categories and cell labels."""
    found = []

    def walk(node, read: bool = False):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("text", "name", "ticktext", "hovertemplate", "texttemplate", "x", "y", "labels"):
                    walk(v, True)
                elif isinstance(v, dict | list):
                    walk(v, read)
        elif isinstance(node, list):
            for v in node:
                walk(v, read)
        elif isinstance(node, str) and read:
            found.append(node)

    walk(spec.get("layout", {}))
    for trace in spec.get("data", ()):
        in_legend = trace.get("showlegend", trace.get("type", "scatter") not in ("heatmap", "contour"))
        in_hover = trace.get("hoverinfo") not in ("skip", "none") and "<extra></extra>" not in str(
            trace.get("hovertemplate")
        )
        left_out = {"name"} if not in_legend and not in_hover else set()  # a name for code to find the trace by
        left_out |= set() if data else DRAWN_DATA
        walk({k: v for k, v in trace.items() if k not in left_out})
    return found


def shown_texts(at, page: str = "") -> list[tuple[str, bool]]:
    """Every text the page shows a reader, each with whether it is prose: its markdown, captions and alerts (prose),
    each widget's label, help and options, each figure's words, each table's column headers (the language picker,
    whose names are each language's own, aside)."""
    from streamlit.testing.v1.element_tree import Block

    found = []

    def walk(node):
        if isinstance(node, Block) or not hasattr(node, "type"):
            if isinstance(getattr(node, "label", None), str):  # an expander's, a tab's
                found.append((node.label, False))
            for index in sorted(node.children):
                walk(node.children[index])
            return
        if getattr(node, "key", None) == "lang" or node.type == "html":  # the app's own script
            return
        if str(getattr(node, "key", None)).endswith("_example"):  # example texts, in the model's language
            found.append((node.label, False))
            return
        if node.type == "plotly_chart":
            found.extend(
                (t, False) for t in _figure_texts(json.loads(node.proto.spec), data=page not in PREDICTED_TOKENS)
            )
            return
        if node.type in ("arrow_data_frame", "table", "dataframe"):
            found.extend((str(c), False) for c in node.value.columns)
            return
        for attr in ("value", "body"):
            value = getattr(node.proto, attr, None) if node.type not in ("text_area", "text_input") else None
            if isinstance(value, str):
                found.append((value, True))
        for attr in ("label", "help", "placeholder"):
            value = getattr(node.proto, attr, None)
            if isinstance(value, str):
                found.append((value, attr == "help"))
        found.extend((str(o), False) for o in getattr(node.proto, "options", ()) if isinstance(o, str))

    walk(at._tree)
    return found


def english_left(at, latin: set[str], page: str = "") -> list[str]:
    """ASCII words on the page that no Japanese or Korean string of this run, text box, token or name explains."""
    typed = " ".join(str(box.value) for box in [*at.text_area, *at.text_input]).casefold()
    allowed = {w.casefold() for w in latin | NAMES | KNOWN_ENGLISH.get(page, {}).keys()}
    left = []
    for text, prose in shown_texts(at, page):
        for word in WORD.findall(_strip(text, prose)):
            if word.casefold() not in allowed and word.casefold() not in typed:
                left.append(f"{word!r} in {text[:80]!r}")
    return sorted(set(left))


def problems(at, latin: set[str], page: str = "") -> list[str]:
    """What the page shows wrong in this state, as each page test checks it at its defaults."""
    if at.exception:
        return [f"exception: {e.value}" for e in at.exception]
    found = []
    for element in at.get("plotly_chart"):
        chart, n = json.loads(element.proto.spec), element.proto.id.rsplit("-", 1)[-1]
        found += [f"figure {n} too wide on a phone: {w}" for w in titles_too_wide_for_a_phone(chart)]
        measured = [what for (p, key), what in IN_THE_WAY_MEASURED.items() if _listed({(p, key)}, page, element)]
        in_the_way = [w for w in placed_in_the_way_on_a_phone(chart) if not any(w.startswith(m) for m in measured)]
        found += [f"figure {n} in the way on a phone: {w}" for w in in_the_way]
    shown = _leaves(at.main)
    for i, element in enumerate(shown):
        if element.type == "plotly_chart":
            after = shown[i + 1] if i + 1 < len(shown) else None
            missing = after is None or after.type != "caption" or not after.value.strip()
            if missing and not _listed(UNCAPTIONED, page, element):
                found.append(f"figure {element.proto.id} has no caption under it")
    found += [f"English: {w}" for w in english_left(at, latin, page)]
    return found


def _listed(listed: set, page: str, element) -> bool:
    return any(p == page and element.proto.id.endswith(f"-{key}") for p, key in listed)


def _leaves(node) -> list:
    children = getattr(node, "children", None)
    return [leaf for k in sorted(children) for leaf in _leaves(children[k])] if children else [node]


def states(page: str):
    """Each state of the page to open, as a link's parameters: its defaults first, then one discrete setting
    changed at a time from the first state that shows it (found as the page writes it into its link)."""
    done: set[str] = set()
    queue = [{}]
    while queue:
        params = queue.pop(0)
        written = yield params
        choices = discrete(page, written)
        for key in sorted(written.keys() & choices.keys() - done):
            done.add(key)
            queue += [
                {**params, key: v, **CHEAPER.get((page, key, v), {})}
                for v in choices[key]
                if v != written[key] and (page, key, v) not in COSTLY
            ]


PAGES = [pytest.param(p, marks=[pytest.mark.slow] if p in MODEL_PAGES else []) for p in sorted(PAGE_STATES)]


@pytest.mark.parametrize("page", PAGES)
def test_every_state_of_the_page_shows_fitting_titles_captions_and_the_readers_words(page, pseudo_widest):
    found = {}
    walk = states(page)
    params = next(walk)
    while True:
        at = run_view(page, {"lang": PSEUDO, **params})
        if wrong := problems(at, pseudo_widest, page):
            found[json.dumps(params)] = wrong
        written = {k: at.query_params[k] for k in at.query_params}
        try:
            params = walk.send(written)
        except StopIteration:
            break
    assert not found, "\n".join(
        f"?{'&'.join(f'{k}={v}' for k, v in json.loads(p).items())}: {w}" for p, ws in found.items() for w in ws
    )


def test_look_alike_letters_keep_fields_markup_and_widths_and_the_check_finds_plain_english():
    """The checker itself: a catalog string in look-alike letters keeps its format fields, plural forms' fields,
    markup, plotly's %{...} and a number format, at the same width; a plain ASCII word outside the catalog is found,
    a look-alike one, a code span, a quoted example and a provenance path are not."""
    template = "**Layer {layer}** of {n:,} <br>%{{z:.2f}} ({fmt}) `code`"
    shown = _template_look_alike(template).format(layer=3, n=12345, fmt=".3g")
    assert shown.startswith("**Ĺáýéŕ 3** óƒ 12,345 <br>%{z:.2f} (.3g)") and shown.endswith("`çóđé`")
    assert label_columns(shown) == label_columns(template.format(layer=3, n=12345, fmt=".3g"))
    words = lambda text, prose=True: WORD.findall(_strip(text, prose))  # noqa: E731
    assert words(shown) == []
    assert words("Ĺáýéŕ 3: the weights") == ["the", "weights"]
    assert words("“The cat sat.” `tired` results/x.json --max-n 5", prose=True) == []
    assert words("best_head_weights", prose=False) == ["best", "head", "weights"]
