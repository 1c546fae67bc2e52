import sys

from p4sim.conformance.differential import PROG, main
from p4sim.tool import run

sys.exit(run(PROG, main))
