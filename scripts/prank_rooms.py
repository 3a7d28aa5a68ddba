"""A prankster against the study rooms of a real hosted server, speaking Streamlit's protocol as a browser would
(scripts/load_test.py's StreamlitSession): odd display names, one browser joining again and again, a classmate's
name, answers of every odd kind and size, forged control cookies and recovery links, guessed room codes, a passcode
of most of a megabyte, and (with --postgres) the room database away for ten seconds while learners act, through a
TCP proxy this script cuts. Every reply is checked for an exception, the app's unexpected-error sentence, the
passcode and another room's tokens; the server's log for tracebacks, the passcode and the tokens.

    .venv/bin/python scripts/prank_rooms.py --out results/prankster2_rooms_2026-11-29.json
    .venv/bin/python scripts/prank_rooms.py --postgres "$DATABASE_URL" --out results/prankster2_rooms_pg_2026-11-29.json

Starts its own server (127.0.0.1, ATTENTION_LAB_HOSTED=1, a passcode of its own, a SQLite file in a private
temporary folder, or the given PostgreSQL behind the proxy); the rooms it opens are closed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import http.cookiejar
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

import scripts.load_test as lt  # noqa: E402
from app import i18n  # noqa: E402
from scripts.app_server import free_port, start_server, stop_server  # noqa: E402

UNEXPECTED = {i18n.text(lang, "common", "unexpected") for lang in i18n.languages()}


class Visitor(lt.StreamlitSession):
    """A browser's tab: what the last run drew (alerts, texts), its widgets by label, and cookies it adds."""

    def __init__(self, port: int, jar: http.cookiejar.CookieJar | None = None, cookie: str = ""):
        super().__init__(port, 120, cookies=jar)
        self.labels: dict[str, str] = {}
        self.drawn: list[str] = []
        self.extra_cookie = cookie

    def cookie_header(self) -> str:
        return "; ".join(x for x in (super().cookie_header(), self.extra_cookie) if x)

    def _delta(self, delta, result) -> None:
        super()._delta(delta, result)
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        inner = getattr(element, kind) if kind else None
        if inner is not None and getattr(inner, "id", "") and hasattr(inner, "label"):
            self.labels[inner.id] = inner.label
        for text in (getattr(inner, "body", None), getattr(inner, "code_text", None), getattr(inner, "message", None)):
            if isinstance(text, str) and text:
                self.drawn.append(f"{kind}: {text}")

    def alerts(self) -> list[str]:
        return [d.split(": ", 1)[1][:100] for d in self.drawn if d.startswith("alert: ")]

    def widget_labelled(self, words: str) -> str:
        for wid, label in self.labels.items():
            if words.lower() in label.lower():
                return wid
        raise lt.ProtocolError(f"no widget labelled {words!r}")

    def controls(self) -> bool:
        return any(label == "Next step" for label in self.labels.values())

    async def send(self, states: list[WidgetState]):
        client_state = lt.ClientState(query_string=self.query, page_script_hash=self.page_hash)
        client_state.widget_states.widgets.extend(states)
        self.drawn = []
        return await self.rerun(client_state)

    async def open(self, url: str, query: str = ""):
        self.drawn = []
        return await super().open(url, query)


def typed(wid: str, value: str) -> WidgetState:
    state = WidgetState(id=wid)
    state.string_value = value
    return state


def clicked(wid: str) -> WidgetState:
    state = WidgetState(id=wid)
    state.trigger_value = True
    return state


class Record:
    def __init__(self, secrets_shown: list[str]):
        self.checks: list[dict] = []
        self.secrets_shown = secrets_shown  # what no reply may show: the passcode (tokens are added as made)

    def reply(self, what: str, visitor: Visitor, result, held: bool, saw: object = None, allowed: tuple = ()) -> None:
        drawn = "\n".join(visitor.drawn)
        leaked = [s[:6] + "…" for s in self.secrets_shown if s in drawn and s not in allowed]
        ok = held and not result.exceptions and not (UNEXPECTED & set(visitor.alerts())) and not leaked
        self.checks.append({"what": what, "held": ok, "saw": saw if saw is not None else visitor.alerts()[:3],
                            "exceptions": result.exceptions, "leaked": leaked})  # fmt: skip
        print(("held  " if ok else "FAILED"), what, "|", json.dumps(self.checks[-1]["saw"], ensure_ascii=False)[:160])


