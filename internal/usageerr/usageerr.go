// Package usageerr marks a bad command line: the error a command's options
// gave, which ends the command with exit code 2 before it does anything.
// Each package that runs a command names it UsageError (an alias).
package usageerr

// Error is a bad command line; Err says what is wrong with it.
type Error struct{ Err error }

// Error is the bad option's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error that made the command line bad.
func (e *Error) Unwrap() error { return e.Err }
