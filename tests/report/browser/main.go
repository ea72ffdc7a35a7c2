// Command browser is make test-report's browser half (issue 37): it opens
// nccom-rings report pages in headless Chromium through the DevTools
// protocol (github.com/chromedp/chromedp) at 1400 x 1000 and asserts
// through the DOM (check.js):
//
//   - at the initial fit, every drawn element of the ring view and of the
//     group view lies inside its picture, and no two visible labels
//     intersect (rotated labels as rotated rectangles);
//   - every group of level 1 and of the outermost level with two or more
//     groups is labelled;
//   - after zooming to the group of node 7 at the innermost level (a
//     click on its arc), every node of it is labelled, the labels still
//     inside the picture and apart;
//   - the search box finds node 7 by its host name (--host7): its dot and
//     its table row are picked;
//   - the page writes no console line, throws nothing and logs nothing
//     (a refused script or request is a log entry).
//
// A page comparing two jobs (nccom-rings report DIR_A DIR_B) holds two
// pictures, each job's views with ids prefixed "a-" and "b-": every check
// above runs on each picture named by a PREFIXhost7 option ("a-host7=").
//
// It keeps a screenshot of each view of each picture in --shots. With --bench
// it only loads each page --runs times and prints the time to the first
// picture (the page's own #status figure): make bench's figure, never an
// assertion.
//
// Hangs are the watchdog's to end (check.sh runs this under it): each step
// prints a line, so a spin shows as CPU without output, a wait as nothing
// running. Nothing here times the machine.
//
// Usage: browser [--chromium PATH] [--shots DIR] [--bench --runs N] NAME=PAGE[,[PREFIX]host7=HOST]...
// Exit 0 every check passed, 1 some failed, 2 unusable input or no browser.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/chromedp/chromedp"
)

//go:embed check.js
var checkJS string

type page struct {
	name, path string
	pictures   []picture
}

// picture is one job's views on a page: their ids start with prefix; its
// node 7 is on host7.
type picture struct {
	prefix, host7 string
}

// prefixes is p's pictures' prefixes as a JavaScript array.
func (p page) prefixes() string {
	var q []string
	for _, pic := range p.pictures {
		q = append(q, fmt.Sprintf("%q", pic.prefix))
	}
	return "[" + strings.Join(q, ",") + "]"
}

func main() {
	chromium := flag.String("chromium", "chromium", "the browser, `PATH`")
	shots := flag.String("shots", "", "write the screenshots into `DIR`")
	bench := flag.Bool("bench", false, "only time each page's first picture")
	runs := flag.Int("runs", 3, "with --bench, loads of each page")
	flag.Parse()
	var pages []page
	for _, a := range flag.Args() {
		name, rest, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "browser: %q is not NAME=PAGE[,[PREFIX]host7=HOST]...\n", a)
			os.Exit(2)
		}
		p := page{name: name}
		opts := strings.Split(rest, ",")
		p.path = opts[0]
		for _, o := range opts[1:] {
			key, host, ok := strings.Cut(o, "=")
			prefix, isHost := strings.CutSuffix(key, "host7")
			if !ok || !isHost {
				fmt.Fprintf(os.Stderr, "browser: %q: %q is not [PREFIX]host7=HOST\n", a, o)
				os.Exit(2)
			}
			p.pictures = append(p.pictures, picture{prefix: prefix, host7: host})
		}
		if len(p.pictures) == 0 {
			p.pictures = []picture{{}} // a one-job page, its search not checked
		}
		abs, err := filepath.Abs(p.path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "browser: %v\n", err)
			os.Exit(2)
		}
		p.path = abs
		pages = append(pages, p)
	}
	if len(pages) == 0 {
		fmt.Fprintln(os.Stderr, "browser: no page given")
		os.Exit(2)
	}
	profile, err := os.MkdirTemp("", "report-browser-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "browser: %v\n", err)
		os.Exit(2)
	}
	defer os.RemoveAll(profile)

	// Debian's chromium waits on network look-ups without these flags; a
	// fresh profile each run, no sandbox (tests may run as root).
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(*chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	failed := false
	for _, p := range pages {
		var ok bool
		if *bench {
			ok = benchPage(ctx, p, *runs)
		} else {
			ok = checkPage(ctx, p, *shots)
		}
		failed = failed || !ok
	}
	if failed {
		os.Exit(1)
	}
}

