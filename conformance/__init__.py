"""Conformance: run the golden vectors against an implementation (pytest plugin, CLI, mutants)."""
