"""Vexel plugin: speculative decoding strategies (draft model, Medusa heads).

Not built yet: this package registers no speculator, so ``speculation.strategy`` has nothing
to choose and `vexel plugins` lists the plugin with nothing registered. The engine is ready
for it: a step may carry several query tokens per sequence with a tree mask
(`AttentionBatch.query_masks`), rejected tokens are dropped with `BlockManager.trim` and
`SequenceHistory.rollback`, and a draft model can run beside the target with its own KV pool.
"""
