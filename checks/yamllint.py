"""yamllint on the YAML files a patch adds or changes, new findings only.

What it catches:
    Each ``.yaml`` file the patch adds or modifies (netlink specs,
    devicetree bindings), linted by yamllint before and after the patch as
    the netdev CI runs it. A finding after the patch that was not there
    before (same file, rule and message, the numbers of "line too long
    (82 > 80 characters)" ignored) is reported at its file and line: a new
    ``error`` is an error, a new ``warning`` a warning.

    yamllint 1.38.0 (pinned) runs as a library on the texts before and
    after the patch, never on files of the patched tree. The config is the
    kernel's own where it has one: the CI runs yamllint in the file's
    directory, so yamllint takes the nearest ``.yamllint`` (``.yaml``,
    ``.yml``) up the tree, e.g. ``Documentation/devicetree/bindings/
    .yamllint``; napipatch reads that file from the series' base commit
    (trusted, never from a patched commit); with none, yamllint's
    ``default``. Where napipatch differs from the CI: the CI compares
    counts over the patch's YAML files, napipatch the findings; the CI
    reads the config from the patched tree, napipatch from the base.
    Without ``--tree`` only new files are linted (from the diff), with
    yamllint's defaults.

Why a reviewer cares:
    The netdev CI (NIPA's ``yamllint`` test) posts ``fail`` when the count
    of errors over the patch's YAML files grows and ``warning`` when the
    count of warnings grows. The specs are the source of generated uapi
    code and are read by everyone who writes a netlink family.

Example:
    ``Documentation/netlink/specs/netdev.yaml:401:81: [error] line too long
    (85 > 80 characters) (line-length)``

Fix:
    What yamllint says (``yamllint FILE`` in the file's directory shows the
    same).
"""

from __future__ import annotations

import posixpath

from napipatch.checks import check
from napipatch.checks._lint import TIMEOUT, TOOLS, Lint, changed, deadline, memo, new_lints
from napipatch.errors import NapipatchError

CONFIG_NAMES = (".yamllint", ".yamllint.yaml", ".yamllint.yml")
DEFAULT = "extends: default\n"


def base_config(ctx, path: str) -> tuple[str | None, str]:
    """(path, text) of the nearest yamllint config above ``path`` at the
    series' base; (None, yamllint's default) when there is none."""
    if ctx.tree is None:
        return None, DEFAULT
    d = posixpath.dirname(path)
    while True:
        for name in CONFIG_NAMES:
            cand = posixpath.join(d, name) if d else name
            text = ctx.tree.text(ctx.tree.base, cand)
            if text is not None:
                return cand, text
        if not d:
            return None, DEFAULT
        d = posixpath.dirname(d)


def _yamllint():
    try:
        import yamllint
        from yamllint import linter
        from yamllint.config import YamlLintConfig, YamlLintConfigError
    except ImportError:
        raise NapipatchError("yamllint", f"not installed (pip install {TOOLS['yamllint']}; "
                                         "scripts/install.sh installs it)") from None
    return yamllint.APP_VERSION, linter, YamlLintConfig, YamlLintConfigError


def lint(ctx, path: str, text: str, where: str | None, config: str) -> list[Lint]:
    """yamllint's findings on ``text`` with ``config``. yamllint is a library
    of napipatch's own environment, run here on the text as data: no
    process to start, and no config file looked for anywhere."""
    version, linter, Config, ConfigError = _yamllint()
    try:
        conf = Config(content=config)
    except ConfigError as exc:
        raise NapipatchError(where or "yamllint config", f"not a yamllint config: {exc}") from None

    def compute():
        with deadline(TIMEOUT, "yamllint", path):
            return [Lint(path, p.line, p.rule or "syntax", p.desc, p.level)
                    for p in linter.run(text, conf) if p.level in ("error", "warning")]
    return memo(ctx, "yamllint", [version, config, text], compute)


@check(id="yamllint",
       summary="yamllint on changed .yaml files: new errors and warnings",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.yaml",),
       preload=("yamllint.linter", "yamllint.config"),
       nipa=("yamllint",),
       nipa_needs_tree=True)  # NIPA reads the tree's .yamllint
def run(ctx):
    files, notes = changed(ctx, (".yaml",), "yamllint")
    yield from notes
    before, after = [], []
    for f in files:
        where, config = base_config(ctx, f.path)
        if f.pre is not None:
            before += lint(ctx, f.path, f.pre, where, config)
        after += lint(ctx, f.path, f.post, where, config)
    for x in new_lints(before, after, {f.path: f.added for f in files}):
        # a syntax error's text names its rule already
        text = x.message if x.message.endswith(f"({x.code})") else f"{x.message} ({x.code})"
        yield ctx.finding(x.level, text, file=x.file, line=x.line)
