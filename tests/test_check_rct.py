"""The rct check's ordering rule, on function bodies as a patch's
post-image lines: dependencies, multi-line declarations, #ifdef, groups,
and lines the patch did not add. The fixtures (tests/fixtures/checks/rct)
run it through the CLI."""

from __future__ import annotations

from napipatch.checks.process import rct as check


def body(text: str, start: int = 10) -> list[tuple[int, str, bool]]:
    """Post-image lines: '+' marks a line the patch adds, ' ' one it keeps."""
    return [(n, ln[1:], ln[0] == "+") for n, ln in enumerate(text.splitlines(), start)]


def found(text: str, whole: bool = True) -> list[tuple[int, list[str]]]:
    """(line flagged, the order the hint gives) for each group flagged."""
    return [(d.line, [e.text.strip() for e in order])
            for d, order in check.findings_of(body(text), whole)]


def test_an_added_function_out_of_order_is_flagged_at_the_line_that_sticks_out():
    assert found("""\
+static int foo(struct net_device *dev)
+{
+	int err;
+	struct foo_priv *priv = netdev_priv(dev);
+	u32 val;
+
+	return 0;
+}
""") == [(13, ["struct foo_priv *priv = netdev_priv(dev);", "int err;", "u32 val;"])]


def test_an_initializer_using_a_shorter_local_keeps_its_place():
    text = """\
+{
+	struct foo_priv *priv = netdev_priv(dev);
+	struct ice_hw *hw = &priv->hw;
+	struct foo_hw_stats_block *blk = &hw->stats;
+	int err;
+"""
    assert found(text) == []       # blk needs hw, which needs priv
    # without the dependency, the same lengths are out of order
    assert found(text.replace("&hw->stats", "&dev->stats"))[0][0] == 13


def test_a_dependent_line_below_a_short_one_moves_up_to_what_it_needs():
    assert found("""\
+{
+	struct foo_priv *priv = netdev_priv(dev);
+	struct ice_hw *hw = &priv->hw;
+	int err;
+	struct foo_hw_stats_block *blk = &hw->stats;
+""") == [(14, ["struct foo_priv *priv = netdev_priv(dev);", "struct ice_hw *hw = &priv->hw;",
               "struct foo_hw_stats_block *blk = &hw->stats;", "int err;"])]


def test_multi_line_declarations_are_as_long_as_either_measure():
    assert found("""\
+{
+	struct ethtool_rx_flow_spec *fs =
+		(struct ethtool_rx_flow_spec *)&cmd->fs;
+	struct bnxt_filter_base *fltr_base;
+	int rc;
+""") == []      # first line shorter than the next, the whole longer: not flagged
    assert found("""\
+{
+	int rc;
+	struct bnxt_filter_base *fltr_base = foo(a,
+						  b);
+""") == [(12, ["struct bnxt_filter_base *fltr_base = foo(a,", "int rc;"])]


def test_ifdef_ends_the_block_and_blank_lines_and_comments_end_groups():
    assert found("""\
+{
+	struct foo_priv *priv = netdev_priv(dev);
+	int i;
+
+	DECLARE_BITMAP(seen, FOO_MAX_RINGS);
+	u64 packets;
+	/* the debug state */
+	struct foo_debug_state *dbg;
+#ifdef CONFIG_FOO_DEBUG
+	struct foo_debug_state_with_a_long_name *dbg2;
+#endif
+""") == []
    # in one group, the macro counts like any declaration
    assert found("""\
+{
+	u64 packets;
+	DECLARE_BITMAP(seen, FOO_MAX_RINGS);
+""") == [(12, ["DECLARE_BITMAP(seen, FOO_MAX_RINGS);", "u64 packets;"])]


def test_arrays_and_attributes_are_declarations():
    assert found("""\
+{
+	u8 mac[ETH_ALEN];
+	struct foo_priv *priv __maybe_unused = netdev_priv(dev);
+""") == [(12, ["struct foo_priv *priv __maybe_unused = netdev_priv(dev);",
               "u8 mac[ETH_ALEN];"])]


def test_a_block_the_patch_did_not_touch_is_not_looked_at():
    text = """\
 {
 	int err;
 	struct foo_priv *priv = netdev_priv(dev);
 
 	err = 0;
+	err = foo(priv);
"""
    assert found(text) == []


def test_an_added_line_is_judged_against_its_neighbours_only_where_an_order_exists():
    # the context is out of order; the added line sits where it fits
    assert found("""\
 {
 	int err;
 	struct foo_priv *priv = netdev_priv(dev);
+	u32 val;
 	u8 x;
""") == []
    # the added line is longer than the line above it, and a place exists
    assert found("""\
 {
 	struct foo_priv *priv = netdev_priv(dev);
 	int err;
+	struct foo_ring *ring;
 	u8 x;
""") == [(13, ["struct foo_priv *priv = netdev_priv(dev);", "struct foo_ring *ring;",
               "int err;", "u8 x;"])]
    # no place in this context is in order for it: not the patch's fault
    assert found("""\
 {
 	int a;
 	struct foo_priv *priv = netdev_priv(dev);
 	u8 b;
 	struct foo_ring *ring_array_of_many;
+	u32 val_x;
""") == []


def test_a_hunk_starting_inside_the_block_counts_from_its_first_line_without_a_tree():
    text = """\
 	struct foo_ring *ring;
+	struct foo_priv *priv = netdev_priv(dev);
 	int err;
 
 	err = 0;
"""
    assert found(text, whole=False) == [(11, ["struct foo_priv *priv = netdev_priv(dev);",
                                              "struct foo_ring *ring;", "int err;"])]
    assert found(text, whole=True) == []    # the whole file has no '{' before it


def test_statements_end_the_block():
    assert found("""\
+{
+	int err;
+
+	err = foo();
+	return err;
+	struct foo_priv *priv = netdev_priv(dev);
+""") == []


def test_the_report_lists_it_under_netdev_process_with_the_order(cli):
    from conftest import ROOT
    cp = cli("check", ROOT / "tests/fixtures/checks/rct/bad.mbox", "--only", "rct")
    assert cp.returncode == 0, cp.stderr      # a warning: the series may still go out
    out = cp.stdout.split("\n\nnetdev process (", 1)[1]
    assert ("drivers/net/ethernet/foo/foo_main.c:29: warning: PATCH 1/1 [rct] local variables "
            "not in reverse xmas tree order: u32 flags = FOO_RING_ENABLE;\n"
            "    hint: order them longest first: struct foo_priv *priv = netdev_priv(dev); "
            "u32 flags = FOO_RING_ENABLE; struct foo_ring *ring; int err;\n") in out


def test_a_hunk_inside_a_struct_lists_members_not_locals():
    """Found on the 6.12 -> 7.2 networking diff: a hunk of struct
    fib4_rule's members (git's hunk header names the struct) is no block
    of local variables; the same lines under a function's header are."""
    members = body("""\
 	u8			src_len;
+	dscp_t			dscp;
+	dscp_t			dscp_mask;
 	u8			dst_len;
""")
    assert list(check.findings_of(members, False, in_function=False)) == []
    assert check._in_function("struct fib4_rule {") is False
    assert check._in_function("static const struct nla_policy p[] = {") is False
    assert check._in_function("static int fib4_rule_match(struct fib_rule *rule, struct flowi *fl,")
    assert [d.line for d, _o in check.findings_of(members, False, in_function=True)] == [12]
