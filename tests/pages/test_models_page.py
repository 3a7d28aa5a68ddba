"""/models: on a laptop run a learner adds a folder (kept in that session only), sees its capabilities and its parity
with eager attention; the folder then appears in the picker of the pages that can use it, which run on it; bad
folders get one sentence and the app keeps running; a hosted server offers no folder box, only the operator's
list."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app import i18n, models, serving
from core.models import local, registry
from tests.apptest_helpers import assert_no_exception, run_view, send_raw, shown_text
from tests.tiny_models import build, forget_registrations


@pytest.fixture()
def own_list(tmp_path, monkeypatch):
    """A laptop run (ATTENTION_LAB_LOCAL) whose visitors may open folders under tmp_path; no operator's list;
    registrations undone afterwards."""
    monkeypatch.setenv(serving.LOCAL_ENV, "1")
    monkeypatch.delenv(serving.HOSTED_ENV, raising=False)
    monkeypatch.setenv(local.FOLDER_ROOTS_ENV, str(tmp_path))
    monkeypatch.setenv("ATTENTION_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(registry.MODELS_LIST, raising=False)
    before = set(registry.RECORDS)
    yield tmp_path
    forget_registrations(before)


def _add(folder) -> object:
    at = run_view("models")
    at.text_input[0].input(str(folder))
    at.button[0].click().run()
    return at


def _added_key(at) -> str:
    keys = list(at.session_state[models.OWN_MODELS])
    assert len(keys) == 1, keys
    return keys[0]


def _open(at, topic: str, params: dict):
    """The same visitor opens another page with these link parameters: a new AppTest given that session's folders
    (AppTest cannot rerun a tree whose select boxes format their options)."""
    return run_view(topic, params=params, state={models.OWN_MODELS: at.session_state[models.OWN_MODELS]})


def test_a_folder_is_added_checked_and_used_by_the_pages(tmp_path, own_list):
    folder = tmp_path / "my-llama"
    build("llama", folder)
    at = _add(folder)
    assert_no_exception(at)
    assert at.success, "no confirmation"
    key = _added_key(at)
    assert key.startswith(registry.FOLDER_PREFIX + "my-llama-")  # its path's hash: no other visitor's key
    page = _open(at, "models", {"pick": key, "check": "1"})
    assert_no_exception(page)
    assert any("eager attention" in c.value and "equal" in c.value for c in page.caption), "no parity caption"
    assert page.dataframe, "no capability table"
    for topic in ("attention", "padded-batch", "head-detectors"):
        page = _open(at, topic, {"model": key})
        assert_no_exception(page)
        assert not page.error, (topic, [e.value for e in page.error])
        assert page.selectbox(key="model").value == key, topic


def test_a_visitors_folder_is_that_visitors_only(tmp_path, own_list):
    """Added by one visitor: nothing registered for the process, nothing written to a file, and another visitor's
    link naming it gets the default model (its key is in no one else's picker)."""
    folder = tmp_path / "my-llama"
    build("llama", folder)
    records = dict(registry.RECORDS)
    at = _add(folder)
    assert at.success
    key = _added_key(at)
    assert registry.RECORDS == records
    assert not [p for p in tmp_path.rglob("*.toml")], "a visit wrote a file"
    other = run_view("attention", params={"model": key, "text": "a dog ran"})
    assert_no_exception(other)
    picker = other.selectbox(key="model")
    assert picker.value == "minilm" and key not in picker.options
    assert models.OWN_MODELS not in other.session_state or not other.session_state[models.OWN_MODELS]


def test_bad_folders_get_one_sentence_that_tells_nothing_of_what_exists(tmp_path, own_list):
    (tmp_path / "not-a-model").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "not-a-model" / "config.json").write_text('{"model_type": "nothing-known"}', encoding="utf-8")
    refused = ("nowhere", "a-file", "empty", "/etc/passwd", "/etc", "/nonexistent/x", "<script>alert(1)</script>")
    reasons = set()
    for bad in refused:
        path = bad if bad.startswith(("/", "<")) else str(tmp_path / bad)
        at = _add(path)
        assert_no_exception(at)
        assert at.error, bad
        reason = " ".join(t.value for t in at.text)  # the reason, as plain text (st.text), never markdown
        assert reason.startswith(path + ": "), reason
        reasons.add(reason.removeprefix(path + ": "))
        assert not any("<script>" in m.value for m in at.markdown)
    assert len(reasons) == 1, reasons  # a missing path, a file, an empty folder, outside the roots: one sentence
    # one story about downloads: a folder is read in place, a hub id downloads only with internet
    text = " ".join(m.value for m in at.markdown)
    assert (
        "Nothing is downloaded here" not in text and "A hub id is downloaded only where the server has internet" in text
    )
    at = _add(tmp_path / "not-a-model")  # a config inside the roots: transformers' own reason
    assert at.error and "does not know this architecture" in " ".join(t.value for t in at.text)
    assert models.OWN_MODELS not in at.session_state or not at.session_state[models.OWN_MODELS]


