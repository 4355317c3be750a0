package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the run as an indented JSON document (schema in README).
func WriteJSON(w io.Writer, r *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
