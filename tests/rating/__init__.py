"""Tests of the rating round."""
