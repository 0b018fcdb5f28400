"""A recorded run as the cover letter's results section (``series export --bench``).

The section is rendered by templates/cover-letter.j2 from what this
returns: a line saying what the run ran on and the table in the cover
letter's markdown layout. An emulated run (QEMU TCG) is refused unless
the user allows it, and is then labelled as emulated in the letter.
"""

from __future__ import annotations

from napipatch.bench import record
from napipatch.bench.render import EMULATED, grid, markdown_table
from napipatch.errors import NapipatchError
from napipatch.store.store import Store


def results(store: Store, name: str, run_id: str, allow_emulated: bool = False) -> dict:
    """The template's ``results``: ``run_id`` of any version of ``name``, or
    ``latest`` (the newest run of the newest version that has one)."""
    run = record.find(store, name, None if run_id == "latest" else run_id)
    if run.get("emulated") and not allow_emulated:
        raise NapipatchError(f"--bench {run['id']}", "is an emulated run (QEMU TCG): its numbers "
                             "are not real-hardware latencies; pass --allow-emulated to use it "
                             "anyway (it is labelled emulated)")
    head, rows = grid(run, None)
    return {"ran_on": record.ran_on(run), "emulated": bool(run.get("emulated")),
            "warning": EMULATED, "table": markdown_table(head, rows).rstrip("\n"),
            "repetitions": run["repetitions"], "duration": run["duration"], "id": run["id"]}
