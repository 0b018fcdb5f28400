"""Run the trusted YNL generator several times in one interpreter.

Usage (by ``ynlspec.regenerate``, never by hand):
``python ynlbatch.py GENERATOR < jobs.json`` where jobs.json is a list of
argument lists; prints a JSON list of ``{"rc": int, "err": str}``.

A family has four generated files, and each ``ynl-gen-c.py`` run spends
most of its 0.45 s starting Python, importing jsonschema, parsing the spec
with pure-Python YAML and validating it again. Here the imports happen
once, YAML is parsed by libyaml (the same data; PyYAML's C loader), and a
spec already validated against the same schema in this process is not
validated again. The generator's own code is what runs: each job executes
the script afresh with ``runpy``, with its own ``sys.argv``.
"""

import contextlib
import io
import json
import os
import runpy
import sys
import traceback


def _speedups():
    try:
        import yaml
    except ImportError:
        return
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        yaml.safe_load = lambda stream: yaml.load(stream, Loader=loader)
    try:
        import jsonschema
    except ImportError:
        return
    validate, done = jsonschema.validate, set()

    def validate_once(instance, schema, *a, **kw):
        key = json.dumps([instance, schema], sort_keys=True, default=str)
        if key not in done:
            validate(instance, schema, *a, **kw)   # raises: not remembered
            done.add(key)

    jsonschema.validate = validate_once


def main() -> int:
    gen = sys.argv[1]
    jobs = json.load(sys.stdin)
    # As when Python runs the script itself: its directory first (it imports
    # its ``lib``), and not ours, whose module names could shadow others.
    sys.path[0] = os.path.dirname(os.path.abspath(gen))
    _speedups()
    results = []
    for args in jobs:
        err = io.StringIO()
        rc = 0
        sys.argv = [gen, *args]
        with contextlib.redirect_stdout(err), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(gen, run_name="__main__")
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if isinstance(e.code, str):
                    err.write(e.code)
            except BaseException:  # noqa: BLE001 - reported per job, like a crash
                rc = 1
                err.write(traceback.format_exc(limit=5))
        results.append({"rc": rc, "err": err.getvalue()[-4000:]})
    json.dump(results, sys.__stdout__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
