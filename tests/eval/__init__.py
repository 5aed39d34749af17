"""Tests of graphtx.eval."""
