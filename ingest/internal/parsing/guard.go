package parsing

import (
	"context"

	"github.com/citebook/citebook"
)

// Guard turns a panic inside a parser into an invalid-input error, so a
// hostile or broken file can never take the process down.
func Guard(format citebook.Format, err *error) {
	if r := recover(); r != nil {
		*err = citebook.Errorf(citebook.EINVALID, "cannot parse %s file: malformed content (%v)", format, r)
	}
}

// CheckCtx reports cancellation as the context's own error.
func CheckCtx(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "parsing cancelled")
	}
	return nil
}
