"""P4Runtime controller of the PDCP splitter: client, P4Info index, domain API, dcctl."""
