"""A lesson step draws its page's figure above its question, on /lessons and in a learner's room panel: the same
traces (numbers, labels, colours) the topic page draws when a link opens it at the step's state."""

from __future__ import annotations

import pytest

from app import ui
from app.views.lessons import progress
from tests.apptest_helpers import assert_no_exception, figure_by_key, open_view, run_view
from tests.room_stores import as_process_store
from viz.labels import SIDEBAR_FIGURE_PX

# (lesson, step counted from 1 or named by its question's answer function ("fn", "fn@2": the second step asking
# it, so a step added to the lesson does not move the case), the keys of the page's figures the step draws, in order)
CASES = [
    ("qkv-softmax", 1, ["fig-scores"]),  # the question asks about QKᵀ: the scores
    ("scaling", 1, ["fig-saturation"]),  # the saturation part, at the step's d_k and keys
    ("masks", 4, ["fig-encoder_self", "fig-decoder_self", "fig-cross"]),
    ("rope", 4, ["fig-check"]),  # "does the score depend on m - n only?"
    ("multi-head", 4, ["fig-heads"]),
    ("rope-scaling", 5, ["fig-wl"]),  # the methods' slowest wavelengths, in order
    ("linear-attention", 5, ["fig-softmax", "fig-linear"]),  # the implied matrices
    ("flash-gqa-kv", 1, ["fig-tiles"]),  # no step in the state: the page's last
    ("flash-gqa-kv", 2, ["fig-ml"]),  # the running maximum at step 1
    ("flash-gqa-kv", 3, ["fig-kv"]),
    ("flash-traffic", "flash_attention.running_sum", ["fig-ml"]),  # l after the rescale: the statistics, not tiles
    (
        "flash-traffic",
        "flash_attention.hbm_traffic",
        ["fig-tr"],
    ),  # the traffic part at the step's n, d, M, format (as the second)
    ("flash-gqa-kv", 6, ["fig-reach"]),  # /transformer-xl: how far back each method reaches
    ("flash-gqa-kv", 7, ["fig-block"]),  # the committed run's loss by position
    ("multi-head", 6, ["fig-previous_token"]),  # /head-detectors' committed map
    ("ablation", 1, ["fig-induction"]),  # the committed induction card against its placebo
    pytest.param("multi-head", 3, ["fig-chain"], marks=pytest.mark.slow),  # MiniLM's layer 2, head 5
    pytest.param("qkv-softmax", 5, ["fig-head"], marks=pytest.mark.slow),  # /attention's head view on MiniLM
    # the pages that run a model (or read one's committed results): the page's main figure at the step's state
    ("rnn-attention", "rnn_attention.aligned_source@2", ["fig-rnn-align"]),  # the shipped GRU's alignment into Korean
    ("rnn-attention", "rnn_attention.path_length", ["fig-rnn-cost"]),
    ("encoder-decoder", "encoder_decoder.cross_top", ["fig-cross"]),  # "which source word does the decoder look at?"
    ("antecedents", "antecedents.head_beats_baseline", ["fig-ranking"]),  # MiniLM's heads ranked on the step's sentence
    (
        "antecedents",
        "antecedents.held_out_verdict",
        ["fig-accuracy"],
    ),  # the stored held-out test against the first-noun baseline
    (
        "padded-batch",
        "padded_batch.matches_alone",
        ["fig-padded-head"],
    ),  # sentence 2 in MiniLM's batch without the mask
    ("why-head", "why_head.largest_term@2", ["fig-terms"]),  # MiniLM's four terms through LayerNorm
    ("logit-lens", "logit_lens.top_at", ["fig-lens"]),  # SmolLM2, through the heavy-work queue
    ("kv-cache", "kv_cache.top_key", ["fig-step"]),  # SmolLM2's step at layer 20, its generation through the queue
    (
        "long-maps",
        "long_maps.peak_change@2",
        ["fig-map"],
    ),  # random q and k pooled by the maximum, as after the page's button
    ("moe", "moe.expert", ["router"]),  # the balanced checkpoint's router probabilities
    # /positions' other parts (no model)
    ("position-kinds", "positions.sinusoidal_dot", ["fig-dot"]),  # sinusoidal positions' dot products at base 10^4
    ("position-kinds", "positions.learned_has_vector", ["fig-sim"]),  # MiniLM's learned table
    ("position-kinds", "positions.relative_vectors", ["fig-offsets"]),  # Shaw's offsets clipped at k = 2
    ("position-kinds", "positions.alibi_bias", ["fig-bias"]),  # ALiBi's bias of head 0 of 8
    (
        "position-kinds",
        "positions.extrapolation_order",
        ["fig-extrapolation"],
    ),  # the committed extrapolation accuracies
]
IDS = ["qkv-softmax-1", "scaling-1", "masks-4", "rope-4", "multi-head-4", "rope-scaling-5", "linear-attention-5"]
IDS += [
    "flash-gqa-kv-1",
    "flash-gqa-kv-2",
    "flash-gqa-kv-3",
    "flash-traffic-1",
    "flash-traffic-3",
    "flash-gqa-kv-6",
    "flash-gqa-kv-7",
    "multi-head-6",
    "ablation-1",
]
IDS += ["multi-head-3", "qkv-softmax-5"]
IDS += [f"{lesson}-{index}" for lesson, index, _ in CASES[len(IDS) :]]
PRESS = {"long-maps": "Compute the maps"}  # a page that computes only after its button: pressed, as a reader would


