// Package cmdline splits a command line given as one string (--stdio
// "server --flag 'a value'") into its arguments, by the shell's quoting
// rules and without a shell: quotes and backslashes are removed, nothing is
// expanded, and what needs a shell to mean anything is refused.
package cmdline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Split returns the words of s as a POSIX shell reads them: words are
// separated by blanks; 'single quotes' and "double quotes" keep blanks in a
// word; a backslash escapes the next character. An unterminated quote, or
// anything a shell would have to run or expand ($VAR, $(cmd), `cmd`,
// $((n)), <(cmd), ~, {a,b}, a pipe, a redirection, ;, &&), is an error that
// says so:
// mcp-conform starts the command itself, so such a line would not mean
// what it says.
func Split(s string) ([]string, error) {
	p := syntax.NewParser()
	var out []string
	cfg := &expand.Config{Env: expand.ListEnviron()}
	for w, err := range p.WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return nil, explain(s, err)
		}
		if err := literalOnly(w); err != nil {
			return nil, fmt.Errorf("command line %q: %w", s, err)
		}
		// Quote and backslash removal only: the word has nothing left to
		// expand, and without a directory reader nothing is globbed.
		vs, err := expand.Fields(cfg, w)
		if err != nil {
			return nil, fmt.Errorf("command line %q: %w", s, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// explain words a parse error for a command line.
func explain(s string, err error) error {
	var perr syntax.ParseError
	if errors.As(err, &perr) && perr.Incomplete {
		return fmt.Errorf("command line %q: unterminated quote or escape (%v)", s, err)
	}
	return fmt.Errorf("command line %q: not a plain list of words (%v): mcp-conform runs the command without a shell; put pipes, redirections or several commands in a script", s, err)
}

// literalOnly refuses a word whose value a shell would compute: an
// expansion of any kind, a brace expansion ({a,b}) or a tilde (~/x).
func literalOnly(w *syntax.Word) error {
	for _, part := range w.Parts {
		if err := literalPart(part); err != nil {
			return err
		}
	}
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
		return fmt.Errorf("%s: a tilde expansion would need a shell (mcp-conform runs the command without one): write the path out, or quote the ~ to pass it literally", lit.Value)
	}
	// A copy: SplitBraces rewrites the word it is given. {tmpdir} alone is
	// no brace expansion (it stays one word); {a,b} and {1..3} are.
	braced := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if syntax.SplitBraces(braced) && expandsToMany(braced) {
		return errors.New("a brace expansion ({a,b}) would need a shell (mcp-conform runs the command without one): quote it to pass it literally, or expand it before")
	}
	return nil
}

// expandsToMany reports whether brace expansion makes more than one word
// of w (an expansion too large to count is many).
func expandsToMany(w *syntax.Word) bool {
	n := 0
	for _, err := range expand.BracesSeq(nil, w) {
		if n++; err != nil || n > 1 {
			return true
		}
	}
	return false
}

func literalPart(part syntax.WordPart) error {
	switch x := part.(type) {
	case *syntax.Lit, *syntax.SglQuoted:
		return nil
	case *syntax.DblQuoted:
		for _, inner := range x.Parts {
			if err := literalPart(inner); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s would need a shell to expand (mcp-conform runs the command without one): quote it with single quotes to pass it literally, or expand it before", describe(part))
}

func describe(part syntax.WordPart) string {
	switch part.(type) {
	case *syntax.ParamExp:
		return "a parameter expansion ($NAME)"
	case *syntax.CmdSubst:
		return "a command substitution ($(...) or `...`)"
	case *syntax.ArithmExp:
		return "an arithmetic expansion ($((...)))"
	case *syntax.ProcSubst:
		return "a process substitution (<(...))"
	case *syntax.ExtGlob:
		return "an extended glob"
	}
	return fmt.Sprintf("a %T", part)
}