async def join(port: int, code: str, name: str, jar=None) -> tuple[Visitor, object]:
    v = Visitor(port, jar)
    await v.open("room", f"room={code}")
    result = await v.send(
        [
            typed(v.widget_labelled("code"), code),
            typed(v.widget_labelled("name"), name),
            clicked(v.widget_labelled("join")),
        ]
    )
    return v, result


def seat_of(v: Visitor) -> str | None:
    from urllib.parse import parse_qs

    return (parse_qs(v.query).get("me") or [None])[0]


async def names(rec: Record, port: int, code: str, rooms) -> None:
    odd = {
        "20,000 characters": "A" * 20_000,
        "HTML and script": "<script>alert(1)</script><img src=x onerror=alert(2)>",
        "markdown link and image": "[x](http://evil.example) ![i](http://evil.example/i.png)",
        "emoji sequences": "👩‍👩‍👧‍👦🏳️‍🌈",
        "right-to-left override": "\u202eevil\u202c Bob",
        "control characters and a line break": "Al\x00ice\x1b[2J\nrooms: fake line",
        "a pile of combining marks": "Z" + "\u0301" * 50,
        "zero-width only": "\u200b\u200d\u2800",
    }
    for what, name in odd.items():
        v, result = await join(port, code, name)
        seat = seat_of(v)
        stored = rooms.learner(code, seat).name if seat else None
        fits = stored is None or (
            len(stored) <= 40 and "\n" not in stored and "\x1b" not in stored and "\u202e" not in stored
        )
        rec.reply(
            f"name: {what}", v, result, fits, saw={"seated": bool(seat), "stored": stored, "alerts": v.alerts()[:1]}
        )
        await v.close()
    v, result = await join(port, code, "Ana Kim")
    await v.close()
    for same in ("ana kim", "ＡＮＡ ＫＩＭ", "Ana\u200bKim"):
        v, result = await join(port, code, same)
        rec.reply(f"a classmate's name again: {same!r}", v, result, seat_of(v) is None)
        await v.close()


async def one_browser(rec: Record, port: int, code: str) -> None:
    jar = http.cookiejar.CookieJar()
    seated = []
    for i in range(6):
        v, result = await join(port, code, f"same browser {i}", jar)
        seated.append(seat_of(v) is not None)
        await v.close()
    rec.reply("one browser joins 6 times in a minute", v, result, seated == [True] * 4 + [False] * 2, saw=seated)


async def answers(rec: Record, port: int, code: str, control: str, rooms) -> None:
    """Number answers of every odd kind and size, each from a learner of its own, then the facilitator's and the
    projector's pages (which draw the histogram) and a learner's after the reveal."""
    rooms.open_question(code, control, "qkv-softmax", 0)
    odd = ["1e308", "-1e308", "1.7976931348623157e308", "nan", "inf", "-0", "１４", "1,024", "1e-320", "0x10",
           "14" * 19, "😀", "<b>14</b>", " 14 ", *[str(i) for i in range(12)]]  # fmt: skip
    learners = []
    for i, answer in enumerate(odd):
        v, _ = await join(port, code, f"answers {i}")  # a browser each: one browser's joins are limited
        await v.open("room", v.query)  # the seat page's panel draws the answer box
        try:
            box = v.widget_labelled(i18n.text("en", "room", "number_help"))
            submit = v.widget_labelled(i18n.text("en", "room", "submit"))
            result = await v.send([typed(box, answer), clicked(submit)])
            learners.append(v)
            rec.reply(f"answer {answer[:20]!r}", v, result, True, saw=v.alerts()[:2])
        except lt.ProtocolError as e:
            rec.checks.append({"what": f"answer {answer!r}", "held": False, "saw": str(e)})
    f = Visitor(port)
    result = await f.open("room", f"room={code}&key={control}")
    rec.reply("the facilitator's page after the odd answers", f, result, f.controls(), allowed=(control,))
    p = Visitor(port)
    result = await p.open("room", f"room={code}&mode=projector")
    rec.reply("the projector after the odd answers", p, result, True)
    rooms.reveal(code, control)
    result = await learners[0].open("room", learners[0].query)
    rec.reply("a learner's panel after the reveal", learners[0], result, True)
    for v in [*learners, f, p]:
        await v.close()


