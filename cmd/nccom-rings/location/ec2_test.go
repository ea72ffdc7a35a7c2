package location_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

func TestEC2Fixture(t *testing.T) {
	topo := parseFile(t, location.ParseEC2, "testdata/ec2-8.json")
	assert.Equal(t, "ec2", topo.Source)
	assert.False(t, topo.Truncated)
	require.Len(t, topo.Hosts, 8)
	a := "nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa1"
	b := "nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2bbbbbbbbbbbbbbb2"
	assert.Equal(t, location.Host{Name: "i-0a1b2c3d4e5f60001", Location: a, Line: 4}, topo.Hosts[0])
	assert.Equal(t, location.Host{Name: "i-0a1b2c3d4e5f60008", Location: b, Line: 88}, topo.Hosts[7])
	h, ok := topo.Lookup("I-0A1B2C3D4E5F60002")
	require.True(t, ok)
	assert.Equal(t, b, h.Location)
	_, ok = topo.Lookup("i-0a1b2c3d4e5f60009")
	assert.False(t, ok)
}

func TestEC2Pages(t *testing.T) {
	page1 := `{"Instances": [{"InstanceId": "i-1", "NetworkNodes": ["a", "b", "c"]}], "NextToken": "tok"}`
	page2 := `{"NextToken": null, "Instances": [{"InstanceId": "i-2", "NetworkNodes": ["a", "b", "d", "e"]}]}`
	want := []string{"i-1=a/b/c", "i-2=a/b/d/e"}

	// Pages one after another, as `aws ... --no-paginate` loops print them.
	topo := parseEC2(t, page1+"\n"+page2+"\n")
	assert.Equal(t, want, locationsOf(topo))
	assert.False(t, topo.Truncated)
	// A JSON array of pages.
	topo = parseEC2(t, "["+page1+",\n"+page2+"]")
	assert.Equal(t, want, locationsOf(topo))
	// The last page has a NextToken: instances are missing.
	topo = parseEC2(t, page2+page1)
	assert.True(t, topo.Truncated)
	topo = parseEC2(t, `{"Instances": [], "NextToken": "more"}`)
	assert.True(t, topo.Truncated)
	assert.Empty(t, topo.Hosts)
}

func TestEC2Instances(t *testing.T) {
	// Unequal depths (a Capacity Reservation may give 1, 2 or 3 nodes),
	// instances without nodes, keys skipped whatever they hold.
	topo := parseEC2(t, `{"Instances": [
	  {"InstanceId": "i-1", "NetworkNodes": ["nn-1"], "CapacityBlockId": null},
	  {"InstanceType": "trn2.48xlarge", "InstanceId": "i-2", "NetworkNodes": ["nn-1", "nn-2", "nn-3", "nn-4"],
	   "Extra": {"deep": [1, 2.5e3, true, false, null, {"x": []}]}},
	  {"InstanceId": "i-3", "NetworkNodes": []},
	  {"InstanceId": "i-4", "NetworkNodes": null},
	  {"InstanceId": "i-5"},
	  {"InstanceId": "i-6", "NetworkNodes": ["1", "2", "3", "4", "5", "6", "7", "8"]}
	]}`)
	assert.Equal(t, []string{"i-1=nn-1", "i-2=nn-1/nn-2/nn-3/nn-4", "i-3!", "i-4!", "i-5!", "i-6=1/2/3/4/5/6/7/8"}, locationsOf(topo))
	h, _ := topo.Lookup("i-5")
	assert.Equal(t, "EC2 gave no NetworkNodes for it (an instance type without topology, or not yet known)", h.Reason)
}

