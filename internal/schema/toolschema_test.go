package schema

import (
	"errors"
	"testing"
)

func TestCompileTool(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		valid        bool // compiles
		judged       bool // when not valid: a verdict, not ErrCannotJudge
	}{
		{"2020-12 by default", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, true, true},
		{"draft-07 declared", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, true, true},
		{"bad type", `{"type":"obj"}`, false, true},
		{"required not an array", `{"type":"object","required":"a"}`, false, true},
		{"local ref to nothing", `{"$ref":"#/$defs/none"}`, false, true},
		{"unknown dialect", `{"$schema":"https://example.com/dialect","type":"object"}`, false, false},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, false, false},
		{"ECMA lookahead pattern", `{"type":"string","pattern":"^(?=a)a$"}`, true, true},
		{"not JSON", `{`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileTool([]byte(tc.schema))
			switch {
			case tc.valid && err != nil:
				t.Errorf("error %v, want a schema", err)
			case !tc.valid && err == nil:
				t.Error("compiled, want an error")
			case !tc.valid && errors.Is(err, ErrCannotJudge) == tc.judged:
				t.Errorf("error %v: judged %v, want %v", err, !tc.judged, tc.judged)
			}
		})
	}
	sch, err := CompileTool([]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ValidateJSON(sch, []byte(`{"n":1}`)) != nil || ValidateJSON(sch, []byte(`{"n":"1"}`)) == nil || ValidateJSON(sch, []byte(`{}`)) == nil {
		t.Error("ValidateJSON misjudges {n:1}, {n:\"1\"} or {}")
	}
}
