"""A learner's room panel (in the sidebar of every page while they have a seat): the step's text, follow or
explore, the open question and their own answer, after the reveal the right answer and the room's distribution,
"I'm lost", and the gallery. Nothing another learner wrote is shown except the sentence the facilitator chose,
as plain text."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from app import ui
from app.room.store import open_store
from app.views.lessons.text import answers_figure, choice_label, in_words, plain, prose
from app.views.room import follow
from core import room as rules
from core.lessons import ORDER_SEPARATOR
from core.room import RoomError


def toggle_follow(s: dict) -> None:
    s["following"] = bool(st.session_state["room-follow"])
    s["step"] = rules.EXPLORING  # following again: the panel's next run opens the room's step (and reports it)
    s["rejoin"] = s["following"]  # ... which is now (controls()): the room may not change for a while
    lesson = follow.lesson_of(s["room"])
    try:
        if lesson is not None:
            open_store().where(s["code"], s["token"], rules.EXPLORING, s["following"])
    except RoomError:
        pass  # the board is a little behind; following itself does not depend on it


def said(right, response: str) -> str:
    """An answer in the reader's words (the engine's answers are identifiers: 'yes', 'scaled'); others as written."""
    return in_words(ui.texts("lessons"), right.kind, response)


def answer_form(T, s: dict, room, right) -> None:
    # pickers outside the form: what a learner picked survives a switch of language (ui.pick)
    if right.kind in ("token", "choice"):
        raw = ui.pick(T("pick"), right.options, index=None, key="room-pick", radio=True,
                      format_func=lambda o: plain(said(right, o)))  # fmt: skip
    elif right.kind == "order":
        raw = ORDER_SEPARATOR.join(
            ui.pick_many(
                T("order_help"),
                right.options,
                key="room-order",
                format_func=lambda o: choice_label(ui.texts("lessons"), o),
            )
        )
    with st.form("room-answer", clear_on_submit=False, border=False):
        if right.kind not in ("token", "choice", "order"):
            raw = st.text_input(T("number_help"), key="room-number", max_chars=40)
        sent = st.form_submit_button(T("submit"), key="room-submit")
    if sent:
        try:
            kept = open_store().answer(s["code"], s["token"], raw if raw is not None else "")
            st.toast(T("answer_kept") if kept else T("answered_before"))
        except RoomError as e:
            st.warning(T(e.key))
            return
        s["mine_q"] = None
        # show the kept answer now, not at the next room change: a browser sends the panel's click as the fragment's
        # run, but one that came with a run of the whole page (a client's, or merged with a run already waiting) is
        # a full run, where a fragment's own rerun raises
        ctx = get_script_run_ctx()
        st.rerun(scope="fragment" if ctx is not None and ctx.fragment_ids_this_run else "app")


def asked(lesson, room) -> bool:
    """The room's open question is this step's."""
    step = lesson.steps[room.step]
    return bool(room.question) and step.question is not None and step.question.id == room.question


def my_answer(s: dict, room):
    """This learner's answer to the room's question, read once per question (and after each version change)."""
    if s.get("mine_q") != room.question:
        s["mine"], s["mine_q"] = open_store().my_answer(s["code"], s["token"], room.question), room.question
    return s["mine"]


def question(T, s: dict, room, lesson) -> None:
    if not asked(lesson, room):
        st.caption(T("waiting"))
        return
    q, lang, right = lesson.steps[room.step].question, ui.lang(), rules.right_answer(room)
    prose(q.prompt, lang)
    mine = my_answer(s, room)
    if mine is None and room.phase == "open":
        for i, hint in enumerate(q.hints):
            with st.expander(T(f"hint_{min(i, 2)}")):
                prose(hint, lang, right, with_correct=False)  # the step's numbers; the answer waits for the reveal
        answer_form(T, s, room, right)
    elif mine is not None:
        st.text(T("your_answer", answer=said(right, mine[0])))
    if room.phase == "revealed":
        st.success(T("right_answer", answer=plain(said(right, rules.answer_to_text(right)))))
        if mine is not None:
            st.write(T("right") if mine[1] else T("wrong"))
        prose(q.explanation, lang, right)
        if s.get("hist") is None:  # read once per reveal (and after each version change)
            s["hist"] = open_store().histogram(room, mine=None if mine is None else mine[0])
        fig = answers_figure(s["hist"])
        ui.show_figure(fig, "room-answers", key="room-hist-learner", toolbar=False)


def panel(T, s: dict, room, lesson) -> None:
    """What changes with the room (redrawn whenever the room changes): where it is, the step, the question, the shown sentence."""
    st.markdown(f"**{T('seat', code=room.code, step=room.step + 1, n=len(lesson.steps))}**")
    st.text(s["name"])
    page, params = follow.step_target(lesson, room.step)
    st.page_link(page, label=T("back"), icon=":material/undo:", query_params={**params, **follow.seat_params(s)})
    prose(lesson.steps[room.step].text, ui.lang())
    unanswered = asked(lesson, room) and room.phase == "open" and my_answer(s, room) is None
    held_back = ui.t("lessons", "view_after_predict") if unanswered else None  # predict first, then look
    from app import step_views  # a seat's panel only: every page's sidebar imports this module

    step_views.show(lesson.steps[room.step], "room-step-fig", side_by_side=False, held_back=held_back)
    question(T, s, room, lesson)
    if room.shown:
        st.caption(T("shown"))
        st.text(room.shown)  # a learner's sentence: plain text, never markdown or HTML


def toggle_lost(s: dict) -> None:
    try:
        open_store().set_lost(s["code"], s["token"], st.session_state["room-lost"])
        s["lost"] = st.session_state["room-lost"]
    except RoomError as e:
        s["notice"] = e.key


def controls(T, s: dict) -> None:
    """What the learner does that the room does not change (its own fragment: not redrawn with the room, and a
    click reruns only this, not the step's page)."""
    room = s["room"]
    if s.pop("rejoin", False):
        st.rerun()  # the whole page: its panel takes the learner back to the room's step
    st.toggle(T("follow"), value=s["following"], key="room-follow", on_change=toggle_follow, args=(s,))
    st.toggle(T("lost"), value=bool(s.get("lost")), key="room-lost", help=T("lost_help"), on_change=toggle_lost,
              args=(s,))  # fmt: skip
    if s.get("notice"):
        st.warning(T(s.pop("notice")))
    lesson = follow.lesson_of(room)
    with st.popover(T("gallery_submit"), disabled=lesson is None):
        with st.form("room-gallery", clear_on_submit=True, border=False):
            sentence = st.text_input(T("sentence"), max_chars=rules.MAX_SENTENCE_CHARS, key="room-sentence")
            if st.form_submit_button(T("send")) and lesson is not None:
                step = s["step"] if s["step"] != rules.EXPLORING else room.step
                try:
                    open_store().submit(s["code"], s["token"], step, sentence)
                    st.toast(T("sent"))
                except RoomError as e:
                    st.warning(T(e.key))
    st.page_link(follow.room_page(), label=T("room_page"), icon=":material/groups:",
                 query_params=follow.seat_params(s))  # fmt: skip
    if st.button(T("leave"), key="room-leave"):
        follow.leave()
        st.rerun()
