package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// JSONOptions tunes WriteJSONWith.
type JSONOptions struct {
	// KeepAllTranscripts keeps the transcripts of PASS and SKIP checks too.
	// By default only FAIL, WARN and ERROR checks carry their evidence, which
	// keeps the report small.
	KeepAllTranscripts bool
}

// WriteJSON writes r as the stable JSON report (schema mcp-conform/report/v1),
// indented, with the default JSONOptions. See WriteJSONWith.
func WriteJSON(w io.Writer, r *Report) error {
	return WriteJSONWith(w, r, JSONOptions{})
}

// WriteJSONWith writes r as the stable JSON report, indented. r itself is not
// modified; what is written is normalised:
//
//   - "schema" is always SchemaV1 and "summary" is recomputed from the checks
//     with Summarize, whatever r holds;
//   - "checks" and each check's "spec" are [] rather than null when empty;
//   - a SKIP for a role the manifest lacks carries "missingRole"
//     (MissingRoleOf);
//   - PASS and SKIP checks drop their transcript unless
//     opts.KeepAllTranscripts is set;
//   - a transcript "raw" that is not valid JSON is written as a JSON string of
//     its bytes, and durations that are NaN or infinite are written as 0, so
//     the output is always valid JSON.
func WriteJSONWith(w io.Writer, r *Report, opts JSONOptions) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	out := normalized(r, opts.KeepAllTranscripts)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("reports: encode JSON report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadJSON reads a JSON report written by WriteJSON (or any producer of the
// same schema). It fails when the schema field is not SchemaV1, so a script
// never misreads a future incompatible shape.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("reports: decode JSON report: %w", err)
	}
	if r.Schema != SchemaV1 {
		return nil, fmt.Errorf("reports: JSON report has schema %q, want %q", r.Schema, SchemaV1)
	}
	return &r, nil
}

// normalized returns the copy of r that WriteJSONWith encodes.
func normalized(r *Report, keepAll bool) Report {
	out := *r
	out.Schema = SchemaV1
	out.Duration = finite(out.Duration)
	out.Summary = Summarize(r.Checks)
	out.Checks = make([]Check, len(r.Checks))
	for i, c := range r.Checks {
		c.DurationMs = finite(c.DurationMs)
		if c.Spec == nil {
			c.Spec = []string{}
		}
		c.MissingRole = MissingRoleOf(c)
		if keepAll || keepsTranscript(c.Status) {
			c.Transcript = normalizedEntries(c.Transcript)
		} else {
			c.Transcript = nil
		}
		out.Checks[i] = c
	}
	return out
}

// keepsTranscript reports whether a check of this status always carries its
// transcript: everything but PASS and SKIP (an unknown status is kept, it is
// a harness bug worth seeing).
func keepsTranscript(s Status) bool {
	return s != Pass && s != Skip
}

// normalizedEntries copies entries, making every Raw valid JSON and every
// time finite.
func normalizedEntries(entries []Entry) []Entry {
	if len(entries) == 0 {
		return nil
	}
	out := make([]Entry, len(entries))
	for i, e := range entries {
		e.AtMs = finite(e.AtMs)
		if len(e.Raw) > 0 && !json.Valid(e.Raw) {
			// "as a string otherwise": keep the bytes, as a JSON string.
			s, _ := json.Marshal(string(e.Raw))
			e.Raw = s
		}
		out[i] = e
	}
	return out
}

// finite maps NaN and ±Inf, which JSON cannot carry, to 0.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
