"""What several parts share (dccommon/README.md): the command-line tools' argument types,
input checks and YAML reader (p4sim, dcctl, dcexp), free ports, stopping the processes we
start, reading the JSON-lines files they write. It imports nothing of the project, so the
target (p4sim) and the controller (controlplane) can both use it without depending on each
other."""
