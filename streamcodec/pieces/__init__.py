"""Pieces to ids: the merge loop, rank-order verification, backtracking, and the compiled core."""
