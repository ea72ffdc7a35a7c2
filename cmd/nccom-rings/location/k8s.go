package location

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/nodeorder"
)

// K8sOptions say which node labels ParseK8s reads.
type K8sOptions struct {
	// Labels, outermost first, in place of the labels ParseK8s looks for.
	Labels []string
	// Accelerator adds Topograph's accelerator label (an NVLink domain,
	// an UltraServer's Capacity Block) as the innermost level.
	Accelerator bool
}

// The node labels ParseK8s knows.
const (
	// EKS: topology.k8s.aws/network-node-layer-1 (the top of the network)
	// to -3, and -4 on instance types of four layers.
	eksLayerPrefix = "topology.k8s.aws/network-node-layer-"
	// NVIDIA Topograph: core, spine and leaf switches, and an accelerator
	// domain.
	topographPrefix      = "network.topology.nvidia.com/"
	topographAccelerator = topographPrefix + "accelerator"
	// Topograph's later labels: fabric tiers counted from the node
	// outward (tier-0 the switch nearest the node), so read in reverse.
	fabricTierPrefix  = "fabric.topograph.run/tier-"
	fabricAccelerator = "accelerator.topograph.run/domain"
)

var topographLevels = []string{topographPrefix + "core", topographPrefix + "spine", topographPrefix + "leaf"}

// ParseK8s reads the JSON of "kubectl get nodes -o json" (a List of
// Nodes, or one Node) and returns where each node sits, from its labels:
//
//   - EKS's topology.k8s.aws/network-node-layer-1 to -4 (layer 1 the
//     outermost), when any node has layer 1;
//   - else NVIDIA Topograph's network.topology.nvidia.com/core, spine and
//     leaf, outermost first, when any node has one (and its accelerator
//     label, innermost, only when opts.Accelerator); of these, only the
//     ones some node has (a provider of two tiers gives no core);
//   - else Topograph's fabric.topograph.run/tier-N, whose tiers count
//     from the node outward, so the highest tier comes first (and
//     accelerator.topograph.run/domain, innermost, only when asked);
//   - or opts.Labels, outermost first, in place of all of these.
//
// The levels are the file's (a level no node has is not one): a node
// lacking any of them has no location (Reason names the label), as a
// shorter location would group it with nodes one level up; except EKS's
// innermost layers, which only instance types of four layers have: a
// node with layers 1 to 3 is located by those, as ec2: locates it. A label of
// opts.Labels that no node has, or an accelerator label asked for that
// no node has, is an error naming it. A node is its metadata.name; the
// instance id of an AWS spec.providerID (aws:///us-east-1a/i-0abc...)
// and its status.addresses of type InternalIP find it too. Values must be location names; other fields are skipped
// unread, at most MaxDepth levels deep.
func ParseK8s(file string, data []byte, opts K8sOptions) (*Topology, error) {
	data, err := fileData(file, data)
	if err != nil {
		return nil, err
	}
	if len(opts.Labels) > nodeorder.MaxLevels {
		return nil, &Error{File: file, Msg: fmt.Sprintf("%d labels asked for; a location holds at most %d names", len(opts.Labels), nodeorder.MaxLevels)}
	}
	r := &ec2Reader{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	// Only the labels that can say where a node sits are kept: a node may
	// carry any number of others, and a file of 64 MiB of labels kept
	// whole would take gigabytes.
	r.keepLabel = func(k string) bool {
		if slices.Contains(opts.Labels, k) {
			return true
		}
		return len(opts.Labels) == 0 && (strings.HasPrefix(k, eksLayerPrefix) || strings.HasPrefix(k, topographPrefix) ||
			strings.HasPrefix(k, fabricTierPrefix) || k == fabricAccelerator)
	}
	at := r.next()
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, r.errAt(at, "the output of kubectl get nodes -o json (an object with \"items\", or a Node) expected, not %s", describe(tok))
	}
	var nodes []k8sNode
	var items, kind bool
	var single k8sNode
	for m, err := range r.members() {
		if err != nil {
			return nil, err
		}
		switch m.key {
		case "items":
			if items {
				return nil, r.errAt(m.at, "\"items\" twice")
			}
			items = true
			if m.tok != json.Delim('[') {
				return nil, r.errAt(m.valueAt, "\"items\" must be an array of Nodes, not %s", describe(m.tok))
			}
			for r.dec.More() {
				if len(nodes) == MaxHosts {
					return nil, r.errAt(r.next(), "more than %d nodes", MaxHosts)
				}
				n, err := r.k8sNode()
				if err != nil {
					return nil, err
				}
				nodes = append(nodes, n)
			}
			if _, err := r.token(); err != nil { // ']'
				return nil, err
			}
		case "kind":
			if k, _ := m.tok.(string); k != "List" && k != "NodeList" {
				if err := notANode(r, m); err != nil {
					return nil, err
				}
			}
		case "metadata", "spec", "status":
			// A single Node (kubectl get node NAME -o json).
			kind = true
			single.line, _ = r.lines.at(r.data, at)
			if err := r.k8sPart(&single, m); err != nil {
				return nil, err
			}
		default:
			if err := r.skip(m.tok, m.valueAt); err != nil {
				return nil, err
			}
		}
	}
	if err := r.end("the Node list"); err != nil {
		return nil, err
	}
	switch {
	case items:
		// A List's own metadata (resourceVersion) is no Node's.
	case kind && single.Metadata.Name != "":
		nodes = []k8sNode{single}
	case !items:
		return nil, &Error{File: file, Msg: "neither \"items\" nor a Node's \"metadata\": not the output of kubectl get nodes -o json"}
	}
	return k8sLocations(file, nodes, opts)
}

