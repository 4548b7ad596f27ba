"""Test-wide settings."""

from hypothesis import settings

# Hypothesis's per-example deadline (200 ms) is a timing assertion: on a shared or loaded machine a
# property test fails for being slow, not for being wrong. No test here asserts on time.
settings.register_profile("websim", deadline=None)
settings.load_profile("websim")
