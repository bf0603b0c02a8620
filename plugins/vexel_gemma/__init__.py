"""Vexel plugin: gemma (see its modules)."""
