package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ParseDescribeInstances reads the JSON of `aws ec2 describe-instances`
// (one response, pages one after another, or an array of pages, as
// ParseEC2 reads DescribeInstanceTopology's): Reservations[].Instances[],
// each instance named by its InstanceId (needed), PrivateDnsName,
// PrivateIpAddress and the Value of its tag whose Key is "Name" (when it
// is a host name: a tag is free text), and running in its
// CapacityReservationId. An instance whose State.Name is "terminated" or
// "shutting-down" is skipped: describe-instances lists it for an hour
// after, with the Name tag its running replacement has, but it has no
// address and no topology places it. Other keys are skipped; an
// instance listed twice
// or a key twice in one object is an error. Empty strings and nulls are
// no name (a stopped instance has no address).
//
// The format, from the AWS CLI reference's example of
// describe-instances (abridged):
//
//	{"Reservations": [{"Groups": [], "Instances": [{
//	    "InstanceId": "i-1234567890abcdef0", "InstanceType": "t2.micro",
//	    "PrivateDnsName": "ip-10-0-0-157.us-east-2.compute.internal",
//	    "PrivateIpAddress": "10.0.0.157",
//	    "Tags": [{"Key": "Name", "Value": "my-instance"}], ...}],
//	  "OwnerId": "123456789012", "ReservationId": "r-02a3f596d91211712"}]}
//
// and the EC2 API reference's Instance (CapacityReservationId: "the ID of
// the Capacity Reservation", when the instance runs in one).
func ParseDescribeInstances(file string, data []byte) (*Instances, error) {
	return parseInstancesJSON(file, data, KindDescribeInstances)
}

// ParsePods reads the JSON of `kubectl get pods -o json` (a List, or
// several one after another, or an array of them): items[], each pod
// named by metadata.name (needed) and status.podIP, and running on
// spec.nodeName (the node a topology of Kubernetes nodes names) and
// status.hostIP (its address). A pod not yet scheduled has no node. An
// MPI Operator hostfile names pods ("job-worker-0.job-worker.ns.svc" is
// "job-worker-0" compared by Key).
//
// The format, from the Kubernetes API reference (Pod v1: metadata.name,
// spec.nodeName, status.hostIP, status.podIP) and kubectl's List:
//
//	{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1",
//	  "kind": "Pod", "metadata": {"name": "nginx", "namespace": "default"},
//	  "spec": {"nodeName": "ip-192-168-1-10.us-west-2.compute.internal"},
//	  "status": {"hostIP": "192.168.1.10", "podIP": "192.168.1.23"}}]}
func ParsePods(file string, data []byte) (*Instances, error) {
	return parseInstancesJSON(file, data, KindPods)
}

