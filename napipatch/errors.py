"""One exception family: the offending input and the reason, in one line.

Library code raises; only the CLI catches, prints ``napipatch: error: ...``
and exits 2 (``--debug`` shows the traceback).
"""


class NapipatchError(Exception):
    """Bad input or an environment napipatch cannot work in."""

    def __init__(self, subject: object, reason: str):
        self.subject = str(subject)
        self.reason = reason
        super().__init__(f"{self.subject}: {reason}")

    def __reduce__(self):
        # Picklable, so an error raised in a Celery worker reaches the client.
        return (self.__class__, (self.subject, self.reason))


class GitError(NapipatchError):
    """A git command failed; the message is git's own last error line."""
