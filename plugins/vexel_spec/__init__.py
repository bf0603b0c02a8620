"""Vexel plugin: spec (see its modules)."""