def test_a_hosted_server_offers_no_folder_box(tmp_path, monkeypatch, own_list):
    monkeypatch.setenv(serving.HOSTED_ENV, "1")  # wins over ATTENTION_LAB_LOCAL
    at = run_view("models")
    assert_no_exception(at)
    assert not at.text_input and at.info
    monkeypatch.delenv(serving.HOSTED_ENV)
    monkeypatch.delenv(serving.LOCAL_ENV)
    at = run_view("models")  # no setting: AppTest, like a bare `streamlit run`, is bound to every address
    assert not at.text_input and at.info


@pytest.mark.parametrize(
    "headers, box",
    [
        ([("Host", "localhost:8501")], True),
        ([("Host", "127.0.0.1:8501")], True),
        ([("Host", "[::1]:8501")], True),
        ([("Host", "localhost:8501"), ("X-Forwarded-For", "203.0.113.7")], False),  # nginx in front
        ([("Host", "localhost:8501"), ("Forwarded", "for=203.0.113.7")], False),
        ([("Host", "class.example.org")], False),  # a proxy that passes the visitor's Host on
        ([("Host", "127.0.0.1:8501"), ("Origin", "http://127.0.0.1:8501")], True),  # the laptop's own browser
        ([("Host", "localhost:8501"), ("Origin", "http://localhost:8501")], True),
        ([("Host", "[::1]:8501"), ("Origin", "http://[::1]:8501")], True),
        # nginx's default (proxy_set_header Host $proxy_host) and no forwarding header: only the browser's Origin
        # says where the page was opened (the websocket gets through with server.enableCORS and
        # enableXsrfProtection off, the usual answer to a proxy's 403)
        ([("Host", "127.0.0.1:8501"), ("Origin", "https://class.example.org")], False),
        ([("Host", "localhost:8501"), ("Origin", "http://localhost.class.example.org:8080")], False),
        ([("Host", "127.0.0.1:8501"), ("Origin", "null")], False),  # a sandboxed or file page: not the laptop's
    ],
)
def test_a_laptop_run_behind_a_proxy_offers_no_folder_box(monkeypatch, own_list, headers, box):
    """A run bound to 127.0.0.1 with neither setting (`dev.sh run`) is a laptop run only for a browser that reaches
    it straight: a request a proxy brought (its headers, or another Host) is a visitor's, as on a hosted server."""
    from streamlit import config
    from streamlit.runtime import context

    for name in (serving.HOSTED_ENV, serving.LOCAL_ENV):
        monkeypatch.delenv(name, raising=False)
    before = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    monkeypatch.setattr(context, "_get_client_context", lambda: SimpleNamespace(headers=headers, cookies={}))
    try:
        at = run_view("models")
    finally:
        config.set_option("server.address", before)
    assert_no_exception(at)
    assert bool(at.text_input) is box and bool(at.info) is not box


def test_the_operators_list_is_every_visitors(tmp_path, own_list, monkeypatch):
    """The operator lists folders in $ATTENTION_LAB_MODELS: registered at start, offered on a hosted server."""
    build("llama", tmp_path / "class-llama")
    (tmp_path / "models.toml").write_text(
        f'[[model]]\npath = "{tmp_path / "class-llama"}"\ntitle = "Class Llama"\n', encoding="utf-8"
    )
    monkeypatch.setenv(registry.MODELS_LIST, str(tmp_path / "models.toml"))
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    assert registry.load_user_list() == []
    key = registry.FOLDER_PREFIX + "class-llama"
    at = run_view("attention", params={"model": key, "text": "a dog ran"})
    assert_no_exception(at)
    assert at.selectbox(key="model").value == key