async def controls(rec: Record, port: int, code: str, control: str, other: tuple[str, str], rooms) -> None:
    other_code, other_control = other
    other_browser = rooms.give_control(other_code, other_control)
    cookies = {
        "garbage": "garbage",
        "another room's browser control": f"{other_browser}.{other_control}",
        "another room's control token": other_control,
        "8,000 characters": "x" * 8000,
        "a made-up control with the right token": f"{secrets.token_urlsafe(18)}.{control}",
    }
    for what, value in cookies.items():
        v = Visitor(port, cookie=f"lab_control_{code}={value}")
        result = await v.open("room", f"room={code}&mode=control")
        rec.reply(f"control cookie: {what}", v, result, not v.controls())
        await v.close()
    keys = {"another room's": other_control, "one character off": control[:-1] + ("x" if control[-1] != "x" else "y"),
            "10,000 characters": "k" * 10_000, "the learner's seat token": rooms.join(code, "seat for a key", "en")}  # fmt: skip
    for what, key in keys.items():
        v = Visitor(port)
        result = await v.open("room", f"room={code}&key={key}")
        rec.reply(f"recovery link: {what}", v, result, not v.controls() and "key=" not in v.query)
        await v.close()
    jar = http.cookiejar.CookieJar()
    for i in range(11):
        v = Visitor(port, jar)
        await v.open("room", f"room=ZZZZZ{'23456789ABCD'[i]}")
        await v.close()
    v = Visitor(port, jar)
    result = await v.open("room", f"room={code}")
    waits = i18n.text("en", "room", "join_attempts")
    rec.reply(
        "the right code after 11 guessed ones, one browser", v, result, waits in v.alerts() or waits[:100] in v.alerts()
    )
    await v.close()


async def passcodes(rec: Record, port: int, passcode: str) -> None:
    v = Visitor(port)
    await v.open("room", "")
    box, button = v.widget_labelled("passcode"), v.widget_labelled("open a room")
    for what, tried in (("900 KB", "x" * 900_000), ("the passcode and 500 more characters", passcode + "x" * 500)):
        start = time.monotonic()
        result = await v.send([typed(box, tried), clicked(button)])
        rec.reply(f"passcode: {what}", v, result, "room=" not in v.query,
                  saw={"s": round(time.monotonic() - start, 2), "alerts": v.alerts()[:1]})  # fmt: skip
    await v.close()


class Proxy:
    """A TCP proxy to PostgreSQL that this script cuts: every connection dropped and new ones refused while down."""

    def __init__(self, host: str, port: int):
        self.target, self.down, self.pairs = (host, port), False, set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def handle(self, reader, writer) -> None:
        if self.down:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self.pairs.add(pair)
        with contextlib.suppress(asyncio.CancelledError):  # the script ends with connections still open
            await asyncio.gather(self.pipe(reader, up_writer), self.pipe(up_reader, writer))
        self.pairs.discard(pair)

    def stop(self) -> None:
        self.cut(True)
        self.server.close()

    @staticmethod
    async def pipe(reader, writer) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    def cut(self, down: bool) -> None:
        self.down = down
        if down:
            for a, b in list(self.pairs):
                a.transport.abort()
                b.transport.abort()


