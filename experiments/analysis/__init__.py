"""Analysis of saved runs: metrics, envelopes, figures, the report and the paper reproduction."""