def test_an_operators_folder_gone_is_named_without_the_servers_folders(tmp_path, own_list, monkeypatch):
    """A hosted server's listed folder that went away (moved, a volume not mounted) is one sentence on every page
    that offers it, naming the model and its folder's name: it named the folder's absolute path to every visitor,
    as a broken list's problems, kept to the server's log, do not."""
    import shutil

    folder = tmp_path / "srv-private-models" / "class-llama"
    build("llama", folder)
    (tmp_path / "models.toml").write_text(f'[[model]]\npath = "{folder}"\ntitle = "Class Llama"\n', encoding="utf-8")
    monkeypatch.setenv(registry.MODELS_LIST, str(tmp_path / "models.toml"))
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    assert registry.load_user_list() == []
    key = registry.FOLDER_PREFIX + "class-llama"
    shutil.rmtree(folder)
    for page, params in (("attention", {"model": key, "text": "a dog ran"}), ("models", {"pick": key, "check": "1"})):
        at = run_view(page, params=params)
        assert_no_exception(at)
        said = shown_text(at)
        assert "Class Llama is not available here" in said and "class-llama" in said, (page, said)
        assert "srv-private-models" not in said and str(tmp_path) not in said, (page, said)
    for lang in ("ja", "ko"):  # core's reason carries its key: the reader's words, not the English
        said = shown_text(run_view("attention", params={"model": key, "lang": lang}))
        assert i18n.text(lang, "models", "unavailable_folder_gone", folder="class-llama") in said, said
        assert "is gone" not in said, said


def test_a_checked_model_shows_its_time_and_the_budget_refuses_in_words(tmp_path, own_list, monkeypatch):
    from core.models import local

    folder = tmp_path / "my-llama"
    build("llama", folder)
    key = registry.register_folder(folder)
    at = run_view("models", params={"pick": key, "tokens": "300"})
    assert_no_exception(at)
    assert not any(" s on this server" in c.value for c in at.caption)  # not loaded: memory only
    at = run_view("models", params={"pick": key, "check": "1", "tokens": "300"})
    assert_no_exception(at)
    assert any("At 300 tokens, about" in c.value and " s on this server" in c.value for c in at.caption)
    # the formula named is the one the estimate counts (local.forward_flops): 4 n² d per head and layer
    d = registry.RECORDS[key].capabilities.head_dim
    caps = registry.RECORDS[key].capabilities
    assert local.forward_flops(0, caps, 300) == 4 * caps.n_layers * caps.n_heads * 300**2 * d
    assert any(f"4·n²·d per head and layer, d = {d} the head size" in c.value for c in at.caption)
    assert not at.warning
    monkeypatch.setattr(local, "MAX_RUN_SECONDS", 0.0)
    at = run_view("models", params={"pick": key, "check": "1", "tokens": "300"})
    assert_no_exception(at)
    assert any("would refuse" in w.value for w in at.warning)
    assert any("above this server's 0 s" in c.value for c in at.caption)


def test_a_folder_name_with_markdown_is_shown_as_typed(tmp_path, own_list):
    """A learner's folder name goes into markdown sentences (the confirmation, a load's error and its reason, where
    the weights are from) escaped: `*` and `_` stay characters, never emphasis."""
    folder = tmp_path / "my_*llama*"
    build("llama", folder)
    at = _add(folder)
    assert_no_exception(at)
    assert at.success and "my\\_\\*llama\\*" in at.success[0].value, [s.value for s in at.success]
    key = _added_key(at)
    (folder / "model.safetensors").unlink()  # the weights gone after adding: the load fails in words
    page = _open(at, "attention", {"model": key, "text": "a dog ran"})
    assert_no_exception(page)
    assert page.error and "my\\_\\*llama\\*" in page.error[0].value, [e.value for e in page.error]
    assert "my_*llama*" not in page.error[0].value  # the reason names the folder too: escaped as well
    build("llama", folder)  # the weights back: the caption saying where they are from names the folder escaped
    page = _open(at, "attention", {"model": key, "text": "a dog ran"})
    notes = [c.value for c in page.caption if "from the folder" in c.value]
    assert notes and "my\\_\\*llama\\*" in notes[0] and "my_*llama*" not in notes[0], notes


def test_the_antecedents_recompute_button_names_a_folder_as_typed(tmp_path, own_list):
    """/antecedents' live recompute button (a markdown label) names the learner's folder escaped."""
    folder = tmp_path / "my_*llama*"
    build("llama", folder)
    key = registry.register_folder(folder)
    at = run_view("antecedents", params={"model": key})
    assert_no_exception(at)
    labels = [b.label for b in at.button if "Recompute" in b.label]
    assert labels and "my\\_\\*llama\\*" in labels[0], [b.label for b in at.button]


