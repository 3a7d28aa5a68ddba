"""What each page needs of a model, declared once: a test on the model's capabilities (capabilities.py, beside it)
and the word ([models] need_<word>) that names it when a chosen model lacks it. The pages' model pickers offer a
learner's folder where its capabilities pass the page's need (app/models.py pick_model), and /models lists the pages
a model's capabilities fit (pages_for)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .capabilities import Capabilities

EXACT_POSITIONS = ("rope", "learned", "sinusoidal", "none")  # nothing added to the scores


def exact_here(caps: Capabilities) -> bool:
    """True when softmax(scale q . k) over the keys a query sees is the model's own weights: an encoder or a
    decoder, no score bias, no sliding window, no soft-capping, no learned sinks."""
    return (
        caps.kind in ("encoder", "decoder")
        and caps.positions.kind in EXACT_POSITIONS
        and all(w is None for w in caps.sliding_window)
        and caps.attn_softcap is None
        and not caps.sinks
    )


@dataclass(frozen=True)
class Need:
    """What a page asks of a model, as a test on its Capabilities and the words ([models] need_<word>) that name
    it when a chosen model lacks it."""

    word: str
    test: Callable[[Capabilities], bool]

    def __call__(self, caps: Capabilities) -> bool:
        return self.test(caps)


# /logit-lens, /kv-cache, /ablation: a causal model with a final norm and an unembedding (transformers' *ForCausalLM)
DECODER = Need("decoder", lambda caps: caps.kind == "decoder")
# /transformer-xl's live run: a decoder whose pass takes any (n, n) mask (Bloom builds its ALiBi from a 2-D padding
# mask inside its own code: no other mask reaches it)
# /kv-cache: a decoder whose cache keeps keys and values per key/value head (the page's formula and eviction);
# DeepSeek's latent attention caches one compressed vector per token instead
KV_DECODER = Need("kv_decoder", lambda caps: DECODER(caps) and caps.kv_latent_dim is None)
MASKED_DECODER = Need("masked_decoder", lambda caps: DECODER(caps) and caps.positions.kind != "alibi")
# /positions, learned part: a table of position vectors added to the embeddings (BERT's or GPT-2's)
LEARNED_POSITIONS = Need("learned", lambda caps: caps.positions.kind == "learned" and caps.kind != "encoder-decoder")
# /positions, RoPE bands: every dimension pair of a head rotated (no partial rotary, as GPT-NeoX's)
ROPE = Need(
    "rope",
    lambda caps: (
        caps.positions.kind == "rope" and caps.positions.rotary_fraction == 1 and caps.kind != "encoder-decoder"
    ),
)
# any page of the attention contract: attention that goes through transformers' attention interface (not T5's)
ATTENTION_CONTRACT = Need("attention_contract", lambda caps: caps.through_attention_interface)
# /rope-scaling's live run: the loss of every next token (a decoder) with its RoPE scaled; one RoPE base for every
# layer (Gemma 3's differs by layer type: its config has no single base, its rotary module takes the layer's type)
ROPE_DECODER = Need("rope_decoder", lambda caps: DECODER(caps) and ROPE(caps) and caps.positions.rope_theta is not None)
# /long-maps: weights that are softmax(q . k) alone (no score bias, sliding window, soft-capping or sinks)
EXACT_SOFTMAX = Need("exact_softmax", exact_here)
# /why-head's RoPE part: a whole-head RoPE decoder whose weights are its scores' softmax under the causal mask alone
# (no sliding window, soft-capping or sinks), so the patterns it draws and compares are the model's own
EXACT_ROPE_DECODER = Need("exact_rope_decoder", lambda caps: ROPE_DECODER(caps) and exact_here(caps))
# /multi-head's walk and order check: a BERT layer recomputed by hand from its weights (MiniLM's layout)
BERT_LAYER = Need("bert_layer", lambda caps: caps.bert_layer)
# /encoder-decoder: an encoder-decoder whole (decoder and cross-attention), through core/models/seq2seq.py
ENCODER_DECODER = Need("encoder_decoder", lambda caps: caps.kind == "encoder-decoder")


# Each page (and part) that offers a learner's folder, and what it needs of it: the pickers read their need here.
PAGE_NEEDS: dict[str, Need] = {
    "attention": ATTENTION_CONTRACT,
    "padded-batch": ATTENTION_CONTRACT,
    "head-detectors": ATTENTION_CONTRACT,
    "antecedents": ATTENTION_CONTRACT,
    "long-maps": EXACT_SOFTMAX,
    "multi-head": BERT_LAYER,
    "positions/learned": LEARNED_POSITIONS,
    "positions/rope": ROPE,
    "rope-scaling": ROPE_DECODER,
    "why-head/rope": EXACT_ROPE_DECODER,
    "why-head/absolute": BERT_LAYER,
    "logit-lens": DECODER,
    "ablation": DECODER,
    "kv-cache": KV_DECODER,
    "transformer-xl": MASKED_DECODER,
    "encoder-decoder": ENCODER_DECODER,
}


def pages_for(caps: Capabilities) -> tuple[str, ...]:
    """The pages (URL without the slash) on which a model with these capabilities can be picked, in PAGE_NEEDS'
    order (a page listed once when several of its parts can use it)."""
    return tuple(dict.fromkeys(page.split("/")[0] for page, need in PAGE_NEEDS.items() if need(caps)))
