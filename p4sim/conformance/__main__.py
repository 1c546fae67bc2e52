import sys

from p4sim.conformance.differential import main

sys.exit(main())
