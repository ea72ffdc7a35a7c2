package ab

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
)

// Predictions is the part of simulate --json that compare reads: its
// rows (simulate.Prediction, whose JSON is simulate's) and assumptions.
type Predictions struct {
	Predictions []simulate.Prediction `json:"predictions"`
	Assumptions []string              `json:"assumptions"`
}

// MaxPredictedSize bounds the --predicted file read.
const MaxPredictedSize = 64 << 20

// ParsePredictions reads simulate --json's document: an error when it is
// not JSON or holds no prediction.
func ParsePredictions(data []byte) (*Predictions, error) {
	var p Predictions
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not the JSON of nccom-rings simulate --json: %v", err)
	}
	if len(p.Predictions) == 0 {
		return nil, fmt.Errorf("no \"predictions\" (nccom-rings simulate --json writes them)")
	}
	return &p, nil
}

// PredictedOrder is the simulate order ab compare pairs with a variant:
// A, the hostfile's own order, with "rank"; B with "network".
func PredictedOrder(variant string) string {
	if variant == "A" {
		return "rank"
	}
	return "network"
}

// ToolUnit converts a predicted bus bandwidth in Gbit/s into the unit of
// tool's busbw column: nccl-tests' GB/s (10^9 bytes a second), or
// nccom-test's GiB/s (2^30 bytes a second, its guide says).
func ToolUnit(tool string, gbps float64) float64 {
	bytesPerSecond := gbps * 1e9 / 8
	if tool == NccomTest {
		return bytesPerSecond / (1 << 30)
	}
	return bytesPerSecond / 1e9
}

// Unit names the unit of tool's busbw column.
func Unit(tool string) string {
	if tool == NccomTest {
		return "GiB/s"
	}
	return "GB/s"
}