async def database_away(rec: Record, port: int, code: str, control: str, proxy: Proxy, rooms) -> None:
    learners = [(await join(port, code, f"away {i}"))[0] for i in range(3)]
    rooms.move(code, control, 1)
    rooms.open_question(code, control, "qkv-softmax", 1)
    f = Visitor(port)
    await f.open("room", f"room={code}&key={control}")
    proxy.cut(True)
    down_at = time.monotonic()
    for i, v in enumerate(learners):
        result = await v.open("room", v.query)
        rec.reply(f"database away: learner {i} reloads", v, result, True)
    v = Visitor(port)
    result = await v.open("room", f"room={code}")
    away = i18n.text("en", "room", "unavailable")
    rec.reply("database away: a new visitor opens the join link (no form to join with)", v, result, away in v.alerts())
    result = await f.send([clicked(f.widget_labelled("Reveal the answer"))])
    rec.reply("database away: the facilitator reveals", f, result, True, allowed=(control,))
    v = Visitor(port)
    result = await v.open("room", f"room={code}&key={control}")
    rec.reply("database away: the recovery link waits in the link", v, result, "key=" in v.query, allowed=(control,))
    await asyncio.sleep(max(0.0, 10.0 - (time.monotonic() - down_at)))
    proxy.cut(False)
    await asyncio.sleep(3.0)  # the pool finds its connections broken and opens new ones
    result = await v.send([])
    rec.reply("database back: the recovery link gives the control", v, result, v.controls() and "key=" not in v.query,
              allowed=(control,))  # fmt: skip
    for i, v in enumerate(learners):
        result = await v.open("room", v.query)
        rec.reply(f"database back: learner {i} reloads", v, result, not any("database" in a for a in v.alerts()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL: the rooms there, behind a proxy cut for 10 s")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    from urllib.parse import urlsplit, urlunsplit

    from core.room.service import rooms_on
    from core.room.sql import PostgresStore, SQLiteStore

    passcode = "PRANK-" + secrets.token_hex(10)
    folder = tempfile.mkdtemp(prefix="prank-rooms-")
    os.environ.update({"ATTENTION_LAB_HOSTED": "1", "ATTENTION_LAB_ROOM_PASSCODE": passcode})
    rec = Record([passcode])
    port, log_path = free_port(), Path(folder) / "server.log"
    started = dt.datetime.now(dt.UTC)
    load = os.getloadavg()

    async def run() -> None:
        proxy = None
        if args.postgres:
            url = urlsplit(args.postgres)
            proxy = Proxy(url.hostname, url.port or 5432)
            through = url._replace(netloc=f"{url.netloc.rsplit('@', 1)[0]}@127.0.0.1:{await proxy.start()}")
            os.environ["DATABASE_URL"] = urlunsplit(through)
            rooms = rooms_on(PostgresStore(args.postgres))
        else:
            os.environ.pop("DATABASE_URL", None)
            os.environ["ATTENTION_LAB_ROOMS"] = str(Path(folder) / "rooms.sqlite3")
            rooms = rooms_on(SQLiteStore(os.environ["ATTENTION_LAB_ROOMS"]))
        with open(log_path, "w") as log:
            server = await asyncio.to_thread(start_server, port, log)
        opened = [rooms.create("qkv-softmax") for _ in range(4)]
        rec.secrets_shown += [control for _, control in opened]
        try:
            await names(rec, port, opened[0][0], rooms)
            await one_browser(rec, port, opened[0][0])
            await answers(rec, port, *opened[1], rooms)
            await controls(rec, port, *opened[0], opened[2], rooms)
            await passcodes(rec, port, passcode)
            if proxy is not None:
                await database_away(rec, port, *opened[3], proxy, rooms)
        finally:
            stop_server(server)
            for code, control in opened:
                with contextlib.suppress(Exception):
                    rooms.end(code, control)
            rooms.close()
            if proxy is not None:
                proxy.stop()

    asyncio.run(run())
    logged = log_path.read_text(errors="replace")
    in_log = {"tracebacks": logged.count("Traceback (most recent call last)"),
              "the passcode": logged.count(passcode), "a control token": sum(logged.count(s) for s in rec.secrets_shown[1:])}  # fmt: skip
    print("server log:", in_log)
    failed = [c["what"] for c in rec.checks if not c["held"]]
    result = {
        "command": " ".join(
            ["python", "scripts/prank_rooms.py", *(argv if argv is not None else sys.argv[1:])]
        ).replace(args.postgres or "\0", "$DATABASE_URL"),
        "date": started.isoformat(timespec="seconds"),
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "store": "postgresql (through a proxy cut for 10 s)" if args.postgres else "sqlite",
        "checks": rec.checks,
        "server_log": in_log,
        "failed": failed,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return 1 if failed or in_log["tracebacks"] or in_log["the passcode"] or in_log["a control token"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
