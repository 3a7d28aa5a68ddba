"""How transformers know where a token is: the math behind the /positions page, one module per method.

- `sinusoidal`: fixed sin/cos vectors added to the input (Vaswani et al. 2017).
- `learned`: one trained vector per position (BERT, MiniLM).
- `relative`: a learned vector per clipped offset, added to the scores (Shaw et al. 2018).
- `alibi`: a linear distance penalty per head (Press et al. 2022).
- `rope`: q and k rotated by position (Su et al. 2021); `rope_bands` splits a real model's scores by frequency.

Every module numbers frequency pairs from 0: pair i = 0 .. d/2 - 1 turns by base^(-2i/d) radians per position.
Each part of the page calls one `*_view` function here and draws the dataclass it returns.
"""
