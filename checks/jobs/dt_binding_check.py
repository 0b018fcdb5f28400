"""dt-binding-check: a changed DT binding validates without new warnings (NIPA's dt_binding_check).

What it catches:
    For each patch adding or changing a file under
    Documentation/devicetree/bindings/ (as NIPA decides): ``make
    dt_binding_check DT_CHECKER_FLAGS=-m DT_SCHEMA_FILES=...`` on the
    changed schemas and on up to four schemas that ``$ref`` them, at the
    parent and at the patch: the schema checked against the meta-schema
    (dt-doc-validate), yamllint, and each example compiled with dtc and
    validated against every binding (dt-validate). Each line the parent's
    run did not print (compared by text, without positions) is a finding at
    the binding's FILE:LINE. The Makefiles and dtc are the base's; only the
    bindings and include/dt-bindings are the patch's. More referrers than
    the bound make NIPA's state unknown (NIPA checks every binding).

Why a reviewer cares:
    NIPA fails the patch on any new line of ``make dt_binding_check``, and
    the DT maintainers' bot answers a binding whose example does not match
    its own schema within hours, before any human review.

Example:
    ``Documentation/devicetree/bindings/net/fsl,fman-muram.yaml:40: warning:
    PATCH 1/1 [dt-binding-check] dt_binding_check: .../fsl,fman-muram.example.dtb:
    muram@0 (fsl,fman-muram): 'fsl,bogus' does not match any of the regexes``.

Fix:
    Make the example match the schema (or the schema the hardware) in the
    patch that changed it; ``make dt_binding_check
    DT_SCHEMA_FILES=net/<file>.yaml`` with dtschema installed shows the same
    lines.
"""

from napipatch.checks import check


@check(id="dt-binding-check", summary="a changed DT binding and those that $ref it pass "
                                      "make dt_binding_check without new lines (parent against "
                                      "patch)",
       scope="patch", needs="build", job="dt-binding-check", nipa=("dt_binding_check",))
def run(result):
    return result.on("output")
