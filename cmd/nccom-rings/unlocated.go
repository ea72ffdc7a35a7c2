package main

import (
	"fmt"

	"github.com/nccomring/libnccomring/internal/quote"
)

// whyUnlocated is what score and report say after the nodes of a job
// without a location: why they have none, and the one line that would
// give them one. from is "dumps" or the --locations file.
func whyUnlocated(from string) string {
	if from == "dumps" {
		return "their ranks ran without NCCOM_RING_LOCATION; give --locations FILE (nccom-rings locate --all; by host name: nccom-rings plan --hosts HOSTFILE --locations FILE --instances FILE --emit-locations NEWFILE)"
	}
	return fmt.Sprintf("not in %s; by the dumps' host names: nccom-rings plan --hosts HOSTFILE --locations %s --instances FILE --emit-locations NEWFILE, then --locations NEWFILE",
		quote.String(from), quote.String(from))
}
