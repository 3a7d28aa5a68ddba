"""core.models.registry.register_folder: two learner models of the same name (two checkpoint-500 folders, or
org-a/model and org-b/model on the hub) get a key each, so neither replaces the other's registration or is shown
the other's cached runs (the pages' caches are keyed by the registry key); the same folder added again keeps its key."""

from __future__ import annotations

import pytest

from core.models import registry
from tests.tiny_models import build, forget_registrations


@pytest.fixture()
def registrations():
    before = set(registry.RECORDS)
    yield
    forget_registrations(before)


def test_two_folders_of_one_name_get_a_key_each(tmp_path, registrations):
    build("llama", tmp_path / "run-a" / "checkpoint-500")
    build("bert", tmp_path / "run-b" / "checkpoint-500")
    first = registry.register_folder(tmp_path / "run-a" / "checkpoint-500")
    second = registry.register_folder(tmp_path / "run-b" / "checkpoint-500")
    assert first == registry.FOLDER_PREFIX + "checkpoint-500" and second != first
    assert (
        registry.RECORDS[first].capabilities.kind == "decoder"
        and registry.RECORDS[second].capabilities.kind == "encoder"
    )
    assert (
        registry.RECORDS[first].folder.parent.name == "run-a" and registry.RECORDS[second].folder.parent.name == "run-b"
    )
    assert registry.title(first) == "checkpoint-500" and registry.title(second) == "run-b/checkpoint-500"
    assert registry.register_folder(tmp_path / "run-b" / "checkpoint-500") == second  # the same folder: same key
    assert registry.register_folder(tmp_path / "run-a" / "checkpoint-500") == first
