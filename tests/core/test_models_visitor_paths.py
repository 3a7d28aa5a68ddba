"""What a visitor may name as a model folder (core/models/local.py, `allowed` = visitor_allowed()): only a folder that
lies, symlinks followed, under an allowed root, with nothing inside leading out; every refusal is the same
sentence, so the answers cannot map the server's files (a missing path, a file, a folder without config.json and a
path outside the roots read alike)."""

from __future__ import annotations

import pytest

from core.models import local
from tests.tiny_models import build


@pytest.fixture()
def roots(tmp_path, monkeypatch):
    """An allowed root holding a real model, and a model outside it."""
    inside, outside = tmp_path / "allowed", tmp_path / "elsewhere"
    inside.mkdir()
    build("llama", inside / "good")
    build("llama", outside / "secret-model")
    (outside / "secret.txt").write_text("not for visitors", encoding="utf-8")
    monkeypatch.setenv(local.FOLDER_ROOTS_ENV, str(inside))
    return inside, outside


def _reason(path) -> str:
    with pytest.raises(local.ModelFolderError) as err:
        local.describe_folder(path, local.visitor_allowed())
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    return message.removeprefix(f"{path}: ")


def test_a_folder_under_the_root_is_described(roots):
    inside, _ = roots
    assert local.describe_folder(inside / "good", local.visitor_allowed()).kind == "decoder"


def test_every_refusal_is_the_same_sentence(roots, tmp_path):
    inside, outside = roots
    (inside / "empty").mkdir()
    (inside / "a-file").write_text("x", encoding="utf-8")
    (inside / "link-out").symlink_to(outside / "secret-model")  # a symlink under the root to a model outside
    (inside / "link-config").mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (inside / "link-config" / name).symlink_to(inside / "good" / name)
    (inside / "link-config" / "config.json").symlink_to(outside / "secret.txt")  # a config read from outside
    (inside / "link-weights").mkdir()
    (inside / "link-weights" / "config.json").symlink_to(inside / "good" / "config.json")
    (inside / "link-weights" / "model.safetensors").symlink_to(outside / "secret-model" / "model.safetensors")
    paths = [
        inside / "missing",
        inside / "a-file",
        inside / "empty",
        inside / "link-out",
        inside / "link-config",
        inside / "link-weights",
        inside / ".." / "elsewhere" / "secret-model",
        outside / "secret-model",
        outside / "secret.txt",
        outside / "missing",
        "/etc/passwd",
        "/etc",
    ]
    reasons = {_reason(p) for p in paths}
    assert len(reasons) == 1, reasons
    assert local.FOLDER_ROOTS_ENV in reasons.pop()  # names the setting, never the roots' values


def test_symlinks_inside_the_root_are_fine(roots):
    inside, _ = roots
    (inside / "alias").symlink_to(inside / "good")
    assert local.describe_folder(inside / "alias", local.visitor_allowed()).kind == "decoder"


def test_the_default_root_is_the_home_folder(monkeypatch):
    monkeypatch.delenv(local.FOLDER_ROOTS_ENV, raising=False)
    from pathlib import Path

    assert local.visitor_allowed()[0] == str(Path.home())


def test_each_refusals_english_is_its_words_in_en(tmp_path, roots):
    """A refusal is core's English (a server's log, a terminal) and a key the page says in the reader's language: the
    two must not drift apart, so each keyed refusal's English is its own [models] words in en, fields filled."""
    from app import i18n

    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "no-config").mkdir()
    cases = {
        "": "folder_empty",
        str(tmp_path / "missing"): "folder_no_such",
        str(tmp_path / "a-file"): "folder_a_file",
        str(tmp_path / "no-config"): "folder_no_config",
    }
    refusals = []
    for path, key in cases.items():
        with pytest.raises(local.ModelFolderError) as err:
            local.describe_folder(path)
        refusals.append((err.value.args[0], key))
    for path, key, allowed in (
        ("/etc", "folder_refused", local.visitor_allowed()),
        ("org/name", "folder_not_allowed", ()),
    ):
        with pytest.raises(local.ModelFolderError) as err:
            local.describe_folder(path, allowed)
        refusals.append((err.value.args[0], key))
    for why, key in refusals:
        assert why.key == key and str(why) == i18n.text("en", "models", key, **why.fields), (key, str(why))
