"""Plotly figure builders: arrays in, figures out. No streamlit, no model calls."""