def test_a_folder_of_pickled_or_broken_weights_is_refused_on_the_page_before_it_is_added(tmp_path, own_list):
    """Pickled weights only, a garbage model.safetensors, a 401-digit size: the add form says why in one sentence
    (plain text), nothing is added to the visitor's models, no exception box."""
    import json

    import torch
    from safetensors.torch import load_file

    cases = {"pickled": "pickled", "garbage": "not a safetensors file", "digits": "401 digits"}
    for name in cases:
        build("llama", tmp_path / name)
    weights = tmp_path / "pickled" / "model.safetensors"
    torch.save(load_file(weights), tmp_path / "pickled" / "pytorch_model.bin")
    weights.unlink()
    (tmp_path / "garbage" / "model.safetensors").write_bytes(b"\xff" * 4096)
    config = json.loads((tmp_path / "digits" / "config.json").read_text())
    (tmp_path / "digits" / "config.json").write_text(json.dumps({**config, "hidden_size": int("7" * 401)}))
    for name, words in cases.items():
        at = _add(tmp_path / name)
        assert_no_exception(at)
        assert at.error and not at.success, name
        reason = " ".join(t.value for t in at.text)
        assert words in reason and "\n" not in reason.strip(), reason
        added = at.session_state[models.OWN_MODELS] if models.OWN_MODELS in at.session_state else {}
        assert not added, added


def test_a_shipped_models_contract_is_shown_and_a_link_cannot_name_a_path(tmp_path, own_list, monkeypatch):
    """With no folder added, the picker offers the shipped models (their contract reads the same way): a link's
    pick selects one; a path in the link is not an option (ignored, named in the notice, the default shown) and
    no folder box appears on a hosted server."""
    at = run_view("models", params={"pick": "smollm2", "tokens": "100"})
    assert_no_exception(at)
    table = at.dataframe[0].value
    values = dict(zip(table["capability"], table["value"]))
    assert values["layers"] == "30" and values["heads"] == "9 query / 3 key-value"
    assert any(c.value.startswith("At 100 tokens, about") for c in at.caption)
    assert not at.checkbox, "a shipped model is not loaded and checked on this page"
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    for path in ("/etc/passwd", str(tmp_path), "../../etc"):
        at = run_view("models", params={"pick": path})
        assert_no_exception(at)
        assert at.selectbox(key="pick").value == "minilm"
        assert any("pick" in w.value for w in at.warning), [w.value for w in at.warning]
        assert not at.text_input


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_refused_folder_is_refused_in_the_readers_words(tmp_path, own_list, lang):
    """The reason a folder is refused was core's English sentence under the reader's own heading; where core knows the
    reason without a library's words (a core.models.Reason), the page says it in the reader's language."""
    path = str(tmp_path / "nowhere")
    at = run_view("models", params={"lang": lang})
    box = at.selectbox(key="pick")  # the reader's option, as a browser sends it (AppTest's is formatted in English)
    send_raw(box, string_value=box.proto.options[box.proto.default])
    at.text_input[0].input(path)
    at.button[0].click().run()
    assert_no_exception(at)
    reason = " ".join(t.value for t in at.text)
    assert "not a model folder" not in reason, reason
    assert reason == i18n.text(lang, "models", "folder_refused", path=path, env=local.FOLDER_ROOTS_ENV), reason


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_folder_too_large_a_hub_id_offline_and_alibi_inside_are_refused_in_the_readers_words(
    tmp_path, own_list, monkeypatch, lang
):
    """Three refusals a learner meets on a laptop run (the size limit, a hub id while offline, a Bloom-like model whose
    ALiBi bypasses the attention interface) were core's English under the reader's heading: each is now a
    core.models.Reason, said from [models] folder_<...>."""
    import transformers

    build("llama", tmp_path / "big-llama")
    transformers.MptConfig(vocab_size=30, d_model=32, n_heads=4, n_layers=2).save_pretrained(tmp_path / "mpt")
    monkeypatch.setattr(local, "MAX_PARAMETERS", 1000)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cases = {
        str(tmp_path / "big-llama"): "folder_too_large",
        "tiny-org/tiny-llama": "folder_hub_offline",
        str(tmp_path / "mpt"): "folder_alibi_inside",
    }
    for path, key in cases.items():
        with pytest.raises(local.ModelFolderError) as err:
            local.describe_folder(path, local.visitor_allowed())
        why = err.value.args[0]
        assert why.key == key and str(why) == i18n.text("en", "models", key, **why.fields), why  # the same English
        at = run_view("models", params={"lang": lang})
        box = at.selectbox(key="pick")  # the reader's option, as a browser sends it
        send_raw(box, string_value=box.proto.options[box.proto.default])
        at.text_input[0].input(path)
        at.button[0].click().run()
        assert_no_exception(at)
        said = " ".join(t.value for t in at.text)
        assert said == i18n.text(lang, "models", key, **why.fields), said