// k8sNode is what ParseK8s reads of a Node.
type k8sNode struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ProviderID string `json:"providerID"`
	} `json:"spec"`
	// InternalIPs are the node's status.addresses of type InternalIP.
	InternalIPs []string
	line        int
}

// k8sNode reads one element of items.
func (r *ec2Reader) k8sNode() (k8sNode, error) {
	at := r.next()
	var n k8sNode
	tok, err := r.token()
	if err != nil {
		return n, err
	}
	if tok != json.Delim('{') {
		return n, r.errAt(at, "a Node (an object with \"metadata\") expected, not %s", describe(tok))
	}
	n.line, _ = r.lines.at(r.data, at)
	for m, err := range r.members() {
		if err != nil {
			return n, err
		}
		if m.key == "kind" {
			if err := notANode(r, m); err != nil {
				return n, err
			}
		}
		if err := r.k8sPart(&n, m); err != nil {
			return n, err
		}
	}
	if n.Metadata.Name == "" {
		return n, r.errAt(at, "a Node without metadata.name")
	}
	return n, nil
}

// notANode refuses a "kind" member m that is not "Node": kubectl get
// pods -o json is read the same way, and its pods are not nodes.
func notANode(r *ec2Reader, m member) error {
	k, isString := m.tok.(string)
	if isString && k == "Node" {
		return nil
	}
	if !isString {
		return r.errAt(m.valueAt, "\"kind\" must be a string, not %s", describe(m.tok))
	}
	return r.errAt(m.valueAt, "a %s, not a Node: locate reads kubectl get nodes -o json", clip(k))
}

