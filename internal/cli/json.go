package cli

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/nccomring/libnccomring/internal/quote"
)

// WriteJSON writes v as the tools' --json does: encoding/json, indented
// by two spaces, one document ending in a newline, with every character
// quote.Hidden names (C1 controls, bidirectional overrides and isolates)
// written as a \u escape. encoding/json escapes the other control
// characters, but writes these as themselves, and a terminal or an
// editor showing the JSON would act on them (issue 34, F7). The document
// is the same JSON value: such a character, never ASCII, stands only
// inside a string, where its \u escape means it. Every --json of
// nccom-abi and nccom-rings (and nccom-abi profile's layout.json) is
// written here.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(w, quote.Visible(buf.String()))
	return err
}
