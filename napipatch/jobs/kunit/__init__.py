"""KUnit, as NIPA's contest runs it (contest/remote/kunit.py): the trusted
base's tools/testing/kunit/kunit.py under UML, for the suites in or beside
the directories a series touches (``select``), its KTAP read into failing
cases at their FILE:LINE (``ktap``), at the series and, when a case fails,
at the base (``job``)."""