// k8sPart reads member m of a Node: its metadata (name, labels), spec
// (providerID) and status (addresses); the rest is skipped.
func (r *ec2Reader) k8sPart(n *k8sNode, m member) error {
	if m.key == "status" {
		return r.fields(m, `a Node's "status"`, func(f member) (bool, error) {
			if f.key != "addresses" {
				return false, nil
			}
			return true, r.elements(f, "status.addresses", func(e member) error {
				var typ, addr string
				err := r.fields(e, "an element of status.addresses", func(a member) (bool, error) {
					var err error
					switch a.key {
					case "type":
						typ, err = r.str(a, "an address's type")
					case "address":
						addr, err = r.hostValue(a, "an address of status.addresses")
					default:
						return false, nil
					}
					return true, err
				})
				if err == nil && typ == "InternalIP" && addr != "" {
					n.InternalIPs = append(n.InternalIPs, addr)
				}
				return err
			})
		})
	}
	if m.key != "metadata" && m.key != "spec" {
		return r.skip(m.tok, m.valueAt)
	}
	if m.tok != json.Delim('{') {
		return r.errAt(m.valueAt, "a Node's %q must be an object, not %s", m.key, describe(m.tok))
	}
	str := func(f member, what string) (string, error) {
		s, ok := f.tok.(string)
		if !ok {
			return "", r.errAt(f.valueAt, "%s must be a string, not %s", what, describe(f.tok))
		}
		return s, nil
	}
	for f, err := range r.members() {
		if err != nil {
			return err
		}
		var e error
		switch {
		case m.key == "metadata" && f.key == "name":
			n.Metadata.Name, e = str(f, "metadata.name")
		case m.key == "spec" && f.key == "providerID":
			n.Spec.ProviderID, e = str(f, "spec.providerID")
		case m.key == "metadata" && f.key == "labels":
			if f.tok != json.Delim('{') {
				return r.errAt(f.valueAt, "metadata.labels must be an object, not %s", describe(f.tok))
			}
			if n.Metadata.Labels == nil {
				n.Metadata.Labels = map[string]string{}
			}
			for l, err := range r.members() {
				if err != nil {
					return err
				}
				v, err := str(l, "a label's value")
				if err != nil {
					return err
				}
				if r.keepLabel(l.key) {
					n.Metadata.Labels[l.key] = v
				}
			}
		default:
			e = r.skip(f.tok, f.valueAt)
		}
		if e != nil {
			return e
		}
	}
	return nil
}

// instanceOfProvider is the EC2 instance id of an AWS providerID
// (aws:///us-east-1a/i-0abc...), or "".
func instanceOfProvider(id string) string {
	rest, ok := strings.CutPrefix(id, "aws://")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		rest = rest[i+1:]
	}
	if IsInstanceID(rest) {
		return rest
	}
	return ""
}

// k8sLocations places nodes by the labels opts and the nodes say.
func k8sLocations(file string, nodes []k8sNode, opts K8sOptions) (*Topology, error) {
	levels, scheme, err := k8sLevels(nodes, opts)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	t := &Topology{Source: "k8s", File: file}
	for _, n := range nodes {
		name := n.Metadata.Name
		if err := CheckHost(name); err != nil {
			return nil, &Error{File: file, Line: n.line, Msg: fmt.Sprintf("metadata.name: %v", err)}
		}
		h := Host{Name: name, Line: n.line}
		var names []string
		missing := ""
		for _, l := range levels {
			v, ok := n.Metadata.Labels[l]
			if !ok || v == "" {
				if missing == "" {
					missing = l
				}
				continue
			}
			if missing != "" {
				break
			}
			if err := checkName("the value of "+l, v); err != nil {
				return nil, &Error{File: file, Line: n.line, Msg: fmt.Sprintf("node %s: %v", clip(name), err)}
			}
			names = append(names, v)
		}
		switch {
		case len(levels) == 0:
			h.Reason = "no node has a topology label (" + scheme + ")"
		case len(names) == 0:
			h.Reason = fmt.Sprintf("the node has no label %s (%s)", levels[0], scheme)
		case len(names) < len(levels) && missing != "" && hasAfter(n.Metadata.Labels, levels, missing):
			h.Reason = fmt.Sprintf("the node has no label %s, and labels of levels inside it (%s)", missing, scheme)
			names = nil
		case len(names) < len(levels) && len(opts.Labels) == 0 && strings.HasPrefix(scheme, "EKS's"):
			// EKS copies DescribeInstanceTopology's network nodes into
			// layers 1 to N, N 3 or 4 by instance type: a node without
			// layer 4 has three layers, as ec2: gives it (D25 groups a
			// shorter location by the levels it has).
			h.Location = strings.Join(names, "/")
		case len(names) < len(levels):
			// Other nodes have this level: a shorter location would put
			// the node in a group of theirs one level up, a wrong answer.
			h.Reason = fmt.Sprintf("the node has no label %s, which other nodes have (%s): a location one level short would group it wrongly", missing, scheme)
			names = nil
		default:
			h.Location = strings.Join(names, "/")
		}
		i, added := t.add(h)
		if !added {
			return nil, &Error{File: file, Line: n.line, Msg: fmt.Sprintf("node %s is listed again; first on line %d", clip(name), t.Hosts[i].Line)}
		}
		if id := instanceOfProvider(n.Spec.ProviderID); id != "" {
			t.alias(id, i)
		}
		for _, ip := range n.InternalIPs {
			t.alias(ip, i)
		}
	}
	return t, nil
}

