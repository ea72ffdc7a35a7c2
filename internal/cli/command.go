package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/internal/safefile"
)

// Tool is one command-line tool and its table of commands: the one place
// its top help, each command's --help and its page of docs/commands/ are
// made from (Help, CommandHelp, Markdown), so no usage line is written
// twice.
type Tool struct {
	Name     string // "nccom-rings"
	Summary  string // the top help's first line, after "Name: "
	About    string // the top help's paragraphs after the command list (operands, what is read)
	Version  string // what --version prints
	Exits    []Exit // what each exit code means, for a command with none of its own
	Commands []*Command
}

// Command is one subcommand: everything its --help says, and what runs it.
type Command struct {
	Name    string
	Summary string   // one line in the tool's command list
	Usage   []string // its synopses after "TOOL NAME ", one line each
	Doc     string   // --help's text between the synopses and the flags
	Exits   []Exit   // nil: the tool's
	// Setup declares the command's flags on fs, each with its help text,
	// and returns what runs the command once fs is parsed. Each run of the
	// command calls it again, so flags hold no state between runs.
	Setup func(fs *flag.FlagSet) func(*Invocation) int
}

// Exit is one exit code and what it means.
type Exit struct {
	Code    int
	Meaning string
}

// Exits are the exit codes 0, 1, 2 ... with these meanings, in order; an
// empty meaning is a code the command does not use.
func Exits(meanings ...string) []Exit {
	var exits []Exit
	for code, m := range meanings {
		if m != "" {
			exits = append(exits, Exit{Code: code, Meaning: m})
		}
	}
	return exits
}

// Invocation is one run of a command: its parsed flags and operands, and
// where it writes.
type Invocation struct {
	Tool     *Tool
	Command  *Command
	Flags    *flag.FlagSet
	Operands []string
	Stdout   io.Writer
	Stderr   io.Writer
}

// Given reports whether the flag name was on the command line.
func (inv *Invocation) Given(name string) bool {
	given := false
	inv.Flags.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// Errorf writes "TOOL NAME: message" as one line to stderr.
func (inv *Invocation) Errorf(format string, a ...any) {
	fmt.Fprintf(inv.Stderr, "%s %s: %s\n", inv.Tool.Name, inv.Command.Name, fmt.Sprintf(format, a...))
}

// UsageError writes the message and the command's usage lines to stderr
// and returns ExitUnusable: the command line itself is wrong.
func (inv *Invocation) UsageError(format string, a ...any) int {
	inv.Errorf(format, a...)
	fmt.Fprintln(inv.Stderr)
	inv.Tool.usageHint(inv.Stderr, inv.Command)
	return ExitUnusable
}

// writeErrorJSON is standard output's document when a command asked for
// --json ends unusable without one of its own (a wrong command line, or a
// command whose document has no place for the error): a script reading it
// finds an "error", never an empty stream.
func writeErrorJSON(w io.Writer, message string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{message})
	fmt.Fprintf(w, "%s\n", b)
}

// counted counts what a command writes to standard output.
type counted struct {
	w io.Writer
	n int64
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// firstLine keeps the first line a command writes to standard error (at
// most maxErrorLine bytes of it): the error a --json document names.
type firstLine struct {
	w    io.Writer
	line []byte
	done bool
}

const maxErrorLine = 1000

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.done {
		rest := p
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			rest, f.done = rest[:i], true
		}
		f.line = append(f.line, rest[:min(len(rest), maxErrorLine-len(f.line))]...)
	}
	return f.w.Write(p)
}

// asksForJSON reports whether args, a command's flags and operands, hold
// --json (or -json, or =true) before any "--": a flag that did not parse
// may stop the flag set before it reaches --json.
func asksForJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// usageHint is what follows a usage error: the command's usage lines and
// where the rest is, not its whole help (a page to scroll back through).
func (t *Tool) usageHint(w io.Writer, c *Command) {
	t.writeUsage(w, c)
	fmt.Fprintf(w, "Run '%s %s --help' for its flags and exit codes.\n", t.Name, c.Name)
}

