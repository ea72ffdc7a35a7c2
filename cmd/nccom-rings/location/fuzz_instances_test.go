package location

import (
	"os"
	"testing"

	"github.com/nccomring/libnccomring/internal/fuzzseed"
)

// FuzzParseInstances fuzzes the instances files of --instances (every
// kind, as ParseInstances tells them apart) from the three fixtures and
// seeds: what it reads must give host names that find their record, and
// Join must end on it; what it refuses must be an *Error naming the file
// and one of its lines.
func FuzzParseInstances(f *testing.F) {
	c := fuzzseed.New(f)
	for _, path := range []string{"testdata/describe-instances-4.json", "testdata/scontrol-nodes-4.txt", "testdata/pods-4.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		c.Add(data)
	}
	for _, s := range []string{
		"# HOST INSTANCE\ntrn001 i-1\n trn002\ti-2 # c\r\n", "a b c\n", "a b\nB c\n", "a spine/leaf\n",
		"NodeName=a NodeAddr=10.0.0.1 NodeHostName=(null)\n   InstanceId=i-1 OS=Linux x #1\n\nNodeName=b\n",
		"NodeName=a NodeAddr=1 NodeAddr=2\n", "  NodeAddr=x\n", "\xef\xbb\xbfNodeName=a\n",
		`{"Reservations": [{"Instances": [{"InstanceId": "i-1", "Tags": [{"Key": "Name", "Value": "Compute"}], "CapacityReservationId": "cr-1"}]}], "NextToken": null}`,
		`[{"items": [{"metadata": {"name": "p"}, "spec": {"nodeName": "n"}, "status": {"hostIP": "10.0.0.1"}}]}, {"items": []}]`,
		`{"items": [{"metadata": {"name": "p", "name": "q"}}]}`, `{"Reservations": [{"Instances": [{"InstanceId": "i-1"}, {"InstanceId": "I-1"}]}]}`,
		`{"items": [[[[[[[[[[]]]]]]]]]]}`, `{}`, `[]`, ``, `null`,
	} {
		c.Add([]byte(s))
	}
	c.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInstances("fuzz", data)
		if err != nil {
			checkError(t, err, data)
			return
		}
		for i, r := range in.Records {
			for _, n := range append(append([]string{}, r.Names...), r.Where...) {
				if err := CheckHost(n); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			if len(r.Names) == 0 || len(r.Names)+len(r.Where) > 6 {
				t.Fatalf("record %d: %+v", i, r)
			}
			if j, n := in.Find(r.Names[0]); n == 0 || n == 1 && j != i {
				t.Fatalf("Find(%q) = %d, %d; want record %d", r.Names[0], j, n, i)
			}
			if i < 4 {
				Join([]*Instances{in, in}, r.Names[0], func(string) bool { return false })
			}
		}
	})
}
