package location

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cputime"
)

// fileLimits are a topology.conf's limits for one list of host names.
var fileLimits = hostlistLimits{names: MaxHosts, nameLen: MaxHostName, bytes: MaxNameBytes}

func TestExpandHostlist(t *testing.T) {
	cases := []struct {
		value string
		want  []string
	}{
		{"trn001", []string{"trn001"}},
		{"a,b,c", []string{"a", "b", "c"}},
		{"n[8-10]", []string{"n8", "n9", "n10"}},
		{"n[09-11]", []string{"n09", "n10", "n11"}},
		{"n[1-010]", []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"}},
		{"trn[001-003,020]", []string{"trn001", "trn002", "trn003", "trn020"}},
		{"rack[1-2]n[01-02]", []string{"rack1n01", "rack1n02", "rack2n01", "rack2n02"}},
		{"x[1-2]y,z[7]", []string{"x1y", "x2y", "z7"}},
		{"[1-3]", []string{"1", "2", "3"}},
		{"a[0],b[00]", []string{"a0", "b00"}},
		// Slurm's separators: commas and blanks, skipped in a row.
		{"a,,b", []string{"a", "b"}},
		{" trn1 , trn2 ", []string{"trn1", "trn2"}},
		{",a,\n b[1-2]\t", []string{"a", "b1", "b2"}},
	}
	for _, c := range cases {
		got, _, err := expandHostlist(c.value, fileLimits)
		require.NoError(t, err, c.value)
		assert.Equal(t, c.want, got, c.value)
	}
	got, size, err := expandHostlist("trn[001-016,020]", fileLimits)
	require.NoError(t, err)
	assert.Len(t, got, 17)
	assert.Equal(t, "trn016", got[15])
	assert.Equal(t, "trn020", got[16])
	assert.Equal(t, uint64(17*6), size, "17 names of 6 bytes")

	// The size is each expr's names times its longest name: n10 is 3
	// bytes, rack1n01 8, x 1.
	for value, want := range map[string]uint64{"n[8-10]": 3 * 3, "rack[1-2]n[01-02],x": 4*8 + 1, "n[1-010]": 10 * 3, "[99-100]": 2 * 3} {
		_, size, err := expandHostlist(value, fileLimits)
		require.NoError(t, err, value)
		assert.Equal(t, want, size, value)
	}
}

func TestExpandHostlistRefuses(t *testing.T) {
	cases := []struct {
		value string
		off   int // 1-based byte the error names
		msg   string
	}{
		{"", 1, "an empty host list"},
		{",", 1, "an empty host list"},
		{" \t\n", 1, "an empty host list"},
		{"a[ 1-2]", 3, `" " where a number was expected`},
		{"a[1-2", 2, "'[' without ']'"},
		{"a[1", 2, "'[' without ']'"},
		{"a[]", 3, "a number expected"},
		{"a]", 2, "']' without '['"},
		{"a[1-]", 5, "a number expected"},
		{"a[-1]", 3, `"-" where a number was expected`},
		{"a[3-1]", 5, "the range 3-1 goes down"},
		{"a[1,,2]", 5, `"," where a number was expected`},
		{"a[1-2-3]", 6, `"-" in a bracket group`},
		{"a[x]", 3, `"x" where a number was expected`},
		{"a[[1]]", 3, `"[" where a number was expected`},
		{"a[1234567890123456789]", 3, "a number of 19 digits; at most 18"},
		{"a[0-999999]b[0-999999]", 1, "more than 1000000 names"},
		{"a[0-999999],b[0-1]", 13, "more than 1000000 names"},
		{"a[0-18446744073709551615],b", 5, "a number of 20 digits"},
		{"a[0-999999999999999999]", 2, "more than 1000000 names"},
	}
	for _, c := range cases {
		_, _, err := expandHostlist(c.value, fileLimits)
		var he *hostlistError
		require.ErrorAs(t, err, &he, c.value)
		assert.Equal(t, c.off, he.Off+1, "%s: %v", c.value, err)
		assert.Contains(t, he.Msg, c.msg, c.value)
	}
}

// A bomb is refused from its count, before anything is expanded.
func TestHostlistBombIsRefusedQuickly(t *testing.T) {
	// Expanding the bomb would be work, so the bound is on CPU time: the
	// wall clock would time the machine too (issue 32).
	start := cputime.Process()
	bomb := "n[0-999999999999999999]" + "x[0-999999999999999999]"
	_, _, err := expandHostlist(bomb, fileLimits)
	require.Error(t, err)
	for range 8 {
		bomb += fmt.Sprintf(",m[0-%d]", MaxHosts/8)
	}
	_, _, err = expandHostlist(bomb, fileLimits)
	require.Error(t, err)
	assert.Less(t, cputime.Process()-start, time.Second)

	names, _, err := expandHostlist("n[000000-999999]", fileLimits)
	require.NoError(t, err, "exactly MaxHosts names are allowed")
	assert.Len(t, names, MaxHosts)
	assert.Equal(t, "n999999", names[MaxHosts-1])
}

// A list is sized before it is expanded (issue 34, F1): its longest name
// and its names times their longest are known from its counts, so a list
// of long names is refused without a name being made.
func TestHostlistIsSizedBeforeItIsExpanded(t *testing.T) {
	long := strings.Repeat("n", 60_000)
	cases := []struct {
		value          string
		lim            hostlistLimits
		off            int // 1-based
		kind           limitKind
		names, longest uint64
		bytes          uint64
	}{
		// F1's list: a million names of 60,006 bytes, 60 GB.
		{long + "[0-999999]", fileLimits, 1, tooLongName, 1_000_000, 60_006, 0},
		{"a,b" + strings.Repeat("x", 254) + "[1-10]", fileLimits, 3, tooLongName, 10, 257, 0},
		{"a,b[1-9],c[0-100]", hostlistLimits{names: 1000, nameLen: 3, bytes: 1000}, 10, tooLongName, 101, 4, 0},
		// 300 names of 4 bytes are 1,200 bytes, more than 1,000 left.
		{"ab,n[100-399]", hostlistLimits{names: 1000, nameLen: 10, bytes: 1000}, 4, tooManyBytes, 300, 4, 2 + 300*4},
		// At 255 bytes a name, 263,200 names are more than 64 MiB.
		{strings.Repeat("h", 249) + "[000000-263199]", fileLimits, 1, tooManyBytes, 263_200, 255, 263_200 * 255},
	}
	for _, c := range cases {
		start := cputime.Process()
		names, _, err := expandHostlist(c.value, c.lim)
		used := cputime.Process() - start
		assert.Nil(t, names)
		var he *hostlistError
		if !assert.ErrorAs(t, err, &he, clip(c.value)) {
			continue
		}
		assert.Equal(t, c.off, he.Off+1, "%s: %v", clip(c.value), err)
		assert.Equal(t, c.kind, he.Kind, "%v", err)
		assert.Equal(t, c.names, he.Names, "%v", err)
		assert.Equal(t, c.longest, he.Longest, "%v", err)
		assert.Equal(t, c.bytes, he.Bytes, "%v", err)
		// Refused from its counts: no name made, so a small CPU time
		// (a million names of 60 KB would be minutes, or out of memory).
		assert.Less(t, used, 500*time.Millisecond, clip(c.value))
	}
	// Just within: 263,100 names of 255 bytes are 67,090,500 bytes.
	names, size, err := expandHostlist(strings.Repeat("h", 249)+"[000000-263099]", fileLimits)
	require.NoError(t, err)
	assert.Len(t, names, 263_100)
	assert.Equal(t, uint64(263_100*255), size)
	assert.Equal(t, strings.Repeat("h", 249)+"263099", names[263_099])
}
