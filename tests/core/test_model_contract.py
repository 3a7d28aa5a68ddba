"""The model contracts' signatures, checked: every member core/models/base.py's AttentionModel declares (and
core/models/seq2seq.py's EncoderDecoderModel) has, in each implementation, the same parameters (names, kinds,
defaults) and the same types wherever the implementation writes one, so a topic written against the contract runs
on every model. No model is loaded: this reads the classes only."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from core.models.base import AttentionModel
from core.models.hf import HFAttentionModel
from core.models.moe_model import MoEModel
from core.models.seq2seq import EncoderDecoderModel, Seq2Seq

IMPLEMENTATIONS = [(AttentionModel, HFAttentionModel), (AttentionModel, MoEModel), (EncoderDecoderModel, Seq2Seq)]


def declared(contract) -> dict[str, object]:
    """{name: the contract's function} of every member it declares (abstract or given), properties' getters."""
    out = {}
    for name, member in vars(contract).items():
        if isinstance(member, property):
            member = member.fget
        if inspect.isfunction(member) and not name.startswith("_"):
            out[name] = member
    return out


def signature_of(function) -> inspect.Signature:
    return inspect.signature(function, eval_str=False)


def differences(contract, implementation) -> list[str]:
    found = []
    for name, wanted in declared(contract).items():
        got = getattr(implementation, name, None)
        if isinstance(inspect.getattr_static(implementation, name, None), property):
            got = inspect.getattr_static(implementation, name).fget
        if got is None:
            found.append(f"{name}: missing")
            continue
        want, have = signature_of(wanted), signature_of(got)
        want_params, have_params = list(want.parameters.values()), list(have.parameters.values())
        if isinstance(inspect.getattr_static(implementation, name), staticmethod):
            want_params = want_params[1:]  # a static implementation takes no self
        if [(p.name, p.kind, p.default) for p in want_params] != [(p.name, p.kind, p.default) for p in have_params]:
            found.append(f"{name}: parameters {have} against the contract's {want}")
            continue
        for w, h in zip(want_params, have_params):
            if w.name != "self" and w.annotation is inspect.Parameter.empty:
                found.append(f"{name}: the contract gives {w.name} no type")
            if h.annotation is not inspect.Parameter.empty and h.annotation != w.annotation:
                found.append(f"{name}: {h.name} is {h.annotation}, the contract says {w.annotation}")
        if want.return_annotation is inspect.Signature.empty:
            found.append(f"{name}: the contract gives no return type")
        elif have.return_annotation not in (inspect.Signature.empty, want.return_annotation):
            found.append(f"{name}: returns {have.return_annotation}, the contract says {want.return_annotation}")
    return found


@pytest.mark.parametrize(("contract", "implementation"), IMPLEMENTATIONS, ids=lambda c: c.__name__)
def test_an_implementation_has_the_contracts_typed_signatures(contract, implementation):
    assert not inspect.isabstract(implementation), f"{implementation.__name__} leaves a member undeclared"
    assert differences(contract, implementation) == []


def test_the_check_finds_a_signature_that_drifted():
    class Drifted(HFAttentionModel):
        def run(self, batch, logits: bool = True):  # hidden_states gone
            return super().run(batch, logits)

        def layer_qk(self, batch, layer: str):  # another type
            return super().layer_qk(batch, int(layer))

    found = differences(AttentionModel, Drifted)
    assert any(f.startswith("run: parameters") for f in found) and any(f.startswith("layer_qk: layer") for f in found)


ROOT = Path(__file__).resolve().parents[2]


def _path_of(module: str) -> Path | None:
    path = ROOT / module.replace(".", "/")
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports_of(module: str) -> set[str]:
    """The core modules `module` imports, inside functions too (a lazy import is still a loop), from its source."""
    path = _path_of(module)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            found |= {f"{target}.{a.name}" if _path_of(f"{target}.{a.name}") else target for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {t for t in found if t.startswith("core") and _path_of(t) and t != module}


def test_core_models_is_in_no_import_loop():
    """No module of core/models imports, even lazily, anything that leads back to core/models; what core/models
    uses outside itself is plain math (masks, sdpa, state and the MoE layer's math) and where the server computes
    (core.device: SmolLM2 is loaded there), never a topic that uses models
    (as the shipped encoder-decoder of core/encoder_decoder: its folder and status live in core/models/seq2seq.py)."""
    ours = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "core" / "models").glob("*.py")}
    edges, todo = {}, sorted(ours)
    while todo:
        module = todo.pop()
        if module not in edges:
            edges[module] = _imports_of(module)
            todo += sorted(edges[module])
    outside = {t for m in ours for t in edges[m] if not t.startswith("core.models")}
    assert outside <= {"core.masks", "core.sdpa", "core.state", "core.moe.balance", "core.moe.data",
                       "core.moe.layer", "core.moe.specialisation", "core.device"}, outside  # fmt: skip
    back = {m for m in edges if not m.startswith("core.models") and edges[m] & ours}
    assert back == set(), f"these lead back into core/models: {back}"
