# Streamlit's own floor for scripts/load_pages.py: one widget, nothing else (each action reruns this line).
import streamlit as st

st.text_area("Text", key="text")
