#!/usr/bin/env bash
# Creates build/p4rt-shell-venv with p4runtime-shell (PyPI), idempotently: the third-party
# P4Runtime client that p4sim/tests/test_runtime_interop.py drives p4sim with. It needs a venv
# of its own: it pins protobuf 3.20 and p4runtime 1.4, which the project's venv cannot hold.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=build/p4rt-shell-venv
# The versions the interop test was written against (what PyPI served for 0.0.6).
PACKAGES=(p4runtime-shell==0.0.6 p4runtime==1.4.1 protobuf==3.20.3 grpcio==1.85.1
          googleapis-common-protos==1.73.0)
stamp=$VENV/.installed
want="${PACKAGES[*]}"

installed() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$VENV/bin/python" ]; }
installed && exit 0
mkdir -p build
exec 9>build/p4rt-shell-venv.lock  # concurrent test runs: one builds, the others wait
flock 9
installed && exit 0  # built by another run meanwhile
PYTHON=${PYTHON:-python3}
echo "setup_p4runtime_shell: creating $VENV"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "${PACKAGES[@]}"
"$VENV/bin/python" -c "import p4runtime_sh.shell"
echo "$want" > "$stamp"
echo "setup_p4runtime_shell: done"
