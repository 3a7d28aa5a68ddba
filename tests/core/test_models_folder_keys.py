"""core.models.registry.register_folder: two learner models of the same name (two checkpoint-500 folders, or
org-a/model and org-b/model on the hub) get a key each, so neither replaces the other's registration or is shown
the other's cached runs (the pages' caches are keyed by the registry key); the same folder added again keeps its key."""

from __future__ import annotations

import pytest

from core.models import registry
from tests.tiny_models import build, forget_registrations


@pytest.fixture()
def registrations():
    before = set(registry.LOADERS)
    yield
    forget_registrations(before)


def test_two_folders_of_one_name_get_a_key_each(tmp_path, registrations):
    build("llama", tmp_path / "run-a" / "checkpoint-500")
    build("bert", tmp_path / "run-b" / "checkpoint-500")
    first = registry.register_folder(tmp_path / "run-a" / "checkpoint-500")
    second = registry.register_folder(tmp_path / "run-b" / "checkpoint-500")
    assert first == registry.FOLDER_PREFIX + "checkpoint-500" and second != first
    assert registry.CAPABILITIES[first].kind == "decoder" and registry.CAPABILITIES[second].kind == "encoder"
    assert registry.FOLDERS[first].parent.name == "run-a" and registry.FOLDERS[second].parent.name == "run-b"
    assert registry.TITLES[first] == "checkpoint-500" and registry.TITLES[second] == "run-b/checkpoint-500"
    assert registry.register_folder(tmp_path / "run-b" / "checkpoint-500") == second  # the same folder: same key
    assert registry.register_folder(tmp_path / "run-a" / "checkpoint-500") == first