// hasAfter reports whether labels has a level after missing.
func hasAfter(labels map[string]string, levels []string, missing string) bool {
	after := false
	for _, l := range levels {
		if l == missing {
			after = true
			continue
		}
		if after && labels[l] != "" {
			return true
		}
	}
	return false
}

// present is the labels of levels that some node has: Topograph writes
// only the levels its provider reports (a cloud of two tiers has no
// core), and EKS layer 4 only on instance types of four layers.
func present(nodes []k8sNode, levels []string) []string {
	var out []string
	for _, l := range levels {
		for _, n := range nodes {
			if n.Metadata.Labels[l] != "" {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// k8sLevels is the labels of each level, outermost first, and which
// scheme they are, for a message.
func k8sLevels(nodes []k8sNode, opts K8sOptions) ([]string, string, error) {
	if len(opts.Labels) > 0 {
		if opts.Accelerator {
			return nil, "", errors.New("--accelerator adds Topograph's accelerator label; with --labels, name it there")
		}
		for _, l := range opts.Labels {
			if len(present(nodes, []string{l})) == 0 {
				return nil, "", fmt.Errorf("no node has the label %s of --labels", clip(l))
			}
		}
		return opts.Labels, "the labels asked for: " + strings.Join(opts.Labels, ","), nil
	}
	has := func(pred func(string) bool) bool {
		for _, n := range nodes {
			for k := range n.Metadata.Labels {
				if pred(k) {
					return true
				}
			}
		}
		return false
	}
	if has(func(k string) bool { return k == eksLayerPrefix+"1" }) {
		if opts.Accelerator {
			return nil, "", errors.New("--accelerator adds Topograph's accelerator label, and these nodes have EKS's network-node-layer labels")
		}
		levels := []string{}
		for i := 1; i <= 4; i++ {
			levels = append(levels, eksLayerPrefix+strconv.Itoa(i))
		}
		return present(nodes, levels), "EKS's " + eksLayerPrefix + "1..4", nil
	}
	if has(func(k string) bool {
		return k == topographLevels[0] || k == topographLevels[1] || k == topographLevels[2]
	}) {
		levels := append([]string{}, topographLevels...)
		if opts.Accelerator {
			if len(present(nodes, []string{topographAccelerator})) == 0 {
				return nil, "", fmt.Errorf("--accelerator: no node has the label %s", topographAccelerator)
			}
			levels = append(levels, topographAccelerator)
		}
		return present(nodes, levels), "Topograph's " + topographPrefix + "{core,spine,leaf}", nil
	}
	tiers := map[int]bool{}
	for _, n := range nodes {
		for k := range n.Metadata.Labels {
			if s, ok := strings.CutPrefix(k, fabricTierPrefix); ok {
				if v, err := strconv.Atoi(s); err == nil && v >= 0 && v < 100 && strconv.Itoa(v) == s {
					tiers[v] = true
				}
			}
		}
	}
	if len(tiers) > 0 {
		var order []int
		for v := range tiers {
			order = append(order, v)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(order)))
		levels := []string{}
		for _, v := range order {
			levels = append(levels, fabricTierPrefix+strconv.Itoa(v))
		}
		if opts.Accelerator {
			if len(present(nodes, []string{fabricAccelerator})) == 0 {
				return nil, "", fmt.Errorf("--accelerator: no node has the label %s", fabricAccelerator)
			}
			levels = append(levels, fabricAccelerator)
		}
		if len(levels) > nodeorder.MaxLevels {
			return nil, "", fmt.Errorf("the nodes have %d levels of fabric.topograph.run/tier-N labels; a location holds at most %d names", len(levels), nodeorder.MaxLevels)
		}
		return levels, "Topograph's " + fabricTierPrefix + "N, the highest tier outermost", nil
	}
	if opts.Accelerator {
		return nil, "", fmt.Errorf("--accelerator: no node has the label %s or %s", topographAccelerator, fabricAccelerator)
	}
	return nil, "neither EKS's " + eksLayerPrefix + "1..4 nor Topograph's " + topographPrefix + "{core,spine,leaf} or " + fabricTierPrefix + "N; name them with --labels", nil
}
