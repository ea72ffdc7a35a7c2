// Command mkgodefs writes the Go mirrors of include/nccom_ring.h's structs:
// it runs cgo -godefs on an input file (abi/types.go,
// internal/headercheck/types.go) and makes the edits below to what it
// prints. Run it from the repository root, as the first line of each file
// it writes says; `make generate` does, for every generated file:
//
//	go run ./internal/mkgodefs abi/types.go > abi/ztypes.go
//
// internal/headercheck's test runs that first line again and fails when the
// checked-in file differs from its output.
//
// The output depends only on the header's layout, which the header asserts
// with _Static_assert, and is the same on every 64-bit Linux (amd64,
// arm64, ...): int is int32, float float32, and every pointer becomes
// uintptr. The one thing their C ABIs differ in here, whether plain char is
// signed, -fsigned-char fixes, so char comes out as int8 everywhere. GOOS
// and GOARCH are therefore the host's (checked in as made on linux/amd64).
//
// The edits, in order:
//
//   - The two comment lines godefs starts with (one holds the absolute
//     paths it was run with) become the command above and a "Code
//     generated ... DO NOT EDIT." line.
//   - A field of C pointer type, which godefs renders as a Go pointer
//     (int * as *int32), becomes uintptr ([N]uintptr for an array of
//     them). The mirrors overlay C memory: a Go pointer field there would
//     have the garbage collector and its write barriers treat C addresses
//     as Go pointers, and would invite storing a Go pointer into C memory.
//     godefs has no option for this, and no typedef in the input can
//     change a member the header declares, so it is done here, as
//     x/sys/unix's mkpost.go does its own fixes.
//   - Field names godefs derives from C member names (the first letter
//     upper-cased) are renamed where the Go code spells them otherwise:
//     see renames.
//   - Padding godefs adds (Pad_cgo_N) becomes a blank field.
//   - The doc comment of each declaration in the input is copied onto the
//     same declaration in the output (godefs drops comments).
//   - gofmt.
//
// A C type left without a Go name (_Ctype_...) is an error: the input must
// declare it.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// header is the file godefs reads; paths are relative to the repository
// root.
const header = "include/nccom_ring.h"

// renames maps godefs's field names to the Go code's, where they differ.
var renames = map[string]string{
	"Id":              "ID",              // ncclTopoGraph.id
	"Crossracktorack": "CrossRackToRack", // ncclTopoGraph.crossracktorack
	"JbogId":          "JbogID",          // nccomRingRecord.jbogId
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/mkgodefs INPUT.go > OUTPUT.go (from the repository root)")
		os.Exit(2)
	}
	out, err := generate(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkgodefs: %v\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

// generate returns the Go file made from input.
func generate(input string) ([]byte, error) {
	if filepath.IsAbs(input) {
		return nil, fmt.Errorf("%s: give the input relative to the repository root, as the generated file's first line records it", input)
	}
	input = filepath.ToSlash(filepath.Clean(input))
	if _, err := os.Stat(header); err != nil {
		return nil, fmt.Errorf("%v: run from the repository root", err)
	}
	src, err := os.ReadFile(input)
	if err != nil {
		return nil, err
	}
	raw, err := godefs(input)
	if err != nil {
		return nil, err
	}
	return post(raw, src, "go run ./internal/mkgodefs "+input)
}

// godefs runs cgo -godefs on input. cgo leaves its compiler's object files
// in its working directory, so it runs in a temporary one.
func godefs(input string) ([]byte, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mkgodefs")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "tool", "cgo", "-godefs", "--",
		"-fsigned-char", "-I"+filepath.Join(root, filepath.Dir(header)), filepath.Join(root, input))
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool cgo -godefs %s: %v\n%s", input, err, stderr.Bytes())
	}
	return out, nil
}

var (
	structStart = regexp.MustCompile(`^type \w+ struct \{$`)
	cPointer    = regexp.MustCompile(`\*.*$`) // *T, **T, *[0]byte (a function pointer), and the *T of [N]*T
	padding     = regexp.MustCompile(`^Pad_cgo_\d+$`)
	cTypeLeft   = regexp.MustCompile(`_Ctype_\w+`)
)

// post edits godefs's output raw, made from the input file src, into the
// file command writes (see the package comment).
func post(raw, src []byte, command string) ([]byte, error) {
	// Drop everything before the package clause: godefs's two comment lines.
	i := bytes.Index(raw, []byte("\npackage "))
	if i < 0 {
		return nil, fmt.Errorf("godefs printed no package clause:\n%s", raw)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n// Code generated by the command above from %s; DO NOT EDIT.\n\n", command, header)

	inStruct := false
	for _, line := range strings.SplitAfter(string(raw[i+1:]), "\n") {
		text := strings.TrimRight(line, "\n")
		switch {
		case structStart.MatchString(text):
			inStruct = true
		case text == "}":
			inStruct = false
		case inStruct:
			f := strings.Fields(text)
			if len(f) != 2 {
				return nil, fmt.Errorf("unexpected struct field from godefs: %q", text)
			}
			name, typ := f[0], cPointer.ReplaceAllString(f[1], "uintptr")
			if r, ok := renames[name]; ok {
				name = r
			}
			if padding.MatchString(name) {
				name = "_"
			}
			line = "\t" + name + " " + typ + "\n"
		}
		b.WriteString(line)
	}
	if m := cTypeLeft.Find(b.Bytes()); m != nil {
		return nil, fmt.Errorf("godefs left %s without a Go name: declare it in the input (type X C.%s)",
			m, strings.TrimPrefix(string(m), "_Ctype_"))
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gofmt: %v", err)
	}
	out, err = copyDocs(out, src)
	if err != nil {
		return nil, err
	}
	return format.Source(out)
}

// copyDocs puts the doc comment of each top-level declaration of src onto
// the declaration of out that declares the same first name.
func copyDocs(out, src []byte) ([]byte, error) {
	docs := map[string]string{}
	in, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	for _, d := range in.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Doc != nil && len(g.Specs) > 0 {
			docs[firstName(g)] = commentText(g.Doc)
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", out, 0)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	last := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || len(g.Specs) == 0 {
			continue
		}
		doc, ok := docs[firstName(g)]
		if !ok {
			continue
		}
		at := fset.Position(g.Pos()).Offset
		b.Write(out[last:at])
		if !bytes.HasSuffix(b.Bytes(), []byte("\n\n")) {
			b.WriteString("\n") // a blank line before a commented declaration
		}
		b.WriteString(doc + "\n")
		last = at
	}
	b.Write(out[last:])
	return b.Bytes(), nil
}

// firstName is the first name a declaration declares.
func firstName(g *ast.GenDecl) string {
	switch s := g.Specs[0].(type) {
	case *ast.TypeSpec:
		return s.Name.Name
	case *ast.ValueSpec:
		return s.Names[0].Name
	}
	return ""
}

// commentText is the comment group c as written.
func commentText(c *ast.CommentGroup) string {
	var lines []string
	for _, l := range c.List {
		lines = append(lines, l.Text)
	}
	return strings.Join(lines, "\n")
}
