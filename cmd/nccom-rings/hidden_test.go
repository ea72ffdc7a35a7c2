package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/hiddentext"
	"github.com/nccomring/libnccomring/ringdump"
)

// hidden is what every value of these tests carries.
const hidden = hiddentext.Chars

// Issue 34, F7: values carrying C1 controls and bidirectional overrides
// (host names, WARN texts, result names, the order's location and note,
// file names; host names and locations in the files locate, score and plan
// read) go through every command's text, --json and --dot output, stdout
// and stderr, and none of the three comes out as itself: the text quotes
// them (\xc2\x9b...), --json writes them as \u escapes.
func TestHiddenCharactersAreEscapedInEveryOutput(t *testing.T) {
	good, paths := identityJob(t)
	for r, p := range paths {
		edit(t, p, func(d *ringdump.Dump) {
			d.Host = "host" + hidden + string(rune('a'+r/2))
			d.Order = &ringdump.Order{Asked: "rank", Location: "loc" + hidden, Note: "note" + hidden}
		})
	}
	bad, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 5, "ncclInvalidUsage"+hidden, "warn"+hidden, nil, nil
	})
	require.NoError(t, os.WriteFile(filepath.Join(bad, "rank-000001.x"+hidden+".1.json"), []byte("{"), 0o644))

	files := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(files, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	locations := write("locations", "host"+hidden+"a leaf"+hidden+"/x\nhost"+hidden+"b leaf/y\n")
	hosts := write("hosts", "host"+hidden+"a slots=2\nhost"+hidden+"b slots=2\n")
	slurm := write("topology.conf", "SwitchName=leaf"+hidden+" Nodes=trn"+hidden+"[1-2]\n")
	ec2 := write("ec2.json", `{"Instances":[{"InstanceId":"i-1`+hidden+`","NetworkNodes":["nn-1`+hidden+`","nn-2"]}]}`)

	page, junit := filepath.Join(t.TempDir(), "page.html"), filepath.Join(t.TempDir(), "junit.xml")
	// The values are there, escaped: as text (quote) or as \u escapes
	// (--json, the page).
	const text, escaped = `\xc2\x9b\xe2\x80\xae\xe2\x81\xa6`, `\u009b\u202e\u2066`
	want := map[string]string{
		"verify " + bad:                 `rank-000001.x` + text + `.1.json": not a ring dump`,
		"verify --json " + bad:          `rank-000001.x` + escaped + `.1.json`,
		"show " + bad:                   `failed: "warn` + text + `"`,
		"show --json " + bad:            `"warn": "warn` + escaped + `"`,
		"show --json " + good:           `"host": "host` + escaped + `a"`,
		"show --dot " + good:            `host` + strings.ReplaceAll(text, `\`, `\\`) + `a`, // dot's string escapes
		"score " + good:                 `(host "host` + text + `a" first)`,
		"report -o - " + good:           `<td>host` + escaped + `a</td>`,
		"report -o - " + bad:            `ncclInvalidUsage` + text,
		"plan --locations " + locations: `host name "host` + text + `a"`,
		"locate --all ec2:" + ec2:       `host name "i-1` + text + `"`,
		"locate --all slurm:" + slurm:   `"leaf` + text + `"`,
	}
	for _, args := range [][]string{
		{"verify", good}, {"verify", "--json", good}, {"verify", bad}, {"verify", "--json", bad},
		{"show", good}, {"show", "--json", good}, {"show", "--dot", good},
		{"show", bad}, {"show", "--json", bad}, {"show", "--dot", bad},
		{"score", good}, {"score", "--json", good}, {"score", "--locations", locations, good},
		{"score", "--json", "--locations", locations, good}, {"score", bad}, {"score", "--json", bad},
		{"diff", good, bad}, {"diff", "--json", good, bad},
		{"report", "-o", page, good}, {"report", "-o", page, bad},
		{"report", "-o", "-", good}, {"report", "--redact", "-o", "-", good}, {"report", "-o", "-", bad},
		{"verify", "--junit", junit, bad},
		{"locate", "--all", "slurm:" + slurm}, {"locate", "--all", "--json", "slurm:" + slurm},
		{"locate", "--host", "trn" + hidden + "1", "slurm:" + slurm}, {"locate", "--json", "--host", "trn" + hidden + "1", "slurm:" + slurm},
		{"locate", "--all", "ec2:" + ec2}, {"locate", "--all", "--json", "ec2:" + ec2},
		{"plan", "--locations", locations, "--hosts", hosts}, {"plan", "--json", "--locations", locations, "--hosts", hosts},
	} {
		code, out, errOut := runTool(args...)
		name := strings.Join(args, " ")
		outputs := map[string]string{"stdout": out, "stderr": errOut}
		if args[1] == "--junit" {
			b, err := os.ReadFile(junit)
			require.NoError(t, err)
			outputs["--junit"] = string(b)
		}
		for prefix, w := range want {
			if strings.HasPrefix(name, prefix) {
				assert.True(t, strings.Contains(out+errOut, w), "%s: want %q in\n%.1500s%.500s", name, w, out, errOut)
				delete(want, prefix)
			}
		}
		for what, s := range outputs {
			if r, found := hiddentext.Raw(s); found {
				t.Errorf("%s: %s holds %U as itself (exit %d):\n%.1500s", name, what, r, code, s)
			}
		}
	}
	assert.Empty(t, want, "outputs not run")
}
