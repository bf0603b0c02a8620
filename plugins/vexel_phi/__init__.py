"""Vexel plugin: phi (see its modules)."""
