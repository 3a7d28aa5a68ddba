"""Answer functions: (params, state) -> Answer, one registry of same-signature functions (like transformers'
ROPE_INIT_FUNCTIONS; core/lessons/answers/base.py, with the helpers they share), one module per topic beside it
(core/lessons/answers/<topic>.py, importing base only). This package imports every topic module, so that each
registers, and hands on the registry: imports run one way, package -> topics -> base -> core.lessons.kinds.

Each function is registered with the page it asks about and that page's declared state (the STATE of the topic's
core module, core/state.py): it receives the step's state parsed by that declaration, exactly as the page's widgets
parse the link, and its params parsed by its own declaration. It calls the engine the page calls, so the answer
follows the sentence, the model, the layer and the sliders the room is looking at. The lesson loader checks every
step's state and every question's params against these declarations (core.lessons.load_lesson).

Kinds: "token" (pick a token: options are the page's indexed labels '3 cat'), "choice" (pick among options),
"number" (within a tolerance), "order" (put items in order).

Number questions take an optional `tolerance` (absolute) or `rel_tolerance` (share of the answer) in params.
"""

from core.lessons.answers import (  # noqa: F401  (they register)
    ablation,
    antecedents,
    attention,
    encoder_decoder,
    flash_attention,
    head_detectors,
    kv_cache,
    linear_attention,
    logit_lens,
    long_maps,
    masks,
    models,
    moe,
    multi_head,
    padded_batch,
    positions,
    rnn_attention,
    rope_scaling,
    sdpa_gqa,
    sdpa_steps,
    transformer_xl,
    why_head,
)
from core.lessons.answers.base import ANSWER_FUNCTIONS, PAGE_STATES, compute, needs_model_pass  # noqa: F401
