"""/models: a learner adds a folder (laptop), sees its capabilities and its parity with eager attention; the folder
then appears in the picker of the pages that can use it, which run on it; bad folders get a clear message and
the app keeps running; a hosted server offers no folder box."""

from __future__ import annotations

import pytest

from core.models import registry
from tests.apptest_helpers import assert_no_exception, run_view
from tests.tiny_models import build, forget_registrations


@pytest.fixture()
def own_list(tmp_path, monkeypatch):
    """The laptop's remembered-folders file in a temporary place; registrations undone afterwards."""
    monkeypatch.setattr(registry, "_user_list", lambda: tmp_path / "models.toml")
    monkeypatch.delenv(registry.HOSTED_LIST, raising=False)
    before = set(registry.LOADERS)
    yield tmp_path / "models.toml"
    forget_registrations(before)


def _add(folder) -> object:
    at = run_view("models")
    at.text_input[0].input(str(folder))
    at.button[0].click().run()
    return at


def test_a_folder_is_added_checked_and_used_by_the_pages(tmp_path, own_list):
    folder = tmp_path / "my-llama"
    build("llama", folder)
    at = _add(folder)
    assert_no_exception(at)
    assert at.success, "no confirmation"
    key = registry.FOLDER_PREFIX + "my-llama"
    assert key in registry.CAPABILITIES and str(folder) in own_list.read_text(encoding="utf-8")
    at = run_view("models", params={"pick": key, "check": "1"})
    assert_no_exception(at)
    assert any("eager attention" in c.value and "equal" in c.value for c in at.caption), "no parity caption"
    assert at.dataframe, "no capability table"
    for topic in ("attention", "padded-batch", "head-detectors"):
        page = run_view(topic, params={"model": key})
        assert_no_exception(page)
        assert not page.error, (topic, [e.value for e in page.error])


def test_bad_folders_get_a_message_and_the_app_keeps_running(tmp_path, own_list):
    (tmp_path / "not-a-model").mkdir()
    (tmp_path / "not-a-model" / "config.json").write_text('{"model_type": "nothing-known"}', encoding="utf-8")
    for bad in (tmp_path / "nowhere", tmp_path / "not-a-model", "<script>alert(1)</script>"):
        at = _add(bad)
        assert_no_exception(at)
        assert at.error, bad
        reason = " ".join(t.value for t in at.text)  # the reason, as plain text (st.text), never markdown
        assert any(why in reason for why in ("no such folder", "does not know this architecture", "hub id")), reason
        assert not any("<script>" in m.value for m in at.markdown)
    # one story about downloads: a folder is read in place, a hub id downloads only with internet
    text = " ".join(m.value for m in at.markdown)
    assert (
        "Nothing is downloaded here" not in text and "A hub id is downloaded only where the server has internet" in text
    )
    assert not registry.CAPABILITIES.keys() & {registry.FOLDER_PREFIX + "not-a-model"}


def test_a_hosted_server_offers_no_folder_box(tmp_path, monkeypatch, own_list):
    monkeypatch.setenv(registry.HOSTED_LIST, str(tmp_path / "allowed.toml"))
    at = run_view("models")
    assert_no_exception(at)
    assert not at.text_input and at.info


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
    d = registry.CAPABILITIES[key].head_dim
    caps = registry.CAPABILITIES[key]
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
    key = registry.FOLDER_PREFIX + "my_*llama*"
    (folder / "model.safetensors").unlink()  # the weights gone after adding: the load fails in words
    page = run_view("attention", params={"model": key, "text": "a dog ran"})
    assert_no_exception(page)
    assert page.error and "my\\_\\*llama\\*" in page.error[0].value, [e.value for e in page.error]
    assert "my_*llama*" not in page.error[0].value  # the reason names the folder too: escaped as well
    build("llama", folder)  # the weights back: the caption saying where they are from names the folder escaped
    page = run_view("attention", params={"model": key, "text": "a dog ran"})
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
