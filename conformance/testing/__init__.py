"""Test helpers that ship with the harness: planted-bug copies of the reference engine (:mod:`.mutants`)."""
