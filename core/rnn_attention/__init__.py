"""Before the Transformer: a GRU encoder-decoder with additive (Bahdanau) attention trained on the same generated
English -> Japanese / Korean task as the shipped Transformer (model.py), its translations and alignment
(translate.py), and the comparisons with the Transformer: time against length, path length, cost per layer, and the
gradient that reaches a source word (compare.py)."""
