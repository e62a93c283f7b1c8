package citebook

import (
	"errors"
	"fmt"
)

// Error codes say what kind of failure happened so callers can react (web maps
// them to HTTP statuses in one place, the CLI to exit codes) without parsing
// messages.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ECONFLICT     = "conflict"
	ETOOLARGE     = "too_large"
	ERATELIMIT    = "rate_limited"
	EUNAVAILABLE  = "unavailable"
	EINTERNAL     = "internal"
)

// Error is an application error: Code for programs, Message for people, Err
// for operators' logs (never shown to users).
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error renders the message and, when present, the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error with a code and a user-facing message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap attaches a code and a user-facing message to a cause.
func Wrap(err error, code, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the outermost application error in err's
// chain, EINTERNAL for any other error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message: an application error's own
// message, a generic text for anything else so internals never leak.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
