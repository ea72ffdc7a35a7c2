package simulate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// EngineName is the engine's file name, built by make into build/.
const EngineName = "nccom-simulate-engine"

// InstallLine is what installs SimGrid, after which make builds the engine.
const InstallLine = "apt-get install -y libsimgrid-dev (SimGrid 3.32), then make"

// ErrNoEngine is the engine not found: SimGrid was not there when make ran.
var ErrNoEngine = errors.New("the SimGrid engine (" + EngineName + ") is not built: " + InstallLine)

// FindEngine is the engine's path: $NCCOM_SIMULATE_ENGINE, else beside
// this executable (build/nccom-rings beside build/nccom-simulate-engine),
// else under $NCCOMRING_BUILD (make test's build directory).
func FindEngine() (string, error) {
	var candidates []string
	if p := os.Getenv("NCCOM_SIMULATE_ENGINE"); p != "" {
		candidates = append(candidates, p)
	}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), EngineName))
	}
	if b := os.Getenv("NCCOMRING_BUILD"); b != "" {
		candidates = append(candidates, filepath.Join(b, EngineName))
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNoEngine
}

// flow is one ring edge between nodes: its links, in order.
type flow struct {
	links []int
}

// solved is one steady state: each flow's rate and each link's use, in
// bytes per second, and how many flows cross each link.
type solved struct {
	rate     []float64
	used     []float64
	crossing []int
}

// solve runs the engine on the flows over n's links.
func solve(engine string, n *network, flows []flow) (*solved, error) {
	var in bytes.Buffer
	crossing := make([]int, len(n.links))
	for _, f := range flows {
		for _, l := range f.links {
			crossing[l]++
		}
	}
	// Only the links some flow crosses: the engine's work is theirs.
	for i, l := range n.links {
		if crossing[i] > 0 {
			fmt.Fprintf(&in, "link %s %.6g\n", l.name, l.bps)
		}
	}
	for i, f := range flows {
		fmt.Fprintf(&in, "flow f%d", i)
		for _, l := range f.links {
			in.WriteString(" " + n.links[l].name)
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(engine)
	cmd.Stdin = &in
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", engine, err, strings.TrimSpace(errOut.String()))
	}
	s := &solved{rate: make([]float64, len(flows)), used: make([]float64, len(n.links)), crossing: crossing}
	sc := bufio.NewScanner(&out)
	done, nFlows := false, 0
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 1 && w[0] == "done":
			done = true
		case len(w) == 3 && w[0] == "flow":
			i, err1 := strconv.Atoi(strings.TrimPrefix(w[1], "f"))
			v, err2 := strconv.ParseFloat(w[2], 64)
			if err1 != nil || err2 != nil || i < 0 || i >= len(flows) {
				return nil, fmt.Errorf("%s: unexpected line %q", engine, sc.Text())
			}
			s.rate[i] = v
			nFlows++
		case len(w) == 4 && w[0] == "link":
			i, ok := n.index[w[1]]
			v, err := strconv.ParseFloat(w[2], 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("%s: unexpected line %q", engine, sc.Text())
			}
			s.used[i] = v
		default:
			return nil, fmt.Errorf("%s: unexpected line %q", engine, sc.Text())
		}
	}
	if !done || nFlows != len(flows) {
		return nil, fmt.Errorf("%s: %d of %d flows answered, output incomplete", engine, nFlows, len(flows))
	}
	return s, nil
}
