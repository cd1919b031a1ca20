# A stand-in for the registry's nginx:1.22, made from Debian 12's nginx
# (1.22.1) where no registry answers (scripts/image.sh --services;
# docs/operations.md, "With podman, and where no registry answers"). Tagged
# docker.io/library/nginx:1.22, it does what docker/compose.scale.yaml asks
# of the official image: `nginx -g 'daemon off;'` in the foreground as PID 1,
# a user `nginx` for the workers (docker/nginx.conf says `user nginx;`),
# /var/cache/nginx, the default log files sent to stdout and stderr, and
# SIGQUIT (a graceful stop) as the stop signal. Without a mounted
# /etc/nginx/nginx.conf it serves Debian's default page on port 80 (its
# workers as www-data); the official image's /etc/nginx/conf.d layout and
# entry point scripts are not reproduced.
FROM debian:12-slim
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d \
 && chmod 755 /usr/sbin/policy-rc.d \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx \
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d \
 && useradd --system --user-group --no-create-home --home-dir /nonexistent \
	--shell /usr/sbin/nologin nginx \
 && mkdir -p /var/cache/nginx \
 && ln -sf /dev/stdout /var/log/nginx/access.log \
 && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
