package score_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/ringdump"
)

// FuzzFromDumps: no set of dumps, one JSON document a line, makes
// FromDumps, Compute or Diff panic; a job FromDumps accepts is scored.
func FuzzFromDumps(f *testing.F) {
	// A small job: the fuzzer minimizes each new input it finds, and the
	// time that takes follows the input's size.
	small := &score.Job{NRanks: 4, NNodes: 2, Node: []int{0, 0, 1, 1}, Host: []string{"a", "b"},
		Location: []string{"s/x", "s/y"}, Rings: [][]int{{0, 1, 2, 3}, {0, 2, 3, 1}}, NetDev: []int{0, 1, 0, 1, 2, 2, -1, 3}}
	c := fuzzseed.New(f)
	var seed bytes.Buffer
	for _, file := range dumpsOf(small) {
		line, err := json.Marshal(file.Dump)
		if err != nil {
			f.Fatal(err)
		}
		seed.Write(line)
		seed.WriteByte('\n')
	}
	c.Add(seed.Bytes())
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":1,"nNodes":1,"node":0,"channels":[{"userRanks":[0]}],"netDevs":[{"channel":5,"dev":1}]}`))
	c.Fuzz(func(t *testing.T, data []byte) {
		var files []ringdump.File
		for _, line := range bytes.Split(data, []byte("\n")) {
			if d, err := ringdump.Decode("fuzz", line); err == nil {
				files = append(files, ringdump.File{Path: "fuzz", Dump: d})
			}
		}
		j, err := score.FromDumps(files)
		if err != nil {
			return
		}
		if _, err := score.Compute(j); err != nil && j.Check() != nil {
			t.Fatalf("FromDumps returned a job Check refuses: %v", err)
		}
		if d := score.Diff(j, j); len(d) != 0 {
			t.Fatalf("a job differs from itself: %v", d)
		}
		score.Diff(j, d25Job())
	})
}
