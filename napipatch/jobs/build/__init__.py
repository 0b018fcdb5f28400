"""Building a series patch by patch for one target (``builder``), and the job that does it (``job``)."""
