/* linked.c - the ring_api of the library a host is linked against. Kept apart
 * from cluster.c so that hosts that only dlopen libraries do not need the
 * four symbols at link time. */
#include "cluster.h"

const struct ring_api linked_ring_api = {ncclTopoPreset, ncclTopoPostset, ncclBuildRings,
                                         ncclTopoGetNetDev};