def step_number(lesson: str, index: int | str) -> int:
    """A case's step counted from 1: itself, or the step asking answer function "fn" ("fn@k": the k-th such)."""
    if isinstance(index, int):
        return index
    fn, _, k = index.partition("@")
    asking = [
        i for i, s in enumerate(progress.load_lessons()[lesson].steps, 1) if s.question and s.question.answer_fn == fn
    ]
    return asking[int(k or 1) - 1]


def step_of(lesson: str, index: int | str):
    return progress.load_lessons()[lesson].steps[step_number(lesson, index) - 1]


def drawn(figure: dict) -> dict:
    """What a figure shows: its traces and its layout (title, axes, the shapes that mark a tile), as sent."""
    return figure


@pytest.mark.parametrize(("lesson", "index", "keys"), CASES, ids=IDS)
def test_a_steps_figure_is_the_pages_figure_at_its_state(lesson, index, keys):
    index = step_number(lesson, index)
    step = step_of(lesson, index)
    walk = open_view("lessons", {"lesson": lesson, "lstep": str(index)})
    page = open_view(step.page, step.state)
    if step.page in PRESS:
        next(b for b in page.button if b.label == PRESS[step.page]).click().run()
    for i, key in enumerate(keys):
        assert drawn(figure_by_key(walk, f"step-fig-{index - 1}-{i}")) == drawn(figure_by_key(page, key)), key
    assert not [e for e in walk.get("plotly_chart") if e.proto.id.endswith(f"step-fig-{index - 1}-{len(keys)}")]
    # the figure comes before the question, which is still open (nothing answered yet)
    ids = [e.proto.id for e in walk.get("plotly_chart")]
    assert ids[0].endswith(f"step-fig-{index - 1}-0")
    assert walk.get("form"), "the question's form, still open"
    # one screen: the figure's caption stays, its table and CSV are the page's (its buttons, under the question)
    assert not [b for b in walk.get("download_button") if "step-fig" in str(b.proto.id)]
    assert [b for b in walk.button if b.key == f"here-step-{index - 1}"]


HELD_BACK = "The view (open it once you have made your prediction)"


def test_a_questions_figure_waits_closed_until_the_learner_has_answered():
    """Predict, then look: before an answer the step's figure sits in a closed box above the question; with the
    answer given (in the link, as after Check my answer) it is drawn open."""
    step = step_of("scaling", 1)
    before = open_view("lessons", {"lesson": "scaling", "lstep": "1"})
    boxes = [e for e in before.expander if e.label == HELD_BACK]
    assert len(boxes) == 1 and not boxes[0].proto.expanded
    assert boxes[0].get("plotly_chart"), "the figure is in the box"
    after = open_view("lessons", {"lesson": "scaling", "lstep": "1", f"a.{step.question.id}": "1"})
    assert not [e for e in after.expander if e.label == HELD_BACK]
    assert figure_by_key(after, "step-fig-0-0") == figure_by_key(before, "step-fig-0-0")