// parseInstancesJSON reads either JSON kind; want, when not "", is the
// one the file must be.
func parseInstancesJSON(file string, data []byte, want string) (*Instances, error) {
	data, err := fileData(file, data)
	if err != nil {
		return nil, err
	}
	r := &ec2Reader{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	j := &instancesJSON{r: r, in: &Instances{File: file}, ids: map[string]int{}}
	const what = "the output of aws ec2 describe-instances ({\"Reservations\": [...]}) or kubectl get pods -o json ({\"items\": [...]})"
	docs, err := r.objects(what, what, "the documents", j.document)
	if err != nil {
		return nil, err
	}
	if docs == 0 {
		return nil, &Error{File: file, Msg: "no document in the file: " + what + " expected"}
	}
	if want != "" && j.in.Kind != want {
		return nil, &Error{File: file, Msg: fmt.Sprintf("the output of %s, not of %s", j.in.Kind, want)}
	}
	return j.in, nil
}

type instancesJSON struct {
	r   *ec2Reader
	in  *Instances
	ids map[string]int // Key(InstanceId) -> its line
}

// document reads one response or List whose '{' at start has been read.
func (j *instancesJSON) document(start int) error {
	r := j.r
	kind, nextToken := "", false
	err := r.fields(member{valueAt: start, tok: json.Delim('{')}, "a document", func(m member) (bool, error) {
		switch m.key {
		case "Reservations":
			kind = KindDescribeInstances
			return true, r.elements(m, `"Reservations"`, func(e member) error {
				return r.fields(e, "a reservation", func(m member) (bool, error) {
					if m.key != "Instances" {
						return false, nil
					}
					return true, r.elements(m, `"Instances"`, j.instance)
				})
			})
		case "items":
			kind = KindPods
			return true, r.elements(m, `"items"`, j.pod)
		case "NextToken":
			s, err := r.str(m, `"NextToken"`)
			nextToken = true
			j.in.Truncated = s != ""
			return true, err
		}
		return false, nil
	})
	switch {
	case err != nil:
		return err
	case kind == "":
		return r.errAt(start, "a document without \"Reservations\" (aws ec2 describe-instances) or \"items\" (kubectl get pods -o json)")
	case j.in.Kind != "" && j.in.Kind != kind:
		return r.errAt(start, "the output of %s after that of %s: one kind a file", kind, j.in.Kind)
	}
	j.in.Kind = kind
	if !nextToken {
		j.in.Truncated = false
	}
	return nil
}

// instance reads one of a reservation's Instances.
func (j *instancesJSON) instance(e member) error {
	r := j.r
	var id, dns, ip, name, cr, state string
	idAt := -1
	err := r.fields(e, "an instance", func(m member) (bool, error) {
		var err error
		switch m.key {
		case "InstanceId":
			idAt = m.valueAt
			id, err = r.hostValue(m, `"InstanceId"`)
		case "PrivateDnsName":
			dns, err = r.hostValue(m, `"PrivateDnsName"`)
		case "PrivateIpAddress":
			ip, err = r.hostValue(m, `"PrivateIpAddress"`)
		case "CapacityReservationId":
			cr, err = r.hostValue(m, `"CapacityReservationId"`)
		case "State":
			return true, r.fields(m, `"State"`, func(m member) (bool, error) {
				if m.key != "Name" {
					return false, nil
				}
				var err error
				state, err = r.str(m, `"State.Name"`)
				return true, err
			})
		case "Tags":
			return true, r.elements(m, `"Tags"`, func(t member) error {
				var key, value string
				err := r.fields(t, "a tag", func(m member) (bool, error) {
					var err error
					switch m.key {
					case "Key":
						key, err = r.str(m, `"Key"`)
					case "Value":
						value, err = r.str(m, `"Value"`)
					default:
						return false, nil
					}
					return true, err
				})
				if key == "Name" && CheckHost(value) == nil {
					name = value
				}
				return err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return err
	}
	if id == "" {
		return r.errAt(e.valueAt, "an instance without \"InstanceId\"")
	}
	line, _ := r.lines.at(r.data, idAt)
	if at, dup := j.ids[Key(id)]; dup {
		return r.errAt(idAt, "instance %s is listed again; first on line %d", clip(id), at)
	}
	j.ids[Key(id)] = line
	if state == "terminated" || state == "shutting-down" {
		// Gone or going: no address, no DNS name, in no topology; its
		// Name tag is its replacement's now.
		return nil
	}
	rec := Record{Names: []string{id, dns, ip, name}, Line: line}
	if cr != "" {
		rec.Where = []string{cr}
	}
	return j.in.add(rec)
}

// pod reads one of a List's items.
func (j *instancesJSON) pod(e member) error {
	r := j.r
	var name, podIP, node, hostIP string
	nameAt := -1
	err := r.fields(e, "a pod", func(m member) (bool, error) {
		switch m.key {
		case "kind":
			kind, err := r.str(m, `"kind"`)
			if err == nil && kind != "Pod" {
				// kubectl get nodes -o json is a topology: its nodes are
				// found by instance id and address there already.
				err = r.errAt(e.valueAt, "a %s, not a Pod: --instances reads kubectl get pods -o json; the nodes' file is a topology (locate k8s:FILE), which finds a node by its name, instance id and InternalIP", strconv.QuoteToASCII(kind))
			}
			return true, err
		case "metadata":
			return true, r.fields(m, `"metadata"`, func(m member) (bool, error) {
				if m.key != "name" {
					return false, nil
				}
				nameAt = m.valueAt
				var err error
				name, err = r.hostValue(m, `"metadata.name"`)
				return true, err
			})
		case "spec":
			return true, r.fields(m, `"spec"`, func(m member) (bool, error) {
				if m.key != "nodeName" {
					return false, nil
				}
				var err error
				node, err = r.hostValue(m, `"spec.nodeName"`)
				return true, err
			})
		case "status":
			return true, r.fields(m, `"status"`, func(m member) (bool, error) {
				var err error
				switch m.key {
				case "podIP":
					podIP, err = r.hostValue(m, `"status.podIP"`)
				case "hostIP":
					hostIP, err = r.hostValue(m, `"status.hostIP"`)
				default:
					return false, nil
				}
				return true, err
			})
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if name == "" {
		return r.errAt(e.valueAt, "a pod without \"metadata.name\"")
	}
	line, _ := r.lines.at(r.data, nameAt)
	return j.in.add(Record{Names: []string{name, podIP}, Where: []string{node, hostIP}, Line: line})
}

// fields reads the object whose first token is m's (it must be '{'),
// calling each with its members: each reads the members it handles and
// says so (true), the others are skipped. A handled key twice is an
// error.
func (r *ec2Reader) fields(m member, what string, each func(m member) (bool, error)) error {
	if m.tok != json.Delim('{') {
		return r.errAt(m.valueAt, "%s must be an object, not %s", what, describe(m.tok))
	}
	var seen map[string]bool
	for c, err := range r.members() {
		if err != nil {
			return err
		}
		if seen[c.key] {
			return r.errAt(c.at, "%s twice in %s", clip(c.key), what)
		}
		handled, err := each(c)
		if err != nil {
			return err
		}
		if !handled {
			if err := r.skip(c.tok, c.valueAt); err != nil {
				return err
			}
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[c.key] = true
	}
	return nil
}

// elements reads the array whose first token is m's (it must be '['),
// calling each with every element as far as its first token.
func (r *ec2Reader) elements(m member, what string, each func(e member) error) error {
	if m.tok != json.Delim('[') {
		return r.errAt(m.valueAt, "%s must be an array, not %s", what, describe(m.tok))
	}
	for r.dec.More() {
		at := r.next()
		tok, err := r.token()
		if err != nil {
			return err
		}
		if err := each(member{valueAt: at, tok: tok}); err != nil {
			return err
		}
	}
	_, err := r.token() // ']'
	return err
}

// str is m's value, a string or null ("").
func (r *ec2Reader) str(m member, what string) (string, error) {
	if m.tok == nil {
		return "", nil
	}
	s, ok := m.tok.(string)
	if !ok {
		return "", r.errAt(m.valueAt, "%s must be a string, not %s", what, describe(m.tok))
	}
	return s, nil
}

// hostValue is m's value, a host name, "" or null.
func (r *ec2Reader) hostValue(m member, what string) (string, error) {
	s, err := r.str(m, what)
	if err != nil || s == "" {
		return "", err
	}
	if err := CheckHost(s); err != nil {
		return "", r.errAt(m.valueAt, "%s: %v", what, err)
	}
	return s, nil
}
