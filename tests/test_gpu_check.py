"""scripts/gpu_check.py on a machine without a GPU: the dry run lists every GPU test and benchmark with its limit
(within the 10 minutes of one device call), and a real run refuses in one sentence before writing anything."""

from pathlib import Path

import torch

from benchmarks import bench_sdpa
from core.flash_attention_measured import MATERIAL_SHAPE
from scripts import gpu_check

ROOT = Path(__file__).resolve().parents[1]


def test_the_dry_run_lists_every_step_within_ten_minutes(tmp_path, capsys):
    out = tmp_path / "gpu"
    assert gpu_check.main(["--dry-run", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"would run, within {gpu_check.BUDGET_S} s in all, writing to {out}/:"
    steps = {line.split()[0]: line for line in lines[1:]}
    assert list(steps) == ["tests", "pooled", "sdpa", "material", "linear", "pages"]
    assert all(f"tests/core/{f}" in steps["tests"] for f in ("test_long_maps_pooled.py", "test_sdpa_gqa_backends.py"))
    for name in ("pooled", "sdpa", "material", "linear"):
        assert "--device cuda" in steps[name] and f"--out {out}/bench_" in steps[name]
    # 64k, 16k and 128k, both masks, then the sweep at 64k and 128k stopping in time to write its JSON
    assert "--parts target sizes sweep --sizes 16384 131072 --both-masks" in steps["pooled"]
    pooled = next(s for s in gpu_check.STEPS if s.name == "pooled")
    assert f"--deadline-s {gpu_check.POOLED_SWEEP_DEADLINE_S} " in steps["pooled"]
    assert gpu_check.POOLED_SWEEP_DEADLINE_S + 20 <= pooled.timeout_s
    assert "--shapes material" in steps["material"]
    assert (
        f"--device cuda --carried .gpu --budget-s {gpu_check.PAGES_BUDGET_S} --out {out}/gpu_pages.json"
        in steps["pages"]
    )
    pages = next(s for s in gpu_check.STEPS if s.name == "pages")
    assert gpu_check.PAGES_BUDGET_S < pages.timeout_s  # the script stops itself before the step is killed
    assert "--contexts 512 1024 2048 4096 8192 16384 32768 65536" in steps["linear"]
    assert sum(s.timeout_s for s in gpu_check.STEPS) <= gpu_check.BUDGET_S < 600
    assert not out.exists()
    for step in gpu_check.STEPS:  # every file a step names is in the repository
        assert all((ROOT / a).exists() for a in step.args if a.endswith(".py"))


def test_without_a_gpu_it_refuses_before_running_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ran = []
    monkeypatch.setattr(gpu_check, "run_step", lambda *a: ran.append(a))
    assert gpu_check.main(["--out", str(tmp_path / "gpu")]) == 2
    assert capsys.readouterr().out.startswith("No CUDA device here: nothing was run.")
    assert ran == [] and not (tmp_path / "gpu").exists()


def test_the_material_shapes_are_the_study_materials():
    shapes = bench_sdpa.material_shapes()
    assert {(s.batch, s.heads, s.seq_len, s.head_dim) for s in shapes} == {tuple(MATERIAL_SHAPE.values())}
    assert [s.dtype for s in shapes] == ["float16", "float32"] and not any(s.causal for s in shapes)
