"""The netdev CI's build tests: the three configurations (``configs``), the objects a patch can
change (``select``), the kept tree they build in (``tree``), the warnings job (``job``), and the
once-per-series coccinelle and docs jobs (``cocci``, ``docs``, ``seriesresult``, ``attribute``)."""
