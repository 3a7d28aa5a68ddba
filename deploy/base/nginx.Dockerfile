# Debian's nginx as a stand-in for the official nginx image (see build.sh): same config path, same foreground
# command, logs to the container's output.
ARG BASE=attention-lab-base
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nginx \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /dev/stdout /var/log/nginx/access.log \
 && ln -sf /dev/stderr /var/log/nginx/error.log
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
