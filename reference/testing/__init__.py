"""Test-support code that the reference itself knows about (the ``strict`` device's namespace)."""
