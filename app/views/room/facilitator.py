"""The facilitator's side of a room (/room?room=CODE&mode=control in a tab that holds the control token): the
join link and its QR code, moving the room through the lesson's steps, opening and revealing questions, and a live
panel (a fragment the server reruns when the room's two counters changed, app/room/watch.py, redrawn from the
store then): the histogram of answers, "I'm lost", the board with names, the gallery, the CSV of answers.

The control token is never left in the address bar: a control link (?key=...) is checked, gives this browser a
control of its own, kept in this session and in a cookie of this browser (a reload, a server restart or a failover
keeps the control), then is taken out of the link. The recovery link that carries it hides behind a button; the page shown to the class is the projector
view (app/views/room/projector.py), which holds no control at all."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app import ui
from app.room import watch
from app.room.store import open_store
from app.views.lessons import progress
from app.views.lessons.text import answers_figure, in_words, label, language_name, plain, prose
from app.views.room import control_token, door, follow, links
from core import room as rules
from core.room import RoomError
from viz import room as figures

CSV_FRESH_S = 5.0  # the answers' CSV, built at a request, serves the requests of the next few seconds as it is


def move(code: str, control: str, step) -> None:
    try:
        open_store().move(code, control, step)
    except RoomError as e:
        follow.refused(e)


def move_to_picked(code: str, control: str) -> None:
    move(code, control, st.session_state["room-go"])  # a selectbox may send free text: the room service checks


def open_question(code: str, control: str, lesson_id: str, step: int) -> None:
    try:
        open_store().open_question(code, control, lesson_id, step, compute=progress.right_answer)  # on the queue
    except RoomError as e:
        follow.refused(e)
    except ValueError as e:  # the engine could not compute this step's answer
        st.session_state["room-error-text"] = progress.why_no_answer(e) or ui.texts("lessons")("no_answer_hosted")


def notice(T) -> None:
    if "room-error" in st.session_state:
        st.error(T(st.session_state.pop("room-error")))
    if "room-error-text" in st.session_state:
        st.error(st.session_state.pop("room-error-text"))


def reveal(code: str, control: str) -> None:
    try:
        open_store().reveal(code, control)
    except RoomError as e:  # a click from a page drawn before the room moved on
        follow.refused(e)


@st.cache_data(max_entries=64, show_spinner=False)
def join_qr(url: str) -> bytes:
    return figures.join_qr(url)  # drawn once per link, not on every rerun of the facilitator's page


def join_panel(T, code: str, qr_width: int = 180) -> None:
    """The join link (on the configured public address) and its QR code: the same on the projector."""
    url = links.link("room", {"room": code})
    c1, c2 = st.columns([3, 1])
    with c1:
        st.markdown(T("join_how", code=code))
        st.code(url, language=None)
    with c2:
        st.image(join_qr(url), width=qr_width)


def steps_nav(T, code: str, control: str, lesson, step: int) -> None:
    n, lang = len(lesson.steps), ui.lang()
    row = ui.buttons()
    row.button(T("prev"), on_click=move, args=(code, control, step - 1), disabled=step == 0, key="room-prev")
    row.button(T("next"), on_click=move, args=(code, control, step + 1), disabled=step >= n - 1,
               key="room-next")  # fmt: skip
    st.session_state["room-go"] = step
    labels = {i: T("step_label", i=i + 1, text=label(s.text, lang, 60)) for i, s in enumerate(lesson.steps)}
    st.selectbox(T("go"), list(range(n)), key="room-go", format_func=labels.get, on_change=move_to_picked,
                 args=(code, control), label_visibility="collapsed")  # fmt: skip


def question_controls(T, code: str, control: str, room, lesson) -> None:
    q = lesson.steps[room.step].question
    if q is None:
        st.caption(T("no_question"))
        return
    prose(q.prompt, ui.lang())
    if room.question != q.id:
        st.button(
            T("open_question"),
            on_click=open_question,
            args=(code, control, lesson.id, room.step),
            type="primary",
            key="room-open-q",
        )
    elif room.phase == "open":
        st.button(T("reveal"), on_click=reveal, args=(code, control), type="primary", key="room-reveal")
    else:
        right = rules.right_answer(room)
        said = in_words(ui.texts("lessons"), right.kind, rules.answer_to_text(right))
        st.success(T("right_answer", answer=plain(said)))
        prose(q.explanation, ui.lang(), right)


def languages_line(T, languages) -> str:
    """How many learners read in each language, in the app's order of languages and the facilitator's words
    ('Reading in: English 12, Japanese 8'); a language this server has no words for counts as another."""
    read_in, others = rules.by_language(languages, ui.LANGS)
    known = [(language_name(ui.lang(), c), n) for c, n in read_in]
    if others:
        known.append((T("lang_other"), others))
    return T("languages", counts=T("language_sep").join(T("language_count", name=name, n=n) for name, n in known))


def snapshot(code: str, control: str, polled) -> dict:
    return {"polled": polled, "view": open_store().facilitator_view(code, control)}


def show_sentence(code: str, control: str, sentence: str) -> None:
    try:
        open_store().show(code, control, sentence)
    except RoomError as e:
        follow.refused(e)


@follow.live
def live(code: str, control: str, lesson) -> None:
    T = ui.texts("room")
    snap = st.session_state.get("room-live")
    if snap is None or not snap.pop("fresh", False) or snap["view"].room.code != code:  # fresh: the page's own read
        polled = open_store().poll(code)
        if polled is None:
            watch.follow_here(code, None, any_change=True)
            st.warning(T("room_closed"))
            control_token.forget(code)  # closed here or elsewhere, or expired: no control left in this browser
            control_token.forget_in_browser()
            return
        if snap is None or snap["polled"] != polled or snap["view"].room.code != code:
            try:
                snap = st.session_state["room-live"] = snapshot(code, control, polled)
            except RoomError as e:
                if e.key != "not_control":
                    raise
                control_token.given_up_elsewhere(code)  # by another tab of this browser: the page says so now
                st.rerun()
    watch.follow_here(code, snap["polled"], any_change=True)  # an answer or an arrival redraws it too
    view = snap["view"]
    room, board, hist = view.room, view.board, view.hist
    ui.metrics([(T("learners_n"), view.learners, None), (T("answered_n"), hist.total if hist else 0, None),
                (T("lost_n"), view.lost, None)])  # fmt: skip
    if view.languages:
        st.caption(languages_line(T, view.languages))
    if hist is not None:
        ui.show_figure(answers_figure(hist), "room-answers", key="room-hist", toolbar=False)
    with st.expander(T("board"), expanded=False):
        st.caption(T("board_steps", on=", ".join(f"{i + 1}: {n}" for i, n in enumerate(board.steps)),
                     away=board.elsewhere))  # fmt: skip
        columns = [T("col_name"), T("col_step"), T("col_following"), T("col_answered"), T("col_right")]
        rows = [
            [name, step + 1 if step >= 0 else "–", following, n, right]
            for name, step, following, n, right in board.rows
        ]
        st.dataframe({c: [r[i] for r in rows] for i, c in enumerate(columns)}, hide_index=True)  # text, not HTML
    with st.expander(T("gallery_header", n=len(view.gallery)), expanded=bool(view.gallery)):
        if room.shown:
            st.caption(T("shown"))
            st.text(room.shown)
            st.button(T("hide"), on_click=show_sentence, args=(code, control, ""), key="room-hide")
        for i, (name, sentence) in enumerate(view.gallery[-20:]):
            c1, c2 = st.columns([5, 1])
            c1.text(f"{name}: {sentence}")  # learners' words: plain text
            c2.button(T("show"), on_click=show_sentence, args=(code, control, sentence), key=f"room-show-{i}")
    door.show(T, code, control, room, view.seats)  # here, so a learner who just joined can be removed at once


def show(T, code: str, control: str, lessons: dict) -> None:
    store = open_store()
    view = store.facilitator_view(code, control)  # the page and its live panel, in one read of the room
    st.session_state["room-live"] = {"polled": view.polled, "view": view, "fresh": True}
    room = view.room
    lesson = lessons.get(room.lesson)
    if lesson is None:
        st.error(T("lesson_gone", lesson=room.lesson))
        return
    room = replace(room, step=rules.step_of(room, lesson))
    control_token.keep_in_browser(code, room.expires)
    st.header(T("control_header", code=code, title=plain(label(lesson.title, ui.lang()))))
    st.info(T("control_warning"))
    row = ui.buttons()
    row.link_button(T("projector"), links.link("room", {"room": code, "mode": "projector"}), type="primary",
                    icon=":material/co_present:")  # fmt: skip
    with row:
        control_token.recovery(T, code)
    with row:
        control_token.give_up(T, code)
    with st.expander(T("join_header_f"), expanded=False):
        join_panel(T, code)
    steps_nav(T, code, control, lesson, room.step)
    notice(T)
    step = lesson.steps[room.step]
    prose(step.text, ui.lang())
    page, params = follow.step_target(lesson, room.step)
    st.link_button(T("open_step"), links.link(page.url_path, params), icon=":material/open_in_new:")
    question_controls(T, code, control, room, lesson)
    live(code, control, lesson)
    # built at a request, and again only CSV_FRESH_S after: each request of a client would read every answer of the
    # room from the database and write them out again
    csv = ui.built_once(lambda: store.answers_csv(code, control), fresh_s=CSV_FRESH_S)
    st.download_button(T("csv"), csv, file_name=f"room-{code}.csv", mime="text/csv", on_click="ignore")
