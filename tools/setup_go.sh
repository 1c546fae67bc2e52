#!/usr/bin/env bash
# Go for our quic-go endpoint (experiments/flows/quicgo_endpoint), linked into .venv/bin, which
# the Makefile puts first on PATH. The first Go at least as new as go.mod's `go` line wins: go on
# PATH, then the upstream install in /usr/local/go. Debian 12's golang-go (1.19) is too old for
# quic-go, so without one the toolchain comes from the Go module proxy, as Go's own
# GOTOOLCHAIN=auto fetches it (module golang.org/toolchain), into .toolchain/. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' experiments/flows/quicgo_endpoint/go.mod)
new_enough() {  # GO_BINARY: true when it runs and is at least Go $need
  local have
  have=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]
}

candidates=()
on_path=$(PATH=${PATH//"$PWD/.venv/bin:"/} command -v go || true)  # not our own link
[ -n "$on_path" ] && candidates+=("$on_path")
candidates+=(/usr/local/go/bin/go ".toolchain/go$need/bin/go")
chosen=""
for go in "${candidates[@]}"; do
  if [ -x "$go" ] && new_enough "$go"; then chosen=$go; break; fi
done

if [ -z "$chosen" ]; then
  case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  module="golang.org/toolchain/@v/v0.0.1-go$need.linux-$arch.zip"
  proxy=${GOPROXY:-https://proxy.golang.org}
  proxy=${proxy%%,*}
  echo "setup: no Go $need or newer (found: ${on_path:-none}); fetching it from $proxy/$module"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/go.zip" "$proxy/$module" || {
    echo "setup: could not fetch Go $need from $proxy; put Go $need or newer on PATH" >&2
    exit 1
  }
  "${PYTHON:-python3}" -m zipfile -e "$tmp/go.zip" "$tmp/x"
  rm -rf ".toolchain/go$need"
  mkdir -p .toolchain
  mv "$tmp/x/golang.org/toolchain@v0.0.1-go$need.linux-$arch" ".toolchain/go$need"
  chmod -R u+x ".toolchain/go$need/bin" ".toolchain/go$need/pkg/tool"
  chosen=".toolchain/go$need/bin/go"
  new_enough "$chosen" || { echo "setup: the fetched Go does not run: $chosen" >&2; exit 1; }
fi

chosen=$(readlink -f "$chosen")
ln -sfn "$chosen" .venv/bin/go
ln -sfn "$(dirname "$chosen")/gofmt" .venv/bin/gofmt