// Main runs the command args name and returns the exit code: the top help
// for --help or help (to stdout, ExitOK) and for no or an unknown command
// (to stderr, ExitUnusable); "help NAME" or "NAME --help" the command's.
func (t *Tool) Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		t.Help(stderr)
		return ExitUnusable
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, t.Version)
		return ExitOK
	case "-h", "-help", "--help", "help":
		if c := t.command(args[1:]); c != nil && args[0] == "help" {
			t.CommandHelp(stdout, c)
		} else {
			t.Help(stdout)
		}
		return ExitOK
	}
	c := t.command(args)
	if c == nil {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", t.Name, args[0])
		t.Help(stderr)
		if asksForJSON(args) {
			writeErrorJSON(stdout, fmt.Sprintf("%s: unknown command %q", t.Name, args[0]))
		}
		return ExitUnusable
	}
	fs := NewFlagSet(c.Name)
	run := c.Setup(fs)
	operands, err := Parse(fs, args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		t.CommandHelp(stdout, c)
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "%s %s: %v\n\n", t.Name, c.Name, err)
		t.usageHint(stderr, c)
		if fs.Lookup("json") != nil && asksForJSON(args[1:]) {
			writeErrorJSON(stdout, "usage: "+err.Error())
		}
		return ExitUnusable
	}
	out, errOut := &counted{w: stdout}, &firstLine{w: stderr}
	code := run(&Invocation{Tool: t, Command: c, Flags: fs, Operands: operands, Stdout: out, Stderr: errOut})
	if f := fs.Lookup("json"); code == ExitUnusable && out.n == 0 && f != nil && f.Value.String() == "true" {
		msg := string(errOut.line)
		if msg == "" {
			msg = "unusable input or usage"
		}
		writeErrorJSON(stdout, msg)
	}
	return code
}

// command is the command args[0] names, or nil.
func (t *Tool) command(args []string) *Command {
	if len(args) == 0 {
		return nil
	}
	for _, c := range t.Commands {
		if c.Name == args[0] {
			return c
		}
	}
	return nil
}

// Help writes the top help: every command's synopses, the command list,
// About and the exit codes.
func (t *Tool) Help(w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n\n", t.Name, t.Summary)
	first := "Usage: "
	for _, c := range t.Commands {
		for _, u := range c.Usage {
			writeSynopsis(w, first+t.Name+" "+c.Name, u)
			first = "       "
		}
	}
	fmt.Fprintf(w, "%s%s COMMAND --help\n", first, t.Name)
	fmt.Fprintf(w, "       %s --version\n\nCommands:\n", t.Name)
	width := 0
	for _, c := range t.Commands {
		width = max(width, len(c.Name))
	}
	for _, c := range t.Commands {
		writeColumns(w, "  "+c.Name, width+5, c.Summary)
	}
	if t.About != "" {
		fmt.Fprintf(w, "\n%s", t.About)
	}
	fmt.Fprintln(w)
	writeExits(w, t.Exits)
}

// CommandHelp writes c's --help: its synopses, Doc, its flags with their
// help text (package flag's order, by name) and its exit codes.
func (t *Tool) CommandHelp(w io.Writer, c *Command) {
	t.writeUsage(w, c)
	if c.Doc != "" {
		fmt.Fprintf(w, "\n%s", c.Doc)
	}
	fs := NewFlagSet(c.Name)
	c.Setup(fs)
	col := 0
	fs.VisitAll(func(f *flag.Flag) { col = min(max(col, len(FlagSynopsis(f))+6), flagColumn) })
	if col > 0 {
		fmt.Fprint(w, "\nFlags:\n")
	}
	fs.VisitAll(func(f *flag.Flag) {
		writeColumns(w, "  "+FlagSynopsis(f), col, strings.ReplaceAll(f.Usage, "`", ""))
	})
	fmt.Fprintln(w)
	exits := c.Exits
	if exits == nil {
		exits = t.Exits
	}
	writeExits(w, exits)
}

// writeUsage writes c's usage lines, "Usage: TOOL NAME ..." first.
func (t *Tool) writeUsage(w io.Writer, c *Command) {
	for i, u := range c.Usage {
		lead := "Usage: "
		if i > 0 {
			lead = "       "
		}
		writeSynopsis(w, lead+t.Name+" "+c.Name, u)
	}
}

// Markdown is the tool's page of docs/commands/: the top help, then each
// command's --help, each as the tool prints it.
func (t *Tool) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n<!-- Generated from the command table in cmd/%s (internal/cli.Tool) by `make generate`; do not edit. -->\n\n", t.Name, t.Name)
	b.WriteString("```\n$ " + t.Name + " --help\n")
	t.Help(&b)
	b.WriteString("```\n")
	for _, c := range t.Commands {
		fmt.Fprintf(&b, "\n## %s %s\n\n%s\n\n```\n$ %s %s --help\n", t.Name, c.Name, sentence(c.Summary), t.Name, c.Name)
		t.CommandHelp(&b, c)
		b.WriteString("```\n")
	}
	return b.String()
}

