"""Regression tests for what the 20,000-result campaign (seed 1, docs/conformance.md) found in
refgrad itself: each test fails on the code before its fix."""

from __future__ import annotations

from conformance.strategies import draw_examples, tensor_shapes


def test_tensor_shapes_with_a_minimum_dim_past_the_size_cap_does_not_crash():
    # the binary records' error strategy draws tensor_shapes(1, 3, 256, min_dim=2): once the dims
    # drawn leave room < 2, st.integers(2, min(4, room)) raised InvalidArgument and stopped the
    # whole `add` error fuzz unit ("Cannot have max_value=1 < min_value=2", campaign seed 1)
    shapes = draw_examples(tensor_shapes(3, 3, 8, 2), 60, seed=0)
    assert shapes and all(len(s) == 3 and min(s) >= 2 for s in shapes)
