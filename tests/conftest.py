"""Shared test set-up. The repository root is on sys.path through pytest's `pythonpath` (pyproject.toml), and models
load from installed packages with local_files_only=True, so no environment preamble is needed here."""
