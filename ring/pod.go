package ring

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
)

// PodOrder says how Postset orders nodes when comm->enablePod is set on more
// than one node (D15, P8).
type PodOrder int

const (
	// PodOrderRefuse returns ncclInvalidUsage: the UltraServer pod ordering
	// (ncclTopoGetP2pPodInterNodeGraph) is not documented, so not rebuilt.
	PodOrderRefuse PodOrder = iota
	// PodOrderNode stitches pods in plain node order.
	PodOrderNode
)

// podJob reports whether D15's pod ordering is asked for: comm->enablePod
// set on more than one node (on one node there is nothing to order).
func podJob(enablePod int32, nNodes int) bool {
	return enablePod != 0 && nNodes > 1
}

// PodOrderEnvVar selects the PodOrder.
const PodOrderEnvVar = "NCCOM_RING_POD_ORDER"

// ParsePodOrder reads NCCOM_RING_POD_ORDER's value (set reports whether it is
// set at all): unset or empty is PodOrderRefuse, "node" (any case) is
// PodOrderNode. Any other value is PodOrderRefuse with an error whose text is
// the WARN line (docs/errors.md, Environment).
func ParsePodOrder(value string, set bool) (PodOrder, error) {
	switch {
	case !set || value == "":
		return PodOrderRefuse, nil
	case strings.EqualFold(value, "node"):
		return PodOrderNode, nil
	}
	return PodOrderRefuse, fmt.Errorf("%s=%s is not 'node'; pods are refused", PodOrderEnvVar, quote.String(value))
}

// PodFallbackLine is the INFO line of a Postset that stitched pods in node
// order.
func PodFallbackLine(nNodes int) string {
	return fmt.Sprintf("ncclTopoPostset: enablePod set on %d nodes: stitching in node order (%s=node)", nNodes, PodOrderEnvVar)
}
