package ring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/ring"
)

// NCCOM_RING_POD_ORDER: unset or empty refuses pods, "node" in any case
// stitches them in node order, anything else refuses them with the WARN of
// docs/errors.md (Environment).
func TestParsePodOrder(t *testing.T) {
	cases := []struct {
		value string
		set   bool
		want  ring.PodOrder
		err   string
	}{
		{"", false, ring.PodOrderRefuse, ""},
		{"", true, ring.PodOrderRefuse, ""},
		{"node", true, ring.PodOrderNode, ""},
		{"NODE", true, ring.PodOrderNode, ""},
		{"pod", true, ring.PodOrderRefuse, "NCCOM_RING_POD_ORDER=\"pod\" is not 'node'; pods are refused"},
	}
	for _, tc := range cases {
		got, err := ring.ParsePodOrder(tc.value, tc.set)
		assert.Equal(t, tc.want, got, "%q", tc.value)
		if tc.err == "" {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, tc.err)
		}
	}
}