// load opens p in a new tab at 1400 x 1000, subscribed to its console
// (calls of the console API, uncaught exceptions and the browser log, where
// a refused script or request goes), and checks that it drew its first
// picture in each of its pictures (PREFIXstatus says "rendered in").
func load(ctx context.Context, p page) (context.Context, context.CancelFunc, func() []string, error) {
	tab, cancel := chromedp.NewContext(ctx)
	messages := chromedp.Console(tab)
	err := chromedp.Do(tab, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate("file://"+p.path))
	// Navigate returns after the load event, and the page's scripts run
	// before it: the first picture is drawn by then, or never (no wait
	// here that a wall clock would have to end).
	if err == nil {
		var drawn bool
		drawn, err = chromedp.Run(tab, chromedp.Evaluate[bool](p.prefixes()+`.every(function (p) {
			return (document.getElementById(p + "status") || {}).textContent.indexOf("rendered in") === 0 || document.getElementById(p + "nod3") !== null; })`))
		if err == nil && !drawn {
			err = fmt.Errorf("the page loaded without drawing its first picture (a #PREFIXstatus is not \"rendered in ...\")")
		}
	}
	if err == nil {
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool]("window.__rc = "+checkJS+", true"))
	}
	// lines is what the page has written so far: a goroutine collects
	// the messages until the tab is closed; a round trip to the page
	// first lets the events sent before it arrive.
	var mu sync.Mutex
	var got []string
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, m.String())
			mu.Unlock()
		}
	}()
	lines := func() []string {
		_, _ = chromedp.Run(tab, chromedp.Evaluate[bool]("true"))
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	return tab, cancel, lines, err
}

func say(format string, a ...any) { fmt.Printf(format+"\n", a...) }

type geometry struct {
	Width, Height float64
	Drawn, Labels int
	Outside       []string
	Overlaps      []string
}

func checkPage(ctx context.Context, p page, shots string) bool {
	tab, cancel, console, err := load(ctx, p)
	defer cancel()
	if err != nil {
		say("FAIL: %s: %s: %v", p.name, p.path, err)
		for _, l := range console() {
			say("FAIL: %s: the console: %s", p.name, l)
		}
		return false
	}
	ok := true
	for _, pic := range p.pictures {
		ok = checkPicture(tab, p, pic, shots) && ok
	}
	fail := func(format string, a ...any) {
		say("FAIL: %s: "+format, append([]any{p.name}, a...)...)
		ok = false
	}
	if lines := console(); len(lines) > 0 {
		for _, l := range lines {
			fail("the console: %s", l)
		}
	} else {
		say("%s: no console line", p.name)
	}
	if ok {
		say("%s: passed", p.name)
	}
	return ok
}

