"""`vexel bench`: workloads, random-weight models of real shapes, and the peers beside them."""
