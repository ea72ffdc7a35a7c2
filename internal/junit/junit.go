// Package junit writes the JUnit XML that CI systems (Jenkins, GitLab,
// GitHub's test reporters) read: one <testsuites> holding one <testsuite>
// per tool run, one <testcase> per check, and a <failure> (the check ran
// and found something) or an <error> (it could not run) with the tool's
// message. The tools write it with --junit FILE, besides their usual
// output and exit code.
package junit

import (
	"encoding/xml"
	"fmt"

	"github.com/nccomring/libnccomring/internal/safefile"
)

// Case is one check. At most one of Failure, Error and Skipped is set.
type Case struct {
	Name      string
	Classname string
	Failure   string  // the finding, when the check failed
	Error     string  // why the check could not be made
	Skipped   string  // why the check was not made, when it was skipped
	Detail    string  // the failure's or error's text, when more than its message (a log's last lines)
	Seconds   float64 // how long it took; 0: not timed
}

// Suite is one tool run: what was checked (Name, e.g. "nccom-abi check
// LIB") and its checks in order.
type Suite struct {
	Name  string
	Cases []Case
}

// The XML elements, as the JUnit schema most readers accept spells them.
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Skipped  int       `xml:"skipped,attr,omitempty"`
	Cases    []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr,omitempty"`
	Failure   *xmlProblem `xml:"failure,omitempty"`
	Error     *xmlProblem `xml:"error,omitempty"`
	Skipped   *xmlProblem `xml:"skipped,omitempty"`
}

// xmlProblem carries the message twice: in the attribute (one line, what
// summaries show) and as text (what detail views show).
type xmlProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// Marshal is s as a JUnit document. encoding/xml escapes every string, so
// messages holding text from the input (paths, host names) stay text;
// characters XML 1.0 cannot hold at all (most control characters) become
// U+FFFD, as encoding/xml does.
func Marshal(s Suite) ([]byte, error) {
	xs := xmlSuite{Name: s.Name, Tests: len(s.Cases), Cases: []xmlCase{}}
	for _, c := range s.Cases {
		xc := xmlCase{Name: c.Name, Classname: c.Classname}
		if c.Seconds > 0 {
			xc.Time = fmt.Sprintf("%.3f", c.Seconds)
		}
		text := func(message string) string {
			if c.Detail != "" {
				return c.Detail
			}
			return message
		}
		switch {
		case c.Error != "":
			xc.Error = &xmlProblem{Message: c.Error, Text: text(c.Error)}
			xs.Errors++
		case c.Failure != "":
			xc.Failure = &xmlProblem{Message: c.Failure, Text: text(c.Failure)}
			xs.Failures++
		case c.Skipped != "":
			xc.Skipped = &xmlProblem{Message: c.Skipped}
			xs.Skipped++
		}
		xs.Cases = append(xs.Cases, xc)
	}
	doc := xmlSuites{Name: s.Name, Tests: xs.Tests, Failures: xs.Failures, Errors: xs.Errors, Suites: []xmlSuite{xs}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(append([]byte(xml.Header), out...), '\n'), nil
}

// WriteFile writes s to path (a new file, mode 0644 before the umask,
// renamed over path: safefile.WriteFile, so a link planted there is
// replaced, not written through, and a FIFO is refused, not waited on).
func WriteFile(path string, s Suite) error {
	b, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("JUnit XML: %w", err)
	}
	if err := safefile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("JUnit XML: %w", err)
	}
	return nil
}

// Parse reads back a document of one suite, as Marshal writes it (the
// failure and error messages from their attributes), and checks that the
// counts it declares are its testcases': what the tools' tests read.
func Parse(data []byte) (Suite, error) {
	var doc xmlSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		return Suite{}, fmt.Errorf("JUnit XML: %w", err)
	}
	if len(doc.Suites) != 1 {
		return Suite{}, fmt.Errorf("JUnit XML: %d testsuites, want 1", len(doc.Suites))
	}
	xs := doc.Suites[0]
	s := Suite{Name: xs.Name}
	failures, errors := 0, 0
	for _, xc := range xs.Cases {
		c := Case{Name: xc.Name, Classname: xc.Classname}
		if xc.Failure != nil {
			c.Failure = xc.Failure.Message
			failures++
		}
		if xc.Error != nil {
			c.Error = xc.Error.Message
			errors++
		}
		if xc.Skipped != nil {
			c.Skipped = xc.Skipped.Message
		}
		s.Cases = append(s.Cases, c)
	}
	counts := [3]int{len(xs.Cases), failures, errors}
	if [3]int{doc.Tests, doc.Failures, doc.Errors} != counts || [3]int{xs.Tests, xs.Failures, xs.Errors} != counts {
		return Suite{}, fmt.Errorf("JUnit XML: declares %d tests, %d failures, %d errors (suite %d, %d, %d); has %v",
			doc.Tests, doc.Failures, doc.Errors, xs.Tests, xs.Failures, xs.Errors, counts)
	}
	return s, nil
}

// Counts is how many testcases s has, how many failed, how many errored.
func (s Suite) Counts() (tests, failures, errors int) {
	for _, c := range s.Cases {
		switch {
		case c.Error != "":
			errors++
		case c.Failure != "":
			failures++
		}
	}
	return len(s.Cases), failures, errors
}
