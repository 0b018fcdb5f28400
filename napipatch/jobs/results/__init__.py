"""Reading what ran: TAP and KTAP (``tap``), the kernel selftests (``selftests``), and how build and
boot results become findings (``verdicts``)."""
