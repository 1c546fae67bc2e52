#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 machine, idempotently:
# Debian packages (DPDK, ngtcp2, iperf3, clang for libFuzzer, ...), a virtualenv at
# .venv with the project installed editable, and modern p4runtime bindings; then the real
# P4 tools (p4c, BMv2): the bundle named by P4TOOLS_BUNDLE is installed (its install.sh,
# idempotent, into P4TOOLS_PREFIX, default /opt/p4tools), else p4c and BMv2 found on PATH
# (p4lang's packages) are used as they are. REQUIRE_P4TOOLS=1 (CI) fails when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential pkg-config clang libclang-rt-14-dev   # C parts, libFuzzer
  clang-format                                          # make lint / make format (.clang-format)
  dpdk libdpdk-dev dpdk-dev                             # pdcp-agent (DPDK 22.11)
  libxdp-dev libbpf-dev                                 # AF_XDP forwarder (ratebench/xskfwd)
  iproute2 ethtool iputils-ping tcpdump bridge-utils    # testbed plumbing
  iperf3 curl nginx-light ngtcp2-server ngtcp2-client   # flows
  openssl procps psmisc
  cmake                                                 # tquic's BoringSSL (flow mpquic)
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
  .venv/bin/pip install -q -e ".[dev,ray]"   # ray: dcexp --executor ray (its cluster test)
  touch "$stamp"
fi
# The p4runtime wheel's generated modules do not import on modern protobuf: regenerate them.
.venv/bin/python -c "import p4.v1.p4runtime_pb2" 2>/dev/null || .venv/bin/python tools/regen_p4runtime_protos.py
.venv/bin/python -c "import p4.v1.p4runtime_pb2_grpc, p4.config.v1.p4info_pb2"

# tquic (flow mpquic) is built by `make build` with cargo (rustup's stable; Debian 12's is too old)
command -v cargo >/dev/null || [ -x "$HOME/.cargo/bin/cargo" ] ||
  echo "setup: no cargo found: install Rust with rustup to build tquic (flow kind mpquic)" >&2

PYTHON=.venv/bin/python bash tools/setup_go.sh  # Go for the quic-go endpoint, into .venv/bin

# --- the real P4 tools -----------------------------------------------------------------
P4TOOLS_PREFIX=${P4TOOLS_PREFIX:-/opt/p4tools}
if [ -n "${P4TOOLS_BUNDLE:-}" ]; then
  [ -f "$P4TOOLS_BUNDLE/install.sh" ] || {
    echo "setup: P4TOOLS_BUNDLE=$P4TOOLS_BUNDLE has no install.sh (expected the p4tools bundle folder)" >&2
    exit 1
  }
  [ "$(id -u)" = 0 ] || { echo "setup: installing the p4tools bundle needs root" >&2; exit 1; }
  bash "$P4TOOLS_BUNDLE/install.sh" "$P4TOOLS_PREFIX" >/dev/null
fi
# The Makefile puts P4TOOLS_PREFIX/bin first on PATH when it exists; look the tools up the same way.
[ -d "$P4TOOLS_PREFIX/bin" ] && PATH="$P4TOOLS_PREFIX/bin:$PATH"
.venv/bin/python tools/p4tools.py link .venv
.venv/bin/python tools/p4tools.py check
echo "setup: done"
