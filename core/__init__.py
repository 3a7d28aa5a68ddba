"""Attention Lab's engine: pure torch, no UI imports. Every number a page shows is computed here."""
