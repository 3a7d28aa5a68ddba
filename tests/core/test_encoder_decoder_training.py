"""core/encoder_decoder/training.py, the loop the Transformer and the GRU share: the held-out loss is the loss per
labelled token (checked against one cross-entropy over every token at once), the loop is deterministic in its seed,
logs the steps it promises and stops on a CPU budget."""

import torch

from core.encoder_decoder import grammar, training
from core.rnn_attention import model as rm


def tiny_gru():
    from core.encoder_decoder import model as ed

    tok = ed.make_tokenizer()
    shape = rm.Shape(vocab=len(grammar.vocabulary()), embed=8, hidden=6, decoder=10, attention=7)
    return shape, tok


def test_mean_loss_weights_each_batch_by_its_labelled_tokens():
    shape, tok = tiny_gru()
    torch.manual_seed(0)
    model = rm.RNNSearch(shape, tok.pad_token_id).eval()
    pairs = grammar.generate(7, 3)
    got = training.mean_loss(lambda b: rm.loss_of(model, b), lambda ps: rm.batch(tok, ps), pairs, batch_size=3)
    with torch.no_grad():  # one batch of everything: cross-entropy summed over labelled tokens, divided by their count
        b = rm.batch(tok, pairs)
        logits, _ = model(b["source_ids"], b["decoder_ids"])
        flat = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), b["labels"].flatten(), ignore_index=-100, reduction="sum"
        )
        expected = float(flat) / int((b["labels"] != -100).sum())
    assert abs(got - expected) <= 1e-5 * max(1.0, abs(expected))


def test_fit_is_deterministic_logs_its_steps_and_keeps_a_cpu_budget():
    train_pairs, held_out = grammar.generate(50, 0), grammar.generate(10, 1, held_out=True)
    logged = []
    a_model, _, a = rm.train(train_pairs, held_out, seed=4, epochs=2, batch_size=16, log_every=3,
                             shape=tiny_gru()[0], on_log=lambda *x: logged.append(x))  # fmt: skip
    b_model, _, b = rm.train(train_pairs, held_out, seed=4, epochs=2, batch_size=16, log_every=3, shape=tiny_gru()[0])
    assert all(torch.equal(p, q) for p, q in zip(a_model.parameters(), b_model.parameters()))
    assert a.train_loss == b.train_loss and a.held_out_loss == b.held_out_loss
    assert a.steps == [3, 6, 8] and a.held_out_steps == [4, 8]  # 4 batches an epoch; the last step always logged
    assert [s for s, _, _ in logged] == a.steps and not a_model.training
    _, _, cut = rm.train(train_pairs, held_out, seed=4, epochs=2, batch_size=16, shape=tiny_gru()[0], cpu_budget=0.0)
    assert cut.held_out_steps == [1] and cut.steps == []  # one step, one held-out loss, then stop
