// Body of the probe behind benchmarks/kernel_attributes.py. The header gave the generated
// kernel a compile-time cluster shape of CLUSTER CTAs (kernel_attributes.py says how). Each
// CTA puts its value of x in shared memory, waits for its cluster, and reads its partner's
// value (cluster rank ^ 1) through distributed shared memory; it writes what it saw:
// out[3 * b] = the partner's value, out[3 * b + 1] = its rank, out[3 * b + 2] = the cluster's
// size. Without a cluster launch the size is 1 and the partner does not exist.
namespace cg = cooperative_groups;
cg::cluster_group cluster = cg::this_cluster();
__shared__ float value;
if (threadIdx.x == 0) value = x[blockIdx.x];
cluster.sync();
const unsigned rank = cluster.block_rank();
const unsigned size = cluster.num_blocks();
if (threadIdx.x == 0) {
  out[3 * blockIdx.x] = size > 1 ? *cluster.map_shared_rank(&value, rank ^ 1) : -1.f;
  out[3 * blockIdx.x + 1] = float(rank);
  out[3 * blockIdx.x + 2] = float(size);
}
cluster.sync();  // no CTA leaves while its partner may still read its shared memory
