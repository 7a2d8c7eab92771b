#!/bin/sh
# leadctl, from the self-contained release: runs leadctl on the Node.js bundled in this folder,
# whatever `node` is on PATH (or none). Resolves its own location through symlinks, so that
# /usr/local/bin/leadctl -> /opt/leadctl-VERSION-linux-ARCH/bin/leadctl works.
# Written into the release as bin/leadctl by scripts/release.mjs.
self=$(readlink -f -- "$0") || exit 2
root=${self%/bin/*}
exec "$root/node/bin/node" "$root/bin/leadctl.js" "$@"
