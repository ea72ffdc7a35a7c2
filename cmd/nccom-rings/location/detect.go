package location

import (
	"bytes"
	"fmt"
	"regexp"
)

// Sources are the sources a locations file is made from, as locate names
// them (slurm-env reads no file).
var Sources = []string{"ec2", "ec2-reservation", "k8s", "slurm", "slurm-env"}

// Options are what the readers that take any are told.
type Options struct {
	K8s   K8sOptions
	Slurm SlurmOptions
}

// Parse reads data (from file) as source says: "ec2", "ec2-reservation",
// "k8s", "slurm", or "auto", which tells them apart by content (Detect).
func Parse(source, file string, data []byte, opts Options) (*Topology, error) {
	if source == "auto" {
		s, err := Detect(file, data)
		if err != nil {
			return nil, err
		}
		source = s
	}
	switch source {
	case "ec2":
		return ParseEC2(file, data)
	case "ec2-reservation":
		return ParseEC2Reservation(file, data)
	case "k8s":
		return ParseK8s(file, data, opts.K8s)
	case "slurm":
		return ParseSlurmWith(file, data, opts.Slurm)
	}
	return nil, &Error{File: file, Msg: fmt.Sprintf("no reader for the source %s", clip(source))}
}

var (
	jsonKey   = regexp.MustCompile(`"(Reservations|Instances|CapacityReservations|items|apiVersion|kind)"\s*:`)
	slurmWord = regexp.MustCompile(`(?im)^[ \t]*(SwitchName|BlockName|BlockSizes)[ \t]*=`)
)

// Detect tells which source data is by its content: JSON whose first key
// of the ones below is "Instances" (ec2), "CapacityReservations"
// (ec2-reservation) or "items", "apiVersion" or "kind" (k8s); a
// topology.yaml, or lines of SwitchName=, BlockName= or BlockSizes=
// (slurm). A byte-order mark is skipped.
func Detect(file string, data []byte) (string, error) {
	text := bytes.TrimLeft(bytes.TrimPrefix(data, bom), " \t\r\n")
	if len(text) > 0 && (text[0] == '{' || text[0] == '[') {
		m := jsonKey.FindSubmatch(text)
		switch {
		case m == nil:
			return "", &Error{File: file, Msg: "JSON without \"Instances\", \"CapacityReservations\" or \"items\": not the output of aws ec2 describe-instance-topology, describe-capacity-reservation-topology or kubectl get nodes -o json"}
		case string(m[1]) == "Reservations":
			return "", &Error{File: file, Msg: "the output of aws ec2 describe-instances: it says which host each instance is, not where it sits; locate reads describe-instance-topology's"}
		case string(m[1]) == "Instances":
			return "ec2", nil
		case string(m[1]) == "CapacityReservations":
			return "ec2-reservation", nil
		}
		return "k8s", nil
	}
	if looksLikeSlurmYAML(data) || slurmWord.Match(data) {
		return "slurm", nil
	}
	return "", &Error{File: file, Msg: "not a file locate knows: neither JSON (EC2's, kubectl's) nor a Slurm topology.conf, topology.yaml or scontrol show topology's output; name its source (ec2:, ec2-reservation:, k8s:, slurm:)"}
}