def test_a_step_whose_view_is_not_drawn_here_keeps_its_buttons():
    """/models draws no figure for a shipped model (its capabilities are a table): no figure, the buttons that open
    the page."""
    walk = open_view("lessons", {"lesson": "models", "lstep": "2"})
    assert not walk.get("plotly_chart")
    assert [b for b in walk.button if b.key == "here-step-1"]


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from as_process_store(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("lesson", "index", "key"),
    [("masks", 3, "fig-weights"), ("kv-cache", "kv_cache.top_key", "fig-step")],  # the second: SmolLM2, queued
    ids=["masks-3", "kv-cache-5"],
)
def test_a_learner_in_a_room_sees_the_steps_figure_above_the_question(store, lesson, index, key):
    index = step_number(lesson, index)
    code, control = store.create(lesson)
    store.move(code, control, index - 1)  # a room counts steps from 0
    assert store.open_question(code, control, lesson, store.room(code).step)
    learner = run_view("room", {"room": code, "me": store.join(code, "Ana", "en")})
    learner.run()  # the panel's first poll opens the room's step
    assert_no_exception(learner)
    step = step_of(lesson, index)
    page = open_view(step.page, step.state)
    assert drawn(figure_by_key(learner, "room-step-fig-0")) == drawn(figure_by_key(page, key))
    assert learner.sidebar.get("form"), "the question's form, under the figure"
    held = [e for e in learner.expander if e.label == HELD_BACK]
    assert len(held) == 1 and not held[0].proto.expanded  # not answered yet: the figure waits closed


@pytest.mark.parametrize(
    ("lesson", "index", "module", "name"),
    [
        ("why-head", "why_head.largest_term@2", "core.why_head", "absolute_parts_of"),
        ("kv-cache", "kv_cache.top_key", "core.kv_cache", "generate"),
    ],
    ids=["why-head-5", "kv-cache-5"],
)
def test_a_steps_model_pass_waits_its_turn_in_the_pages_queue(monkeypatch, lesson, index, module, name):
    """A step whose figure runs a model runs it where its page does: on the heavy-work queue's worker (one job per
    visitor and kind, computed once for every visitor asking the same), never in the learner's script thread."""
    index = step_number(lesson, index)
    import importlib
    import threading

    from app import serving
    from app.work_queue import WorkQueue

    old = serving.HEAVY  # a queue of its own: the process's keeps results that earlier tests asked for
    monkeypatch.setattr(serving, "HEAVY", WorkQueue(workers=old.workers, max_waiting=old.max_waiting, name="step"))
    owner, threads = importlib.import_module(module), []
    real = getattr(owner, name)

    def spied(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spied)
    walk = open_view("lessons", {"lesson": lesson, "lstep": str(index)})
    assert figure_by_key(walk, f"step-fig-{index - 1}-0")
    # the figure's pass and the question's answer (which runs the model too) both ran on the queue's worker
    assert threads and all(t.startswith("step-queue-") for t in threads), threads


def fresh_queue(monkeypatch) -> list[str]:
    """A heavy-work queue of the test's own (the process's keeps answers that earlier runs asked for), and no answer
    kept from before: returns the kinds of work it was asked to run."""
    from app import serving
    from app.work_queue import WorkQueue

    old, asked = serving.HEAVY, []
    queue = WorkQueue(workers=old.workers, max_waiting=old.max_waiting, name="answer")
    real = queue.run
    monkeypatch.setattr(queue, "run", lambda key, fn, kind, **kw: asked.append(kind) or real(key, fn, kind, **kw))
    monkeypatch.setattr(serving, "HEAVY", queue)
    progress._computed_here.clear()
    return asked