func TestEC2Malformed(t *testing.T) {
	deep := `{"Instances": [], "X": ` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "}"
	cases := []malformed{
		{"empty", "", "topology.json: no DescribeInstanceTopology response in the file"},
		{"blank", " \n\t\n", "topology.json: no DescribeInstanceTopology response in the file"},
		{"empty array", "[]", "topology.json: no DescribeInstanceTopology response in the file"},
		{"a string", "\n  \"i-1\"", "topology.json:2:3: a DescribeInstanceTopology response (an object with \"Instances\", or an array of them) expected, not the string \"i-1\""},
		{"array of arrays", "[[]]", "topology.json:1:2: a DescribeInstanceTopology response (an object with \"Instances\") expected in the array, not an array"},
		{"no Instances", "{\"instances\": []}", "topology.json:1:1: a response without \"Instances\": not the output of DescribeInstanceTopology"},
		{"Instances an object", "{\"Instances\": {}}", "topology.json:1:15: \"Instances\" must be an array of instances, not an object"},
		{"Instances twice", "{\"Instances\": [],\n \"Instances\": []}", "topology.json:2:2: \"Instances\" twice in one response"},
		{"instance a string", "{\"Instances\": [\"i-1\"]}", "topology.json:1:16: an instance (an object with \"InstanceId\" and \"NetworkNodes\") expected, not the string \"i-1\""},
		{"no InstanceId", "{\"Instances\": [\n  {\"NetworkNodes\": [\"a\"]}]}", "topology.json:2:3: an instance without \"InstanceId\""},
		{"InstanceId a number", "{\"Instances\": [{\"InstanceId\": 5}]}", "topology.json:1:31: \"InstanceId\" must be a string, not the number \"5\""},
		{"InstanceId twice", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"InstanceId\": \"i-2\"}]}", "topology.json:1:38: \"InstanceId\" twice in one instance"},
		{"bad InstanceId", "{\"Instances\": [{\"InstanceId\": \"i 1\"}]}", "topology.json:1:31: \"InstanceId\": host name \"i 1\" has \" \" at byte 2"},
		{"listed again", "{\"Instances\": [{\"InstanceId\": \"i-1\"},\n{\"InstanceId\": \"I-1\"}]}", "topology.json:2:16: instance \"I-1\" is listed again; first on line 1"},
		{"NetworkNodes a string", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": \"a/b\"}]}", "topology.json:1:54: \"NetworkNodes\" must be an array of network node ids, top layer first, not the string \"a/b\""},
		{"node a number", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": [\"a\", 7]}]}", "topology.json:1:60: a network node id (a string) expected, not the number \"7\""},
		{"node with a slash", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": [\"a/b\"]}]}", "topology.json:1:55: the network node id \"a/b\" has '/' at byte 2"},
		{"node empty", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": [\"\"]}]}", "topology.json:1:55: the network node id is not a location name: \"\": name 1 has 0 bytes; 1 to 64"},
		{"nine nodes", "{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": [\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]}]}", "topology.json:1:54: \"NetworkNodes\" has more than 8 ids; a location holds at most 8 names"},
		{"NextToken a number", "{\"Instances\": [], \"NextToken\": 1}", "topology.json:1:32: \"NextToken\" must be a string or null, not the number \"1\""},
		{"syntax", "{\"Instances\": [\n  {\"InstanceId\": \"i-1\",}]}", "topology.json:2:24: not JSON: invalid character '}' looking for beginning of object key string"},
		{"cut short", "{\"Instances\": [\n  {\"InstanceId\": \"i-1\"", "topology.json:2:23: the file ends inside a JSON value"},
		{"trailing bytes", "{\"Instances\": []}\nxyz", "topology.json:2:1: not JSON: invalid character 'x' looking for beginning of value"},
		{"trailing bracket", "{\"Instances\": []}]", "topology.json:1:18: not JSON: invalid character ']' looking for beginning of value"},
		{"two commas", "{\"Instances\": [{\"InstanceId\": \"i-1\"},,{}]}", "topology.json:1:38: not JSON: invalid character ','"},
		{"bad escape", "{\"Instances\": [{\"InstanceId\": \"i-\\q\"}]}", "topology.json:1:31: not JSON: invalid character 'q' in string escape code"},
		{"deep", deep, "topology.json:1:88: JSON nested more than 64 levels deep"},
	}
	checkMalformed(t, location.ParseEC2, "topology.json", cases)
}

// The JSON has no line limit: boto3's json.dumps and jq -c write one line.
func TestEC2OneLongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"Instances": [`)
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"InstanceId": "i-` + strconv.Itoa(i) + `", "NetworkNodes": ["nn-1", "nn-2", "nn-3"]}`)
	}
	b.WriteString(`]}`)
	require.Greater(t, b.Len(), 64<<10)
	topo := parseEC2(t, b.String())
	assert.Len(t, topo.Hosts, 2000)
}

func TestEC2RefusesAFileOver64MiB(t *testing.T) {
	_, err := location.ParseEC2("big.json", make([]byte, 65<<20))
	assert.EqualError(t, err, "big.json: has 68157440 bytes, more than the 64 MiB a file may have")
}
