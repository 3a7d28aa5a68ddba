"""A model's name on a page: a shipped model's in the reader's words, from the catalogs under its registry key
([model_titles]); a learner's folder's as its record has it (data, the same in every language)."""

import pytest

from app import i18n
from core.models import registry
from core.rnn_attention.model import RECORD as RNN_RECORD
from tests.apptest_helpers import function_app


def test_every_shipped_model_is_named_in_every_catalog_and_its_record_holds_no_words():
    shipped = [key for key, record in registry.RECORDS.items() if record.folder is None] + [RNN_RECORD.key]
    assert {"minilm", "smollm2", "moe", registry.ENCODER_DECODER} <= set(shipped)
    for key in shipped:
        assert registry.RECORDS.get(key, RNN_RECORD).title is None, key
        for lang in i18n.languages():
            assert isinstance(i18n.section(lang, "model_titles").get(key), str), (lang, key)


def _models_table():
    """/encoder-decoder's table of architectures, its models named by key (a shipped model's and a folder's)."""
    import streamlit as st

    from app import models, ui
    from core.models import examples, registry

    own = registry.ModelRecord("folder:my-run-0a1b2c", "my-run (trained here)", lambda: None)
    models.session_models()[own.key] = own
    rows = [
        examples.ExampleRow("encoder-decoder", (("marian", "encoder-decoder"),), (registry.ENCODER_DECODER,)),
        examples.ExampleRow("decoder", (("gpt2", "decoder"),), ("smollm2", "moe", own.key)),
    ]
    columns = ("arch_col_kind", "arch_col_attention", "arch_col_models", "arch_col_app")
    models.show_examples(ui.texts("encoder_decoder"), lambda: rows, columns, "arch_", "arch_attention_")
    for key in ("moe:collapsed", "rnn-attention"):  # loaded by name on /moe and /rnn-attention (a spinner's words)
        st.markdown(models.short_name(key))


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_models_table_names_shipped_models_in_the_readers_words_and_a_folder_by_its_own_name(lang):
    at = function_app(_models_table)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    title = lambda key: i18n.text(lang, "model_titles", key)  # noqa: E731
    column = at.dataframe[0].value[i18n.text(lang, "encoder_decoder", "arch_col_app")].tolist()
    assert column == [title("encoder-decoder"), f"{title('smollm2')}, {title('moe')}, my-run (trained here)"]
    assert [m.value for m in at.markdown] == [title("moe:collapsed"), title("rnn-attention")]
    if lang != "en":
        assert "trained here" not in column[0] and "repo" not in column[1] and "GRU encoder" not in at.markdown[1].value
