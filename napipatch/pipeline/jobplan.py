"""Where the job checks run: the targets, ``make -j`` and the guest's timeout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from napipatch.errors import NapipatchError
from napipatch.jobs import targets as targetdata


@dataclass
class JobPlan:
    """The targets of a run's job checks (``build``, ``boot``, ``remote``).

    Attributes:
        targets: built by ``build`` (None: every target).
        boot_targets: booted by ``boot`` (None: the bootable ones of ``targets``).
        remote_targets: booted on their host by ``remote`` (None: those of
            ``targets`` with ``napipatch.TARGET.host`` configured).
        jobs: ``make -j``; None: ``napipatch.jobs``.
        timeout: seconds before a hung guest is killed; None: the target's.
        flavour: which build of the boot targets boots (``--flavour debug``).
        memory: judges each job's result by earlier runs (``bot.memory.Memory``:
            flaky and known failures); None: each run stands alone.
    """

    targets: list[str] | None = None
    boot_targets: list[str] | None = None
    remote_targets: list[str] | None = None
    jobs: int | None = None
    timeout: float | None = None
    flavour: str = ""  # the boot targets' flavour (targets.toml [flavours.NAME]); "": plain
    memory: Any = None  # bot.memory.Memory (typed loosely: the pipeline does not import the bot)

    def check_flavour(self) -> None:
        """Every boot target has ``flavour`` (a one-line error otherwise)."""
        for n in self.boots() if self.flavour else []:
            targetdata.load(n, self.flavour)

    def builds(self) -> list[str]:
        return known(self.targets) if self.targets is not None else targetdata.names()

    def boots(self) -> list[str]:
        if self.boot_targets is not None:
            return known(self.boot_targets)
        return [n for n in self.builds() if targetdata.load(n).boot is not None]

    def remotes(self, cfg) -> list[str]:
        if self.remote_targets is not None:
            return known(self.remote_targets)
        return [n for n in self.builds() if cfg.get(f"napipatch.{n}.host")]


def known(names: list[str]) -> list[str]:
    """``names``, each a target napipatch has (a one-line error otherwise)."""
    have = targetdata.names()
    for n in names:
        if n not in have:
            raise NapipatchError(n, f"no such target (known: {', '.join(have)})")
    return list(dict.fromkeys(names))
