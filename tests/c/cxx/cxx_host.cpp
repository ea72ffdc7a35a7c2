// cxx_host.cpp - build/cxx-host, the C++ host proof (issue #3).
//
// Compiled as C++17 with -DNCCOM_RING_CXX_LINKAGE, so include/nccom_ring.h
// declares the four functions with C++ linkage, as upstream NCCL's own
// headers do: this object references the Itanium-mangled names
// (_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks, ...), not
// the C ones (tests/c/cxx/check_names.sh checks that with nm -u), and links
// against build/libnccomring.so, which exports them as aliases of its C
// entry points.
//
// It runs 1 node x 8 ranks with two channels, [0..7] (NICs 2 in, 3 out) and
// [0,7,6,...,1] (NICs 4 in, 5 out), doubled to 4, and checks every output
// against values computed by hand:
//   channel 0 and 2: prev (r+7)%8, next (r+1)%8, userRanks[i] = (r+i)%8
//   channel 1 and 3: prev (r+1)%8, next (r+7)%8, userRanks[i] = (r-i+8)%8
//   nChannels 4, nNodes 1, node 0, nodesFirstRank[0] 0
//   netDev: rank 0 (both channels' head) 2 / 4, every other rank 3 / 5
//   ncclBuildRings from rank 3: 3 4 5 6 7 0 1 2 and 3 2 1 0 7 6 5 4
//   ncclTopoGetNetDev(graph NULL) answered by this host's C++-linkage
//   ncclTopoGetLocalNet: 300 + rank + count = 313 for rank 5
// Exits 0 when every value matches.
#ifndef NCCOM_RING_CXX_LINKAGE
#error "compile with -DNCCOM_RING_CXX_LINKAGE: this host proves the C++-linkage names"
#endif
#include "nccom_ring.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

constexpr int kRanks = 8;
constexpr int kChannels = 2;

int failures = 0;

void expect(bool ok, const char *what, int rank, int channel, int got, int want) {
  if (ok) return;
  std::fprintf(stderr, "cxx-host: FAIL: %s (rank %d channel %d): got %d, want %d\n", what, rank,
               channel, got, want);
  failures++;
}

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
template <typename T> using CPtr = std::unique_ptr<T, FreeDeleter>;
template <typename T> CPtr<T> zeroed() { return CPtr<T>(static_cast<T *>(std::calloc(1, sizeof(T)))); }

int wantPrev(int c, int r) { return c % 2 == 0 ? (r + 7) % 8 : (r + 1) % 8; }
int wantNext(int c, int r) { return c % 2 == 0 ? (r + 1) % 8 : (r + 7) % 8; }
int wantUser(int c, int r, int i) { return c % 2 == 0 ? (r + i) % 8 : (r - i + 8) % 8; }
int wantNetDev(int c, int r) { return c % 2 == 0 ? (r == 0 ? 2 : 3) : (r == 0 ? 4 : 5); }

}  // namespace

// A C++ host's own ncclTopoGetLocalNet, with C++ linkage as upstream
// declares it: GetNetDev with graph == NULL must find it under its mangled
// name (D19) and pass its answer through (P17). Exported with -rdynamic.
int localNetCalls = 0;
ncclResult_t ncclTopoGetLocalNet(ncclTopoSystem *sys, int rank, int *dev) {
  localNetCalls++;
  *dev = 300 + rank + (sys ? sys->nodes[0].count : 0);
  return ncclSuccess;
}

