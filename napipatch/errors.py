"""One exception family: the offending input and the reason, in one line.

Library code raises; only the CLI catches, prints ``napipatch: error: ...``
and exits 2 (``--debug`` shows the traceback). The subject and reason are
made printable here (control characters escaped as ``repr`` does), so a
hostile file name or header can never split or forge the error line.
"""

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: object) -> str:
    """``text`` with control characters escaped (``\\n``, ``\\x1b``): one line."""
    s = str(text)
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], s) if _CONTROL.search(s) else s


class NapipatchError(Exception):
    """Bad input or an environment napipatch cannot work in."""

    def __init__(self, subject: object, reason: str):
        self.subject = printable(subject)
        self.reason = printable(reason)
        super().__init__(f"{self.subject}: {self.reason}")

    def __reduce__(self):
        # Picklable, so an error raised in a Celery worker reaches the client.
        return (self.__class__, (self.subject, self.reason))


class GitError(NapipatchError):
    """A git command failed; the message is git's own last error line."""
