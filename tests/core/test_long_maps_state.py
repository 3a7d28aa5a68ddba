"""core/long_maps/state.py: /long-maps' link as its declaration reads it (the page's widgets and the lessons read it
the same way): the lengths, layers and heads a source offers, and a zoom window that never runs past the document.
The expected values are worked by hand from the declared lengths and SmolLM2's config (30 layers, 9 heads)."""

from core.long_maps import state


def test_zoom_sizes_never_exceed_the_document():
    assert state.zoom_sizes(512) == ("16", "32", "64", "128", "256")
    assert state.zoom_sizes(256) == ("16", "32", "64", "128", "256")
    assert state.zoom_sizes(64) == ("16", "32", "64")
    assert state.zoom_sizes(100) == ("16", "32", "64", "100")


def test_random_source_reads_its_lengths_seed_and_window():
    s = state.STATE.read({"src": "random", "n": "1024", "zsize": "128", "seed": "7", "head": "8"})
    assert (s.n, s.zsize, s.seed, s.head, s.layer) == ("1024", "128", 7, 8, 0)
    assert (s.zq, s.zk) == (1024 - 128, 1024 - 128)  # the last tokens, on the diagonal
    s = state.STATE.read({"src": "random", "n": "1000", "head": "9", "zq": "2048", "seed": "10000", "side": "512"})
    assert (s.n, s.head, s.zq, s.seed, s.side) == ("2048", 0, 2048 - 64, 0, "256")  # each out of bounds: default


def test_smollm2_offers_its_layers_and_the_cpu_lengths():
    s = state.STATE.read({"layer": "29", "n": "16384"})
    assert (s.src, s.layer, s.n) == ("smollm2", 29, "2048")  # 16,384 only with SmolLM2's GPU copy
    assert state.STATE.read({"layer": "30"}).layer == state.DEFAULT_LAYER
    assert state.STATE.read({"src": "nowhere"}).src == "smollm2"


def test_the_loader_names_what_the_page_would_ignore_without_a_model():
    found = state.STATE.problems({"side": "512", "stat": "median", "seed": "-1", "zoom": "1"})
    assert len(found) == 4 and any("zoom is not" in f for f in found)
    assert not state.STATE.problems({"src": "random", "n": "512", "side": "64", "stat": "max", "log": "0"})
