#!/usr/bin/env bash
# Install every Debian 12 package rubick builds, tests and runs with. Idempotent.
set -euo pipefail
packages=(
	build-essential meson ninja-build pkg-config python3
	libgsl-dev libcmocka-dev libglpk-dev libjansson-dev libmicrohttpd-dev libsqlite3-dev libcurl4-openssl-dev nettle-dev
	clang libclang-rt-14-dev curl
	# the zsh completion test (tests/cli/test_cli_completion.sh)
	zsh
	# report figures (src/sim/report/figure*.c): cairo and the font they are set in
	libcairo2-dev fonts-dejavu-core
	# pdftoppm renders the PDFs of tests/sim/figures.sh and tests/cli/test_cli_report.sh;
	# headless chromium renders report.html there (the test skips that part without it)
	poppler-utils chromium
	# Slurm engine and its tests (docs/slurm.md): emulated cluster, libslurm, the PyTorch job
	munge slurmctld slurmd slurm-client libslurm-dev python3-torch
	# sacct in the accounting test (tests/slurm/test_accounting.py): slurmdbd on a private MariaDB
	mariadb-server slurmdbd
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=120 update -qq
	apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "${missing[@]}"
fi
