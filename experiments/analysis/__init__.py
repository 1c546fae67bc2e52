"""Analysis of saved runs: metrics, envelopes, figures, the report and the paper reproduction."""


class RunFileError(ValueError):
    """A saved run's file that cannot be analysed (cut short, edited, not the runner's);
    the message names the file and what was expected. Here, apart from pandas, so that the
    CLI can catch it without importing the analysis."""
