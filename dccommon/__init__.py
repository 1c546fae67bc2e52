"""What the project's command-line tools share (p4sim, dcctl, dcexp): argument types, input
checks, the one YAML reader and the CLI conventions. It imports nothing of the project, so
the target (p4sim) and the controller (controlplane) can both use it without depending on
each other."""
