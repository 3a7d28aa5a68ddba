"""A small encoder-decoder this repo trains (scripts/train_encoder_decoder.py) on generated English -> Japanese and
English -> Korean sentence pairs whose word alignments are known: the data (grammar.py), the model's step-by-step
translation with every attention kept (translate.py), and how well its cross-attention heads align (alignment.py)."""
