package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// U+009B (the one-character CSI), U+202E and U+2066 reach --json as \u
// escapes; the value reads back the same; other non-ASCII text stays.
func TestWriteJSONEscapesHiddenCharacters(t *testing.T) {
	v := map[string]string{"host": "a\u009b31mb\u202ec\u2066d\u0085é\x1b"}
	var out bytes.Buffer
	require.NoError(t, WriteJSON(&out, v))
	assert.Equal(t, "{\n  \"host\": \"a\\u009b31mb\\u202ec\\u2066d\\u0085é\\u001b\"\n}\n", out.String())
	var back map[string]string
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, v, back)
}
