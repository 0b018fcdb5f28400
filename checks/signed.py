"""A patch's developer signature (patatt), validated; an unsigned patch said plainly.

What it catches:
    A mail with an ``X-Developer-Signature`` header (what ``patatt sign``,
    and ``b4 send`` with a signing key, add) is validated with ``patatt
    validate`` against the public keys patatt knows (your
    ``~/.local/share/patatt/public``, the ``patatt.keyringsrc`` of your git
    config): a signature that does not verify (BADSIG) or cannot be read
    (ERROR) is an error; one whose key is not in your keyring (NOKEY) is an
    info. A mail without the header is an info saying it is unsigned.

    Which keys decide: patatt's keyrings, and, with
    ``napipatch.signed-keyring=gnupg``, also your GnuPG public keys, copied
    read-only. gpg (which patatt runs for OpenPGP signatures) always runs
    with a ``GNUPGHOME`` of napipatch's own in its cache, made for the one
    mail and removed: checking list mail never creates, locks or imports
    into your ``~/.gnupg``. NIPA validates with its own keyring (the
    kernel.org keys it fetched), so a key you have and it lacks, or the
    other way round, makes a NOKEY here and a different state there.

    The netdev CI (NIPA's ``signed`` test) posts ``fail`` for a bad
    signature, ``warning`` for an unsigned patch or one whose key it does
    not have, ``success`` when every signature passes. napipatch's own
    severity is lower for the unsigned and NOKEY cases: signing is not a
    netdev requirement, and a key missing from your own keyring says
    nothing about the patch; the messages carry the CI's state, and the
    NIPA forecast shows it (unknown for NOKEY: NIPA has its own keyring).

Why a reviewer cares:
    A valid signature proves the patch is what its author sent; a bad one
    means the mail was changed on the way (or re-signed wrong), and the
    netdev CI marks it red for every reviewer to see.

Example:
    ``signature of jdoe@example.org does not verify (BADSIG): failed to
    validate using /home/jdoe/.local/share/patatt/public/...``

Fix:
    Re-send the mail as signed (``b4 send`` re-signs; ``patatt sign`` for a
    hand-made mail), changing nothing after signing. To sign at all: ``b4
    send`` with ``patatt genkey`` (or a PGP key) configured.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from napipatch import procs
from napipatch.checks import check
from napipatch.checks._lint import TIMEOUT, tool
from napipatch.errors import NapipatchError

# patatt's exit codes: the worst result over the mail's signatures.
VALID, NOSIG, NOKEY, ERROR, BADSIG = 0, 4, 8, 16, 32


# What of a GnuPG home holds public keys and their trust (never the secret keys).
_PUBLIC = ("pubring.kbx", "pubring.gpg", "trustdb.gpg")


def _environment(home: Path, cache: Path, keyring: str) -> dict[str, str]:
    """patatt's environment: gpg in ``home`` (napipatch's own, with a copy of
    the user's public keys for ``gnupg``), and patatt's data directory the
    user's only when it exists (patatt creates it otherwise)."""
    if keyring not in ("patatt", "gnupg"):
        raise NapipatchError("napipatch.signed-keyring", f"{keyring!r}: must be patatt or gnupg")
    env = dict(os.environ, GNUPGHOME=str(home))
    if keyring == "gnupg":
        user = Path(os.environ.get("GNUPGHOME") or Path.home() / ".gnupg")
        for name in _PUBLIC:
            if (user / name).is_file():
                shutil.copyfile(user / name, home / name)
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    if not (data / "patatt").is_dir():
        env["XDG_DATA_HOME"] = str(cache / "patatt-data")
    return env


def validate(raw: bytes, cache: Path, keyring: str = "patatt") -> tuple[int, str]:
    """patatt's exit code for ``raw`` and its report, one line a signature."""
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="napipatch-patatt-") as td, \
            tempfile.TemporaryDirectory(prefix="gnupg-", dir=cache) as home:
        env = _environment(Path(home), cache, keyring)
        # A neutral cwd: patatt also looks for keys in the git repository
        # it runs in (.keys), which must not be a tree under review.
        try:
            cp = procs.run([tool("patatt"), "validate"], timeout=TIMEOUT, name="patatt",
                           input=raw, text=False, cwd=td, env=env)
        except procs.ProcessTimeout:
            raise NapipatchError("patatt", f"still running after {TIMEOUT} s; stopped") from None
    report = (cp.stdout + cp.stderr).decode("utf-8", "replace")
    lines = [" ".join(ln.split()) for ln in report.splitlines() if ln.strip()]
    return cp.returncode, "\n".join(lines)


@check(id="signed",
       summary="patatt validates a signed mail (bad signature: error); unsigned said plainly",
       scope="patch",
       needs="diff",
       version=2,
       nipa=("signed",))
def run(ctx):
    if not ctx.mail.attestation:
        yield ctx.finding("info", "unsigned: no X-Developer-Signature header (the netdev CI "
                          "posts warning for an unsigned patch)",
                          hint="b4 send signs with a patatt key (patatt genkey) or your PGP key",
                          nipa={"signed": "warning"})
        return
    code, report = validate(ctx.mail.raw, ctx.config.cache / "signed", ctx.config.signed_keyring)
    first = report.splitlines()[0] if report else ""
    if code == VALID:
        return
    if code in (NOSIG, NOKEY):
        what = ("signed, but the signing key is not in your patatt keyring (NOKEY"
                if code == NOKEY else
                "has an X-Developer-Signature header patatt reads no signature from (NOSIG")
        yield ctx.finding("info", f"{what}; the netdev CI posts warning unless its keyring has "
                          "the key)", details=report,
                          hint="patatt keeps public keys in ~/.local/share/patatt/public",
                          # NOKEY: what NIPA posts depends on its own keyring
                          nipa={"signed": "unknown" if code == NOKEY else "warning"})
        return
    state = "BADSIG" if code >= BADSIG else "ERROR"
    who = first.split("|", 1)[1].split(",")[0].strip() if "|" in first else ""
    what = "does not verify" if state == "BADSIG" else "cannot be validated"
    yield ctx.finding("error", f"signature{' of ' + who if who else ''} {what} "
                      f"({state}; the netdev CI posts fail)", details=report,
                      hint="re-send the mail as signed; nothing may change it after signing")
