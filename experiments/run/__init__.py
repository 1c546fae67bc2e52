"""Running a study: the testbed of one run, the run loop, its executors and what they measure."""
