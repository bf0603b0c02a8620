"""Vexel plugin: llama (see its modules)."""