int main() {
  auto graph = zeroed<ncclTopoGraph>();
  ncclTopoSystem sys{};
  sys.nodes[0].count = kRanks;
  if (!graph) return 1;
  graph->pattern = NCCL_TOPO_PATTERN_RING;
  graph->nChannels = kChannels;
  for (int i = 0; i < kRanks; i++) {
    graph->intra[0 * kRanks + i] = i;
    graph->intra[1 * kRanks + i] = (kRanks - i) % kRanks;
  }
  for (int &nic : graph->inter) nic = -1;
  graph->inter[0] = 2;
  graph->inter[1] = 3;
  graph->inter[2] = 4;
  graph->inter[3] = 5;

  std::vector<CPtr<ncclComm>> comms;
  std::vector<ncclTopoRanks> fragments(kRanks);  // value-initialized: zeroed
  for (int r = 0; r < kRanks; r++) {
    comms.push_back(zeroed<ncclComm>());
    if (!comms.back()) return 1;
    comms[r]->rank = r;
    comms[r]->nRanks = kRanks;
    comms[r]->localRanks = kRanks;
    comms[r]->topo = &sys;
    ncclResult_t res = ncclTopoPreset(comms[r].get(), graph.get(), &fragments[r]);
    expect(res == ncclSuccess, "ncclTopoPreset result", r, -1, res, ncclSuccess);
  }
  std::vector<ncclTopoRanks *> all(kRanks);
  for (int r = 0; r < kRanks; r++) all[r] = &fragments[r];

  for (int r = 0; r < kRanks; r++) {
    std::vector<int> nodesFirstRank(kRanks, -1);
    int nChannels = -1, nNodes = -1;
    ncclResult_t res = ncclTopoPostset(comms[r].get(), nodesFirstRank.data(), all.data(),
                                       &nChannels, &nNodes);
    expect(res == ncclSuccess, "ncclTopoPostset result", r, -1, res, ncclSuccess);
    expect(nChannels == 2 * kChannels, "*nChannels", r, -1, nChannels, 2 * kChannels);
    expect(comms[r]->nChannels == 2 * kChannels, "comm->nChannels", r, -1, comms[r]->nChannels, 2 * kChannels);
    expect(nNodes == 1 && comms[r]->nNodes == 1, "nNodes", r, -1, nNodes, 1);
    expect(comms[r]->node == 0, "comm->node", r, -1, comms[r]->node, 0);
    expect(nodesFirstRank[0] == 0, "nodesFirstRank[0]", r, -1, nodesFirstRank[0], 0);
  }

  for (int r = 0; r < kRanks; r++) {
    for (int c = 0; c < 2 * kChannels; c++) {
      const ncclRing &ring = comms[r]->channels[c].ring;
      expect(ring.prev == wantPrev(c, r), "prev", r, c, ring.prev, wantPrev(c, r));
      expect(ring.next == wantNext(c, r), "next", r, c, ring.next, wantNext(c, r));
      expect(ring.userRanks != nullptr, "userRanks allocated", r, c, 0, 1);
      for (int i = 0; ring.userRanks && i < kRanks; i++)
        expect(ring.userRanks[i] == wantUser(c, r, i), "userRanks[i]", r, c, ring.userRanks[i],
               wantUser(c, r, i));
      int dev = -1;
      ncclResult_t res = ncclTopoGetNetDev(&sys, r, graph.get(), c, &dev);
      expect(res == ncclSuccess, "ncclTopoGetNetDev result", r, c, res, ncclSuccess);
      expect(dev == wantNetDev(c, r), "netDev", r, c, dev, wantNetDev(c, r));
    }
  }

  // ncclBuildRings over the stitched next tables, from rank 3.
  std::vector<int> next(kChannels * kRanks), rings(kChannels * kRanks, -1);
  for (int c = 0; c < kChannels; c++)
    for (int r = 0; r < kRanks; r++) next[c * kRanks + r] = comms[r]->channels[c].ring.next;
  ncclResult_t res = ncclBuildRings(kChannels, rings.data(), 3, kRanks, nullptr, next.data());
  expect(res == ncclSuccess, "ncclBuildRings result", 3, -1, res, ncclSuccess);
  static const int wantRings[kChannels][kRanks] = {{3, 4, 5, 6, 7, 0, 1, 2}, {3, 2, 1, 0, 7, 6, 5, 4}};
  for (int c = 0; c < kChannels; c++)
    for (int i = 0; i < kRanks; i++)
      expect(rings[c * kRanks + i] == wantRings[c][i], "ncclBuildRings rings[i]", 3, c,
             rings[c * kRanks + i], wantRings[c][i]);

  int dev = -1;
  res = ncclTopoGetNetDev(&sys, 5, nullptr, 0, &dev);
  expect(res == ncclSuccess && localNetCalls == 1, "C++-linkage ncclTopoGetLocalNet called", 5, -1,
         localNetCalls, 1);
  expect(dev == 313, "ncclTopoGetLocalNet's dev passed through", 5, -1, dev, 313);

  for (auto &comm : comms)
    for (ncclChannel &ch : comm->channels) std::free(ch.ring.userRanks);

  if (failures != 0) {
    std::fprintf(stderr, "cxx-host: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("cxx-host: 1 node x 8 ranks through the C++-linkage names: every prev/next/userRanks, "
              "netDev and ring matches the hand-computed values\n");
  return 0;
}
