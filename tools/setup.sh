#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 machine, idempotently:
# Debian packages (DPDK, ngtcp2, iperf3, clang for libFuzzer, ...), a virtualenv at
# .venv with the project installed editable, and modern p4runtime bindings.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential pkg-config clang libclang-rt-14-dev   # C parts, libFuzzer
  dpdk libdpdk-dev dpdk-dev                             # pdcp-agent (DPDK 22.11)
  iproute2 ethtool iputils-ping tcpdump bridge-utils    # testbed plumbing
  iperf3 curl nginx-light ngtcp2-server ngtcp2-client   # flows
  openssl procps psmisc
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  [ "$(id -u)" = 0 ] || { echo "setup: apt-get needs root (run as root or with sudo)" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.dc-splitter-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[dev]"
  touch "$stamp"
fi
# The p4runtime wheel's generated modules do not import on modern protobuf: regenerate them.
.venv/bin/python -c "import p4.v1.p4runtime_pb2" 2>/dev/null || .venv/bin/python tools/regen_p4runtime_protos.py
.venv/bin/python -c "import p4.v1.p4runtime_pb2_grpc, p4.config.v1.p4info_pb2"
echo "setup: done"
