package junit

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A document with a pass, a failure and an error, whose messages hold
// markup and a control character, parses back to the same counts and text.
func TestMarshalParses(t *testing.T) {
	s := Suite{Name: "nccom-abi check lib<1>.so", Cases: []Case{
		{Name: "ncclRing size", Classname: "nccom-abi.check"},
		{Name: "ncclComm.rank", Classname: "nccom-abi.check", Failure: `LIB has +17612 <script>alert("x")</script> & more`},
		{Name: "load", Classname: "nccom-abi.check", Error: "no DWARF\x01 here"},
	}}
	path := filepath.Join(t.TempDir(), "out.xml")
	if err := WriteFile(path, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<?xml") || strings.Contains(string(b), "<script>") {
		t.Fatalf("not escaped or no header:\n%s", b)
	}
	var doc xmlSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("does not parse: %v\n%s", err, b)
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != s.Name {
		t.Fatalf("counts: %+v", doc)
	}
	c := doc.Suites[0].Cases
	if c[0].Failure != nil || c[0].Error != nil {
		t.Errorf("the passing case has a problem: %+v", c[0])
	}
	if c[1].Failure == nil || c[1].Failure.Message != s.Cases[1].Failure || c[1].Failure.Text != s.Cases[1].Failure {
		t.Errorf("failure: %+v", c[1].Failure)
	}
	if c[2].Error == nil || c[2].Error.Message != "no DWARF\uFFFD here" {
		t.Errorf("error: %+v", c[2].Error)
	}
}

// No cases is still a document: an empty suite.
func TestMarshalEmpty(t *testing.T) {
	b, err := Marshal(Suite{Name: "empty"})
	if err != nil {
		t.Fatal(err)
	}
	var doc xmlSuites
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != 0 || len(doc.Suites) != 1 {
		t.Fatalf("%v %+v\n%s", err, doc, b)
	}
}

// Parse gives back what Marshal was given, and refuses a document whose
// declared counts are not its testcases'.
func TestParse(t *testing.T) {
	s := Suite{Name: "verify d", Cases: []Case{
		{Name: "job", Classname: "c"},
		{Name: "rank 0", Classname: "c", Failure: "rank 0: next is 3\n  check: this rank"},
		{Name: "rank 1", Classname: "c", Error: "rank 1: not a dump"},
	}}
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if tests, failures, errors := got.Counts(); tests != 3 || failures != 1 || errors != 1 || got.Name != s.Name ||
		got.Cases[1] != s.Cases[1] || got.Cases[2] != s.Cases[2] {
		t.Fatalf("%+v", got)
	}
	forged := strings.Replace(string(b), `failures="1"`, `failures="0"`, 1)
	if _, err := Parse([]byte(forged)); err == nil || !strings.Contains(err.Error(), "declares 3 tests, 0 failures") {
		t.Fatalf("forged counts: %v", err)
	}
}