// Problems are what the table gets wrong: a command without a summary,
// usage or Setup, a flag without help text, a flag its usage lines do not
// show or a flag they show that it does not have. Each tool's tests
// require none.
func (t *Tool) Problems() []string {
	var problems []string
	seen := map[string]bool{}
	for _, c := range t.Commands {
		switch {
		case seen[c.Name]:
			problems = append(problems, fmt.Sprintf("%s: two commands", c.Name))
			continue
		case c.Summary == "" || len(c.Usage) == 0 || c.Setup == nil:
			problems = append(problems, fmt.Sprintf("%s: no summary, usage or Setup", c.Name))
			continue
		}
		seen[c.Name] = true
		usage := " " + strings.Join(c.Usage, " ") + " "
		fs := NewFlagSet(c.Name)
		c.Setup(fs)
		declared := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) {
			declared[f.Name] = true
			if strings.TrimSpace(f.Usage) == "" {
				problems = append(problems, fmt.Sprintf("%s %s: no help text", c.Name, FlagSynopsis(f)))
			}
			if !strings.Contains(usage, FlagSynopsis(f)) {
				problems = append(problems, fmt.Sprintf("%s: usage does not show %s", c.Name, FlagSynopsis(f)))
			}
		})
		for _, word := range strings.FieldsFunc(usage, func(r rune) bool { return strings.ContainsRune(" []|.", r) }) {
			if name, ok := strings.CutPrefix(strings.TrimPrefix(word, "-"), "-"); ok || strings.HasPrefix(word, "-") {
				if !declared[name] {
					problems = append(problems, fmt.Sprintf("%s: usage shows %s, which is no flag of it", c.Name, word))
				}
			}
		}
	}
	return problems
}

// sentence is a summary as a sentence of the docs: its first letter
// upper case, ending in a full stop unless it ends in "?" or ".".
func sentence(summary string) string {
	if summary == "" {
		return ""
	}
	s := strings.ToUpper(summary[:1]) + summary[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

// FlagSynopsis is how a flag is written in help: "--json", "--junit FILE"
// (the back-quoted word of its usage names the value), "-o FILE" for a
// one-letter name.
func FlagSynopsis(f *flag.Flag) string {
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	s := dash + f.Name
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return s
	}
	value, _ := flag.UnquoteUsage(f)
	return s + " " + value
}

// helpWidth is the column help text wraps at; flagColumn is where a
// flag's help starts.
const (
	helpWidth  = 78
	flagColumn = 24
)

// writeColumns writes head, then text from column col wrapped at
// helpWidth, starting on the next line when head reaches col.
func writeColumns(w io.Writer, head string, col int, text string) {
	pad := strings.Repeat(" ", col)
	line := head
	if len(head) >= col-1 {
		fmt.Fprintln(w, head)
		line = pad
	} else {
		line += pad[len(head):]
	}
	n := len(line)
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && n+1+len(word) > helpWidth {
			fmt.Fprintln(w, line)
			line, n, empty = pad, col, true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += len(word)
		empty = false
	}
	fmt.Fprintln(w, line)
}

// writeSynopsis writes head and usage, usage wrapped at helpWidth between
// its top-level terms ("[--graph FILE]" stays whole), each further line
// starting under its first.
func writeSynopsis(w io.Writer, head, usage string) {
	var terms []string
	depth, start := 0, 0
	for i, r := range usage + " " {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ' ' && depth == 0:
			switch term := usage[start:i]; {
			case term == "":
			case term == "|" || len(terms) > 0 && strings.HasSuffix(terms[len(terms)-1], "|"):
				// "A | B" is one choice: it stays on one line.
				terms[len(terms)-1] += " " + term
			default:
				terms = append(terms, term)
			}
			start = i + 1
		}
	}
	line := head
	for _, term := range terms {
		if len(line) > len(head) && len(line)+1+len(term) > helpWidth {
			fmt.Fprintln(w, line)
			line = strings.Repeat(" ", len(head))
		}
		line += " " + term
	}
	fmt.Fprintln(w, line)
}

func writeExits(w io.Writer, exits []Exit) {
	fmt.Fprint(w, "Exit codes:\n")
	for _, e := range exits {
		writeColumns(w, fmt.Sprintf("  %d", e.Code), 5, e.Meaning)
	}
}

// Check reports the table's Problems and whether its page of
// docs/commands/ at path is current (DocIsCurrent), as one error.
func (t *Tool) Check(path string, update bool) error {
	var errs []error
	for _, p := range t.Problems() {
		errs = append(errs, errors.New(p))
	}
	return errors.Join(append(errs, t.DocIsCurrent(path, update))...)
}

// DocIsCurrent reports an error unless the file at path (the tool's page
// of docs/commands/) holds Markdown() as it is now; with update it writes
// the page first. `make generate` runs each tool's test with -update.
func (t *Tool) DocIsCurrent(path string, update bool) error {
	want := t.Markdown()
	if update {
		if err := safefile.WriteFile(path, []byte(want), 0o644); err != nil {
			return err
		}
	}
	got, err := safefile.Read(path, safefile.NoLinks, 1<<20)
	if err != nil {
		return err
	}
	if string(got) != want {
		return fmt.Errorf("%s is not the command table's help: run `make generate`", path)
	}
	return nil
}