// checkPicture runs the checks on one job's picture of p (its views'
// ids start with pic.prefix).
func checkPicture(tab context.Context, p page, pic picture, shots string) bool {
	ok := true
	name := p.name
	if pic.prefix != "" {
		name += " " + strings.TrimSuffix(pic.prefix, "-")
	}
	fail := func(format string, a ...any) {
		say("FAIL: %s: "+format, append([]any{name}, a...)...)
		ok = false
	}
	id := func(s string) string { return pic.prefix + s }
	var nod3 bool
	must(tab, fmt.Sprintf(`document.getElementById(%q) !== null`, id("nod3")), &nod3)
	if nod3 {
		fail("the page was built without D3")
		return false
	}
	var status string
	must(tab, fmt.Sprintf(`document.getElementById(%q).textContent`, id("status")), &status)
	say("%s: loaded: %s", name, status)

	// The initial fit.
	check := func(state, sel string, labelsOnly bool) {
		g, err := chromedp.Run(tab, chromedp.Evaluate[geometry](fmt.Sprintf("__rc.geometry(%q, %v)", sel, labelsOnly)))
		if err != nil {
			fail("%s: %s: %v", state, sel, err)
			return
		}
		say("%s: %s %s: %d elements (%d labels) in %gx%g: %d outside, %d pairs of labels overlapping",
			name, state, sel, g.Drawn, g.Labels, g.Width, g.Height, len(g.Outside), len(g.Overlaps))
		if g.Labels == 0 {
			fail("%s: %s: no label drawn", state, sel)
		}
		for i, o := range g.Outside {
			if i == 5 {
				say("  ... and %d more", len(g.Outside)-5)
				break
			}
			fail("%s: %s: outside the picture: %s", state, sel, o)
		}
		for i, o := range g.Overlaps {
			if i == 5 {
				say("  ... and %d more", len(g.Overlaps)-5)
				break
			}
			fail("%s: %s: labels overlap: %s", state, sel, o)
		}
	}
	ring, groups := "#"+id("ring"), "#"+id("groups")
	check("initial fit", ring, false)
	var hasGroups bool
	must(tab, fmt.Sprintf(`document.getElementById(%q) !== null`, id("groups")), &hasGroups)
	if hasGroups {
		check("initial fit", groups, false)
	}
	var levels []int
	must(tab, fmt.Sprintf(`__rc.levels(%q)`, pic.prefix), &levels)
	outer := 1 // level 1, and the outermost with two or more groups
	for l, n := range levels {
		if n >= 2 {
			outer = l + 1
			break
		}
	}
	for _, l := range slices.Compact([]int{1, outer}) {
		var missing []string
		must(tab, fmt.Sprintf("__rc.unlabelledGroups(%q, %d)", pic.prefix, l), &missing)
		if len(missing) > 0 {
			fail("initial fit: level %d: %d of its %d groups have no label (groups %s)", l, len(missing), levels[l-1], strings.Join(missing, " "))
		} else {
			say("%s: initial fit: every group of level %d labelled (%d)", name, l, levels[l-1])
		}
	}
	shot(tab, p, shots, id("ring"), ring)
	if hasGroups {
		shot(tab, p, shots, id("groups"), groups)
	}
	shot(tab, p, shots, id("nodes"), "#"+id("node-list"))

	// Zoomed to node 7's innermost group.
	depth := len(levels)
	var g7 int
	must(tab, fmt.Sprintf(`JSON.parse(document.getElementById(%q).textContent).levels[%d].group[7]`, id("data"), depth-1), &g7)
	var clicked bool
	must(tab, fmt.Sprintf(`(function () { var a = document.getElementById(%q).querySelector('path.arc[data-level="%d"][data-group="%d"]');
		if (!a) return false; a.dispatchEvent(new MouseEvent("click", { bubbles: true })); return true; })()`, id("ring"), depth, g7), &clicked)
	if !clicked {
		fail("no arc for node 7's group %d at level %d", g7, depth)
	} else {
		var missing []int
		must(tab, fmt.Sprintf("__rc.unlabelledNodes(%q, %d, %d)", pic.prefix, depth, g7), &missing)
		if len(missing) > 0 {
			fail("zoomed to level %d group %d (node 7's): nodes without a label: %v", depth, g7, missing)
		} else {
			say("%s: zoomed to node 7's group (level %d, group %d): every node of it labelled", name, depth, g7)
		}
		check("zoomed", ring, true)
		shot(tab, p, shots, id("ring-zoomed"), ring)
	}

	// The search box: node 7 by its host.
	if pic.host7 == "" {
		fail("no host7 given: the search is not checked")
	} else {
		err := chromedp.Do(tab, chromedp.Click(chromedp.ID(id("fit"))), chromedp.SendKeys(chromedp.ID(id("find")), pic.host7))
		var picked string
		if err == nil {
			picked, err = chromedp.Run(tab, chromedp.Evaluate[string](fmt.Sprintf(`[].map.call(document.getElementById(%q).querySelectorAll("circle.node.sel"), function (c) { return c.getAttribute("data-node"); }).join(" ") +
				"|" + [].map.call(document.getElementById(%q).querySelectorAll("tr.sel"), function (r) { return r.id; }).join(" ") +
				"|" + document.getElementById(%q).textContent`, id("ring"), id("node-table"), id("find-note"))))
		}
		if err != nil {
			fail("the search: %v", err)
		} else if parts := strings.SplitN(picked, "|", 3); parts[0] != "7" || parts[1] != id("node-7") || !strings.Contains(parts[2], "node 7:") {
			fail("searching %q: picked dots %q, rows %q, said %q; want node 7", pic.host7, parts[0], parts[1], parts[2])
		} else {
			say("%s: the search box found node 7 by its host %q: %s", name, pic.host7, parts[2])
		}
	}
	return ok
}

// must evaluates expr into out; an error here is the page's or the
// protocol's, and ends the run.
func must[T any](tab context.Context, expr string, out *T) {
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		say("FAIL: evaluating %s: %v", strings.SplitN(expr, "\n", 2)[0], err)
		os.Exit(1)
	}
	*out = v
}

func shot(tab context.Context, p page, dir, view, sel string) {
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		say("FAIL: %s: screenshot of %s: %v", p.name, sel, err)
		os.Exit(1)
	}
	path := filepath.Join(dir, p.name+"-"+view+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		say("FAIL: %v", err)
		os.Exit(1)
	}
	say("%s: screenshot %s (%d KB)", p.name, path, (len(png)+1023)/1024)
}

// benchPage loads p runs times and prints each time to the first picture
// and their median.
func benchPage(ctx context.Context, p page, runs int) bool {
	var ms []int
	var nodes int
	for range max(1, runs) {
		tab, cancel, _, err := load(ctx, p)
		if err != nil {
			cancel()
			say("FAIL: %s: %v", p.name, err)
			return false
		}
		got, err := chromedp.Run(tab, chromedp.Evaluate[struct {
			MS    string
			Nodes int
		}](`({ MS: document.getElementById("status").dataset.ms || "",
			Nodes: JSON.parse(document.getElementById("data").textContent).host.length })`))
		cancel()
		if err != nil || got.MS == "" {
			say("FAIL: %s: no first-picture figure (%v)", p.name, err)
			return false
		}
		var v int
		if err := json.Unmarshal([]byte(got.MS), &v); err != nil {
			say("FAIL: %s: figure %q: %v", p.name, got.MS, err)
			return false
		}
		ms, nodes = append(ms, v), got.Nodes
	}
	sorted := slices.Clone(ms)
	slices.Sort(sorted)
	say("report: first picture at %d nodes: %d ms (median of %d loads: %v; target 2,000 ms)", nodes, sorted[len(sorted)/2], len(ms), ms)
	return true
}