@pytest.fixture
def queue_threads(monkeypatch) -> list[str]:
    """The threads core.lessons.answers.compute runs in (every step's answer is computed by it)."""
    import threading

    from core.lessons import answers

    threads, real = [], answers.compute

    def spied(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(answers, "compute", spied)
    return threads


def test_a_cheap_answer_is_computed_in_the_script_without_the_queue_on_lessons_and_in_a_room(store, queue_threads,
                                                                                             monkeypatch):  # fmt: skip
    """A step's answer that runs no model (qkv-softmax's first: a cell of a tiny score matrix) is computed in the
    learner's or the facilitator's script, never behind other visitors' model passes on the heavy-work queue."""
    queued = fresh_queue(monkeypatch)
    walk = open_view("lessons", {"lesson": "qkv-softmax", "lstep": "1"})
    assert walk.get("form") and queue_threads, "the question, its answer computed"
    assert not any(t.startswith("answer-queue-") for t in queue_threads) and not queued, (queue_threads, queued)
    queue_threads.clear()
    queued = fresh_queue(monkeypatch)  # the answer kept on /lessons: the room would not compute it again
    code, control = store.create("qkv-softmax")
    facilitator = run_view("room", {"room": code, "key": control})
    next(b for b in facilitator.button if b.label == "Open the question").click().run()
    assert_no_exception(facilitator)
    assert store.room(code).phase == "open" and queue_threads
    assert not any(t.startswith("answer-queue-") for t in queue_threads) and not queued, (queue_threads, queued)


@pytest.mark.parametrize(
    ("fn", "state", "on_queue"),
    [
        ("attention.top_key", {}, True),  # a model's forward, declared so
        ("long_maps.cell", {"src": "smollm2"}, True),  # a model's q and k: the state decides
        ("long_maps.cell", {"src": "random"}, False),  # random q and k
        ("sdpa_steps.cell", {}, False),  # arithmetic on a tiny matrix
    ],
)
def test_an_answer_waits_on_the_queue_only_when_it_declares_a_model_pass(monkeypatch, fn, state, on_queue):
    """progress.right_answer, the one place /lessons and a room compute an answer, queues an answer whose function
    declares a model pass (core.lessons.answers.register's model_pass) and computes the others where asked."""
    import threading

    from core import lessons as core
    from core.lessons import answers

    queued, threads = fresh_queue(monkeypatch), []
    kind = answers.ANSWER_FUNCTIONS[fn].kind

    def canned(*args, **kwargs):  # the model itself is not what this test is about
        threads.append(threading.current_thread().name)
        return core.Answer(kind, 1.0, (), 0.0) if kind == "number" else core.Answer(kind, "a", ("a", "b"), None)

    monkeypatch.setattr(answers, "compute", canned)
    progress.right_answer(core.Question("q", kind, fn, {}, {}, (), {}), state)
    assert len(threads) == 1
    assert threads[0].startswith("answer-queue-") == on_queue and queued == (["lesson_answer"] if on_queue else [])


def test_a_learner_panels_figure_is_fitted_for_the_sidebar(store, monkeypatch):
    """The room's learner panel stands in the sidebar (240 px wide in a browser of any width): its step figure is
    fitted for that, not for the screen (a laptop's 640 px lines ran past the panel's edge)."""
    widths = []
    fit = ui._fitted
    monkeypatch.setattr(ui, "_fitted", lambda fig: widths.append(ui.figure_px()) or fit(fig))
    code, control = store.create("masks")
    store.move(code, control, step_number("masks", 3) - 1)
    assert store.open_question(code, control, "masks", store.room(code).step)
    learner = run_view("room", {"room": code, "me": store.join(code, "Ana", "en")})
    learner.run()
    assert_no_exception(learner)
    assert figure_by_key(learner, "room-step-fig-0") and widths and set(widths) == {SIDEBAR_FIGURE_PX}


def test_a_padded_sentences_step_caption_is_the_pages_and_names_no_padding_row():
    """The padded batch's head as a lesson step: its caption named padding queries' rows ('5 [PAD] → 4 [SEP]') as
    the map's largest weights, where the page, which says those rows are never used, names real rows only."""
    index = step_number("padded-batch", "padded_batch.matches_alone")
    step = step_of("padded-batch", index)
    walk = open_view("lessons", {"lesson": "padded-batch", "lstep": str(index)})
    page = open_view(step.page, step.state)
    title = ui.t("padded_batch.figure", "head_title", i=int(step.state["row"]), l=0, h=0)
    (said,) = [c.value for c in walk.caption if c.value.startswith(title)]
    assert said in [c.value for c in page.caption] and "[PAD] ` →" not in said, said
