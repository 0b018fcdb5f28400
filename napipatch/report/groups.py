"""A check's ``group`` (``@check(group=...)``) and what the reports say
under its heading: "" (the default, no heading) or napipatch's own netdev
process rules, which are no NIPA test."""

GROUPS = {
    "": "",
    "netdev process": "napipatch's reading of Documentation/process/maintainer-netdev.rst; "
                      "no NIPA test checks these",
}

MAINTAINER_NETDEV = "https://www.kernel.org/doc/html/next/process/maintainer-netdev.html"

# What the bot's reply says once per series for each netdev process rule
# that found something, in the tone of the list's own form letters
# (linux-netdev/nipa ml-agent/form-letters/, form-letters/): the rule, why
# it is there, and what to do -- never asking for a repost just for it.
LETTERS = {
    "repost-wait": "It looks like this version was posted less than 24 hours after the "
                   "previous one. Please allow at least 24 hours between versions, so that "
                   "reviewers in every time zone have a chance to look at the previous one.",
    "new-thread": "It looks like this new version was posted as a reply to the previous "
                  "version. Please post each new version as a new, independent thread, with "
                  "a lore link to the previous version in the changelog; a reply to the old "
                  "thread breaks tooling and is easy to miss. Please do not repost just for "
                  "this: keep it in mind for the next version.",
    "version-link": "Please include a lore link to each previous version in the changelog "
                    "of the cover letter, so reviewers can find what was said about it.",
    "review-tags": "Some review tags given on the previous version are missing from patches "
                   "that did not change. Please carry them over to the next version (b4 "
                   "trailers -u does it), unless the patch changed enough that the reviewer "
                   "should look again.",
    "review-followup": "Some review comments on the previous version seem left open: the "
                       "lines they quote did not change, and neither a reply in the thread "
                       "nor the changelog says why. Please answer each comment, in the code "
                       "or on the list, and say in the changelog what changed.",
    "net-next-closed": "net-next is currently closed for new drivers, features, code "
                       "refactoring and optimizations; only bug fixes are accepted. Please "
                       "repost when net-next reopens. RFC patches sent for review only are "
                       "welcome at any time.",
    "rct": "In networking code, local variable declarations are ordered from the longest "
           "line to the shortest (\"reverse Christmas tree\"), where their initializers "
           "allow it.",
}
