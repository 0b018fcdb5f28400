"""A check's ``group`` (``@check(group=...)``) and what the reports say
under its heading: "" (the default, no heading) or napipatch's own netdev
process rules, which are no NIPA test."""

GROUPS = {
    "": "",
    "netdev process": "napipatch's reading of Documentation/process/maintainer-netdev.rst; "
                      "no NIPA test checks these",
}
