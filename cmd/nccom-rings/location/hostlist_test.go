package location

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cputime"
)

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
	}
	for _, c := range cases {
		got, err := expandHostlist(c.value, MaxHosts)
		require.NoError(t, err, c.value)
		assert.Equal(t, c.want, got, c.value)
	}
	got, err := expandHostlist("trn[001-016,020]", MaxHosts)
	require.NoError(t, err)
	assert.Len(t, got, 17)
	assert.Equal(t, "trn016", got[15])
	assert.Equal(t, "trn020", got[16])
}

func TestExpandHostlistRefuses(t *testing.T) {
	cases := []struct {
		value string
		off   int // 1-based byte the error names
		msg   string
	}{
		{"", 1, "an empty host list"},
		{"a,,b", 3, "an empty name"},
		{"a,", 3, "an empty name"},
		{",a", 1, "an empty name"},
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
		_, err := expandHostlist(c.value, MaxHosts)
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
	_, err := expandHostlist(bomb, MaxHosts)
	require.Error(t, err)
	for range 8 {
		bomb += fmt.Sprintf(",m[0-%d]", MaxHosts/8)
	}
	_, err = expandHostlist(bomb, MaxHosts)
	require.Error(t, err)
	assert.Less(t, cputime.Process()-start, time.Second)

	names, err := expandHostlist("n[000000-999999]", MaxHosts)
	require.NoError(t, err, "exactly MaxHosts names are allowed")
	assert.Len(t, names, MaxHosts)
	assert.Equal(t, "n999999", names[MaxHosts-1])
}
