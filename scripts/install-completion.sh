#!/usr/bin/env bash
# Install rubick's shell completion (bash, zsh) and man pages (rubick(1), rubickd(8))
# where Debian's shells and man look for them, without `meson install`: the set-up
# command (scripts/demo.sh) runs it. PREFIX defaults to /usr for the completion
# folders bash-completion and zsh read, /usr/local for the man pages.
#   usage: scripts/install-completion.sh [DESTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-}
install -D -m 644 contrib/completion/rubick.bash "$dest/usr/share/bash-completion/completions/rubick"
install -D -m 644 contrib/completion/_rubick "$dest/usr/share/zsh/vendor-completions/_rubick"
install -D -m 644 docs/rubick.1 "$dest/usr/local/share/man/man1/rubick.1"
install -D -m 644 docs/rubickd.8 "$dest/usr/local/share/man/man8/rubickd.8"
echo "installed: bash and zsh completion of rubick, man pages rubick(1) and rubickd(8)${dest:+ under $dest}"
